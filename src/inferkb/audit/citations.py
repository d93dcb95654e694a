"""Audit ``citations``: source ids cited in prose but not declared, broken doc links, placeholder artefacts.

Three checks over every record's string fields and the KB's ``docs/*.md``:

- a source id written in a record's prose (``notes``, ``methodology``, a
  ``flops[].source_id``, any string) that the record's ``sources`` list does
  not declare (KB601);
- a ``[[dir/id]]`` link in ``docs/`` that resolves to no record (KB602), and a
  source id a doc names bare without ever linking it (KB603);
- template placeholders left in data (``%s``, ``{0}``, ``${var}``,
  ``{{ var }}``, ``TODO``/``FIXME``/``TBD``, ``*.invalid`` / ``example.com``
  hosts, lorem ipsum, a whole value of ``"None"``/``"null"``) (KB604).

Matching of source ids is by bounded token: an id counts only where it is not
preceded or followed by ``[A-Za-z0-9-]``, so ``bench-x-csv`` is never found
inside ``bench-x-csv-2`` (the longer token is looked up whole). One regex pass
collects the kebab tokens of a record's text and a set intersection finds the
ids, so the cost is linear in the text and independent of how many ids exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ..jsonio import read_regular
from ..rules import Rule, register
from ..validate_rules import KB014
from . import AuditResult, audit, record_cache
from .citations_cache import cached_result, citations_cache, keep_result

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KB601 = register(
    Rule(
        "KB601",
        "citation-undeclared",
        "warning",
        "citations",
        "A source id appears in a record's text but not in its sources list.",
        "A claim that names its source in prose while the structured sources list omits it is invisible to every "
        "provenance check (tiers, staleness, dangling references); the id belongs in sources.",
        '{"notes": "bandwidth per nv-h100-datasheet", "sources": ["nv-h100-datasheet"]}',
        '{"notes": "bandwidth per nv-h100-datasheet", "sources": ["some-other-source"]}',
    )
)
KB602 = register(
    Rule(
        "KB602",
        "doc-link-unresolved",
        "error",
        "citations",
        "A [[dir/id]] link in docs/ points at no record.",
        "Docs cite records by link; a link to a record that does not exist is a claim whose evidence is gone.",
        "docs/memory.md: see [[accelerators/nvidia-h100-sxm]]",
        "docs/memory.md: see [[accelerators/nvidia-h100-sxn]]",
    )
)
KB603 = register(
    Rule(
        "KB603",
        "doc-source-unlinked",
        "info",
        "citations",
        "A doc names a source id in plain text but never links it as [[sources/id]].",
        "A bare id is not checked by link resolution and is not clickable in the site; link it.",
        "docs/a.md: per [[sources/nv-h100-datasheet]]",
        "docs/a.md: per nv-h100-datasheet",
    )
)
KB604 = register(
    Rule(
        "KB604",
        "placeholder-artefact",
        "warning",
        "citations",
        "A string field holds a template placeholder or filler text.",
        "printf/format placeholders, TODO markers, reserved example hosts and lorem ipsum are leftovers of a generator "
        "or an unfinished edit; a reader takes them for data. Placeholders inside a quotation ('...', \"...\", `...`) "
        "are quoted material, not artefacts, and are not reported.",
        '{"notes": "the log line reads \'power: %s W\' verbatim"}',
        '{"notes": "(2026-10-04). %s NO FIGURE WAS BACK-COMPUTED"}',
    )
)

# A kebab token bounded on both sides (no letter, digit or hyphen adjacent).
_BOUNDED = re.compile(r"(?<![A-Za-z0-9-])[a-z0-9]+(?:-[a-z0-9]+)+(?![A-Za-z0-9-])")
# Cheap pre-filter: every bounded occurrence of an id is a maximal run of [a-z0-9-]; a plain
# character class scans without backtracking, and bounds are checked later on hits only.
_RUN = re.compile(r"[a-z0-9-]{3,}")
_DOC_LINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
# URLs are addresses, not citations: a path segment that happens to equal an id is not a mention.
_URL = re.compile(r"(?:https?|ftp)://\S+")

PLACEHOLDERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("printf", re.compile(r"(?<![%\w])%(?:\([a-z_]+\))?[sdr](?![A-Za-z0-9])")),
    ("format-index", re.compile(r"\{\d+\}")),
    ("shell-var", re.compile(r"\$\{[^}\n]{0,60}\}")),
    ("template-var", re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}")),
    ("todo-marker", re.compile(r"\b(?:TODO|FIXME|TBD)\b")),
    ("reserved-host", re.compile(r"\b(?:[a-z0-9-]+\.)*(?:example\.(?:com|org|net)|[a-z0-9-]+\.invalid)\b", re.I)),
    ("lorem-ipsum", re.compile(r"\blorem\b", re.I)),
)
# Record-level pre-filters over the record serialised by orjson, using only C-speed bytes operations
# (translate, split, substring search) so the per-field walk runs only for records that can have a
# finding. JSON escapes are blanked first so an id right after "\\n" is still seen whole.
_KEBAB_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-")
_TO_TOKENS = bytes(c if c in _KEBAB_BYTES else 0x20 for c in range(256))
# One JSON escape (``\\n``, ``\\"``, ``\\u00e9``, ...): blanked in one regex pass.
_ESCAPE = re.compile(rb'\\(?:[\\ntrbf/"]|u[0-9a-fA-F]{4})')
# Cheap superset tests: a record none of these can hit has no placeholder (checked on lower-cased text
# for the case-insensitive ones, and on the original for the punctuation ones).
_TRIGGERS_LOWER = (b"todo", b"fixme", b"tbd", b".invalid", b"example.", b"lorem", b'"none"', b'"null"', b'"undefined"', b'"nan"')
_TRIGGERS_EXACT = (b"%", b"${", b"{{")
_FORMAT_INDEX_JSON = re.compile(rb"\{\d")


def _may_hold_placeholder(js: bytes) -> bool:
    """False when no placeholder pattern can match anywhere in the serialised record."""
    if any(t in js for t in _TRIGGERS_EXACT) or _FORMAT_INDEX_JSON.search(js):
        return True
    low = js.lower()
    return any(t in low for t in _TRIGGERS_LOWER)


def _json_tokens(js: bytes) -> list[bytes]:
    """Maximal ``[a-z0-9-]`` runs of a serialised record (a superset of its bounded kebab tokens), as a list.

    The caller intersects them with the id set (``ids.intersection(tokens)``), which never builds a set of every word.
    """
    if b"\\" in js:
        js = _ESCAPE.sub(b" ", js)
    return js.translate(_TO_TOKENS).split()


# Substrings one of which must occur for the pattern of the same kind to match (a fast `in` test).
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "printf": ("%",),
    "format-index": ("{",),
    "shell-var": ("${",),
    "template-var": ("{{",),
    "todo-marker": ("TODO", "FIXME", "TBD"),
    "reserved-host": (".invalid", ".INVALID", "example.", "EXAMPLE."),
    "lorem-ipsum": ("orem", "OREM"),
}
_STRINGIFIED_NULL = frozenset({"None", "null", "NULL", "undefined", "NaN", "nan"})
# A quotation: opening mark not glued to a word on its left, closing mark not glued on its right
# (so apostrophes in "doesn't" do not open a quote).
_QUOTED = re.compile(r"(?<![A-Za-z0-9])'[^'\n]{1,400}'(?![A-Za-z0-9])|\"[^\"\n]{1,400}\"|`[^`\n]{1,400}`")


def iter_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(dotted.path, text)`` for every string inside a JSON value (lists as ``field[i]``)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, sub in value.items():
            yield from iter_strings(sub, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from iter_strings(sub, f"{path}[{i}]")


def quote_around(text: str, start: int, end: int, width: int = 60) -> str:
    """The matched span with up to ``width`` characters of context each side (ellipses mark cuts)."""
    lo, hi = max(0, start - width), min(len(text), end + width)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def source_id_vocabulary(kb: KB) -> tuple[frozenset[str], dict[str, int]]:
    """Ids matched in prose: source record ids plus every id any record lists in ``sources``.

    Ids cited in ``sources`` lists count even when their source record is absent
    (a sample KB); single-segment ids (no hyphen) are left out because they
    collide with ordinary words, and ids also used by a non-source record are
    left out because a mention cannot be told apart from the other record.
    Returns ``(ids, counts)`` with counts of what was kept and dropped.
    """
    declared: set[str] = set(kb.ids_of_type("source"))
    for rec in kb.records.values():
        for sid in rec.data.get("sources") or []:
            if isinstance(sid, str):
                declared.add(sid)
    other = {rid for rid, recs in kb.by_id.items() if any(r.type != "source" for r in recs)}
    single = {s for s in declared if "-" not in s}
    shared = (declared - single) & other
    kept = frozenset(declared - single - shared)
    return kept, {"source_ids_matched": len(kept), "skipped_single_word": len(single), "skipped_shared_with_other_types": len(shared)}


def _skip_fields(kb: KB, rec: Record) -> frozenset[str]:
    spec = kb.profile.types.get(rec.type)
    refs = set(spec.refs) if spec else set()
    return frozenset(refs | {"id", "type", "sources"})


def _blank(m: re.Match[str]) -> str:
    return " " * (m.end() - m.start())


def _top(path: str) -> str:
    for i, ch in enumerate(path):
        if ch in ".[":
            return path[:i]
    return path


def undeclared_citations(kb: KB, rec: Record, strings: list[tuple[str, str]], ids: frozenset[str]) -> list:
    """KB601 findings for one record: one per cited-but-undeclared id, evidence from its first occurrence."""
    skip = _skip_fields(kb, rec)
    texts = [(p, s, _URL.sub(_blank, s)) for p, s in strings if _top(p) not in skip]
    blob = "\n".join(masked for _, _, masked in texts)
    if ids.isdisjoint(_RUN.findall(blob)):
        return []
    declared = {s for s in rec.data.get("sources") or [] if isinstance(s, str)}
    first: dict[str, tuple[str, str]] = {}
    fields: dict[str, list[str]] = {}
    for path, text, masked in texts:
        for m in _BOUNDED.finditer(masked):
            sid = m.group()
            if sid in ids and sid not in declared and sid != rec.id:
                first.setdefault(sid, (path, quote_around(text, m.start(), m.end())))
                if path not in fields.setdefault(sid, []):
                    fields[sid].append(path)
    out = []
    source_ids = kb.ids_of_type("source")
    for sid, (path, quote) in first.items():
        where = "a source record of this KB" if sid in source_ids else "cited by other records but has no source record here"
        out.append(
            KB601.finding(
                f"{path} cites source {sid!r} ({where}) but the record's sources list does not declare it",
                record=rec.key,
                path=rec.path,
                field=path,
                evidence={"field": path, "quote": quote},
                extra={"source_id": sid, "fields": fields[sid], "source_record_exists": sid in source_ids},
            )
        )
    return out


def placeholder_hits(text: str) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` of every placeholder in ``text`` outside quotations; whole-value nulls as ``stringified-null``."""
    if text.strip() in _STRINGIFIED_NULL:
        return [("stringified-null", 0, len(text))]
    kinds = [(kind, pattern) for kind, pattern in PLACEHOLDERS if any(t in text for t in _TRIGGERS[kind])]
    if not kinds:
        return []
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    hits = []
    for kind, pattern in kinds:
        for m in pattern.finditer(text):
            if not any(lo <= m.start() and m.end() <= hi for lo, hi in quoted):
                hits.append((kind, m.start(), m.end()))
    return sorted(hits, key=lambda h: h[1])


def placeholders(rec: Record, strings: list[tuple[str, str]]) -> list:
    """KB604 findings for one record: one per field holding at least one placeholder."""
    out = []
    for path, text in strings:
        hits = placeholder_hits(text)
        if hits:
            kind, start, end = hits[0]
            kinds = sorted({h[0] for h in hits})
            out.append(
                KB604.finding(
                    f"{path} holds a placeholder ({', '.join(kinds)}): {text[start:end]!r}",
                    record=rec.key,
                    path=rec.path,
                    field=path,
                    evidence={"field": path, "quote": quote_around(text, start, end)},
                    extra={"kinds": kinds},
                )
            )
    return out


def _doc_target(kb: KB, target: str) -> bool:
    target = target.split("|", 1)[0].strip()
    if "/" in target:
        return target in kb.records
    return bool(kb.by_id.get(target))


def audit_docs(kb: KB, ids: frozenset[str]) -> tuple[list, int]:
    """KB602/KB603/KB604 findings for ``docs/**/*.md``; returns ``(findings, docs scanned)``."""
    docs_dir = kb.root / "docs"
    if not docs_dir.is_dir():
        return [], 0
    findings, count = [], 0
    for doc in sorted(docs_dir.rglob("*.md")):
        count += 1
        rel = doc.relative_to(kb.root).as_posix()
        try:
            text = read_regular(doc).decode("utf-8", errors="replace")
        except OSError as exc:
            findings.append(KB014.finding(f"{rel} cannot be read: {exc.strerror or exc}; not checked", path=rel))
            continue
        linked = {m.group(1).split("|", 1)[0].strip().rsplit("/", 1)[-1] for m in _DOC_LINK.finditer(text)}
        reported: set[str] = set()
        for lineno, line in enumerate(text.splitlines(), 1):
            field = f"line {lineno}"
            for m in _DOC_LINK.finditer(line):
                if not _doc_target(kb, m.group(1)):
                    findings.append(
                        KB602.finding(
                            f"link [[{m.group(1)}]] resolves to no record",
                            path=rel,
                            field=field,
                            evidence={"field": field, "quote": quote_around(line, m.start(), m.end())},
                            extra={"target": m.group(1)},
                        )
                    )
            bare = _URL.sub(_blank, _DOC_LINK.sub(_blank, line))
            for m in _BOUNDED.finditer(bare):
                sid = m.group()
                if sid in ids and sid not in linked and sid not in reported:
                    reported.add(sid)
                    findings.append(
                        KB603.finding(
                            f"names source {sid!r} without linking it as [[sources/{sid}]]",
                            path=rel,
                            field=field,
                            evidence={"field": field, "quote": quote_around(line, m.start(), m.end())},
                            extra={"source_id": sid},
                        )
                    )
            hits = placeholder_hits(line)
            if hits:
                kind, start, end = hits[0]
                findings.append(
                    KB604.finding(
                        f"holds a placeholder ({kind}): {line[start:end]!r}",
                        path=rel,
                        field=field,
                        evidence={"field": field, "quote": quote_around(line, start, end)},
                    )
                )
    return findings, count


def _vocabulary(kb: KB) -> tuple[frozenset[str], dict[str, int]]:
    """:func:`source_id_vocabulary` of ``kb``, built once per KB version (the cost estimate and the audit share it)."""
    return kb.cached("citations.vocabulary", lambda: source_id_vocabulary(kb))


def record_findings(kb: KB, rec: Record, ids: frozenset[str], ids_bytes: frozenset[bytes]) -> tuple[list, bool]:
    """KB601/KB604 findings of one record and whether it was walked field by field (the byte pre-filters let it through).

    ``ids`` is the vocabulary of :func:`source_id_vocabulary`, ``ids_bytes`` the same ids encoded.
    """
    js = orjson.dumps(rec.data)
    cited = ids_bytes.intersection(_json_tokens(js))
    if cited:
        cited = cited - {s.encode() for s in rec.data.get("sources") or [] if isinstance(s, str)} - {rec.id.encode()}
    has_placeholder = _may_hold_placeholder(js)
    if not cited and not has_placeholder:
        return [], False
    strings = list(iter_strings(rec.data))
    found = undeclared_citations(kb, rec, strings, ids) if cited else []
    if has_placeholder:
        found.extend(placeholders(rec, strings))
    return found, True


def _cost(kb: KB) -> float:
    """Seconds per 20,000 synthetic records (see :class:`inferkb.audit.AuditSpec`), less what the cache holds."""
    cache = citations_cache(kb, *_vocabulary(kb))
    return 0.2 + 1.2 * (1.0 - record_cache.hit_share(cache, kb, list(kb.records.values())))


@audit("citations", "Source ids cited in text but not declared, unresolved [[dir/id]] doc links, placeholder artefacts.", cost=_cost)
def run(kb: KB) -> AuditResult:
    """Run KB601-KB604 over every record and ``docs/``; figures count findings and the id vocabulary.

    Each unchanged record's KB601/KB604 result is kept in the load cache
    (:mod:`inferkb.audit.citations_cache`); ``docs/`` is checked every run. The report is the same.
    """
    ids, vocab = _vocabulary(kb)
    ids_bytes = frozenset(i.encode() for i in ids)
    result = AuditResult("citations")
    cache = citations_cache(kb, ids, vocab)
    walked = 0
    for rec in kb.records.values():
        kept = cached_result(cache, kb, rec) if cache is not None else None
        if kept is None:
            found, was_walked = record_findings(kb, rec, ids, ids_bytes)
            keep_result(cache, kb, rec, found, was_walked)
        else:
            found, was_walked = kept
        walked += was_walked
        result.findings.extend(found)
    if cache is not None:
        cache.save()
    doc_findings, docs = audit_docs(kb, ids)
    result.findings.extend(doc_findings)
    by_code: dict[str, int] = {}
    for f in result.findings:
        by_code[f.code] = by_code.get(f.code, 0) + 1
    result.figures = {
        **vocab,
        "records_scanned": len(kb.records),
        "records_walked_field_by_field": walked,
        "docs_scanned": docs,
        "records_citing_undeclared": len({f.record for f in result.findings if f.code == "KB601"}),
        "undeclared_citations": by_code.get("KB601", 0),
        "unresolved_doc_links": by_code.get("KB602", 0),
        "unlinked_doc_sources": by_code.get("KB603", 0),
        "placeholder_fields": by_code.get("KB604", 0),
    }
    return result
