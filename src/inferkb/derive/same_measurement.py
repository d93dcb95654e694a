"""Derivation ``same-measurement``: link LLM-Inference-Bench records that repeat one run (``same_measurement_as``).

The rule is :func:`inferkb.intake.lib_links.link_groups` (same conditions, values
equal at the coarser printed precision of their CSV cells, at least
``MIN_DIGITS`` significant digits), the one the importer applies, so both write
identical values and provenance. Considered: benchmark records whose
``submission.data_set`` is the LLM-Inference-Bench data set. Ids already in a
record's ``same_measurement_as`` are kept; a record that already carries the
value and its provenance entry is not rewritten (the engine sees no change).

Outcomes:

- a group of two or more records -> one proposal per member (evidence: the
  member's own printed cell in its import quote; basis: every other member's
  table, line and printed cell);
- a record sharing its conditions with others whose printed value cannot be
  read from its import quote -> KB1002 (never linked);
- records that match only along a chain (a~b, b~c, a!~c) -> KB1001 listing them
  (nothing linked: which pair is the repeat is not determined).

Only ``same_measurement_as`` and ``provenance`` change; no number is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import lib_links as L
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    "same-measurement",
    "link LLM-Inference-Bench records that repeat one run in two dashboard CSVs (same conditions, equal at printed precision)",
    (L.FIELD,),
)
def derive_same_measurement(kb: KB) -> DerivationOutput:
    """Proposals and findings for ``same_measurement_as`` of LLM-Inference-Bench records (see the module docstring)."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    recs = {rec.id: rec for rec in kb.by_type("benchmark") if L.is_lib_record(rec.data)}
    plan = L.link_groups(rec.data for rec in recs.values())
    for group in plan.groups:
        for data in group:
            rec = recs[data["id"]]
            value, evidence, basis = L.link_entry(data, group, plan)
            out.proposals.append(Proposal(rec.key, L.FIELD, value, L.METHOD, evidence, basis))
    for rid in plan.unread:
        rec = recs[rid]
        out.findings.append(
            base.KB1002.finding(
                f"{L.FIELD} not derived: the record shares its conditions with other rows but its value's printed cell cannot be "
                "read from its import quote (provenance intake-llm-inference-bench); re-import the row to restore the quote",
                record=rec.key,
                path=rec.path,
                field=L.FIELD,
            )
        )
    for chain in plan.chains:
        rec = recs[chain[0]]
        out.findings.append(
            base.KB1001.finding(
                f"{L.FIELD} not derived: {len(chain)} records agree at printed precision only along a chain, not all pairwise: "
                + ", ".join(chain),
                record=rec.key,
                path=rec.path,
                field=L.FIELD,
                extra={"candidates": chain},
            )
        )
    return out
