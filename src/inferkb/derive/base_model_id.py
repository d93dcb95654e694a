"""Derivation ``base-model-id``: the published model an open-division MLPerf result was derived from.

Reads only the record's own ``submission.used_model`` (the submitter's model
label) and the label map ``inferkb/intake/mlperf_base_models.toml`` (pattern ->
model id, each with its evidence); the matching is
:func:`inferkb.intake.mlperf_base_models.match_label`, the same the MLPerf
importer uses, so the two write identical values and provenance.

Considered: benchmark records of origin ``mlperf-inference`` outside the closed
division whose ``base_model_id`` is missing, null or empty. A value already set
is never touched. ``model_id`` is never written: a base model is not the
model's identity (the submission may have pruned, retrained or requantised it).

Outcomes:

- one entry matches and names a model record -> a proposal (evidence: the quoted label);
- two or more entries match -> KB1001 listing their models (nothing picked);
- the one matching entry names a model id the KB lacks -> KB1002 naming it;
- no entry matches, or the record has no label -> KB1002.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import mlperf_base_models as B
from . import base, derivation
from .base import DerivationOutput

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    "base-model-id",
    "fill base_model_id of open-division MLPerf benchmarks from the submitter's model label (label map mlperf_base_models.toml)",
    (B.FIELD,),
)
def derive_base_model_id(kb: KB) -> DerivationOutput:
    """Proposals and findings for open-division MLPerf benchmarks without a ``base_model_id`` (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the label map is unusable (it names the file and entry).
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types or "model" not in kb.profile.types:
        return out
    rules = B.label_map()
    model_ids = kb.ids_of_type("model")
    for rec in kb.by_type("benchmark"):
        if not B.is_open(rec.data) or base.current_value(kb, rec, B.FIELD):
            continue
        where = dict(record=rec.key, path=rec.path, field=B.FIELD)
        label = B.open_label(rec.data)
        if label is None:
            out.findings.append(
                base.KB1002.finding(
                    f"{B.FIELD} not filled: the record has no submitter's model label ({B.LABEL_FIELD}); the submission's "
                    "own files (its README or system description) would have to name the model",
                    **where,
                )
            )
            continue
        match = B.match_label(label, rules, model_ids)
        if match.model_id is not None:
            out.proposals.append(B.proposal(rec.key, match))
        else:
            out.findings.append(B.finding(match, **where))
    return out
