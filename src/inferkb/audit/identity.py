"""Audit ``identity``: does the hardware a benchmark names identify the accelerator it chose?

Rule 4 of DESIGN.md: evidence must determine the value uniquely. For each
benchmark the candidates are found from

1. ``hardware_raw`` (the string the reporter's tool printed), matched exactly
   against accelerator aliases/names/ids (:func:`inferkb.hardware.candidates`);
   when that fails, the hardware phrases inside it (:func:`find_mentions`);
2. otherwise the hardware named in the record's own text (``name``,
   ``methodology``, ``environment.gpu_raw``; not ``notes``, which compare with other parts),
   by the same scanner.
   This is the only route on a KB without ``hardware_raw`` (the corpus), where
   accelerators have no ``aliases`` and names, ids and model numbers
   (``h100``, ``mi300x``) stand in for them.

A chosen ``accelerator_ids`` entry outside the candidates is an error when the
candidates come from ``hardware_raw`` (an exact tool string contradicts the
pick) and a warning when they come from prose (prose may name hardware loosely).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..hardware import Mention, find_mentions, quote_of
from ..resolve import resolve
from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KB801 = register(
    Rule(
        "KB801",
        "accelerator-not-candidate",
        "error",
        "identity",
        "The chosen accelerator is not among the parts hardware_raw can mean.",
        "hardware_raw is what the tool printed; if it cannot mean the chosen part, the record is filed under the wrong "
        "hardware and every comparison and roofline check built on it is wrong.",
        '{"hardware_raw": "NVIDIA H100 80GB HBM3", "accelerator_ids": ["nvidia-h100-sxm"]}',
        '{"hardware_raw": "NVIDIA H100 80GB HBM3", "accelerator_ids": ["nvidia-h100-pcie"]}',
    )
)
KB802 = register(
    Rule(
        "KB802",
        "hardware-ambiguous-no-alternates",
        "warning",
        "identity",
        "The hardware string matches several parts but no accelerator_alternates are recorded.",
        '"H100" alone does not say SXM, PCIe or NVL; picking one silently is a guess. Record the parts the string '
        "cannot tell apart in accelerator_alternates (or find the exact tool string).",
        '{"hardware_raw": "H100", "accelerator_ids": ["nvidia-h100-sxm"], '
        '"accelerator_alternates": ["nvidia-h100-pcie", "nvidia-h100-nvl"]}',
        '{"hardware_raw": "H100", "accelerator_ids": ["nvidia-h100-sxm"], "accelerator_alternates": []}',
    )
)
KB803 = register(
    Rule(
        "KB803",
        "accelerator-not-named-in-text",
        "warning",
        "identity",
        "The record's text names hardware, but not the accelerator it chose.",
        "When name/methodology/notes name a part and the structured pick is a different one, one of them is wrong; "
        "a reader trusts the structured field.",
        '{"name": "Llama 3 8B on 1x RTX 4090", "accelerator_ids": ["nvidia-rtx-4090"]}',
        '{"name": "Llama 3 8B on 1x RTX 4090", "accelerator_ids": ["nvidia-rtx-5090"]}',
    )
)
KB804 = register(
    Rule(
        "KB804",
        "hardware-raw-unrecognised",
        "info",
        "identity",
        "hardware_raw matches no accelerator alias, name or id.",
        "The identity of the part cannot be checked; add the exact string to the right accelerator's aliases "
        "(or add the missing accelerator record).",
        '{"hardware_raw": "NVIDIA H100 80GB HBM3"}',
        '{"hardware_raw": "NVIDIA H999 12GB"}',
    )
)
KB805 = register(
    Rule(
        "KB805",
        "hardware-named-but-unset",
        "info",
        "identity",
        "The record names hardware but accelerator_ids is empty.",
        "The record says what it ran on but the structured field does not, so queries by accelerator miss it.",
        '{"name": "... on 8x MI300X", "accelerator_ids": ["amd-instinct-mi300x"]}',
        '{"name": "... on 8x MI300X", "accelerator_ids": []}',
    )
)

# `notes` is left out: in the corpus it compares with other hardware ("against GB200's +1.9%"),
# so a part named there is not evidence of what the record ran on.
TEXT_FIELDS = ("name", "methodology")


def record_text(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, text)`` of the prose fields scanned for hardware names."""
    out = [(f, data[f]) for f in TEXT_FIELDS if isinstance(data.get(f), str) and data[f]]
    env = data.get("environment")
    if isinstance(env, dict) and isinstance(env.get("gpu_raw"), str):
        out.append(("environment.gpu_raw", env["gpu_raw"]))
    return out


def raw_candidates(kb: KB, raw: str) -> tuple[list[str], list[tuple[str, ...]]]:
    """Candidates for a ``hardware_raw`` string and the groups they came from.

    The string is resolved by :func:`inferkb.resolve.resolve`: a whole-string match (alias,
    normalised name, bare model number) is one group; names that together cover the string are
    one group each. A group of more than one id is a phrase that cannot tell parts apart; several groups
    of one id each are a system of several different parts (``"H200 + MI350X"``), not ambiguity.
    A name covering only part of the string (``"RTX 5070"`` in ``"RTX 5070 Ti"``) is no candidate.
    Returns ``(ids in first-seen order, groups)``.
    """
    res = resolve(kb, "accelerator", raw)
    if res.how == "parts":
        return list(res.ids), [ids for _, ids in res.parts]
    if res.how == "partial":
        return [], []
    return list(res.ids), [res.ids] if res.ids else []


def _ids(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _mapped_with_evidence(data: dict[str, Any]) -> bool:
    """True when a provenance entry sets ``accelerator_ids`` from a quoted document (an importer's documented hardware map)."""
    for entry in data.get("provenance") or []:
        if isinstance(entry, dict) and entry.get("field") == "accelerator_ids":
            ev = entry.get("evidence")
            if isinstance(ev, dict) and isinstance(ev.get("quote"), str) and ev["quote"].strip() and ev.get("field"):
                return True
    return False


def check_record(kb: KB, rec: Record) -> tuple[str, list]:
    """Findings for one benchmark and how it was checked: ``raw``, ``text``, ``unrecognised`` or ``no-hardware-named``."""
    data = rec.data
    chosen = _ids(data.get("accelerator_ids"))
    alternates = _ids(data.get("accelerator_alternates"))
    raw = data.get("hardware_raw")
    findings = []
    if isinstance(raw, str) and raw.strip():
        # Many records share one hardware_raw string: resolve it, and sort its ambiguous parts, once per KB.
        memo = kb.cached("identity.raw_candidates", dict)
        if raw not in memo:
            cands, groups = raw_candidates(kb, raw)
            memo[raw] = (cands, groups, sorted({i for g in groups if len(g) > 1 for i in g}))
        cands, groups, ambiguous_parts = memo[raw]
        evidence = {"field": "hardware_raw", "quote": raw}
        if not cands and chosen and _mapped_with_evidence(data):
            # No alias claims the string globally, but the publisher's documentation identifies it for this data set.
            return "mapped", findings
        if not cands:
            res = resolve(kb, "accelerator", raw)
            why = f" as a whole ({res.reason()})" if res.how == "partial" else ""
            findings.append(
                KB804.finding(
                    f"hardware_raw {raw!r} matches no accelerator alias, name or id{why}",
                    record=rec.key,
                    path=rec.path,
                    field="hardware_raw",
                    evidence=evidence,
                )
            )
            return "unrecognised", findings
        _judge(rec, chosen, alternates, cands, groups, evidence, findings, ambiguous_parts)
        return "raw", findings
    mentions: list[tuple[str, str, Mention]] = []
    for field, text in record_text(data):
        mentions.extend((field, text, m) for m in find_mentions(kb, text))
    if not mentions:
        return "no-hardware-named", findings
    cands: list[str] = []
    for _, _, m in mentions:
        cands.extend(i for i in m.ids if i not in cands)
    field, text, first = mentions[0]
    evidence = {"field": field, "quote": quote_of(text, first)}
    if not chosen:
        unique = [(f, t, m) for f, t, m in mentions if len(m.ids) == 1]
        if not unique:
            return "text", findings  # the text cannot tell parts apart: leaving the pick empty is right
        field, text, first = unique[0]
        evidence = {"field": field, "quote": quote_of(text, first)}
        findings.append(
            KB805.finding(
                f"{field} names {evidence['quote']!r} ({first.ids[0]}; all parts named in the text: {', '.join(cands)}) "
                "but accelerator_ids is empty",
                record=rec.key,
                path=rec.path,
                field="accelerator_ids",
                evidence=evidence,
                extra={"candidates": cands},
            )
        )
        return "text", findings
    for acc in chosen:
        support = [(f, t, m) for f, t, m in mentions if acc in m.ids]
        if not support:
            named = sorted({m.phrase for _, _, m in mentions})
            findings.append(
                KB803.finding(
                    f"accelerator_ids has {acc!r} but the text names only {', '.join(repr(n) for n in named)} "
                    f"(candidates: {', '.join(cands)})",
                    record=rec.key,
                    path=rec.path,
                    field="accelerator_ids",
                    evidence=evidence,
                    extra={"chosen": acc, "candidates": cands},
                )
            )
        elif all(len(m.ids) > 1 for _, _, m in support) and not alternates and _has_alternates(kb):
            f, t, m = support[0]
            findings.append(
                KB802.finding(
                    f"{f} names {quote_of(t, m)!r}, which matches {', '.join(m.ids)}; accelerator_alternates is empty",
                    record=rec.key,
                    path=rec.path,
                    field="accelerator_alternates",
                    evidence={"field": f, "quote": quote_of(t, m)},
                    extra={"candidates": list(m.ids)},
                )
            )
    return "text", findings


def _judge(
    rec: Record,
    chosen: list[str],
    alternates: list[str],
    cands: list[str],
    groups: list[tuple[str, ...]],
    evidence: dict,
    findings: list,
    ambiguous_parts: list[str],
) -> None:
    """KB801/KB802/KB805 for a record whose ``hardware_raw`` matched ``cands`` (in ``groups``, see :func:`raw_candidates`).

    ``ambiguous_parts``: the sorted ids of the groups of more than one id.
    """
    quote = evidence["quote"]
    ambiguous = [g for g in groups if len(g) > 1]
    if not chosen:
        if len(ambiguous) < len(groups):  # some phrase names exactly one part: a value could be filled
            findings.append(
                KB805.finding(
                    f"hardware_raw {quote!r} names {', '.join(cands)} but accelerator_ids is empty",
                    record=rec.key,
                    path=rec.path,
                    field="accelerator_ids",
                    evidence=evidence,
                    extra={"candidates": cands},
                )
            )
        return
    for acc in chosen:
        if acc not in cands:
            findings.append(
                KB801.finding(
                    f"accelerator_ids has {acc!r} but hardware_raw {quote!r} can only be {', '.join(cands)}",
                    record=rec.key,
                    path=rec.path,
                    field="accelerator_ids",
                    evidence=evidence,
                    extra={"chosen": acc, "candidates": cands},
                )
            )
    if ambiguous and not alternates:
        parts = ambiguous_parts
        findings.append(
            KB802.finding(
                f"hardware_raw {quote!r} cannot tell {', '.join(parts)} apart; accelerator_alternates is empty",
                record=rec.key,
                path=rec.path,
                field="accelerator_alternates",
                evidence=evidence,
                extra={"candidates": parts},
            )
        )


def _has_alternates(kb: KB) -> bool:
    """True when the KB can record alternates (its profile or benchmark schema declares the field).

    On a KB that cannot (the corpus), ambiguity found in prose is not reported: there is nowhere to fix it.
    """
    spec = kb.profile.types.get("benchmark")
    return bool(spec and "accelerator_alternates" in spec.refs) or "accelerator_alternates" in _schema_fields(kb)


def _schema_fields(kb: KB) -> frozenset[str]:
    """Top-level properties the KB's benchmark schema declares (empty set when it has no schema file)."""

    def build() -> frozenset[str]:
        import json

        from ..jsonio import read_regular

        path = kb.root / "schemas" / "benchmark.schema.json"
        try:
            return frozenset(json.loads(read_regular(path)).get("properties") or {})
        except (OSError, ValueError, AttributeError):
            return frozenset()

    return kb.memo("identity.benchmark_schema_fields", build)


@audit("identity", "Hardware strings (hardware_raw or text) vs the chosen accelerator; ambiguity without alternates.", cost=0.1)
def run(kb: KB) -> AuditResult:
    """KB801-KB805 over every benchmark; figures count how each record was checked and what was found."""
    result = AuditResult("identity")
    how: dict[str, int] = {}
    if "benchmark" in kb.profile.types and "accelerator" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            mode, findings = check_record(kb, rec)
            how[mode] = how.get(mode, 0) + 1
            result.findings.extend(findings)
    by_code: dict[str, int] = {}
    for f in result.findings:
        by_code[f.code] = by_code.get(f.code, 0) + 1
    total = sum(how.values())
    result.figures = {
        "benchmarks": total,
        "checked_by_hardware_raw": how.get("raw", 0),
        "checked_by_text": how.get("text", 0),
        "checked_by_documented_map": how.get("mapped", 0),
        "not_checked": how.get("no-hardware-named", 0) + how.get("unrecognised", 0),
        "not_checked_no_hardware_named": how.get("no-hardware-named", 0),
        "not_checked_raw_unrecognised": how.get("unrecognised", 0),
        "findings_by_code": dict(sorted(by_code.items())),
    }
    return result
