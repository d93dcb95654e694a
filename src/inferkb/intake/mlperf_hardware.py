"""The hardware of one MLPerf results-table row: accelerator ids, alternates, the raw string and the device count.

The accelerator half of :func:`inferkb.intake.mlperf.build_record`: the exact ``accelerator_model_name`` string first
(through :func:`inferkb.resolve.resolve`), then, for a heterogeneous system, every part it names must resolve; a
string that resolves to several parts keeps them as ``accelerator_alternates`` and no pick. ``accelerator_count`` is
``number_of_nodes x accelerators_per_node``, left null (with a KB1112 finding) when ``total_accelerators`` or a
``(xN)`` in the string contradicts it; a CPU-only row has no count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..resolve import resolve
from . import mlperf_maps as M
from .mlperf_table import cell_int
from .table_rules import KB1112

if TYPE_CHECKING:
    from .mlperf import TableContext


@dataclass
class RowHardware:
    """``acc_ids``, ``alternates`` (candidates when none is chosen), ``hardware_raw`` (``None`` for CPU-only),
    ``count`` (``None`` when unknown or contradicted) and the table's ``nodes``, ``per_node`` and ``total``."""

    acc_ids: list[str]
    alternates: list[str]
    hardware_raw: str | None
    count: int | None
    nodes: int | None
    per_node: int | None
    total: int | None


def row_hardware(ctx: TableContext, row: dict[str, str], key: str, notes: list[str], gaps: dict[str, dict[str, Any]]) -> RowHardware:
    """The :class:`RowHardware` of ``row``; appends to ``notes`` and ``gaps``, and counts and finds into ``ctx``
    (``cpu_only``, ``unresolved``, ``findings``). ``key`` names the row in a finding (``"summary.csv line 12"``)."""
    raw_acc = row["accelerator_model_name"].strip()
    nodes, per_node = cell_int(row["number_of_nodes"]), cell_int(row["accelerators_per_node"])
    total = cell_int(row.get("total_accelerators") or "")
    acc_ids: list[str] = []
    alternates: list[str] = []
    hardware_raw: str | None = raw_acc
    count = nodes * per_node if nodes and per_node else None
    if raw_acc.upper() in ("N/A", "") or not per_node:
        ctx.cpu_only += 1
        hardware_raw, count = None, None
        notes.append(f"CPU-only system: accelerator_model_name {raw_acc!r}, accelerators_per_node {row['accelerators_per_node']!r}.")
        gaps["accelerator_count"] = {
            "reason": "CPU-only system: the table names no accelerator",
            "checked": ["accelerator_model_name", "accelerators_per_node"],
        }
    else:
        res = resolve(ctx.kb, "accelerator", raw_acc)
        found = list(res.ids) if res.how != "parts" else []
        if res.resolved:
            acc_ids = found
        elif not found:
            parts = M.split_heterogeneous(raw_acc)
            per_part = [resolve(ctx.kb, "accelerator", p) for p in parts] if len(parts) > 1 else []
            if len(parts) == 1 and parts[0] != raw_acc:
                # one part with a stated device count, "... (x87)": look the part up without it
                part = resolve(ctx.kb, "accelerator", parts[0])
                found = list(part.ids) if part.how != "parts" else []
                acc_ids = [part.id] if part.resolved else []
            elif per_part and all(r.resolved for r in per_part):
                acc_ids = list(dict.fromkeys(r.id for r in per_part))
                notes.append(
                    f"Heterogeneous system: {raw_acc!r} names {len(parts)} accelerator types; "
                    f"accelerator_count is the total over all of them."
                )
        if not acc_ids:
            alternates = found
            ctx.unresolved[raw_acc] = ctx.unresolved.get(raw_acc, 0) + 1
            gaps["accelerator_count"] = {
                "reason": f"accelerator string {raw_acc!r} resolves to "
                + (f"several parts ({', '.join(found)})" if found else "no accelerator id of this KB"),
                "checked": ["accelerator_model_name"],
            }
        stated = M.stated_part_count(raw_acc)
        if total is not None and count is not None and total != count:
            ctx.findings.append(
                KB1112.finding(
                    f"{key}: number_of_nodes x accelerators_per_node = {count} but total_accelerators = {total}; count left null",
                    path=ctx.path,
                    field="total_accelerators",
                    extra={"candidates": [count, total]},
                )
            )
            gaps["accelerator_count"] = {
                "reason": f"nodes x per-node ({count}) contradicts total_accelerators ({total})",
                "checked": ["number_of_nodes", "accelerators_per_node", "total_accelerators"],
            }
            count = None
        elif stated is not None and count is not None and stated != count:
            ctx.findings.append(
                KB1112.finding(
                    f"{key}: number_of_nodes x accelerators_per_node = {count} but accelerator_model_name says x{stated}; count left null",
                    path=ctx.path,
                    field="accelerator_model_name",
                    extra={"candidates": [count, stated]},
                )
            )
            gaps["accelerator_count"] = {
                "reason": f"nodes x per-node ({count}) contradicts the '(x{stated})' in accelerator_model_name",
                "checked": ["number_of_nodes", "accelerators_per_node", "accelerator_model_name"],
            }
            count = None
    return RowHardware(acc_ids, alternates, hardware_raw, count, nodes, per_node, total)


__all__ = ["RowHardware", "row_hardware"]
