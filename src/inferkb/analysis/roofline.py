"""``roofline`` for a model on N accelerators: decode and prefill ceilings, ridge point, measured runs placed against them.

Built on the calculators of :mod:`inferkb.roofline` (formulas and sources there):

- decode step bytes = active params × bytes per weight + batch × KV bytes per
  sequence at the context (KV from :mod:`inferkb.analysis.fit`'s geometry) ×
  how many copies the N devices read (1 when KV heads split evenly; N for
  MLA's replicated latent);
- decode ceiling per request = N × bandwidth ÷ step bytes (each request gets
  one token per step); aggregate = batch × that, capped by the compute ceiling;
- compute (prefill) ceiling = N × peak dense FLOPs ÷ (2 × active params);
- ridge point = peak FLOPs ÷ bandwidth (FLOP per byte); decode's arithmetic
  intensity at batch B = 2 × active × B ÷ step bytes; the batch where decode
  turns compute-bound solves intensity = ridge.

Measured benchmarks of the same model and accelerator are placed against the
ceilings with *their own* device count: MBU for per-request/per-user decode
rates (bytes per token = weights only, so the MBU is a lower bound when a KV
cache was read too), MFU for throughput (counting the headline's tokens
only, so also a lower bound) against the dense peak of the record's own
weight format, the fastest datapath only when it states none (:func:`mfu_peak`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .. import roofline as calc

# stated_weight_bits and UNKNOWN_FORMAT_BITS lived here; audit.roofline_inputs is their home now (KB506 uses them), kept importable.
from ..audit.roofline_inputs import UNKNOWN_FORMAT_BITS, mfu_peak, stated_weight_bits  # noqa: F401
from .common import AnalysisError, devices_of, is_number, lookup, positive_int, rate_label, require_number
from .fit import DEFAULT_KV_FORMAT, bytes_per_element, fit, input_warnings, kv_geometry, runtime_devices

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

DECODE_RATE_METRICS = ("tok_s_per_user", "decode_tok_s")
THROUGHPUT_METRICS = ("output_tok_s", "total_tok_s", "prefill_tok_s", "tps_aggregate")


@dataclass
class Placed:
    """A measured benchmark against the ceilings: ``utilisation`` is MBU or MFU (``kind``) as a fraction, with its ``basis``."""

    id: str
    metric: str | None
    value: float
    label: str
    devices: int | None
    kind: str | None
    utilisation: float | None
    basis: str


@dataclass
class RooflineResult:
    """Result of :func:`roofline` (rates in tok/s, bandwidth GB/s, compute TFLOPS, intensity FLOP/byte)."""

    model: str
    accelerator: str
    count: int
    batch: int
    context: int
    weight_format: str
    bytes_per_weight: float
    active_params: float
    bandwidth_gbps: float
    peak_tflops: float | None
    peak_precision: str | None
    step_bytes: float
    decode_per_request_tok_s: float
    decode_aggregate_tok_s: float
    decode_aggregate_bound: str
    prefill_tok_s: float | None
    ridge_flop_per_byte: float | None
    decode_intensity_flop_per_byte: float
    compute_bound_batch: float | None
    formula: list[str]
    measured: list[Placed] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    # Whether the weights (and the batch's KV cache at ``context``) fit on the devices, from :func:`fit.fit`;
    # None when the fit could not be computed (``memory_note`` says why). A ceiling for hardware that
    # cannot hold the model is not an answer: the CLI prints a warning first.
    fits_in_memory: bool | None = None
    memory_note: str = ""
    # Why an engine would refuse this setup (TP ``count`` x runtime_devices vs the heads, ``context`` vs the model's
    # maximum): :func:`fit.input_warnings`, the same list ``fit`` gives.
    warnings: list[str] = field(default_factory=list)
    # Devices the runtime lists per accelerator (2 for an MI250 module); the TP degree is count x this.
    runtime_devices: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field."""
        return asdict(self)


def _active_params(mrec: Record) -> float:
    d = mrec.data
    active = d.get("active_params_b")
    if not is_number(active) and d.get("architecture") == "dense":
        active = d.get("params_b")
    if not is_number(active) or active <= 0:
        raise AnalysisError(f"{mrec.path}: field 'active_params_b' is missing; the decode bound reads the active weights")
    return float(active) * 1e9


def roofline(
    kb: KB,
    model: str,
    accelerator: str,
    *,
    count: int = 1,
    fmt: str | None = None,
    batch: int = 1,
    context: int = 0,
    kv_format: str | None = None,
) -> RooflineResult:
    """Ceilings for ``model`` on ``count`` × ``accelerator`` with weights in ``fmt`` at ``batch`` and ``context``.

    ``context`` 0 gives the bound before KV reads (and needs no KV geometry).
    Bandwidth and FLOPs are per accelerator (an MI250 module's aggregate over its two GCDs); the TP degree, which the
    head-divisibility warnings and the KV split read, is ``count`` × the accelerator's ``runtime_devices``.
    Raises :class:`AnalysisError` for unknown ids, a missing bandwidth, FLOPs
    row or model field (named with its record), or non-positive counts.
    """
    count = positive_int(count, "count")
    batch = positive_int(batch, "batch")
    if not isinstance(context, int) or context < 0:
        raise AnalysisError(f"context must be a non-negative integer, got {context!r}")
    mrec = lookup(kb, model, "model")
    arec = lookup(kb, accelerator, "accelerator")
    if not fmt:
        raise AnalysisError("weight format not given (--format, e.g. bf16, fp8-e4m3, nvfp4); bytes per weight decide the bound")
    bpw, bpw_basis = bytes_per_element(kb, fmt, what="weight format")
    active = _active_params(mrec)
    bw = require_number(arec, "memory_bandwidth_gbps")
    peak = calc.peak_dense_tflops(arec.data.get("flops") or [], bpw * 8)
    peak_tflops, peak_prec = peak if peak is not None else (None, None)
    no_peak = f"{arec.path}: field 'flops' has no dense row at {bpw * 8:g} bits or wider; compute ceiling, ridge point and MFU not computed"
    per = runtime_devices(arec)
    tp = count * per
    kv_seq = 0.0
    replicas = 1.0
    kv_note = "context 0: KV reads not included"
    if context > 0:
        geo = kv_geometry(mrec)
        kv_fmt = kv_format or DEFAULT_KV_FORMAT
        bkv, _ = bytes_per_element(kb, kv_fmt, what="KV-cache format")
        kv_seq = geo.bytes_per_sequence(context, bkv)
        # Every rank reads its own share of the cache; a share above 1/N (MLA's replicated latent,
        # or more ranks than KV heads) means the N devices together read more than one copy.
        replicas = geo.rank_fraction(tp) * tp
        devices = f"{tp} runtime devices ({count} x {per} per {arec.id})" if per > 1 else f"{count} devices"
        kv_note = f"KV per sequence at {context} tokens = {kv_seq / 1e6:,.1f} MB ({kv_fmt}); read {replicas:g}x across the {devices}"
    weights = active * bpw
    step = weights + batch * kv_seq * replicas
    per_request = calc.decode_bound_tok_s(bw, count, step)
    aggregate = batch * per_request
    bound = "bandwidth"
    intensity = calc.flops_per_token(active) * batch / step
    formula = [
        f"step bytes = {active:.4g} active params x {bpw:g} B + {batch} x {kv_seq:,.0f} B KV x {replicas:g} = {step:,.4g} B",
        f"decode/request <= {count} x {bw:g} GB/s / {step:,.4g} B = {per_request:,.1f} tok/s",
    ]
    compute = ridge = crit = None
    if peak_tflops is not None:
        compute = calc.flops_bound_tok_s(peak_tflops, count, active)
        if aggregate > compute:
            aggregate, bound = compute, "compute"
        ridge = peak_tflops * 1e12 / (bw * 1e9)
        denom = calc.flops_per_token(active) - ridge * kv_seq * replicas
        crit = ridge * weights / denom if denom > 0 else None
        formula += [
            f"decode aggregate <= min({batch} x {per_request:,.1f}, compute {compute:,.0f}) = {aggregate:,.1f} tok/s ({bound}-bound)",
            f"prefill <= {count} x {peak_tflops:g} TFLOPS ({peak_prec}) / (2 x {active:.4g}) = {compute:,.0f} tok/s",
            f"ridge = {peak_tflops:g} TFLOPS / {bw:g} GB/s = {ridge:,.1f} FLOP/byte; decode intensity at batch {batch} = {intensity:,.2f} FLOP/byte",
        ]
    else:
        formula += [f"decode aggregate <= {batch} x {per_request:,.1f} = {aggregate:,.1f} tok/s (bandwidth only: {no_peak})"]
    result = RooflineResult(
        mrec.id,
        arec.id,
        count,
        batch,
        context,
        fmt,
        bpw,
        active,
        bw,
        peak_tflops,
        peak_prec,
        step,
        per_request,
        aggregate,
        bound,
        compute,
        ridge,
        intensity,
        crit,
        formula,
        assumptions=[
            f"weight format {fmt}: {bpw_basis}",
            kv_note,
            "dense peak FLOPs of the fastest datapath at least as wide as the weights",
        ],
    )
    if peak_tflops is None:
        result.assumptions.append(no_peak)
    if is_number(mrec.data.get("params_b")) and mrec.data["params_b"] * 1e9 > active * 1.01:
        result.assumptions.append(
            "mixture of experts: one token reads the active parameters only; a batch's tokens route to more experts, "
            "so bytes per step grow toward all parameters and the bound at batch > 1 is optimistic"
        )
    result.warnings = input_warnings(mrec, tp, context, runtime_devices=per)
    result.runtime_devices = per
    result.fits_in_memory, result.memory_note = _memory_check(kb, mrec, arec, count, fmt, kv_format, context, batch)
    result.measured = [_place(kb, rec, weights, active, bw, arec) for rec in _measured(kb, mrec.id, arec.id)]
    return result


def _memory_check(
    kb: KB, mrec: Record, arec: Record, count: int, fmt: str, kv_format: str | None, context: int, batch: int
) -> tuple[bool | None, str]:
    """``(fits, note)`` from :func:`fit.fit` at the same devices, format, batch and context; the note names the context.

    Context 0 (the ceilings without KV reads) is checked at 1 token per request, and the note adds the answer at
    the model's maximum context (``fit``'s default), which is what a served model is sized for. ``fits`` is the
    answer at the roofline's own context.
    """
    checked = max(context, 1)
    try:
        f = fit(kb, mrec.id, arec.id, count=count, fmt=fmt, kv_format=kv_format, context=checked, batch=batch)
    except AnalysisError as e:
        return None, f"memory fit not checked: {e}"
    unit = "accelerator" if f.runtime_devices > 1 else "device"  # an MI250's memory is per module (two runtime devices)
    need = (f.weights_per_device + f.kv_per_device) / 1e9
    have = f.usable_per_device / 1e9
    where = f"at context {checked:,} (batch {batch})" + (" since --context is 0" if context == 0 else "")
    if f.fits:
        note = f"fits in memory {where}: {need:,.1f} GB per {unit} of {have:,.1f} GB usable (inferkb fit)"
        max_pos = mrec.data.get("max_position_embeddings")
        if context == 0 and isinstance(max_pos, int) and not isinstance(max_pos, bool) and max_pos > 1:
            full = fit(kb, mrec.id, arec.id, count=count, fmt=fmt, kv_format=kv_format, context=max_pos, batch=batch)
            at_max = (full.weights_per_device + full.kv_per_device) / 1e9
            note += f"; at the model's maximum context {max_pos:,}: {'fits' if full.fits else 'does not fit'}, {at_max:,.1f} GB per {unit}"
        return True, note
    return False, (
        f"does not fit in memory {where}: {need:,.1f} GB per {unit} needed (weights {f.weights_per_device / 1e9:,.1f} GB), "
        f"{have:,.1f} GB usable on each of {count} x {arec.id}; these ceilings assume hardware that could hold the model"
    )


def _measured(kb: KB, model_id: str, acc_id: str) -> list[Record]:
    if "benchmark" not in kb.profile.types:
        return []
    return [
        r
        for r in kb.by_type("benchmark")
        if r.data.get("model_id") == model_id and list(dict.fromkeys(r.data.get("accelerator_ids") or [])) == [acc_id]
    ]


def _place(kb: KB, rec: Record, weights: float, active: float, bw: float, arec: Record) -> Placed:
    d = rec.data
    metric, value = d.get("metric"), d.get("value")
    label = rate_label(d)
    if not is_number(value) or value <= 0:
        return Placed(rec.id, metric, 0.0, label, None, None, None, "no positive value")
    scope = d.get("value_scope")
    if metric in DECODE_RATE_METRICS and scope in ("per-request", "per-user"):
        devices, basis = devices_of(d)
        if devices is None:
            return Placed(rec.id, metric, float(value), label, None, None, None, basis)
        util = calc.mbu(float(value), weights, bw, devices)
        return Placed(
            rec.id,
            metric,
            float(value),
            label,
            devices,
            "MBU",
            util,
            f"weights only ({weights / 1e9:.1f} GB per token) on {devices} devices; a lower bound",
        )
    if metric in THROUGHPUT_METRICS or metric in DECODE_RATE_METRICS:
        if scope == "per-device":
            devices, basis = 1, "per device"
        else:
            devices, basis = devices_of(d)
        if devices is None:
            return Placed(rec.id, metric, float(value), label, None, None, None, basis)
        peak, which = mfu_peak(kb, d, arec.data)
        if peak is None:
            return Placed(rec.id, metric, float(value), label, devices, None, None, f"no dense FLOPs row ({which})")
        util = calc.mfu(float(value), active, peak[0], devices)
        return Placed(
            rec.id,
            metric,
            float(value),
            label,
            devices,
            "MFU",
            util,
            f"vs {peak[0]:g} TFLOPS {peak[1]} x {devices} ({which}); headline tokens only; a lower bound",
        )
    return Placed(rec.id, metric, float(value), label, None, None, None, f"metric {metric!r} is not a token rate")
