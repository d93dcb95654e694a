"""Derivation ``mlperf-weight-format``: MLPerf weight formats where the submission's harness config contradicts the table.

Reads the record's own ``submission`` block (round, submitter, division,
platform, model, scenario, ``weight_data_types``) and the evidence map
``inferkb/intake/mlperf_weight_formats.toml`` (per platform and model: the
config file per scenario at a pinned commit, the deciding class and
attributes). The decision is :func:`inferkb.intake.mlperf_weight_formats.decide`,
the one the MLPerf importer applies too (``mlperf_weight_formats.fill``), so a
re-import after this derivation writes nothing.

Considered: benchmark records of origin ``mlperf-inference`` with a
``format_id``. Only a record whose ``format_id`` and raw
``weight_data_types`` are both the entry's ``table_says`` is changed;
``submission.weight_data_types`` is never touched.

Outcomes:

- covered and contradicted -> ``format_id`` replaced (null with a
  ``condition_gaps.format_id`` reason when the harness dtype is vague, as
  FP8 is) and ``condition_gaps``;
- an MLPerf record still ``fp16`` that no entry covers -> KB1002 (the table
  may be wrong for it too; see the gotcha mlperf-v4-1-fp16-table-vs-fp8-harness);
- an entry covering no record of the KB -> KB1002 on the map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import mlperf_weight_formats as W
from . import base, derivation
from .base import DerivationOutput

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    W.NAME,
    "replace format_id of MLPerf benchmarks whose harness config contradicts the table's weight_data_types (map mlperf_weight_formats.toml)",
    W.FIELDS,
)
def derive_mlperf_weight_format(kb: KB) -> DerivationOutput:
    """Proposals and findings for MLPerf benchmarks covered by the evidence map (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the map is unusable (it names the file and entry).
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    entries = W.evidence_map()
    format_ids = set(kb.ids_of_type("quantization"))
    used: set[int] = set()
    for rec in kb.by_type("benchmark"):
        d = W.decide(rec.data, format_ids, entries)
        if d.entry is not None:
            used.add(entries.index(d.entry))
        if d.kind == "contradicted":
            out.proposals.extend(W.proposals(rec.key, rec.data, d))
        elif d.kind == "no-entry":
            out.findings.append(
                base.KB1002.finding(
                    f"format_id left as the table's 'fp16': no entry of {W.MAP_PATH.name} covers this submission's harness config",
                    record=rec.key,
                    path=rec.path,
                    field="format_id",
                )
            )
    for i, e in enumerate(entries):
        if i not in used and not any(e.covers(r.data.get("submission") or {}) for r in kb.by_type("benchmark")):
            out.findings.append(
                base.KB1002.finding(
                    f"{W.MAP_PATH.name} entry[{i}] ({e.submitter} {e.round} {e.platform} {e.model}) covers no record of this KB",
                    path=str(W.MAP_PATH),
                    field=f"entry[{i}]",
                )
            )
    return out
