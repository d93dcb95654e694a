"""Derivation ``accelerator-ids``: link a benchmark to the one accelerator its ``hardware_raw`` string names.

Only where ``accelerator_ids`` is empty and no ``accelerator_alternates`` are
listed. The string (a leading device count such as ``"8x "`` removed) goes
through the one resolver (:func:`inferkb.resolve.resolve`, type
``accelerator``): an exact alias, name or id, or its normalised form. Only a
single candidate is written; a ``condition_gaps.accelerator_ids`` entry the
importer left (e.g. LocalScore's "no accelerator record describes a CPU",
written before a CPU record existed) is removed in the same pass, since the
field it explains is now filled.

Outcomes, per benchmark with an empty ``accelerator_ids``:

- one candidate -> proposals (``accelerator_ids``, and ``condition_gaps``
  without its ``accelerator_ids`` entry when it has one);
- several candidates -> KB1001 listing them (the ``accelerator-alternates``
  derivation keeps them; nothing is picked);
- a string no accelerator record names -> KB1002 naming it;
- no ``hardware_raw`` -> nothing (no evidence to read).

Records with ``accelerator_alternates`` are skipped: their string was already
judged ambiguous. Nothing else is read: no sibling records, no outside knowledge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import hardware
from ..resolve import resolve
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

METHOD = "hardware_raw (device count removed) resolved against accelerator ids, names and aliases (inferkb.resolve: exact, then normalised)"


def _one(kb: KB, rec: Record, out: DerivationOutput) -> None:
    where = dict(record=rec.key, path=rec.path, field="accelerator_ids")
    _, part = hardware.split_count(rec.data["hardware_raw"])
    part = part.strip()
    evidence = {"field": "hardware_raw", "quote": part}
    res = resolve(kb, "accelerator", part)
    if res.resolved:
        basis = f"the record's hardware_raw {part!r} names accelerator {res.id} ({res.how} match), and no other part"
        out.proposals.append(Proposal(rec.key, "accelerator_ids", [res.id], METHOD, evidence, basis))
        gaps = rec.data.get("condition_gaps")
        if isinstance(gaps, dict) and "accelerator_ids" in gaps:
            rest = {k: v for k, v in gaps.items() if k != "accelerator_ids"}
            out.proposals.append(
                Proposal(
                    rec.key,
                    "condition_gaps",
                    rest,
                    METHOD,
                    evidence,
                    f"accelerator_ids is now filled ({res.id}); its gap no longer applies",
                )
            )
        return
    if res.ids:
        out.findings.append(
            base.KB1001.finding(
                f"accelerator_ids not filled: hardware_raw {part!r} names {', '.join(res.ids)}; nothing is picked",
                evidence=evidence,
                extra={"candidates": list(res.ids)},
                **where,
            )
        )
        return
    out.findings.append(
        base.KB1002.finding(
            f"accelerator_ids not filled: hardware_raw {part!r} names no accelerator record; add the record or an alias naming it",
            evidence=evidence,
            **where,
        )
    )


@derivation(
    "accelerator-ids",
    "fill an empty benchmark accelerator_ids when its hardware_raw names exactly one accelerator (alias, name or id)",
    ("accelerator_ids", "condition_gaps"),
)
def derive_accelerator_ids(kb: KB) -> DerivationOutput:
    """Proposals for benchmark records with an empty ``accelerator_ids``, no alternates and a ``hardware_raw`` (see the module docstring)."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types or "accelerator" not in kb.profile.types:
        return out
    for rec in kb.by_type("benchmark"):
        raw = rec.data.get("hardware_raw")
        if base.current_value(kb, rec, "accelerator_ids") or base.current_value(kb, rec, "accelerator_alternates"):
            continue
        if not isinstance(raw, str) or not raw.strip():
            continue
        _one(kb, rec, out)
    return out
