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
FLOPs — the single accelerator record; device count — ``value_scope``
per-device (1) or "per N-GPU node" (N), else ``accelerator_count``, else a
count stated in ``name``/``unit``/``methodology`` ("8x H100", "72 GPUs",
"single MI300X"). When an input is missing the record is skipped with an info
finding naming it; nothing is guessed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import roofline
from ..hardware import record_accelerator_tokens
from ..rules import Rule, register
from . import AuditResult, audit
from .metric_consistency import _measured_mismatch, metric_info, value_scope

# Record inputs (model size, weight bits, device count) live in roofline_inputs; still importable from here.
from .roofline_inputs import (  # noqa: F401
    UNKNOWN_FORMAT_BITS,
    _accelerator,
    accelerator_tokens,
    candidate_counts,
    device_count,
    match_model,
    mfu_peak,
    model_size,
    stated_weight_bits,
    storage_bits,
    weight_bytes,
)

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

MBU_SUSPICIOUS = 0.90
DECODE_METRICS = {"decode_tok_s", "tok_s_per_user"}
LATENCY_PER_TOKEN = {"tpot_ms", "itl_ms"}
THROUGHPUT_METRICS = {"prefill_tok_s", "tps_aggregate", "output_tok_s", "total_tok_s"}

KB501 = register(
    Rule(
        "KB501",
        "decode-rate-impossible",
        "error",
        "physical-plausibility",
        "A per-request decode rate exceeds the memory-bandwidth ceiling (implied MBU > 100%).",
        "Every decode step reads at least the active weights once; no engine can emit one request's tokens faster than aggregate bandwidth "
        "divided by those bytes. Speculative decoding can beat it (several tokens per read) and then the finding is a warning.",
        "Llama 3.1 8B BF16 on 1x H100 (3350 GB/s): 150 tok/s -> MBU 72%",
        "Llama 3.3 70B 4-bit on 1x RTX 5090 (1792 GB/s): 60 tok/s -> MBU 118%",
    )
)
KB502 = register(
    Rule(
        "KB502",
        "decode-rate-suspicious",
        "warning",
        "physical-plausibility",
        "A per-request decode rate implies MBU between 90% and 100%.",
        "Real decode kernels reach roughly 50-85% of peak bandwidth; above 90% the number, the model size, the format or the hardware is probably misstated.",
        "MBU 70%",
        "MBU 96%",
    )
)
KB503 = register(
    Rule(
        "KB503",
        "throughput-impossible",
        "error",
        "physical-plausibility",
        "A throughput or prefill rate exceeds peak dense FLOPs at the format's precision (implied MFU > 100%).",
        "Each token costs about 2 x active parameters FLOPs in the forward pass (Kaplan et al. 2020); the devices cannot do more FLOPs than their peak.",
        "Llama 2 70B FP8 on 8x H100: 30,000 tok/s -> MFU 27%",
        "Llama 2 70B FP8 on 1x H100: 30,000 tok/s -> MFU 212%",
    )
)
KB504 = register(
    Rule(
        "KB504",
        "roofline-unchecked",
        "info",
        "physical-plausibility",
        "A rate could not be checked against the roofline; the finding names the missing input.",
        "A check that silently skips looks like a pass; naming the missing input (model size, format, bandwidth, device count, scope) says what would make it checkable.",
        "model, format, accelerator and count all resolved",
        "model 'DeepSeek-V4.1-Flash' matches no model record and its name is MoE-looking",
    )
)
KB505 = register(
    Rule(
        "KB505",
        "bound-needs-device-count",
        "warning",
        "physical-plausibility",
        "The rate exceeds what one device could do and the record does not state how many devices ran it.",
        "With the count unknown the rate is either impossible (one device) or from an unrecorded multi-device run; either way the record must say.",
        '{"accelerator_count": 2, ...}',
        "70B 4-bit at 45 tok/s on 'RTX 5090', count not stated -> 108% of one device",
    )
)

KB506 = register(
    Rule(
        "KB506",
        "mfu-above-stated-format-peak",
        "warning",
        "physical-plausibility",
        "A throughput or prefill rate implies MFU above 100% of the dense peak at the record's STATED weight format.",
        "`inferkb roofline` and the site's roofline page measure MFU against the dense peak of the format the record states "
        "(format_id, else submission.weight_data_types: mfu_peak). KB503 checks the format the weights are "
        "stored in (a harness's own file size first), which can be narrower and so faster; when only the stated format puts "
        "the rate above the peak, the reader sees an MFU no hardware can produce. Usual causes: a wrong format_id, a wrong "
        "device count, or a per-system value labelled per accelerator.",
        "Llama 2 70B FP16 on 1x B200: 12,000 tok/s -> 75% of the 2,250 TFLOPS BF16 peak",
        "Llama 2 70B stated FP16, file size 4.5 bits, on 1x H100: 8,000 tok/s -> 113% of the 989.5 TFLOPS BF16 peak",
    )
)

_SPEC_DECODE = re.compile(r"speculative|\bmtp\b|\beagle\d?\b|\bmedusa\b|draft model|lookahead|\bdspark\b", re.I)


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
    if missing:
        figures["unchecked"] += 1
        return [KB504.finding(f"{metric} not checked against the roofline: " + "; ".join(missing), extra={"missing": missing}, **where)]

    size_note = (
        f"{params / 1e9:g}B active parameters from model record {size_info['model']}"
        if size_info["basis"] == "model record"
        else f"{params / 1e9:g}B parameters taken from the model NAME {size_info['model']!r} (dense-looking, no model record)"
    )
    n = devices or 1
    if kind == "decode":
        kv, context, batch = size_info.get("kv_bytes_per_token"), (data.get("conditions") or {}).get("input_tokens"), 1
        kv_note = "KV cache not counted (context or KV bytes per token unknown), so the true MBU is higher"
        if isinstance(kv, (int, float)) and kv > 0 and isinstance(context, int) and context > 0:
            cond = data.get("conditions") or {}
            batch = next((b for b in (cond.get("batch_size"), cond.get("concurrency")) if isinstance(b, int) and b > 0), 1)
            kv_note = f"KV cache {kv:g} B/token x {context} prompt tokens x batch {batch} included"
        else:
            kv, context = 0.0, 0
        per_token = roofline.bytes_per_decode_token(params, bpw, kv_bytes_per_token=kv, context_tokens=context, batch=batch)
        util = roofline.mbu(rate, per_token, bw, n)
        what = "MBU"
        detail = (
            f"{rate:g} tok/s x {per_token / 1e9:.3g} GB/token = {rate * per_token / 1e9:.4g} GB/s vs {n} x {bw:g} GB/s "
            f"({acc.id}); {size_note}; {fmt_basis}; {kv_note}; devices: {dev_basis}"
        )
    else:
        tflops, precision = peak
        util = roofline.mfu(rate, params, tflops, n)
        what = "MFU"
        detail = (
            f"{rate:g} tok/s x 2 x {params / 1e9:g}e9 FLOP = {rate * 2 * params / 1e12:.4g} TFLOP/s vs {n} x {tflops:g} dense {precision} TFLOPS "
            f"({acc.id}); {size_note}; {fmt_basis if bpw else 'format unknown, so the fastest dense peak of any precision is used'}; devices: {dev_basis}"
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
        spec = kind == "decode" and any(_SPEC_DECODE.search(data.get(f) or "") for f in ("name", "unit", "methodology", "notes"))
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
    peak, which = mfu_peak(kb, rec.data, acc.data.get("flops") or [])
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


@audit("physical-plausibility", "Decode rates vs memory-bandwidth roofline (MBU) and throughput vs peak FLOPs (MFU).", cost=0.3)
def run(kb: KB) -> AuditResult:
    """Check every benchmark's rate against its roofline.

    Figures: ``rate_records`` (records with a checkable rate), ``unchecked``
    (inputs missing, see KB504), ``mbu_bands``/``mfu_bands`` (counts by band)
    and ``per_record`` ``{id: {"mbu"|"mfu", "devices", "size_basis"[, "note"]}}``.
    """
    result = AuditResult("physical-plausibility")
    bands = {"<=50%": 0, "50-90%": 0, "90-100%": 0, ">100%": 0}
    figures: dict[str, Any] = {"rate_records": 0, "unchecked": 0, "mbu_bands": dict(bands), "mfu_bands": dict(bands), "per_record": {}}
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            result.findings.extend(_check(kb, rec, figures))
    result.figures = figures
    return result
