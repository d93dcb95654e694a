"""Fold the members of one comparability class into rows: one per ``same_measurement_as`` group, then one per repeat group.

compare ranks the rows (:func:`inferkb.analysis.compare.compare`); the ``--vary`` hint counts them
(:mod:`inferkb.analysis.compare_hint`): both go through :func:`fold_rows`, so a class has the same rows in each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .repeats import Membership, spread

if TYPE_CHECKING:
    from ..store import Record


class _Groups:
    """Union-find over record ids linked by ``same_measurement_as``."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _fold_repeats(
    reps: dict[str, tuple[Record, Any, float]], folded: dict[str, list[str]], repeat_of: dict[str, Membership]
) -> dict[str, dict[str, Any]]:
    """Fold the rows of one class that are members of one repeat group (two or more present) into the first member's row.

    Changes ``reps`` and ``folded`` in place; returns ``{root: spread}`` for the rows that now stand for a group."""
    by_group: dict[str, list[str]] = {}
    for root, (rec, _, _) in reps.items():
        member = next((repeat_of[i] for i in (rec.id, *folded.get(root, [])) if i in repeat_of), None)
        if member is not None:
            by_group.setdefault(member.group, []).append(root)
    out: dict[str, dict[str, Any]] = {}
    for gid, roots in by_group.items():
        if len(roots) < 2:
            continue
        roots.sort(key=lambda r: (repeat_of[reps[r][0].id].index if reps[r][0].id in repeat_of else 0, r))
        ids = [reps[r][0].id for r in roots]
        values = [reps[r][2] for r in roots]
        rec, pa, _ = reps[roots[0]]
        info = spread(gid, ids, values)
        info["headlines"] = [float(reps[r][0].data["value"]) for r in roots]
        reps[roots[0]] = (rec, pa, info["median"])
        for r in roots[1:]:
            del reps[r]
            folded.setdefault(roots[0], []).extend(folded.pop(r, []))
        out[roots[0]] = info
    return out


def fold_rows(
    members: list[tuple[Record, Any, float]], repeat_of: dict[str, Membership]
) -> tuple[dict[str, tuple[Record, Any, float]], dict[str, list[str]], dict[str, dict[str, Any]]]:
    """The rows of one class: ``members`` (record, per-accelerator figure, ranked value) folded first by
    ``same_measurement_as`` groups, then by repeat group (:func:`_fold_repeats`).

    Returns ``(rows, folded, repeats)``: ``{root id: member}`` (one per row), ``{root id: [folded ids]}`` and
    ``{root id: spread}`` for the rows that stand for a repeat group."""
    ids = {rec.id for rec, _, _ in members}
    uf = _Groups()
    for rec, _, _ in members:
        uf.find(rec.id)
        for other in rec.data.get("same_measurement_as") or []:
            if isinstance(other, str) and other in ids:
                uf.union(rec.id, other)
    reps: dict[str, tuple[Record, Any, float]] = {}
    folded: dict[str, list[str]] = {}
    for rec, pa, value in sorted(members, key=lambda m: m[0].id):
        root = uf.find(rec.id)
        if root not in reps:
            reps[root] = (rec, pa, value)
        else:
            folded.setdefault(root, []).append(rec.id)
    return reps, folded, _fold_repeats(reps, folded, repeat_of)
