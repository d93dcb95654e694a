"""Derivation ``repeat-group``: link benchmark records that are repeated measurements of one configuration.

The rule is :func:`inferkb.intake.repeats.repeat_groups` (one CSV file at one
commit, every fact but the line and the measured values equal), the one the
LLM-Inference-Bench importer applies, so both write identical values and
provenance. Each member of a group gets the group id (its first member's id)
in ``repeat_group``; evidence is the member's own ``submission.line``. A record
that already carries the value and its provenance entry is not rewritten.

Only ``repeat_group`` and ``provenance`` change; no number is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import repeats as RP
from . import derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    "repeat-group",
    "link benchmark records that measured one configuration more than once (rows of one CSV equal in all but line and values)",
    (RP.FIELD,),
)
def derive_repeat_group(kb: KB) -> DerivationOutput:
    """One ``repeat_group`` proposal per member of each repeat group (see the module docstring)."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    recs = {rec.id: rec for rec in kb.by_type("benchmark")}
    for group in RP.repeat_groups(rec.data for rec in recs.values()):
        for data in group:
            value, evidence, basis = RP.repeat_entry(data, group)
            out.proposals.append(Proposal(recs[data["id"]].key, RP.FIELD, value, RP.METHOD, evidence, basis))
    return out
