"""Repeat groups (``repeat_group``) rules that need other records: KB126 dangling group id, KB127 members that differ.

A group is the set of benchmark records with one ``repeat_group`` value; its
id is a member's id (the first measurement). Members must agree on every
condition of compare's class key (:data:`inferkb.analysis.comparability.CONDITIONS`,
compared as compare compares them; a condition missing on both sides counts as
equal here, since a repeat's conditions are one setup's, stated or not) and on
``unit``. Values of the wrong type are the schema's to report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import validate_rules as R

if TYPE_CHECKING:
    from .findings import Finding
    from .kb import KB
    from .store import Record

FIELD = "repeat_group"


def _identity(data: dict[str, Any]) -> dict[str, Any]:
    from .analysis.comparability import conditions_of, match_value

    values = {n: match_value(n, v) for n, v in conditions_of(data).values.items()}
    values["unit"] = data.get("unit")
    return values


def repeat_group_findings(kb: KB, recs: Iterable[Record]) -> list[Finding]:
    """KB126 and KB127 findings for the benchmark records among ``recs`` that carry a ``repeat_group`` string."""
    out: list[Finding] = []
    for rec in recs:
        gid = rec.data.get(FIELD)
        if rec.type != "benchmark" or not isinstance(gid, str):
            continue
        head = next((h for h in kb.by_id.get(gid, ()) if h.type == "benchmark"), None)
        if head is None or head.data.get(FIELD) != gid:
            why = (
                f"{gid!r} is not a benchmark record (expected data/{rec.dir}/{gid}.json, the group's first member)"
                if head is None
                else f"{gid!r} names a record that is not in the group (its {FIELD} is {head.data.get(FIELD)!r}); "
                "the group id is its first member's id"
            )
            out.append(R.KB126.finding(f"{FIELD}: {why}", record=rec.key, path=rec.path, field=FIELD, extra={"id": gid}))
            continue
        if rec.id == gid:
            continue
        mine, theirs = _identity(rec.data), _identity(head.data)
        differ = [n for n in mine if mine[n] != theirs[n]]
        if differ:
            shown = "; ".join(f"{n} {rec.data.get(n) if n == 'unit' else mine[n]!r} vs {theirs[n]!r}" for n in differ)
            out.append(
                R.KB127.finding(
                    f"{FIELD} {gid!r}: this record differs from the group's first member in {', '.join(differ)} ({shown}); "
                    "repeats must share every comparability condition and the unit",
                    record=rec.key,
                    path=rec.path,
                    field=FIELD,
                    extra={"id": gid, "differ": differ},
                )
            )
    return out
