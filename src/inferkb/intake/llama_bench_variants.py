"""The two llama-bench row variants beyond a plain test row, folded into the record
:func:`inferkb.intake.llama_bench.row_record` built: an A/B table row (one arm per build, the table's speed-up only
cross-checked) and a sweep script's line (its build flags, memory peaks and power).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import common as C
from .base import IntakeResult

__all__ = ["ab_arms", "apply_sweep"]


def ab_arms(
    rec: dict[str, Any], row: dict[str, Any], label: str, config: dict[str, Any], index: int, path: Path, result: IntakeResult
) -> None:
    """An A/B table row as one arm per ``t/s <arm>`` column, the first column the baseline (in place).

    Deltas are computed from the arms (:mod:`inferkb.arms`), never taken from
    the table; its ``speedup`` cell is only cross-checked against arm / baseline
    (the table prints two decimals, so a difference over 0.006 is KB1101).
    """
    arms = []
    seen: set[str] = set()
    for cell in row["_ab"]:
        arm_id = C.slug(cell["label"]) or f"arm-{len(arms) + 1}"
        while arm_id in seen:
            arm_id += "-2"
        seen.add(arm_id)
        stats = {"mean": cell["mean"], "n": None}
        if cell.get("stdev") is not None:
            stats["stdev"] = cell["stdev"]
        arms.append(
            {
                "id": arm_id,
                "label": f"{label}, {cell['label']}",
                "config": {**config, "build": cell["label"]},
                "stats": stats,
                "unit": "tok/s",
            }
        )
    rec["arms"], rec["baseline_arm"] = arms, arms[0]["id"]
    base = arms[0]["stats"]["mean"]
    speedups = [v for _, v in row.get("_speedups") or [] if v is not None]
    for arm, typed in zip(arms[1:], speedups, strict=False):
        computed = arm["stats"]["mean"] / base
        if abs(computed - typed) > 0.006:
            result.findings.append(
                C.KB1101.finding(
                    f"row {index} ({label}): speedup column says {typed:g} but t/s {arm['id']} / t/s {arms[0]['id']} is {computed:.3f}",
                    path=str(path),
                    field="speedup",
                    extra={"row": index, "file": typed, "recomputed": computed},
                )
            )
    versions = [a["config"]["build"] for a in arms]
    rec["conditions"]["engine_version"] = None
    rec["condition_gaps"]["engine_version"] = {
        "reason": f"an A/B table: each arm is a different build ({', '.join(versions)}); see arms[].config.build",
        "checked": ["the llama-bench Markdown A/B table header"],
    }
    rec["name"] += f" ({' vs '.join(versions)})"
    rec["methodology"] = (
        f"llama-bench A/B table ({' vs '.join(versions)}), test {label}: one arm per 't/s' column, baseline = the first; "
        "the table's speedup column is not stored (deltas are computed from the arms) but cross-checked; "
        "each cell is a mean over repetitions, their number not shown."
    )


def apply_sweep(
    rec: dict[str, Any], sweep: dict[str, Any], row: dict[str, Any], label: str, index: int, path: Path, result: IntakeResult
) -> None:
    """Fold a sweep wrapper's fields into the record: build variant into the arm config, peaks into ``submission``, power.

    The wrapper's ``tokens_per_sec`` and ``value`` must repeat llama-bench's
    ``avg_ts`` and n_prompt/n_gen (KB1101 otherwise; llama-bench's own values are kept).
    """
    config = rec["arms"][0]["config"]
    for key, name in (("build", "sweep_build"), ("fa", "sweep_fa_flag"), ("b", "sweep_b_flag"), ("hipblaslt", "sweep_hipblaslt")):
        if sweep.get(key) not in (None, ""):
            config[name] = sweep[key]
    tps, n = sweep.get("tokens_per_sec"), sweep.get("value")
    expected_n = row.get("n_prompt") if sweep.get("mode") == "pp" else row.get("n_gen")
    if isinstance(tps, (int, float)) and not C.close(float(tps), float(row["avg_ts"]), rel=1e-6):
        result.findings.append(
            C.KB1101.finding(f"line {index}: tokens_per_sec {tps} differs from bench_raw.avg_ts {row['avg_ts']}", path=str(path))
        )
    if n is not None and n != expected_n:
        result.findings.append(
            C.KB1101.finding(f"line {index}: value {n} differs from the llama-bench token count {expected_n}", path=str(path))
        )
    sub = rec.setdefault("submission", {})
    for key in ("vram_peak_mib", "gtt_peak_mib", "system_ram_peak_mib", "max_power_w", "median_power_w", "max_temp_c", "duration_s"):
        if isinstance(sweep.get(key), (int, float)):
            sub[f"sweep_{key}"] = sweep[key]
    power = sweep.get("avg_power_w")
    if isinstance(power, (int, float)) and power > 0:
        rec["power_w"] = float(power)
        rec["power_scope"] = None
        rec["energy_basis"] = "avg_power_w of the sweep script over the test (sensor and scope not stated)"
    rec["name"] += f" [{', '.join(str(config[k]) for k in ('sweep_build', 'sweep_fa_flag', 'sweep_b_flag') if k in config)}" + (
        ", hipBLASLt]" if config.get("sweep_hipblaslt") else "]"
    )
