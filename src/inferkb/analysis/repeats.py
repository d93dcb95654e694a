"""Repeat groups for analysis: which benchmarks are repeated measurements of one configuration (``repeat_group``).

A group is the benchmark records sharing one ``repeat_group`` string (two or
more of them; rule in :mod:`inferkb.intake.repeats`, checked by KB126/KB127).
Members are ordered by ``submission.line`` (the CSV order the group id
follows), then id. compare and pareto count a group once: one row or point at
the members' median, with n, min and max beside it (:func:`spread`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..validate_repeats import FIELD

if TYPE_CHECKING:
    from ..store import Record


@dataclass(frozen=True, slots=True)
class Membership:
    """One record's place in its repeat group: ``group`` id, 1-based ``index`` in line order, group size ``n``, all ``ids``."""

    group: str
    index: int
    n: int
    ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"group", "index", "n"}``."""
        return {"group": self.group, "index": self.index, "n": self.n}


def _order(rec: Record) -> tuple[int, str]:
    line = (rec.data.get("submission") or {}).get("line") if isinstance(rec.data.get("submission"), dict) else None
    return (line if isinstance(line, int) and not isinstance(line, bool) else 0, rec.id)


def memberships(records: Iterable[Record]) -> dict[str, Membership]:
    """``{record id: Membership}`` for the records of ``records`` that share a ``repeat_group`` with at least one other.

    Counted within ``records`` (compare and pareto pass their selection): a member whose siblings are not
    among them is no member here."""
    groups: dict[str, list[Record]] = {}
    for rec in records:
        gid = rec.data.get(FIELD)
        if isinstance(gid, str) and gid:
            groups.setdefault(gid, []).append(rec)
    out: dict[str, Membership] = {}
    for gid, members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=_order)
        ids = tuple(m.id for m in members)
        for i, m in enumerate(members, start=1):
            out[m.id] = Membership(gid, i, len(members), ids)
    return out


def spread(group: str, ids: list[str], values: list[float]) -> dict[str, Any]:
    """``{"group", "n", "ids", "values", "min", "median", "max"}`` of one repeat group's members (``values`` aligned with ``ids``)."""
    return {
        "group": group,
        "n": len(ids),
        "ids": list(ids),
        "values": list(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }
