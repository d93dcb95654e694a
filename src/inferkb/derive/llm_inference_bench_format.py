"""Derivation ``llm-inference-bench-format``: the weight format of Argonne LLM-Inference-Bench rows, from their run script.

Reads the record's own group (``submission.table``, ``environment.framework``,
``hardware_raw``), its model, device count, batch size and lengths, and the
group map ``inferkb/intake/llm_inference_bench_formats.toml`` (one entry per
group: the run script at a pinned commit, its loops and the quoted line that
sets the format). The decision is
:func:`inferkb.intake.llm_inference_bench_formats.decide`, the one the importer
uses, so both write identical values and provenance.

Considered: benchmark records of origin ``llm-inference-bench`` whose
``format_id`` is null and whose ``condition_gaps`` has a ``format_id`` entry.
A format already set is never touched.

Outcomes:

- the row lies inside the loops of its group's script -> ``format_id`` and
  ``condition_gaps`` without the ``format_id`` gap;
- the group has an entry but the row lies outside the script's loops -> no
  format; the ``format_id`` gap's reason names the script checked and why
  the row is outside it (KB1002 too);
- the entry's format is no quantization record of this KB -> KB1002;
- the group has no entry -> KB1002, the record is left as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..intake import llm_inference_bench_formats as F
from . import base, derivation
from .base import DerivationOutput

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    F.NAME,
    "fill format_id of Argonne LLM-Inference-Bench rows from the run script of their group (map llm_inference_bench_formats.toml)",
    F.FIELDS,
)
def derive_llm_inference_bench_format(kb: KB) -> DerivationOutput:
    """Proposals and findings for llm-inference-bench benchmarks without a format (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the group map is unusable (it names the file and entry).
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    entries = F.group_map()
    format_ids = kb.ids_of_type("quantization")
    for rec in kb.by_type("benchmark"):
        d = F.decide(rec.data, format_ids, entries)
        if d.kind == "not-applicable":
            continue
        where = dict(record=rec.key, path=rec.path, field="format_id")
        out.proposals.extend(F.proposals(rec.key, d))
        if d.kind == "no-entry":
            out.findings.append(
                base.KB1002.finding(
                    f"format_id not filled: the group map has no entry for this record's table, framework and hardware ({F.MAP_PATH.name})",
                    **where,
                )
            )
        elif d.kind in ("outside", "unknown-format"):
            out.findings.append(base.KB1002.finding(f"format_id not filled: {d.why}", **where))
    return out
