"""Audit ``device-count``: a benchmark's stated accelerator count against the other numbers that imply one.

Per-device figures (``per_accelerator``, tok/s/GPU rankings) are only as right
as their divisor. Two independent checks, each only where both sides exist:

- KB1201 ``count-vs-parallelism`` (warning): the parallel layout
  ``tensor_parallel x pipeline_parallel x data_parallel`` (data parallel =
  the number of engine workers/replicas; expert parallel shards inside those
  devices and adds none) needs that many runtime devices. The record has
  ``accelerator_count x runtime_devices`` of them: ``runtime_devices`` is the
  accelerator record's number of devices the runtime exposes per accelerator
  (:func:`runtime_devices`; 2 for an MI250 module, whose two GCDs ROCm lists
  as two GPUs; 1 when absent or when the record names several parts). A layout
  larger than that is impossible; a smaller one that does not divide it
  leaves devices unexplained. Missing factors count as 1 only when at least
  TP is stated.
- KB1202 ``count-vs-power`` (warning): measured system power divided by the
  count, against the accelerator record's ``tdp_w``. ``power_w / count`` above
  2x TDP says the count is too small (the host adds some power, never a
  second accelerator's worth); below 0.1x TDP says it is too large (no
  accelerator under load idles at a tenth of its board power). The bounds are
  deliberately loose: the check finds counts that are off by a factor, such
  as cards counted instead of GPUs or per-node counts taken for totals. Only
  ``power_scope`` ``node`` or ``rack`` (whole-system power) is compared.

Figures: ``{"checked_parallelism": n, "checked_power": n, "mismatch_parallelism": n, "mismatch_power": n}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB

KB1201 = register(
    Rule(
        "KB1201",
        "count-vs-parallelism",
        "warning",
        "device-count",
        "accelerator_count (x the accelerator's runtime_devices) disagrees with the parallel layout (TP x PP x DP) the record states.",
        "A run with tensor parallel 8 on 4 devices is impossible, and 8 devices serving TP 2 with no data parallelism leave 6 "
        "devices unexplained; either way a per-device figure divides by the wrong number.",
        '{"accelerator_count": 8, "conditions": {"tensor_parallel": 4, "data_parallel": 2}}',
        '{"accelerator_count": 4, "conditions": {"tensor_parallel": 8}}',
    )
)
KB1202 = register(
    Rule(
        "KB1202",
        "count-vs-power",
        "warning",
        "device-count",
        "Measured system power per stated accelerator is implausible against the part's TDP (count off by a factor).",
        "power_w / accelerator_count above 2x the accelerator's TDP means more devices drew the power than the count says; "
        "below 0.1x TDP means fewer did. Either way the per-device figures divide by the wrong count.",
        '{"accelerator_count": 8, "power_w": 7200, "power_scope": "node", "accelerator_ids": ["nvidia-h200-sxm"]}  (900 W per device, TDP 700 W)',
        '{"accelerator_count": 1, "power_w": 7200, "power_scope": "node", "accelerator_ids": ["nvidia-h200-sxm"]}  (7200 W per device)',
    )
)
POWER_HIGH, POWER_LOW = 2.0, 0.1


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else None


def runtime_devices(kb: KB) -> dict[str, int]:
    """``{accelerator id: runtime_devices}`` for the accelerator records that state a valid one (an integer >= 1)."""
    if "accelerator" not in kb.profile.types:
        return {}
    return {a.id: n for a in kb.by_type("accelerator") if (n := _int(a.data.get("runtime_devices"))) is not None}


def devices_per_accelerator(data: dict, per_part: dict[str, int]) -> int:
    """Runtime devices per counted accelerator of one benchmark: its one part's ``runtime_devices`` (``per_part`` from
    :func:`runtime_devices`), else 1 (no part, an unknown one, or several parts: nothing says how to weigh them)."""
    ids = {a for a in data.get("accelerator_ids") or [] if isinstance(a, str)}
    return per_part.get(next(iter(ids)), 1) if len(ids) == 1 else 1


@audit("device-count", "stated accelerator counts against parallel layout (TP x PP x DP) and power per device", cost=0.05)
def run(kb: KB) -> AuditResult:
    """KB1201/KB1202 findings and counts of the records each check could compare."""
    findings = []
    figures = {"checked_parallelism": 0, "checked_power": 0, "mismatch_parallelism": 0, "mismatch_power": 0}
    tdp = {}
    per_part = runtime_devices(kb)
    if "accelerator" in kb.profile.types:
        for acc in kb.by_type("accelerator"):
            w = acc.data.get("tdp_w")
            if isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0:
                tdp[acc.id] = float(w)
    for rec in kb.by_type("benchmark"):
        data = rec.data
        count = _int(data.get("accelerator_count"))
        if count is None:
            continue
        where = {"record": rec.key, "path": rec.path}
        cond = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
        tp = _int(cond.get("tensor_parallel"))
        if tp is not None:
            pp, dp = _int(cond.get("pipeline_parallel")) or 1, _int(cond.get("data_parallel")) or 1
            layout = tp * pp * dp
            per = devices_per_accelerator(data, per_part)
            devices = count * per
            figures["checked_parallelism"] += 1
            if layout > devices or devices % layout:
                figures["mismatch_parallelism"] += 1
                why = "more devices than the count" if layout > devices else f"{devices - layout} of {devices} devices unexplained"
                stated = f"accelerator_count {count}" + (f" x {per} runtime devices = {devices}" if per > 1 else "")
                findings.append(
                    KB1201.finding(
                        f"{stated} vs TP {tp} x PP {pp} x DP {dp} = {layout}: {why}",
                        field="accelerator_count",
                        extra={"count": count, "runtime_devices": per, "layout": layout},
                        **where,
                    )
                )
        power, scope = data.get("power_w"), data.get("power_scope")
        ids = [a for a in data.get("accelerator_ids") or [] if isinstance(a, str)]
        if isinstance(power, (int, float)) and not isinstance(power, bool) and power > 0 and scope in ("node", "rack") and len(ids) == 1:
            part_tdp = tdp.get(ids[0])
            if part_tdp is None:
                continue
            figures["checked_power"] += 1
            per = power / count
            ratio = per / part_tdp
            if ratio > POWER_HIGH or ratio < POWER_LOW:
                figures["mismatch_power"] += 1
                side = "too small" if ratio > POWER_HIGH else "too large"
                findings.append(
                    KB1202.finding(
                        f"power_w {power:g} W / accelerator_count {count} = {per:.0f} W per device, {ratio:.2f}x the "
                        f"{part_tdp:g} W TDP of {ids[0]}: the count looks {side}",
                        field="accelerator_count",
                        extra={"per_device_w": round(per, 1), "tdp_w": part_tdp, "ratio": round(ratio, 3)},
                        **where,
                    )
                )
    return AuditResult("device-count", findings, figures)
