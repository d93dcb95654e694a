"""Closing an importer's batch of records: ``--id`` refused for several records, ids made unique, names made
distinct (:mod:`inferkb.intake.distinct_names`) and repeated findings collapsed into one.

Every name here is also importable from :mod:`inferkb.intake.common` (``C.finish_batch``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["dedupe_findings", "finish_batch", "unique_ids"]


def unique_ids(records: list[dict[str, Any]]) -> None:
    """Make benchmark ids within one batch unique by suffixing ``-2``, ``-3``... (in place)."""
    seen: dict[str, int] = {}
    for rec in records:
        rid = rec["id"]
        if rid in seen:
            seen[rid] += 1
            rec["id"] = f"{rid}-{seen[rid]}"
        else:
            seen[rid] = 1


def finish_batch(result: Any, extra: list[dict[str, Any]], bench: list[dict[str, Any]], options: Any, unit: str) -> Any:
    """Close an importer's batch: refuse ``--id`` for several records, make ids unique, names distinct, collapse repeated findings.

    Records of the batch that share a ``name`` gain the fact that tells them
    apart (:func:`inferkb.intake.distinct_names.apply_to`; the rule of the
    ``distinct-names`` derivation); ``stats["renamed"]`` counts them when any.

    ``extra`` (source records) come before ``bench`` in ``result.records``;
    ``stats["imported"]`` counts ``bench``. ``unit`` names what one record is
    ("runs", "test rows") in the error. Raises UsageError; returns ``result``.
    """
    from ..errors import UsageError

    if options.record_id and len(bench) > 1:
        raise UsageError(f"--id names one record but the input holds {len(bench)} {unit}")
    unique_ids(bench)
    from .distinct_names import apply_to

    renamed = apply_to(bench)
    if renamed:
        result.stats["renamed"] = renamed
    result.findings = dedupe_findings(result.findings)
    result.records = extra + bench
    result.stats["imported"] = len(bench)
    return result


def dedupe_findings(findings: list) -> list:
    """Collapse findings with the same code and message into one; ``extra["occurrences"]`` counts them."""
    seen: dict[tuple[str, str], Any] = {}
    out = []
    for f in findings:
        key = (f.code, f.message)
        if key in seen:
            first = seen[key]
            first.extra = dict(first.extra or {})
            first.extra["occurrences"] = first.extra.get("occurrences", 1) + 1
            first.record = None
            continue
        seen[key] = f
        out.append(f)
    return out
