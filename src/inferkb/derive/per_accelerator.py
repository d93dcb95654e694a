"""Derivation ``per-accelerator``: a system-wide token rate divided by the number of accelerators that produced it.

``per_accelerator = {"value": value / accelerator_count, "unit": unit,
"divisor": accelerator_count, "divisor_basis": ...}`` for a benchmark record
whose ``metric`` is a token rate (:data:`TOKEN_RATES`: the metric name says
output-only or input+output), whose ``value_scope`` is ``per-system`` (the
whole system, MLPerf's reporting unit), and whose ``accelerator_count`` is a
positive integer with exactly one accelerator type in ``accelerator_ids``.
The provenance entry (tag ``derive:per-accelerator``) quotes the divisor and
states the formula. Not derived, with a finding saying why: heterogeneous
systems (several accelerator types: a per-part figure would mix parts),
records without a count, and per-node/per-device/per-user values (already
scoped, or not a throughput share).

The divisor basis says where the count came from: for an MLPerf row it is
``number_of_nodes x accelerators_per_node`` (results-table columns ``Nodes``
and ``a#``, corpus ``mlperf/SOURCES.md``); a table that counts dual-GPU cards
(``"... Dual ..."`` in hardware_raw) counts cards, which the basis says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB

TOKEN_RATES = ("output_tok_s", "total_tok_s", "decode_tok_s", "prefill_tok_s")


def divisor_basis(data: dict) -> str:
    """Where ``accelerator_count`` came from, in words (MLPerf: nodes x accelerators per node)."""
    sub = data.get("submission") or {}
    nodes, per_node = sub.get("number_of_nodes"), sub.get("accelerators_per_node")
    if isinstance(nodes, int) and isinstance(per_node, int):
        text = f"accelerator_count = number_of_nodes {nodes} x accelerators_per_node {per_node} (results table)"
    else:
        text = "accelerator_count as the record states it"
    if "dual" in str(data.get("hardware_raw") or "").lower():
        text += "; the table counts cards and a 'Dual' card holds two GPUs, so this is per card"
    return text


@derivation(
    "per-accelerator",
    "divide a per-system token rate by its accelerator count (derived, with the divisor)",
    ("per_accelerator",),
    computed=("per_accelerator",),
)
def derive_per_accelerator(kb: KB) -> DerivationOutput:
    """Proposals for token-rate benchmark records with a single accelerator type and a count."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    for rec in kb.by_type("benchmark"):
        data = rec.data
        value, count, metric = data.get("value"), data.get("accelerator_count"), data.get("metric")
        if metric not in TOKEN_RATES or not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        where = dict(record=rec.key, path=rec.path, field="per_accelerator")
        if data.get("value_scope") != "per-system":
            continue
        ids = [a for a in data.get("accelerator_ids") or [] if isinstance(a, str)]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            out.findings.append(base.KB1002.finding("no accelerator_count to divide by; per_accelerator not derived", **where))
            continue
        if len(ids) != 1:
            why = "several accelerator types (a per-part share would mix parts)" if ids else "no accelerator id"
            out.findings.append(base.KB1002.finding(f"{why}; per_accelerator not derived", **where))
            continue
        derived = {
            "value": round(value / count, 6),
            "unit": data.get("unit") or "tok/s",
            "divisor": count,
            "divisor_basis": divisor_basis(data),
        }
        if base.current_value(kb, rec, "per_accelerator") == derived:
            continue
        out.proposals.append(
            Proposal(
                rec.key,
                "per_accelerator",
                derived,
                method=f"per_accelerator.value = value / accelerator_count = {value} / {count} (rounded to 6 decimals)",
                evidence={"field": "accelerator_count", "quote": str(count)},
                basis=f"{metric} counted over the whole system (value_scope per-system); {derived['divisor_basis']}",
            )
        )
    return out
