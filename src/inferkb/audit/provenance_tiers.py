"""Audit ``provenance-tiers``: classify every source A-E and measure how many numbers trace to primary sources.

Tiers (defined in the data file ``tier_rules.toml`` next to this module):
A primary vendor document, B vendor blog/announcement, C third-party primary
(paper, standards body, consortium results such as MLPerf), D aggregator,
reseller, news or mirror, E community (forum, issue tracker, personal blog or
repository). A source is classified from its ``url`` and ``kind`` by the first
matching rule of that file; the rules, not this code, are where tiers change.

Figure-weighted share: for each record, the numeric fields a reader would use
(``[figure_fields]`` of the data file) are attributed to the record's best
source tier (ordered A, C, B, D, E: primary before announcement before
secondary), or to the row's own ``source_id`` when a list row names one. The
share is the fraction of those numbers whose tier is A or C.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import KBError
from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

TIER_RULES_FILE = Path(__file__).with_name("tier_rules.toml")
TIERS = ("A", "B", "C", "D", "E")
# Best first: primary (vendor, then third-party) before announcements before secondary sources.
TIER_PREFERENCE = ("A", "C", "B", "D", "E")
PRIMARY = frozenset({"A", "C"})

KB701 = register(
    Rule(
        "KB701",
        "source-tier-unclassified",
        "info",
        "provenance-tiers",
        "No tier rule matches the source's URL and kind.",
        "An unclassified source cannot count towards the primary-source share; add a host rule to tier_rules.toml "
        "(or fix the URL) so the source's standing is explicit.",
        '{"url": "https://arxiv.org/abs/2306.00978", "kind": "paper"}  -> C',
        '{"url": "https://some-new-site.example/post", "kind": "blog"}  -> no rule',
    )
)
KB702 = register(
    Rule(
        "KB702",
        "benchmark-secondary-sources-only",
        "warning",
        "provenance-tiers",
        "Every source of a benchmark is an aggregator, news item or community post (tier D/E).",
        "A measured number known only from a forum post or a news article has no primary evidence behind it; "
        "find the vendor document, paper or results table it came from, or lower its confidence.",
        '{"sources": ["mlperf-inference-v6-1-summary"]}  (tier C)',
        '{"sources": ["gh-nccl-issue-1264"]}  (tier E only)',
    )
)


@dataclass(frozen=True, slots=True)
class TierRule:
    """One ordered rule: conditions (``None`` = not checked) -> ``tier``, with the ``reason`` shown to users."""

    id: str
    tier: str
    reason: str
    hosts: frozenset[str] | None = None
    host_labels: frozenset[str] | None = None
    owners: frozenset[str] | None = None
    url: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    kinds: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Classification:
    """The tier of one source (``None`` when no rule matched), the rule id and its reason."""

    tier: str | None
    rule: str | None
    reason: str


@dataclass(frozen=True)
class TierRules:
    """The parsed data file: ordered ``rules`` and ``figure_fields`` (type -> field paths)."""

    rules: tuple[TierRule, ...]
    figure_fields: dict[str, tuple[str, ...]]


def load_tier_rules(path: str | Path | None = None) -> TierRules:
    """Parse a tier-rules TOML file (default: the bundled ``tier_rules.toml``).

    Raises :class:`KBError` when the file does not parse, a rule lacks ``id``/``tier``/``reason``,
    names an unknown tier or group, or holds an invalid regular expression.
    """
    return _load(str(path or TIER_RULES_FILE))


@cache
def _load(path: str) -> TierRules:
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KBError(f"{path}: tier rules do not load: {exc}") from None
    groups = {k: [str(x).lower() for x in v] for k, v in (doc.get("groups") or {}).items()}

    def names(value: Any, where: str) -> list[str] | None:
        if value is None:
            return None
        if isinstance(value, str) and value.startswith("@"):
            if value[1:] not in groups:
                raise KBError(f"{path}: {where}: unknown group {value!r}")
            return groups[value[1:]]
        if isinstance(value, list):
            return [str(x).lower() for x in value]
        raise KBError(f"{path}: {where}: expected a list or '@group', got {value!r}")

    def regex(value: Any, where: str) -> re.Pattern[str] | None:
        if value is None:
            return None
        try:
            return re.compile(str(value), re.I)
        except re.error as exc:
            raise KBError(f"{path}: {where}: bad regular expression: {exc}") from None

    rules = []
    for i, raw in enumerate(doc.get("rule") or []):
        where = f"rule[{i}] ({raw.get('id', '?')})"
        if not all(isinstance(raw.get(k), str) for k in ("id", "tier", "reason")) or raw["tier"] not in TIERS:
            raise KBError(f"{path}: {where}: needs string id, reason and a tier in {TIERS}")
        hosts, labels, owners, kinds = (names(raw.get(k), f"{where}.{k}") for k in ("hosts", "host_labels", "owners", "kinds"))
        rules.append(
            TierRule(
                raw["id"],
                raw["tier"],
                raw["reason"],
                hosts=frozenset(hosts) if hosts is not None else None,
                host_labels=frozenset(labels) if labels is not None else None,
                owners=frozenset(owners) if owners is not None else None,
                url=regex(raw.get("url"), f"{where}.url"),
                path=regex(raw.get("path"), f"{where}.path"),
                kinds=frozenset(kinds) if kinds is not None else None,
            )
        )
    fields = {t: tuple(v) for t, v in (doc.get("figure_fields") or {}).items()}
    return TierRules(tuple(rules), fields)


def url_owner(host: str, path: str) -> str | None:
    """The account a URL belongs to on a code/model host (``github.com/<owner>/...``, ``<owner>.github.io``), lower-case."""
    if host.endswith(".github.io"):
        return host[: -len(".github.io")]
    if host in ("github.com", "raw.githubusercontent.com", "gist.github.com", "gitlab.com", "huggingface.co"):
        first = path.strip("/").split("/", 1)[0]
        return first.lower() or None
    return None


def host_suffixes(host: str) -> frozenset[str]:
    """``"a.b.com"`` -> ``{"a.b.com", "b.com", "com"}``: a rule host matches the host or any parent domain."""
    labels = host.split(".")
    return frozenset(".".join(labels[i:]) for i in range(len(labels)))


def classify(url: str | None, kind: str | None, rules: TierRules | None = None) -> Classification:
    """Classify one source from its ``url`` and ``kind`` by the first matching rule (tier ``None`` if none)."""
    rules = rules or load_tier_rules()
    url = (url or "").strip()
    parts = urlsplit(url if "://" in url else f"https://{url}") if url else None
    host = (parts.hostname or "").lower() if parts else ""
    if host.startswith("www."):
        host = host[4:]
    path = parts.path if parts else ""
    owner = url_owner(host, path)
    labels = set(host.split("."))
    suffixes = host_suffixes(host)
    for rule in rules.rules:
        if rule.hosts is not None and suffixes.isdisjoint(rule.hosts):
            continue
        if rule.host_labels is not None and not (labels & rule.host_labels):
            continue
        if rule.owners is not None and (owner is None or owner not in rule.owners):
            continue
        if rule.url is not None and not rule.url.search(url):
            continue
        if rule.path is not None and not rule.path.search(path):
            continue
        if rule.kinds is not None and (kind or "").lower() not in rule.kinds:
            continue
        return Classification(rule.tier, rule.id, rule.reason)
    return Classification(None, None, "no rule matches this host and kind")


def classify_sources(kb: KB, rules: TierRules | None = None) -> dict[str, Classification]:
    """``{source id: Classification}`` for every source record of the KB."""
    if "source" not in kb.profile.types:
        return {}
    return {r.id: classify(r.data.get("url"), r.data.get("kind"), rules) for r in kb.by_type("source")}


def best_tier(tiers: list[str | None]) -> str | None:
    """The best of ``tiers`` by :data:`TIER_PREFERENCE` (``None`` when none is known)."""
    known = [t for t in tiers if t in TIER_PREFERENCE]
    return min(known, key=TIER_PREFERENCE.index) if known else None


def compile_field(spec: str) -> tuple[tuple[str, bool], ...]:
    """``"arms[].stats.mean"`` -> ``(("arms", True), ("stats", False), ("mean", False))``."""
    return tuple((part[:-2], True) if part.endswith("[]") else (part, False) for part in spec.split("."))


def numbers_at(data: dict[str, Any], path: tuple[tuple[str, bool], ...]) -> list[tuple[Any, dict[str, Any]]]:
    """``(number, innermost list item or the record)`` for every number at a compiled field path; booleans are not numbers."""
    level: list[tuple[Any, dict[str, Any]]] = [(data, data)]
    for name, is_list in path:
        nxt: list[tuple[Any, dict[str, Any]]] = []
        for node, owner in level:
            if not isinstance(node, dict):
                continue
            value = node.get(name)
            if is_list:
                if isinstance(value, list):
                    nxt.extend((item, item) for item in value if isinstance(item, dict))
            elif value is not None:
                nxt.append((value, owner))
        if not nxt:
            return []
        level = nxt
    return [(v, o) for v, o in level if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _walk(node: Any, tail: tuple[str, ...]) -> Any:
    for name in tail:
        if not isinstance(node, dict):
            return None
        node = node.get(name)
    return node


def _row_tier(owner: dict[str, Any], tiers: dict[str, str | None], rec_tier: str) -> str:
    row_source = owner.get("source_id")
    return tiers.get(row_source) if isinstance(row_source, str) and tiers.get(row_source) else rec_tier


def _plan(specs: list[tuple[tuple[str, bool], ...]]) -> tuple[list[str], list[tuple[str, list[tuple[str, ...]]]], list]:
    """Group compiled paths for one pass per record: ``(top-level names, [(list name, [paths inside each item])], the rest)``.

    Gives the counts :func:`numbers_at` gives path by path (``"value"``; ``"arms[].stats.p50"``), walking each list once.
    """
    top: list[str] = []
    in_lists: dict[str, list[tuple[str, ...]]] = {}
    other = []
    for spec in specs:
        if len(spec) == 1 and not spec[0][1]:
            top.append(spec[0][0])
        elif spec[0][1] and len(spec) > 1 and not any(is_list for _, is_list in spec[1:]):
            in_lists.setdefault(spec[0][0], []).append(tuple(name for name, _ in spec[1:]))
        else:
            other.append(spec)
    return top, list(in_lists.items()), other


def _record_tier(rec: Record, tiers: dict[str, str | None]) -> str:
    sources = [s for s in rec.data.get("sources") or [] if isinstance(s, str)]
    if not sources:
        return "no-sources"
    return best_tier([tiers.get(s) for s in sources]) or "unresolved-or-unclassified"


def figure_weighted_share(kb: KB, tiers: dict[str, str | None], rules: TierRules) -> dict[str, Any]:
    """Count figure fields per tier, overall and per type; ``share_a_or_c`` is (A + C) / all numbers (``None`` if none)."""
    overall: dict[str, int] = {}
    per_type: dict[str, dict[str, int]] = {}
    compiled = {t: _plan([compile_field(f) for f in fields]) for t, fields in rules.figure_fields.items()}
    for rec in kb.records.values():
        plan = compiled.get(rec.type)
        if not plan:
            continue
        top, in_lists, other = plan
        data = rec.data
        rec_tier = _record_tier(rec, tiers)
        # The record's own numbers count for its tier; a list item's for its row source's tier when that is known.
        n_rec = sum(1 for name in top if _is_number(data.get(name)))
        row_tiers: list[str] = []
        for list_name, tails in in_lists:
            items = data.get(list_name)
            if not isinstance(items, list):
                continue
            for item in items:
                if not isinstance(item, dict):
                    continue
                n = sum(1 for tail in tails if _is_number(_walk(item, tail)))
                if n:
                    row_tiers.extend([_row_tier(item, tiers, rec_tier)] * n)
        for spec in other:
            for _, owner in numbers_at(data, spec):
                if owner is data:
                    n_rec += 1
                else:
                    row_tiers.append(_row_tier(owner, tiers, rec_tier))
        if n_rec or row_tiers:
            bucket = per_type.setdefault(rec.type, {})
            if n_rec:
                overall[rec_tier] = overall.get(rec_tier, 0) + n_rec
                bucket[rec_tier] = bucket.get(rec_tier, 0) + n_rec
            for tier in row_tiers:
                overall[tier] = overall.get(tier, 0) + 1
                bucket[tier] = bucket.get(tier, 0) + 1

    def summary(counts: dict[str, int]) -> dict[str, Any]:
        total = sum(counts.values())
        primary = sum(n for t, n in counts.items() if t in PRIMARY)
        return {
            "numbers": total,
            "tier_a_or_c": primary,
            "share_a_or_c": round(primary / total, 4) if total else None,
            "by_tier": dict(sorted(counts.items())),
        }

    return {**summary(overall), "by_type": {t: summary(c) for t, c in sorted(per_type.items())}}


@audit("provenance-tiers", "Classify every source A-E from its URL and kind; share of numbers that trace to primary sources.", cost=0.35)
def run(kb: KB) -> AuditResult:
    """KB701 (unclassified source), KB702 (benchmark with only D/E sources); figures: tiers and the weighted share."""
    rules = load_tier_rules()
    result = AuditResult("provenance-tiers")
    classes = classify_sources(kb, rules)
    tiers = {sid: c.tier for sid, c in classes.items()}
    by_tier: dict[str, int] = {}
    by_rule: dict[str, int] = {}
    for sid, c in classes.items():
        key = c.tier or "unclassified"
        by_tier[key] = by_tier.get(key, 0) + 1
        by_rule[c.rule or "none"] = by_rule.get(c.rule or "none", 0) + 1
        if c.tier is None:
            rec = kb.resolve(sid, "source")
            result.findings.append(
                KB701.finding(
                    f"source {sid!r} ({(rec.data.get('kind') if rec else None) or 'no kind'}) matches no tier rule",
                    record=rec.key if rec else None,
                    path=rec.path if rec else None,
                    field="url",
                    evidence={"field": "url", "quote": str(rec.data.get("url"))} if rec else None,
                )
            )
    secondary_only = unassessed = 0
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            sources = [s for s in rec.data.get("sources") or [] if isinstance(s, str)]
            got = [tiers.get(s) for s in sources]
            if not sources or any(t is None for t in got):
                unassessed += 1
                continue
            if all(t in ("D", "E") for t in got):
                secondary_only += 1
                listing = ", ".join(f"{s} ({t}: {classes[s].rule})" for s, t in zip(sources, got, strict=True))
                result.findings.append(
                    KB702.finding(
                        f"every source is tier D/E: {listing}",
                        record=rec.key,
                        path=rec.path,
                        field="sources",
                        extra={"sources": dict(zip(sources, got, strict=True))},
                    )
                )
    result.figures = {
        "sources": len(classes),
        "by_tier": dict(sorted(by_tier.items())),
        "by_rule": dict(sorted(by_rule.items())),
        "benchmarks_secondary_only": secondary_only,
        "benchmarks_unassessed": unassessed,
        "figure_weighted": figure_weighted_share(kb, tiers, rules),
    }
    return result
