"""Deltas of benchmark arms against the baseline arm — computed, never typed in (DESIGN.md, "Records").

A benchmark record with ``arms`` (each ``{id, label, config, stats {mean, p50,
p90, p99, ...}, unit}``) and ``baseline_arm`` states every arm's numbers;
relative changes are derived here so a percentage in prose can be checked
against them rather than trusted.
"""

from __future__ import annotations

from typing import Any

# Stats that are positions of a distribution and so have a meaningful relative change.
DELTA_STATS = ("mean", "p50", "p90", "p95", "p99", "p999", "min", "max")


def pct_change(baseline: float, treatment: float) -> float | None:
    """Relative change in percent, ``(treatment - baseline) / baseline × 100``; ``None`` when baseline is 0."""
    if baseline == 0:
        return None
    return (treatment - baseline) / baseline * 100.0


def arm_deltas(record: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per non-baseline arm, the percent change of each stat versus the baseline arm.

    ``record`` is a benchmark record's data. Returns
    ``{arm_id: {"mean_delta_pct": ..., "p50_delta_pct": ..., ...}}`` with one
    key per stat both arms carry as numbers (``None`` when the baseline's stat
    is 0). Returns ``{}`` when the record has no arms, no ``baseline_arm``, or
    the baseline names no arm, or the arms' units differ (a delta across units
    would be meaningless). The formula is ``(arm - baseline) / baseline × 100``,
    so a positive delta means the arm's number is larger, whatever the metric's
    direction.
    """
    arms = record.get("arms")
    base_id = record.get("baseline_arm")
    if not isinstance(arms, list) or not base_id:
        return {}
    by_id = {a.get("id"): a for a in arms if isinstance(a, dict)}
    base = by_id.get(base_id)
    if base is None:
        return {}
    base_stats = base.get("stats") or {}
    out: dict[str, dict[str, float | None]] = {}
    for arm_id, arm in by_id.items():
        if arm_id == base_id:
            continue
        if arm.get("unit") and base.get("unit") and arm["unit"] != base["unit"]:
            continue
        stats = arm.get("stats") or {}
        deltas: dict[str, float | None] = {}
        for stat in DELTA_STATS:
            b, t = base_stats.get(stat), stats.get(stat)
            if _is_num(b) and _is_num(t):
                deltas[f"{stat}_delta_pct"] = pct_change(float(b), float(t))
        out[arm_id] = deltas
    return out


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def delta_lines(record: dict[str, Any]) -> list[str]:
    """Human lines ``computed: arm X vs baseline arm B: mean_delta_pct +76.5%, ...`` for each non-baseline arm."""
    base = record.get("baseline_arm")
    out = []
    for arm_id, delta in arm_deltas(record).items():
        parts = ", ".join(f"{k} {v:+.1f}%" for k, v in delta.items() if isinstance(v, (int, float)))
        out.append(f"computed: arm {arm_id} vs baseline arm {base}: {parts}")
    return out
