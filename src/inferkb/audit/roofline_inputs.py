"""Inputs of the roofline checks, read from a benchmark record: model size, weight bits, device count, accelerator.

Shared by the ``physical-plausibility`` audit (:mod:`inferkb.audit.plausibility`),
``inferkb roofline`` / ``fit`` (:mod:`inferkb.analysis`) and the site's roofline
page, so each input is read one way. Where each input comes from, in order, is in
the plausibility audit's module docstring; every function returns the value with
the basis it was read from, or ``None`` with the reason. Nothing is guessed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import roofline
from ..hardware import accelerator_tokens as hardware_tokens
from ..hardware import normalise
from .conditions_text import DeviceCount
from .conditions_text import device_count as read_device_count

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

_MOE_NAME = re.compile(
    r"\d+\s*x\s*\d+(?:\.\d+)?\s*b\b|(?<![a-z0-9])a\d+(?:\.\d+)?b\b|\bmoe\b|mixtral|deepseek[\s_-]*(?:v\d|r\d|coder[\s_-]*v2)|"
    r"gpt[\s_-]*oss|\bactive\b|\bkimi\b|\bglm[\s_-]*4\.[5-9]|qwen\d(?:\.\d)?[\s_-]*next|maverick|scout|\bdbrx\b|\bjamba\b|minimax|\barctic\b|\bexperts?\b",
    re.I,
)
_NAME_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bB])\b")
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
    kb: KB, data: dict[str, Any], acc_data: dict[str, Any], stated: tuple[float | None, str] | None = None
) -> tuple[tuple[float, str] | None, str]:
    """The dense peak a benchmark's MFU is measured against, ``((TFLOPS, precision) | None, which peak and why)``.

    ``acc_data`` is the accelerator record's data (``{}`` when there is none). The fastest datapath at least as wide
    as the record's stated weight format (:func:`stated_weight_bits`, :func:`inferkb.roofline.peak_dense_tflops`);
    the fastest of all (4-bit and wider) only when the record states no format. The site's roofline pages and
    ``inferkb roofline`` both use it. ``stated``: the caller's :func:`stated_weight_bits` of ``data`` when it has it
    already. ``None`` when the accelerator record marks that ceiling incomplete
    (:func:`incomplete_ceiling`: GH200's unrecorded fp8 peak), with that reason.
    """
    bits, basis = stated if stated is not None else stated_weight_bits(kb, data)
    peak = roofline.peak_dense_tflops(acc_data.get("flops") or [], bits if bits is not None else UNKNOWN_FORMAT_BITS)
    if peak is not None and (why := incomplete_ceiling(acc_data, bits if bits is not None else 0, peak)):
        return None, why  # the part's record says a faster usable peak exists and is not recorded
    if bits is None:
        return peak, "fastest datapath: the record states no weight format"
    return peak, f"peak at the record's weight format, {basis}"


def incomplete_ceiling(acc_data: dict[str, Any], weight_bits: float, peak: tuple[float, str]) -> str:
    """Why the part's dense ceiling ``peak`` (TFLOPS, precision) is not its real one at ``weight_bits``; "" when it is.

    Two signs that a faster usable dense peak exists but is not recorded: a
    sparse row with no dense row of its precision (:func:`_dense_gap`), or a
    ``spec_gaps`` entry ``flops.<precision>`` (the record's own statement that
    the part has that precision's peak and the figure is not recorded) for a
    precision with no dense row, narrower than ``peak``'s and usable at
    ``weight_bits`` (0 = format unknown: any precision is usable). Judging a run
    "impossible" against such a ceiling could come from the missing row, so
    the check is skipped and this reason names it (KB504).
    """
    rows = acc_data.get("flops") or []
    peak_bits = roofline.PRECISION_BITS.get(peak[1], 0)
    gap = _dense_gap(rows, weight_bits, peak_bits)
    if gap:
        return f"flops lists a sparse {gap} peak but no dense {gap} row, so its dense ceiling ({peak[0]:g} {peak[1]}) is incomplete"
    gaps = acc_data.get("spec_gaps")
    dense = {str(r.get("precision")) for r in rows if isinstance(r, dict) and r.get("dense", True) is not False}
    for key in gaps if isinstance(gaps, dict) else {}:
        precision = key.split(".", 1)[1] if isinstance(key, str) and key.startswith("flops.") else ""
        bits = roofline.PRECISION_BITS.get(precision)
        if bits is not None and precision not in dense and int(weight_bits) <= bits < peak_bits:
            return f"spec_gaps.{key} says its {precision} peak is not recorded, so its dense ceiling ({peak[0]:g} {peak[1]}) is incomplete"
    return ""


def _dense_gap(rows: list, weight_bits: float, peak_bits: int) -> str:
    """A precision the part has a sparse row for but no dense row, narrower than the chosen peak and usable at ``weight_bits``; "" if none.

    Ruling a part out needs its real ceiling: a table whose fastest usable
    dense row is fp32 while it lists a sparse fp4 peak lacks the tensor-core
    rows that would bound the run (NVIDIA RTX PRO 6000 Blackwell Workstation:
    fp32 125 dense, fp4 4000 sparse only).
    """
    dense = {str(r.get("precision")) for r in rows if isinstance(r, dict) and r.get("dense", True) is not False}
    for row in rows:
        precision = str(row.get("precision")) if isinstance(row, dict) else ""
        bits = roofline.PRECISION_BITS.get(precision)
        if row.get("dense", True) is False and precision not in dense and bits is not None and int(weight_bits) <= bits < peak_bits:
            return precision
    return ""


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


def size_note(params: float, size_info: dict[str, Any]) -> str:
    """Where the active-parameter count came from, in words for a finding's detail."""
    if size_info["basis"] == "model record":
        return f"{params / 1e9:g}B active parameters from model record {size_info['model']}"
    return f"{params / 1e9:g}B parameters taken from the model NAME {size_info['model']!r} (dense-looking, no model record)"


def decode_bytes(data: dict[str, Any], params: float, bpw: float, size_info: dict[str, Any]) -> tuple[float, str]:
    """Bytes one decode step reads per token (weights, plus KV cache when context and KV bytes are known) and a note saying which.

    ``params``: active parameters; ``bpw``: bytes per weight. The KV term is
    ``kv_bytes_per_token`` (model record) x ``conditions.input_tokens`` x batch
    (``batch_size``, else ``concurrency``, else 1); formula in
    :func:`inferkb.roofline.bytes_per_decode_token`.
    """
    kv, context, batch = size_info.get("kv_bytes_per_token"), (data.get("conditions") or {}).get("input_tokens"), 1
    kv_note = "KV cache not counted (context or KV bytes per token unknown), so the true MBU is higher"
    if isinstance(kv, (int, float)) and kv > 0 and isinstance(context, int) and context > 0:
        cond = data.get("conditions") or {}
        batch = next((b for b in (cond.get("batch_size"), cond.get("concurrency")) if isinstance(b, int) and b > 0), 1)
        kv_note = f"KV cache {kv:g} B/token x {context} prompt tokens x batch {batch} included"
    else:
        kv, context = 0.0, 0
    return roofline.bytes_per_decode_token(params, bpw, kv_bytes_per_token=kv, context_tokens=context, batch=batch), kv_note
