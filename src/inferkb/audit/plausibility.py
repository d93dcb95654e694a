"""Audit ``physical-plausibility``: can the hardware have produced the benchmark's number at all?

For a per-request decode rate (``decode_tok_s`` / ``tok_s_per_user`` counted
per request, or ``tpot_ms`` / ``itl_ms`` converted as 1000 / ms) the ceiling is
the memory roofline: aggregate bandwidth ÷ bytes read per token (active
parameters × bytes per weight, plus the KV cache when the context is known).
The implied model bandwidth utilisation (MBU) above 100% is impossible, above
90% suspicious. For throughput and prefill (``prefill_tok_s``,
``tps_aggregate``, ``output_tok_s``, ``total_tok_s``, and a decode rate
counted per device/node/aggregate) the ceiling is peak dense FLOPs ÷ 2 ×
active parameters per token; MFU above 100% is impossible. That peak is the
stored format's (a harness's file size first); when only the peak of the
record's stated format (what ``inferkb roofline`` and the site divide by) puts
MFU above 100%, the finding is KB506, a warning. Formulas and their sources are
in :mod:`inferkb.roofline`.

Inputs and where they come from, in order: model size — the model record
(``model_id``, or the ``model`` text matched against model ids, names and
aliases), else the size in the model's name *only* for a dense-looking name
(never for MoE names such as "8x7B", "A3B", "MoE", "Mixtral", "DeepSeek-V3",
"gpt-oss"), and the finding says so; weight format — the ``format_id``
record's bits, else format tokens in ``format_id``/``model``/``name`` (the
smallest width named, which keeps the bound conservative); bandwidth and peak
FLOPs — the single accelerator record (a record with no ``accelerator_ids`` but
candidate parts in ``accelerator_alternates`` is checked against each of them:
:mod:`inferkb.audit.plausibility_candidates`); device count — ``value_scope``
per-device (1) or "per N-GPU node" (N), else ``accelerator_count``, else a
count stated in ``name``/``unit``/``methodology`` ("8x H100", "72 GPUs",
"single MI300X"). When an input is missing the record is skipped with an info
finding naming it; nothing is guessed. A dense ceiling the accelerator record
itself marks incomplete (a sparse row with no dense row of its precision, or a
``spec_gaps["flops.<precision>"]`` entry for a faster usable precision with no
row) is such a missing input:
:func:`inferkb.audit.roofline_inputs.incomplete_ceiling`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import roofline
from ..hardware import record_accelerator_tokens
from . import AuditResult, audit, record_cache
from .metric_consistency import _measured_mismatch, metric_info, value_scope
from .plausibility_cache import add_figures, compact, figures_skeleton, plausibility_cache, well_formed
from .plausibility_candidates import check_candidates
from .plausibility_rules import KB501, KB502, KB503, KB504, KB505, KB506, KB507, MBU_SUSPICIOUS, SPEC_DECODE  # noqa: F401

# Record inputs (model size, weight bits, device count) live in roofline_inputs; still importable from here.
from .roofline_inputs import (  # noqa: F401
    UNKNOWN_FORMAT_BITS,
    _accelerator,
    accelerator_tokens,
    candidate_counts,
    decode_bytes,
    device_count,
    incomplete_ceiling,
    match_model,
    mfu_peak,
    model_size,
    size_note,
    stated_weight_bits,
    storage_bits,
    weight_bytes,
)

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

DECODE_METRICS = {"decode_tok_s", "tok_s_per_user"}
LATENCY_PER_TOKEN = {"tpot_ms", "itl_ms"}
THROUGHPUT_METRICS = {"prefill_tok_s", "tps_aggregate", "output_tok_s", "total_tok_s"}


def _band(x: float) -> str:
    return ">100%" if x > 1 else "90-100%" if x > MBU_SUSPICIOUS else "50-90%" if x > 0.5 else "<=50%"


def _check(kb: KB, rec: Record, figures: dict[str, Any]) -> list:
    data = rec.data
    metric, value = data.get("metric"), data.get("value")
    if metric not in DECODE_METRICS | LATENCY_PER_TOKEN | THROUGHPUT_METRICS:
        return []
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return []
    where = {"record": rec.key, "path": rec.path, "field": "value"}
    info = metric_info(kb, metric)
    if info and _measured_mismatch(data, info):
        return [KB504.finding(f"{metric} not checked: the record's unit/name contradict the metric (see KB401)", **where)]
    scope_hit = value_scope(data)
    scope = scope_hit[0] if scope_hit else None
    if metric in LATENCY_PER_TOKEN:
        kind, rate = "decode", 1000.0 / value
    elif metric == "tok_s_per_user" or (metric == "decode_tok_s" and scope == "per-request"):
        kind, rate = "decode", float(value)
    elif metric == "decode_tok_s" and scope is None:
        return [
            KB504.finding("decode_tok_s not checked: the text does not say whether the rate is per request or summed over a batch", **where)
        ]
    else:
        kind, rate = "throughput", float(value)
    figures["rate_records"] += 1

    params, size_info = model_size(kb, data)
    acc, acc_missing = _accelerator(kb, data)
    known = kb.cached("conditions.device_counts", dict).get(rec.key)
    devices, dev_basis = device_count(data, scope, record_accelerator_tokens(kb, data), known=known)
    if acc is None and not data.get("accelerator_ids") and data.get("accelerator_alternates"):
        return check_candidates(
            kb, rec, figures, kind=kind, rate=rate, params=params, size_info=size_info, devices=devices, dev_basis=dev_basis
        )
    missing = [size_info["missing"]] if params is None else []
    if acc is None:
        missing.append(acc_missing)
    if kind == "decode":
        bpw, fmt_basis = weight_bytes(kb, data)
        if bpw is None:
            missing.append(fmt_basis)
        bw = acc.data.get("memory_bandwidth_gbps") if acc else None
        if acc is not None and not (isinstance(bw, (int, float)) and bw > 0):
            missing.append(f"accelerator {acc.id} has no memory_bandwidth_gbps")
    else:
        bpw, fmt_basis = weight_bytes(kb, data)
        peak = roofline.peak_dense_tflops(acc.data.get("flops") or [], (bpw or 0) * 8) if acc else None
        if acc is not None and peak is None:
            missing.append(
                f"accelerator {acc.id} has no dense flops row at {bpw * 8:g}-bit or wider"
                if bpw
                else f"accelerator {acc.id} has no dense flops row"
            )
        elif acc is not None and (why := incomplete_ceiling(acc.data, (bpw or 0) * 8, peak)):
            missing.append(f"accelerator {acc.id}: {why}")
    if missing:
        figures["unchecked"] += 1
        return [KB504.finding(f"{metric} not checked against the roofline: " + "; ".join(missing), extra={"missing": missing}, **where)]

    sized = size_note(params, size_info)
    n = devices or 1
    if kind == "decode":
        per_token, kv_note = decode_bytes(data, params, bpw, size_info)
        util = roofline.mbu(rate, per_token, bw, n)
        what = "MBU"
        detail = (
            f"{rate:g} tok/s x {per_token / 1e9:.3g} GB/token = {rate * per_token / 1e9:.4g} GB/s vs {n} x {bw:g} GB/s "
            f"({acc.id}); {sized}; {fmt_basis}; {kv_note}; devices: {dev_basis}"
        )
    else:
        tflops, precision = peak
        util = roofline.mfu(rate, params, tflops, n)
        what = "MFU"
        detail = (
            f"{rate:g} tok/s x 2 x {params / 1e9:g}e9 FLOP = {rate * 2 * params / 1e12:.4g} TFLOP/s vs {n} x {tflops:g} dense {precision} TFLOPS "
            f"({acc.id}); {sized}; {fmt_basis if bpw else 'format unknown, so the fastest dense peak of any precision is used'}; devices: {dev_basis}"
        )
    entry = {what.lower(): round(util, 4), "devices": devices, "size_basis": size_info["basis"]}
    if devices is None:
        entry["note"] = "device count unknown: utilisation of ONE device, an upper bound"
    figures["per_record"][rec.id] = entry
    figures[f"{what.lower()}_bands"][_band(util)] += 1
    extra = {what.lower(): round(util, 4), "devices": devices, "size_basis": size_info["basis"]}
    if devices is None and util > 1:
        counts, basis = candidate_counts(data) if data.get("accelerator_count") is None else ([], "")
        if counts:
            low, high = util / counts[-1], util / counts[0]
            entry.update({"candidate_counts": counts, what.lower(): round(high, 4), "note": f"count unknown; candidates {basis}"})
            figures[f"{what.lower()}_bands"][_band(util)] -= 1
            figures[f"{what.lower()}_bands"][_band(high)] += 1
            if low > 1:
                rule = KB501 if kind == "decode" else KB503
                return [
                    rule.finding(
                        f"{metric} {value:g} implies {what} {low:.0%} even at the largest candidate count {counts[-1]} ({basis}): {detail}",
                        extra=extra,
                        **where,
                    )
                ]
            if high > 1:
                return [
                    KB505.finding(
                        f"{metric} {value:g} implies {what} {high:.0%} at {counts[0]} devices but {low:.0%} at {counts[-1]}; "
                        f"the candidate counts ({basis}) do not settle it: {detail}",
                        extra=extra,
                        **where,
                    )
                ]
            return []
    if devices is None:
        if util > 1:
            return [
                KB505.finding(
                    f"{metric} {value:g} implies {what} {util:.0%} of ONE device and the device count is not stated: {detail}",
                    extra=extra,
                    **where,
                )
            ]
        return []
    if kind == "throughput" and util <= 1:
        return _stated_format_mfu(kb, rec, acc, rate, params, n, dev_basis, extra, where)
    if util > 1:
        rule = KB501 if kind == "decode" else KB503
        spec = kind == "decode" and any(SPEC_DECODE.search(data.get(f) or "") for f in ("name", "unit", "methodology", "notes"))
        if spec:
            return [
                rule.finding(
                    f"{metric} {value:g} implies {what} {util:.0%}: possible only because the text mentions speculative decoding "
                    f"(several tokens per weight read): {detail}",
                    severity="warning",
                    extra=extra,
                    **where,
                )
            ]
        return [rule.finding(f"{metric} {value:g} implies {what} {util:.0%} (> 100%, impossible): {detail}", extra=extra, **where)]
    if kind == "decode" and util > MBU_SUSPICIOUS:
        return [KB502.finding(f"{metric} {value:g} implies {what} {util:.0%} (> 90%): {detail}", extra=extra, **where)]
    return []


def _stated_format_mfu(
    kb: KB, rec: Record, acc: Record, rate: float, params: float, devices: int, dev_basis: str, extra: dict, where: dict
) -> list:
    """KB506 when the MFU against the stated format's dense peak (what ``inferkb roofline`` and the site show) is above 100%."""
    peak, which = mfu_peak(kb, rec.data, acc.data)
    if peak is None:
        return []
    tflops, precision = peak
    util = roofline.mfu(rate, params, tflops, devices)
    if util <= 1:
        return []
    metric, value = rec.data.get("metric"), rec.data.get("value")
    return [
        KB506.finding(
            f"{rec.id}: {metric} {value:g} implies MFU {util:.0%} against {devices} x {tflops:g} dense {precision} TFLOPS ({acc.id}; "
            f"{which}), more than any hardware can do; likely a wrong format_id, a wrong device count ({dev_basis}) or a "
            "per-system value labelled per accelerator",
            extra=dict(extra, mfu_stated_format=round(util, 4), peak_tflops=tflops, peak_precision=precision),
            **where,
        )
    ]


def _cost(kb: KB) -> float:
    """Seconds per 20,000 synthetic records (see :class:`inferkb.audit.AuditSpec`), less what the cache holds."""
    if "benchmark" not in kb.profile.types:
        return 0.01
    return 0.1 + 0.7 * (1.0 - record_cache.hit_share(plausibility_cache(kb), kb, list(kb.by_type("benchmark"))))


@audit(
    "physical-plausibility",
    "Decode rates vs memory-bandwidth roofline (MBU) and throughput vs peak FLOPs (MFU).",
    cost=_cost,
    group="conditions",
)
def run(kb: KB) -> AuditResult:
    """Check every benchmark's rate against its roofline.

    Figures: ``rate_records`` (records with a checkable rate), ``unchecked``
    (inputs missing, see KB504), ``mbu_bands``/``mfu_bands`` (counts by band)
    and ``per_record`` ``{id: {"mbu"|"mfu", "devices", "size_basis"[, "note"]}}``
    for records with one accelerator; ``candidate_ranges`` (records known only
    up to a family, checked against every part in ``accelerator_alternates``)
    and ``candidate_per_record`` (see
    :func:`inferkb.audit.plausibility_candidates.check_candidates`), which the
    bands do not count.
    """
    result = AuditResult("physical-plausibility")
    figures = figures_skeleton()
    cache = plausibility_cache(kb)
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            if cache is None:  # no cache: straight into the totals
                result.findings.extend(_check(kb, rec, figures))
                continue
            kept = record_cache.stored(cache, kb, rec, well_formed)
            if kept is None:
                part = figures_skeleton()
                found = _check(kb, rec, part)
                part = compact(part)
                rows = record_cache.finding_rows(found, rec)
                if rows is not None:
                    record_cache.store(cache, kb, rec, [rows, part])
            else:
                rows, part = kept
                found = record_cache.findings_from(rows, rec)
            result.findings.extend(found)
            add_figures(figures, part)
    if cache is not None:
        cache.save()
    result.figures = figures
    return result
