"""Model geometry rules JSON Schema cannot state (KB124).

KB124 ``per-layer-list-length``: a per-layer list such as
``num_kv_heads_per_layer`` describes each decoder layer in order, so it has
exactly ``num_layers`` entries. The KV-cache figure of a variable-GQA model
(DeciLM) is the sum over that list; a list one entry off drops or adds a
layer's cache. A list with no ``num_layers`` to check it against is reported
too, since its length cannot be confirmed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import validate_rules as R

if TYPE_CHECKING:
    from .findings import Finding
    from .store import Record


def per_layer_findings(rec: Record) -> list[Finding]:
    """KB124 findings for one model record: ``num_kv_heads_per_layer`` must have exactly ``num_layers`` entries.

    A list beside a null ``num_layers`` is reported (its length cannot be confirmed); nothing is reported when the
    list is absent or null, or when either field has the wrong type (the schema reports that). Returns 0 or 1 finding."""
    heads = rec.data.get("num_kv_heads_per_layer")
    layers = rec.data.get("num_layers")
    if not isinstance(heads, list):
        return []
    if layers is None:
        message = f"num_kv_heads_per_layer has {len(heads)} entries but num_layers is not stated; state num_layers"
    elif not isinstance(layers, int) or isinstance(layers, bool) or len(heads) == layers:
        return []
    else:
        message = f"num_kv_heads_per_layer has {len(heads)} entries but num_layers is {layers}: expected one entry per layer"
    return [R.KB124.finding(message, record=rec.key, path=rec.path, field="num_kv_heads_per_layer")]
