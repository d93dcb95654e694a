"""``fit``: does a model fit on N accelerators — weights plus KV cache per device under tensor parallelism.

KV-cache bytes per token and which layers keep a cache: :mod:`inferkb.analysis.kv_geometry`
(GQA/MHA, MLA, per-layer KV heads, hybrid and sliding-window layers).

TP is ``count x runtime_devices``: an accelerator record whose ``runtime_devices``
is 2 (an AMD MI250 module, two GCDs that ROCm lists as two devices) runs TP 2
per module, so head divisibility and the KV split are judged at that degree.
Memory stays per accelerator (module, the record's ``vram_gb``): its share of
the weights is ``runtime_devices`` ranks' worth, its KV share likewise.

Under tensor parallelism of degree TP the weights split evenly
(``params × bytes per weight ÷ TP``). GQA KV heads split across ranks, each
rank holding ``ceil(kv_heads ÷ TP)`` heads (replicated when TP exceeds the
KV heads), layer by layer when the heads vary; MLA's latent is shared by all
heads, so every rank holds all of it.
Not modelled, and said so in every answer: activations and workspace,
the engine's own reserve, a linear-attention layer's fixed state.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .common import AnalysisError, is_number, lookup, positive_int, require_number
from .kv_geometry import KVGeometry, kv_geometry

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

# vLLM's default --gpu-memory-utilization is 0.9 (the share of device memory the engine may use).
DEFAULT_USABLE = 0.9
DEFAULT_KV_FORMAT = "bf16"


def bytes_per_element(kb: KB, fmt: str, *, what: str) -> tuple[float, str]:
    """Bytes per stored element for a format id or name (``bf16`` 2, ``fp8-e4m3`` 1, ``nvfp4`` 0.5 ...); AnalysisError when unknown."""
    from ..audit.roofline_inputs import weight_bytes

    value, basis = weight_bytes(kb, {"format_id": fmt})
    if value is None:
        raise AnalysisError(f"{what} {fmt!r}: no format record or known format name gives its bytes per element")
    return value, basis


@dataclass
class FitResult:
    """Result of :func:`fit`; byte figures are bytes (1 GB = 1e9 bytes), all per device unless named total.

    ``fits`` answers for (``batch``, ``context``); ``max_context_at_batch``
    is capped at the model's ``max_position_embeddings`` when stated
    (``context_capped`` says so); ``stated_kv_bytes_per_token`` is the
    record's own figure at the KV format's width, for comparison.
    """

    model: str
    accelerator: str
    count: int
    tp: int
    batch: int
    context: int
    weight_format: str
    bytes_per_weight: float
    kv_format: str
    bytes_per_kv_element: float
    geometry: dict[str, Any]
    kv_bytes_per_token: float
    stated_kv_bytes_per_token: float | None
    kv_bytes_per_sequence: float
    weights_total: float
    weights_per_device: float
    kv_per_device: float
    memory_per_device: float
    usable_fraction: float
    usable_per_device: float
    free_for_kv_per_device: float
    fits: bool
    max_batch_at_context: int
    max_context_at_batch: int
    context_capped: bool
    formula: list[str]
    assumptions: list[str] = field(default_factory=list)
    # Inputs an engine would refuse (context past the model's maximum, a TP degree that does not divide the heads):
    # the figures are still computed, and the CLI prints each as a ``warning:`` line.
    warnings: list[str] = field(default_factory=list)
    # Devices the runtime lists per accelerator (the record's runtime_devices, else 1); tp = count x this.
    runtime_devices: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field."""
        return asdict(self)


def runtime_devices(accelerator: Record) -> int:
    """Devices the runtime (CUDA, ROCm) lists for one accelerator of this record: its ``runtime_devices`` when that
    is an integer >= 1 (2 for an MI250 module), else 1."""
    n = accelerator.data.get("runtime_devices")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1


def fit(
    kb: KB,
    model: str,
    accelerator: str,
    *,
    count: int = 1,
    fmt: str | None = None,
    kv_format: str | None = None,
    context: int | None = None,
    batch: int = 1,
    usable: float = DEFAULT_USABLE,
) -> FitResult:
    """Memory envelope of ``model`` on ``count`` × ``accelerator`` at TP = ``count`` × the accelerator's runtime devices.

    Byte figures named per device are per accelerator (the record's ``vram_gb``; an MI250 module, not one GCD).

    ``fmt`` is the weight format (required: bytes per weight decide the
    answer); ``kv_format`` defaults to bf16 and the answer says so;
    ``context`` defaults to the model's ``max_position_embeddings``.
    ``warnings`` names inputs an engine would refuse (see :func:`input_warnings`).
    Raises :class:`AnalysisError` for unknown ids, a missing field (named with
    its record) or non-positive counts.
    """
    count = positive_int(count, "count")
    batch = positive_int(batch, "batch")
    if not is_number(usable) or not 0 < usable <= 1:
        raise AnalysisError(f"usable memory fraction must be in (0, 1], got {usable!r}")
    mrec = lookup(kb, model, "model")
    arec = lookup(kb, accelerator, "accelerator")
    if not fmt:
        raise AnalysisError("weight format not given (--format, e.g. bf16, fp8-e4m3, nvfp4); the weights' size depends on it")
    bpw, bpw_basis = bytes_per_element(kb, fmt, what="weight format")
    kv_fmt = kv_format or DEFAULT_KV_FORMAT
    bkv, _ = bytes_per_element(kb, kv_fmt, what="KV-cache format")
    params = require_number(mrec, "params_b") * 1e9
    mem = require_number(arec, "vram_gb") * 1e9
    geo = kv_geometry(mrec)
    max_pos = mrec.data.get("max_position_embeddings") if isinstance(mrec.data.get("max_position_embeddings"), int) else None
    if context is None:
        if max_pos is None:
            raise AnalysisError(f"{mrec.path}: field 'max_position_embeddings' is missing; give --context")
        context = max_pos
    context = positive_int(context, "context")
    per = runtime_devices(arec)
    tp = count * per
    # frac is one rank's KV share; an accelerator holds `per` ranks, so its share of weights and KV is per x one rank's.
    frac = geo.rank_fraction(tp) * per
    weights_dev = params * bpw / tp * per
    usable_dev = mem * usable
    free = usable_dev - weights_dev
    seq = geo.bytes_per_sequence(context, bkv)
    kv_dev = batch * seq * frac
    fits = free >= kv_dev and free > 0
    max_batch = int(free // (seq * frac)) if free > 0 and seq > 0 else 0
    max_ctx, capped = _max_context(geo, bkv, free / (batch * frac) if free > 0 else 0.0, max_pos)
    ranks = f" x {per} runtime devices per {arec.id}" if per > 1 else ""
    dev = "accelerator" if per > 1 else "device"  # an MI250's figures are per module, not per GCD
    per_tok = geo.bytes_per_token(bkv)
    stated = mrec.data.get("kv_cache_bytes_per_token")
    formula = [
        f"weights/{dev} = {params:.4g} params x {bpw:g} B ({fmt}) / TP {tp}{ranks} = {weights_dev / 1e9:.2f} GB",
        f"KV {'per token' if geo.kv_heads_per_layer else 'per layer per token'}: {geo.formula}; x {bkv:g} B ({kv_fmt})",
        geo.per_token_formula(bkv),
        f"KV/sequence at {context:,} tokens = {seq / 1e9:.3f} GB"
        + (f" ({geo.window_layers} window layers capped at {geo.window} tokens)" if geo.window_layers else ""),
        f"KV/{dev} = batch {batch} x {seq / 1e9:.3f} GB x rank share {frac / per:.4g}{ranks} = {kv_dev / 1e9:.2f} GB",
        f"usable/{dev} = {mem / 1e9:g} GB x {usable:g} = {usable_dev / 1e9:.2f} GB; free for KV = {free / 1e9:.2f} GB",
    ]
    assumptions = [
        f"weight format {fmt}: {bpw_basis}",
        f"KV format {kv_fmt}" + (" (default; pass --kv-format)" if kv_format is None else ""),
        f"usable fraction {usable:g} of device memory (vLLM's default gpu_memory_utilization is 0.9)",
        (
            f"TP = count {count} x runtime_devices {per} ({arec.id}: each accelerator is {per} devices to the runtime) = {tp}; "
            "memory figures per accelerator; weights split evenly; activations, workspace and the engine's reserve are not modelled"
            if per > 1
            else "TP = count; weights split evenly; activations, workspace and the engine's reserve are not modelled"
        ),
        f"device memory {arec.data.get('vram_gb')} GB read as 1e9 bytes per GB",
    ]
    if geo.fixed_state_layers:
        assumptions.append(f"{geo.fixed_state_layers} layers keep a fixed-size state (linear attention/SSM) that is not counted")
    result = FitResult(
        mrec.id,
        arec.id,
        count,
        tp,
        batch,
        context,
        fmt,
        bpw,
        kv_fmt,
        bkv,
        asdict(geo),
        per_tok,
        float(stated) if is_number(stated) else None,
        seq,
        params * bpw,
        weights_dev,
        kv_dev,
        mem,
        usable,
        usable_dev,
        free,
        fits,
        max_batch,
        max_ctx,
        capped,
        formula,
        assumptions,
    )
    result.warnings = input_warnings(mrec, tp, context, runtime_devices=per)
    result.runtime_devices = per
    return result


def input_warnings(model: Record, tp: int, context: int, *, runtime_devices: int = 1) -> list[str]:
    """Why an engine would refuse ``model`` at tensor-parallel degree ``tp`` and ``context`` tokens (empty: no reason known).

    ``tp`` is the runtime-device count of ``fit``/``roofline`` (accelerators x
    ``runtime_devices``, which is 2 for an MI250 module), which model one TP group of
    every device; the first TP warning says so, since the same devices could run as
    TP x PP or as data-parallel replicas.

    - ``context`` above the record's ``max_position_embeddings`` (vLLM refuses a
      ``--max-model-len`` past the model's maximum unless told to override it);
    - ``num_attention_heads`` not divisible by ``tp`` (vLLM's parallel config check);
    - KV heads (``num_kv_heads`` or each entry of ``num_kv_heads_per_layer``) neither
      divisible by ``tp`` nor dividing it: vLLM's ``QKVParallelLinear`` splits the KV
      heads when ``tp`` divides them and replicates them when they divide ``tp``.
    """
    d = model.data
    out: list[str] = []
    max_pos = d.get("max_position_embeddings")
    if isinstance(max_pos, int) and not isinstance(max_pos, bool) and context > max_pos:
        out.append(
            f"context {context:,} exceeds {model.id}'s maximum of {max_pos:,} tokens (max_position_embeddings); "
            "engines refuse a longer context, so the KV figures describe no runnable setup"
        )
    heads = d.get("num_attention_heads")
    if tp > 1 and isinstance(heads, int) and not isinstance(heads, bool) and heads > 0 and heads % tp:
        out.append(f"TP {tp} does not divide {model.id}'s {heads} attention heads (num_attention_heads); engines refuse this degree")
    per_layer = d.get("num_kv_heads_per_layer")
    kv = sorted({h for h in per_layer if isinstance(h, int) and h > 0}) if isinstance(per_layer, list) else [d.get("num_kv_heads")]
    bad = [h for h in kv if isinstance(h, int) and not isinstance(h, bool) and h > 0 and h % tp and tp % h]
    if tp > 1 and bad:
        field_name = "num_kv_heads_per_layer" if isinstance(per_layer, list) else "num_kv_heads"
        counts = ", ".join(str(h) for h in bad)
        out.append(
            f"TP {tp} neither divides nor is a multiple of {model.id}'s {counts} KV heads ({field_name}); "
            "engines split KV heads evenly or replicate them, and refuse this degree"
        )
    tp_at = next((i for i, w in enumerate(out) if w.startswith(f"TP {tp} ")), None)
    if tp_at is not None:
        out[tp_at] += _one_group(tp, runtime_devices)
    return out


def _one_group(tp: int, runtime_devices: int = 1) -> str:
    """What a TP warning assumes: ``fit`` and ``roofline`` run all ``tp`` devices as one tensor-parallel group."""
    devices = (
        f"{tp} runtime devices ({tp // runtime_devices} accelerators x runtime_devices {runtime_devices})"
        if runtime_devices > 1
        else f"{tp} devices"
    )
    return (
        f" (fit and roofline treat the {devices} as one tensor-parallel group; "
        "a real deployment may split them as TP x PP or as data-parallel replicas, which these tools do not model)"
    )


def _max_context(geo: KVGeometry, bkv: float, budget_seq: float, max_pos: int | None) -> tuple[int, bool]:
    """Largest context one sequence can hold within ``budget_seq`` bytes (all ranks' share already divided out)."""
    if budget_seq <= 0:
        return 0, False
    grow = geo.growing_elements * bkv
    window_part = geo.window_layers * (geo.per_layer_elements or 0) * bkv
    all_layers = grow + window_part
    if all_layers == 0:
        best = math.inf
    else:
        best = budget_seq / all_layers
        if geo.window and best > geo.window:
            best = math.inf if grow == 0 else (budget_seq - window_part * geo.window) / grow
    if max_pos is not None and best > max_pos:
        return max_pos, True
    return (int(best) if best != math.inf else 0), False
