"""KV-cache geometry of a model record: which layers keep a cache, and how many elements per token each holds.

KV-cache bytes per token of context, per attention layer that keeps one
(``b`` = bytes per KV element):

- GQA/MHA (Ainslie et al. 2023, "GQA", arXiv:2305.13245; the cache holds one
  K and one V vector per KV head): ``num_kv_heads × head_dim × 2 × b``;
- MLA (DeepSeek-AI 2024, DeepSeek-V2 report, arXiv:2405.04434, section 2.1:
  the cache holds the compressed latent and the decoupled RoPE key):
  ``(kv_lora_rank + qk_rope_head_dim) × b``.

Models whose layers differ in KV heads (DeciLM's variable GQA) state
``num_kv_heads_per_layer``, one entry per layer; then the per-token figure
is a sum over layers instead of a product::

    kv bytes per token = sum_i(kv_heads_i) × head_dim × 2 × b

(the GQA formula applied to each layer; with equal entries it reduces to the
one above). Such a list is not combined with sliding-window or hybrid layer
counts, which do not say which layers they are.

Which layers keep a cache that grows with context: ``full_attention_layers``
when stated (hybrid models: Qwen3-Next's Gated DeltaNet layers and other
linear-attention/SSM layers carry a fixed-size state instead), else
``num_layers`` minus ``sliding_window_layers``. Sliding-window layers (e.g.
gpt-oss, alternating 128-token banded layers) hold at most ``sliding_window``
tokens. So per sequence of ``L`` tokens::

    kv(L) = growing_layers × per_layer × L + window_layers × per_layer × min(L, window)

Used by :func:`inferkb.analysis.fit.fit` (memory envelope) and the
``model-geometry`` audit (stated KV bytes per token vs the layers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .common import AnalysisError

if TYPE_CHECKING:
    from ..store import Record


@dataclass
class KVGeometry:
    """How a model's KV cache grows: ``kind`` (gqa|mla), elements per token, layer counts and window.

    ``per_layer_elements`` is the KV elements one token adds to one layer, or
    ``None`` when layers differ (``kv_heads_per_layer`` set); ``growing_elements``
    is the sum over the growing layers, the figure every byte count uses.
    """

    kind: str
    per_layer_elements: int | None
    growing_layers: int
    window_layers: int
    window: int | None
    fixed_state_layers: int
    kv_heads: int | None
    formula: str
    growing_elements: int
    kv_heads_per_layer: list[int] | None = None

    def bytes_per_sequence(self, context: int, kv_bytes: float) -> float:
        """KV bytes one sequence of ``context`` tokens holds (all layers, all ranks together)."""
        window = min(context, self.window) if self.window else 0
        return self.growing_elements * kv_bytes * context + self.window_layers * (self.per_layer_elements or 0) * kv_bytes * window

    def bytes_per_token(self, kv_bytes: float) -> float:
        """Bytes each further token adds once the context is past the window (growing layers only).

        ``growing_elements × kv_bytes``: ``layers × kv_heads × head_dim × 2 × b`` for GQA, the sum of
        ``kv_heads_i × head_dim × 2 × b`` over layers when the heads vary, ``layers × (kv_lora_rank +
        qk_rope_head_dim) × b`` for MLA (formulas and sources in the module docstring).
        """
        return self.growing_elements * kv_bytes

    def rank_fraction(self, tp: int) -> float:
        """Share of a sequence's KV cache one tensor-parallel rank holds (see module docstring)."""
        if self.kind == "mla":
            return 1.0
        if self.kv_heads_per_layer:
            return sum(math.ceil(h / tp) for h in self.kv_heads_per_layer) / sum(self.kv_heads_per_layer)
        if not self.kv_heads:
            return 1.0
        return math.ceil(self.kv_heads / tp) / self.kv_heads

    def per_token_formula(self, kv_bytes: float) -> str:
        """The bytes-per-token line of a ``fit`` answer, with the numbers used."""
        total = self.bytes_per_token(kv_bytes)
        if self.kv_heads_per_layer is not None:
            return (
                f"KV bytes/token = sum of KV heads over {self.growing_layers} layers {sum(self.kv_heads_per_layer)} x "
                f"{self.growing_elements // sum(self.kv_heads_per_layer)} (head_dim x 2) x {kv_bytes:g} = {total:,.0f} B"
            )
        return f"KV bytes/token (growing layers) = {self.growing_layers} layers x {self.per_layer_elements} x {kv_bytes:g} = {total:,.0f} B"


def _int_field(rec: Record, name: str) -> int:
    value = rec.data.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        what = "missing" if value is None else repr(value)
        raise AnalysisError(f"{rec.path}: field {name!r} is {what}; fit needs it (expected a positive integer, no default is assumed)")
    return value


def kv_geometry(model: Record) -> KVGeometry:
    """The KV geometry of a model record; :class:`AnalysisError` naming the record and the first missing field.

    MLA when ``kv_lora_rank`` and ``qk_rope_head_dim`` are set, else GQA
    (``num_kv_heads``, ``head_dim``), summed layer by layer when
    ``num_kv_heads_per_layer`` is set (its length must equal ``num_layers``).
    A model whose ``architecture`` is hybrid
    must state ``full_attention_layers``; one whose ``attention_variant``
    names sliding-window or banded attention must state ``sliding_window``
    and ``sliding_window_layers`` — otherwise the estimate would be off by
    the ratio of all layers to caching layers.
    """
    d = model.data
    layers = _int_field(model, "num_layers")
    variant = str(d.get("attention_variant") or "").lower()
    if d.get("kv_lora_rank") is not None or d.get("qk_rope_head_dim") is not None or "mla" in variant.split():
        rank, rope = _int_field(model, "kv_lora_rank"), _int_field(model, "qk_rope_head_dim")
        kind, per_layer, kv_heads = "mla", rank + rope, None
        formula = f"(kv_lora_rank {rank} + qk_rope_head_dim {rope}) = {per_layer} elements per layer per token"
    elif d.get("num_kv_heads_per_layer") is not None:
        return _per_layer_geometry(model, layers)
    else:
        kv_heads, head_dim = _int_field(model, "num_kv_heads"), _int_field(model, "head_dim")
        kind, per_layer = "gqa", kv_heads * head_dim * 2
        formula = f"num_kv_heads {kv_heads} x head_dim {head_dim} x 2 (K and V) = {per_layer} elements per layer per token"
    window = d.get("sliding_window")
    window_layers = d.get("sliding_window_layers") or 0
    if ("sliding" in variant or "banded" in variant) and (not isinstance(window, int) or not window_layers):
        missing = "sliding_window" if not isinstance(window, int) else "sliding_window_layers"
        raise AnalysisError(
            f"{model.path}: field {missing!r} is missing; attention_variant says {d.get('attention_variant')!r} (sliding-window layers)"
        )
    if window_layers and not isinstance(window, int):
        raise AnalysisError(f"{model.path}: field 'sliding_window' is missing but sliding_window_layers is {window_layers}")
    full = d.get("full_attention_layers")
    if isinstance(full, int):
        growing = full
    elif str(d.get("architecture") or "").startswith("hybrid"):
        raise AnalysisError(
            f"{model.path}: field 'full_attention_layers' is missing; a hybrid model's non-attention layers keep no growing KV cache"
        )
    else:
        growing = layers - window_layers
    fixed_state = max(0, layers - growing - window_layers)
    if growing < 0 or growing + window_layers > layers:
        raise AnalysisError(f"{model.path}: full_attention_layers + sliding_window_layers exceed num_layers {layers}")
    return KVGeometry(
        kind, per_layer, growing, window_layers, window if window_layers else None, fixed_state, kv_heads, formula, growing * per_layer
    )


def _per_layer_geometry(model: Record, layers: int) -> KVGeometry:
    """GQA geometry from ``num_kv_heads_per_layer`` (one positive int per layer); AnalysisError naming the field otherwise.

    Every layer is counted as growing: the list does not say which layers a sliding window or a linear-attention
    block would cover, so a record that also states those counts is refused rather than guessed at.
    """
    d = model.data
    heads = d.get("num_kv_heads_per_layer")
    if not isinstance(heads, list) or not heads or any(not isinstance(h, int) or isinstance(h, bool) or h < 1 for h in heads):
        raise AnalysisError(
            f"{model.path}: field 'num_kv_heads_per_layer' is {heads!r}; expected a list of positive integers, one per layer"
        )
    if len(heads) != layers:
        raise AnalysisError(
            f"{model.path}: field 'num_kv_heads_per_layer' has {len(heads)} entries but num_layers is {layers} (one entry per layer)"
        )
    head_dim = _int_field(model, "head_dim")
    uniform = d.get("num_kv_heads")
    if isinstance(uniform, int) and not isinstance(uniform, bool) and any(h != uniform for h in heads):
        raise AnalysisError(f"{model.path}: field 'num_kv_heads' is {uniform} but num_kv_heads_per_layer varies; leave num_kv_heads null")
    full = d.get("full_attention_layers")
    if (
        d.get("sliding_window_layers")
        or (isinstance(full, int) and full != layers)
        or str(d.get("architecture") or "").startswith("hybrid")
    ):
        raise AnalysisError(
            f"{model.path}: field 'num_kv_heads_per_layer' cannot be combined with sliding-window or hybrid layer counts "
            "(the counts do not say which layers they are)"
        )
    total = sum(heads) * head_dim * 2
    formula = (
        f"sum of num_kv_heads_per_layer {sum(heads)} x head_dim {head_dim} x 2 (K and V) = {total} elements per token over {layers} layers"
    )
    return KVGeometry("gqa", None, layers, 0, None, 0, None, formula, total, kv_heads_per_layer=list(heads))
