"""Derivation ``distinct-names``: benchmark records that share a ``name`` gain the fact that tells them apart.

The rule is :func:`inferkb.intake.distinct_names.distinct_names` (dashboard
table for LLM-Inference-Bench, run timestamp for llama-bench, platform /
used model / metric / printed units for MLPerf, ``repeat k of n, CSV line L`` for rows of one
CSV that nothing else separates). Evidence: the record's own field holding the
first distinguishing fact. Only ``name`` and ``provenance`` change; no number
is touched. A group that no fact separates stays as it is (KB1401 keeps
reporting it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import distinct_names as N
from . import derivation
from .base import DerivationOutput, Proposal, field_text

if TYPE_CHECKING:
    from ..kb import KB

METHOD = "inferkb.intake.distinct_names: first fact (submission.table, submission.test_time, submission.platform, submission.used_model, metric, submission.units_raw, then CSV line) that differs within the group"


@derivation(
    "distinct-names",
    "benchmark records sharing a name gain the fact that distinguishes them (dashboard, run time, platform, repeat)",
    ("name",),
)
def derive_distinct_names(kb: KB) -> DerivationOutput:
    """One ``name`` proposal per record whose name collides with another benchmark's and can be told apart."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    recs = {rec.id: rec for rec in kb.by_type("benchmark")}
    plan = N.distinct_names(rec.data for rec in recs.values())
    for rid, (name, parts) in sorted(plan.items()):
        rec = recs[rid]
        path, _ = parts[0]
        quote = field_text(N.get_path(rec.data, path))
        others = sorted(o.id for o in recs.values() if o.data.get("name") == rec.data.get("name") and o.id != rid)
        basis = f"the name {rec.data['name']!r} is shared with {', '.join(others)}; what differs: " + "; ".join(
            f"{p} -> '{s}'" for p, s in parts
        )
        out.proposals.append(Proposal(rec.key, "name", name, METHOD, {"field": path, "quote": quote}, basis))
    return out
