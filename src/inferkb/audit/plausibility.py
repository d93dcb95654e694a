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
from ..hardware import accelerator_tokens as hardware_tokens
from ..hardware import normalise, record_accelerator_tokens
from ..rules import Rule, register
from . import AuditResult, audit
from .conditions_text import DeviceCount
from .conditions_text import device_count as read_device_count
from .metric_consistency import _measured_mismatch, metric_info, value_scope

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

_MOE_NAME = re.compile(
    r"\d+\s*x\s*\d+(?:\.\d+)?\s*b\b|(?<![a-z0-9])a\d+(?:\.\d+)?b\b|\bmoe\b|mixtral|deepseek[\s_-]*(?:v\d|r\d|coder[\s_-]*v2)|"
    r"gpt[\s_-]*oss|\bactive\b|\bkimi\b|\bglm[\s_-]*4\.[5-9]|qwen\d(?:\.\d)?[\s_-]*next|maverick|scout|\bdbrx\b|\bjamba\b|minimax|\barctic\b|\bexperts?\b",
    re.I,
)
_NAME_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bB])\b")
_SPEC_DECODE = re.compile(r"speculative|\bmtp\b|\beagle\d?\b|\bmedusa\b|draft model|lookahead|\bdspark\b", re.I)
_PER_N_NODE = re.compile(r"\bper[ -](\d+)[ -]gpu[ -](?:node|server|host)\b", re.I)


def _model_index(kb: KB) -> list[tuple[str, Record]]:
    return kb.cached("plausibility.models", lambda: _build_model_index(kb))


def _build_model_index(kb: KB) -> list[tuple[str, Record]]:
    index: list[tuple[str, Record]] = []
    if "model" in kb.profile.types:
        for rec in kb.by_type("model"):
            for label in [rec.id, rec.data.get("name")] + list(rec.data.get("aliases") or []):
                if isinstance(label, str) and normalise(label):
                    index.append((normalise(label), rec))
    return index


def match_model(kb: KB, text: str) -> tuple[list[Record], str | None]:
    """Model records whose id/name/alias occurs in ``text`` as whole tokens: ``(records, matched label)``.

    A label followed by a digit token after a digit ("DeepSeek-V3" in
    "DeepSeek-V3.2") is a different version and does not match. The longest
    label wins when it contains the others; more than one record left means ambiguous.
    """
    norm = f" {normalise(text)} "
    hits: list[tuple[str, Record]] = []
    for label, rec in _model_index(kb):
        start = norm.find(f" {label} ")
        while start >= 0:
            after = norm[start + len(label) + 2 :]
            next_token = after.split(" ", 1)[0]
            if not (label[-1].isdigit() and next_token.isdigit()):
                hits.append((label, rec))
                break
            start = norm.find(f" {label} ", start + 1)
    if not hits:
        return [], None
    longest = max(hits, key=lambda h: len(h[0]))
    records = {h[1].id: h[1] for h in hits if h[1].id == longest[1].id or h[0] not in longest[0]}
    return list(records.values()), longest[0]


def model_size(kb: KB, data: dict[str, Any]) -> tuple[float | None, dict[str, Any]]:
    """Active parameters (count) of the benchmark's model and how they were found.

    Returns ``(active_params, info)``; ``info`` has ``basis`` ("model record",
    "model name") and ``model``/``kv_bytes_per_token`` or ``missing`` (why
    ``None``). Name-derived sizes only for dense-looking names (module docstring).
    """
    rec = kb.resolve(data["model_id"], "model") if data.get("model_id") else None
    text = data.get("model") if isinstance(data.get("model"), str) else ""
    if rec is None and text:
        records, _ = match_model(kb, text)
        if len(records) > 1:
            return None, {"missing": f"model text {text!r} matches several model records ({', '.join(r.id for r in records)})"}
        rec = records[0] if records else None
    if rec is not None:
        m = rec.data
        active = m.get("active_params_b")
        if not isinstance(active, (int, float)) and m.get("architecture") == "dense":
            active = m.get("params_b")
        if not isinstance(active, (int, float)) or active <= 0:
            return None, {"missing": f"model record {rec.id} gives no active parameter count"}
        return active * 1e9, {"basis": "model record", "model": rec.id, "kv_bytes_per_token": m.get("kv_cache_bytes_per_token")}
    if not text:
        return None, {"missing": "no model named (model_id and model are empty)"}
    if _MOE_NAME.search(text):
        return None, {
            "missing": f"model {text!r} matches no model record and its name looks like a mixture-of-experts model, "
            "whose active size a name does not give"
        }
    sizes = {float(m.group(1)) for m in _NAME_SIZE.finditer(text)}
    if len(sizes) != 1:
        why = "names no size" if not sizes else f"names several sizes ({', '.join(f'{s:g}B' for s in sorted(sizes))})"
        return None, {"missing": f"model {text!r} matches no model record and its name {why}"}
    size = sizes.pop()
    return size * 1e9, {"basis": "model name", "model": text, "kv_bytes_per_token": None}


def _positive_number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def storage_bits(rec: Record) -> tuple[float, str] | None:
    """Bits stored per weight by a quantization record, block scales included, and how the figure reads.

    ``storage_bits_per_weight`` first (``weight_bits + (scale_bits + zero_point_bits) /
    weights_per_scale``; the OCP MX v1.0 spec gives MXFP4 4-bit E2M1 elements with one
    8-bit E8M0 scale per 32, so 4.25), explained from the block fields when they are
    stated: ``"4.25 bits per weight: 4-bit E2M1 + 8-bit scale per 32"``. Then
    ``weight_bits`` (a format without block scales), then a width in the free-text
    ``bits`` (records of KBs that predate the structured field), then the scheme
    name. ``None`` when nothing gives a width.
    """
    d = rec.data
    stored, elem_bits = _positive_number(d.get("storage_bits_per_weight")), _positive_number(d.get("weight_bits"))
    if stored:
        scale, zero, per = (_positive_number(d.get(k)) for k in ("scale_bits", "zero_point_bits", "weights_per_scale"))
        if elem_bits and scale and per:
            element = f"{elem_bits:g}-bit {d.get('weight_element') or 'weights'}"
            extra = f"{scale:g}-bit scale" + (f" and {zero:g}-bit zero point" if zero else "")
            return stored, f"{stored:g} bits per weight: {element} + {extra} per {per:g}"
        return stored, f"{stored:g} bits per weight on average, scales included (storage_bits_per_weight)"
    if elem_bits:
        return elem_bits, f"{elem_bits:g} bits per weight"
    bits = str(d.get("bits") or "")
    m = re.match(r"\s*w(\d+(?:\.\d+)?)a", bits, re.I) or re.search(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*(?:avg|bits?)\b|\s*$)", bits)
    if m:
        return float(m.group(1)), f"{float(m.group(1)):g} bits per weight (read from the record's bits text {bits!r})"
    per_weight = roofline.bytes_per_weight(str(d.get("scheme") or ""))
    return (per_weight * 8, f"{per_weight * 8:g} bits per weight (from the scheme name)") if per_weight else None


# With no stated weight format the MFU peak is the narrowest datapath's (4-bit): the highest, so never too low.
UNKNOWN_FORMAT_BITS = 4


def stated_weight_bits(kb: KB, data: dict[str, Any]) -> tuple[float | None, str]:
    """Bits stored per weight in the format a benchmark record states, and where they came from.

    ``format_id`` resolved to a quantization record (its storage bits, block scales
    included: :func:`storage_bits`), else a format name in
    ``format_id``, else ``submission.weight_data_types`` (MLPerf tables) unless the record's
    ``condition_gaps.format_id`` says the harness config contradicts it
    (:func:`inferkb.intake.mlperf_weight_formats.table_contradicted`). ``(None,
    "weight format not stated")`` when the record names none.
    """
    from ..intake.mlperf_weight_formats import table_contradicted

    fid = data.get("format_id")
    if isinstance(fid, str) and fid:
        q = kb.resolve(fid, "quantization")
        found = storage_bits(q) if q else None
        if found:
            return found[0], f"format {fid} ({found[1]})"
        per_weight = roofline.bytes_per_weight(fid)
        if per_weight:
            return per_weight * 8, f"format id {fid}"
    sub = data.get("submission")
    if table_contradicted(data):
        return (
            None,
            "weight format not stated (the table's weight_data_types is contradicted by the harness config: condition_gaps.format_id)",
        )
    if isinstance(sub, dict) and isinstance(sub.get("weight_data_types"), str):
        per_weight = roofline.bytes_per_weight(sub["weight_data_types"])
        if per_weight:
            return per_weight * 8, f"submission.weight_data_types {sub['weight_data_types']!r}"
    return None, "weight format not stated"


def mfu_peak(
    kb: KB, data: dict[str, Any], flops_rows: list[dict], stated: tuple[float | None, str] | None = None
) -> tuple[tuple[float, str] | None, str]:
    """The dense peak a benchmark's MFU is measured against, ``((TFLOPS, precision) | None, which peak and why)``.

    The fastest datapath at least as wide as the record's stated weight format
    (:func:`stated_weight_bits`, :func:`inferkb.roofline.peak_dense_tflops`); the
    fastest of all (4-bit and wider) only when the record states no format. The
    site's roofline pages and ``inferkb roofline`` both use it. ``stated``: the
    caller's :func:`stated_weight_bits` of ``data`` when it has it already.
    """
    bits, basis = stated if stated is not None else stated_weight_bits(kb, data)
    peak = roofline.peak_dense_tflops(flops_rows, bits if bits is not None else UNKNOWN_FORMAT_BITS)
    if bits is None:
        return peak, "fastest datapath: the record states no weight format"
    return peak, f"peak at the record's weight format, {basis}"


def weight_bytes(kb: KB, data: dict[str, Any]) -> tuple[float | None, str]:
    """Bytes per stored weight for the benchmark and where they came from (or why unknown).

    First choice: the weights file's own size over its parameter count, when the
    harness states both (llama-bench's ``model_size`` bytes and ``model_n_params``,
    kept in ``submission``) — a GGUF named "F16" may still hold 4-bit experts.
    Then the format record's storage bits (:func:`storage_bits`, block scales
    included), then format tokens in the text.
    """
    sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
    size, params = sub.get("model_size"), sub.get("model_n_params")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (size, params)):
        return size / params, f"model_size / model_n_params stated by the harness ({8 * size / params:.3g} bits per weight)"
    fid = data.get("format_id")
    if isinstance(fid, str) and fid:
        rec = kb.resolve(fid, "quantization")
        if rec is not None:
            found_bits = storage_bits(rec)
            if found_bits:
                return found_bits[0] / 8, f"format record {rec.id} ({found_bits[1]})"
    found: dict[str, float] = {}
    for field in ("format_id", "model", "name"):
        value = data.get(field)
        if isinstance(value, str):
            found.update(roofline.format_mentions(value))
    if not found:
        return None, "weight format unknown (no resolvable format_id; no format token in format_id, model or name)"
    low = min(found.values())
    tokens = ", ".join(sorted(found))
    return (
        low,
        f"format token(s) {tokens} in the record's text ({low:g} bytes per weight{', the smallest named' if len(set(found.values())) > 1 else ''})",
    )


accelerator_tokens = hardware_tokens  # kept under its old name


def candidate_counts(data: dict[str, Any]) -> tuple[list[int], str]:
    """The device counts a record's own fields allow when ``accelerator_count`` is null because they disagree.

    Read from the sum of the ``(xN)`` counts in ``hardware_raw``,
    ``submission.number_of_nodes x submission.accelerators_per_node`` and
    ``submission.total_accelerators`` (MLPerf tables). Returns the sorted
    distinct counts and a basis naming each; empty when there are none.
    Example: AMD v6.0 ``87xMI355X`` rows state ``(x87)`` but 11 nodes x 8 = 88.
    """
    sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
    found: dict[int, str] = {}
    named = [int(n) for n in re.findall(r"\(x(\d+)\)", data.get("hardware_raw") or "")]
    if named:
        found.setdefault(sum(named), f"hardware_raw '(x{'+'.join(map(str, named))})'")
    nodes, per = sub.get("number_of_nodes"), sub.get("accelerators_per_node")
    if isinstance(nodes, int) and isinstance(per, int) and nodes > 0 and per > 0:
        found.setdefault(nodes * per, f"number_of_nodes {nodes} x accelerators_per_node {per}")
    total = sub.get("total_accelerators")
    if isinstance(total, int) and total > 0:
        found.setdefault(total, f"total_accelerators {total}")
    counts = sorted(found)
    return counts, "; ".join(f"{n} ({found[n]})" for n in counts)


def device_count(
    data: dict[str, Any], scope: str | None, acc_tokens: set[str] | frozenset[str] = frozenset(), *, known: DeviceCount | None = None
) -> tuple[int | None, str]:
    """How many devices the value spans, and the basis; ``None`` with the reason when unknown or ambiguous.

    ``value_scope`` first: per-device (1) or "per N-GPU node" (N). Otherwise the
    one device-count reader the load-conditions audit uses
    (:func:`inferkb.audit.conditions_text.device_count`): ``accelerator_count``,
    then a count quoted from ``name``, ``unit`` or ``methodology`` ("8x H100",
    counted only when the words name the record's accelerator, so "2x Intel
    Xeon" or "8xMI325X" of a sibling system are not its count; "72-GPU rack",
    "single MI300X", "one L4"); several counts, or a TP size below the count with
    no DP/EP, make it ambiguous. ``known`` is that reader's answer when the
    load-conditions audit already read this record (the same reading, not re-done).
    """
    if scope == "per-device":
        return 1, "value is per device"
    if scope == "per-node":
        for field in ("unit", "name", "methodology"):
            m = _PER_N_NODE.search(data.get(field) or "")
            if m:
                return int(m.group(1)), f"value is per {m.group(1)}-GPU node ({field})"
        return None, "value is per node but the devices per node are not stated"
    dev = known or read_device_count(data, accelerator_tokens=acc_tokens)
    if dev.count is not None:
        return dev.count, dev.reason
    if dev.reason.startswith("ambiguous"):
        return None, f"device count unknown: {dev.reason}"
    return None, "device count not stated (no accelerator_count; no count in name, unit or methodology)"


def _accelerator(kb: KB, data: dict[str, Any]) -> tuple[Record | None, str]:
    ids = [i for i in dict.fromkeys(data.get("accelerator_ids") or []) if isinstance(i, str)]
    if not ids:
        return None, "no accelerator_ids"
    if len(ids) > 1:
        return None, f"several accelerators ({', '.join(ids)}); a mixed run has no single ceiling"
    rec = kb.resolve(ids[0], "accelerator")
    return (rec, "") if rec is not None else (None, f"accelerator {ids[0]} has no record")


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
