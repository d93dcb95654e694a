"""Audit ``model-geometry``: does a model's stated ``kv_cache_bytes_per_token`` follow from its geometry?

The stated figure is 16-bit KV bytes per further token of context (schema
description). It is recomputed from the record's own geometry with the
formulas of :mod:`inferkb.analysis.fit` — GQA ``layers × kv_heads × head_dim
× 2 × 2`` (summed over ``num_kv_heads_per_layer`` when the heads vary by
layer), MLA ``layers × (kv_lora_rank + qk_rope_head_dim) × 2``, counting
only layers whose cache grows (full-attention layers of hybrid and
sliding-window models). A mismatch is a warning (KB510); a stated figure whose
geometry is incomplete is an info finding naming the missing field (KB511).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB

KV_BYTES_16BIT = 2

KB510 = register(
    Rule(
        "KB510",
        "kv-cache-geometry-mismatch",
        "warning",
        "model-geometry",
        "A model's kv_cache_bytes_per_token differs from what its layer geometry gives.",
        "Memory-fit and roofline answers use the KV size; a figure that counts sliding-window or linear-attention layers as full "
        "attention, or uses the GQA formula for an MLA model, is off by large factors.",
        '{"num_layers": 80, "num_kv_heads": 8, "head_dim": 128, "kv_cache_bytes_per_token": 327680}',
        '{"num_layers": 36, "num_kv_heads": 8, "head_dim": 64, "sliding_window_layers": 18, "sliding_window": 128, "kv_cache_bytes_per_token": 73728}',
    )
)
KB511 = register(
    Rule(
        "KB511",
        "kv-cache-geometry-unchecked",
        "info",
        "model-geometry",
        "A stated kv_cache_bytes_per_token could not be checked: a geometry field is missing.",
        "An unchecked figure looks like a checked one; naming the missing field says what would make it checkable.",
        "num_layers, num_kv_heads and head_dim all stated",
        '{"kv_cache_bytes_per_token": 98304, "num_layers": null}',
    )
)


@audit("model-geometry", "Stated KV-cache bytes per token vs the model's layer geometry (GQA, MLA, hybrid, sliding window).", cost=0.01)
def run(kb: KB) -> AuditResult:
    """Check every model's ``kv_cache_bytes_per_token``.

    Figures: ``stated`` (models with the figure), ``checked``, ``mismatched``,
    ``unchecked`` and ``per_model`` ``{id: {"stated", "geometry"}}``.
    """
    from ..analysis.common import AnalysisError
    from ..analysis.fit import kv_geometry

    result = AuditResult("model-geometry")
    figures: dict[str, Any] = {"stated": 0, "checked": 0, "mismatched": 0, "unchecked": 0, "per_model": {}}
    if "model" in kb.profile.types:
        for rec in kb.by_type("model"):
            stated = rec.data.get("kv_cache_bytes_per_token")
            if not isinstance(stated, (int, float)) or isinstance(stated, bool):
                continue
            figures["stated"] += 1
            where = {"record": rec.key, "path": rec.path, "field": "kv_cache_bytes_per_token"}
            try:
                geo = kv_geometry(rec)
            except AnalysisError as exc:
                figures["unchecked"] += 1
                result.findings.append(
                    KB511.finding(f"kv_cache_bytes_per_token {stated:g} not checked: {str(exc).split(': ', 1)[-1]}", **where)
                )
                continue
            computed = geo.bytes_per_token(KV_BYTES_16BIT)
            figures["checked"] += 1
            figures["per_model"][rec.id] = {"stated": stated, "geometry": computed}
            if abs(computed - stated) > 0.5:
                figures["mismatched"] += 1
                result.findings.append(
                    KB510.finding(
                        f"kv_cache_bytes_per_token is {stated:g} but the geometry gives {computed:g}: "
                        + (
                            f"{geo.formula} x 2 bytes"
                            if geo.kv_heads_per_layer
                            else f"{geo.growing_layers} caching layers x {geo.formula} x 2 bytes"
                        ),
                        extra={"stated": stated, "geometry": computed, "kind": geo.kind},
                        **where,
                    )
                )
    result.figures = figures
    return result
