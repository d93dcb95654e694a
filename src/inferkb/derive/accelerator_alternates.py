"""Derivation ``accelerator-alternates``: the parts a ``hardware_raw`` string cannot tell apart.

Only where ``accelerator_alternates`` is absent. The string (a leading device
count such as ``"8x "`` removed) is matched against accelerator ``aliases``,
``name`` and ``id`` by :func:`inferkb.resolve.resolve` (whole string only). When it matches
several parts and the record's chosen ``accelerator_ids`` are among them, the
alternates are the other candidates, in alias-index order. Nothing is written
when the string identifies one part (there is nothing to list; absence means
"none known"), when it matches none (KB1002), when the chosen part is not a
candidate (KB1003: the record and its own hardware string disagree), or when
no part was chosen (KB1001: the candidates are listed, none is picked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import hardware
from ..resolve import resolve
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB


@derivation(
    "accelerator-alternates", "list the accelerators a benchmark's hardware_raw string cannot tell apart", ("accelerator_alternates",)
)
def derive_alternates(kb: KB) -> DerivationOutput:
    """Proposals for benchmark records with a ``hardware_raw`` and no ``accelerator_alternates``."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types or "accelerator" not in kb.profile.types:
        return out
    for rec in kb.by_type("benchmark"):
        raw = rec.data.get("hardware_raw")
        if not isinstance(raw, str) or not raw.strip() or base.has_value(kb, rec, "accelerator_alternates"):
            continue
        where = dict(record=rec.key, path=rec.path, field="accelerator_alternates")
        _, part = hardware.split_count(raw)
        part = part.strip()
        evidence = {"field": "hardware_raw", "quote": part}
        res = resolve(kb, "accelerator", part)
        cands = list(res.ids) if res.how in ("exact", "normalised", "name", "family") else []
        chosen = [a for a in rec.data.get("accelerator_ids") or [] if isinstance(a, str)]
        if not cands:
            out.findings.append(
                base.KB1002.finding(
                    f"hardware_raw {part!r} matches no accelerator alias, name or id; add the string to the right part's aliases",
                    evidence=evidence,
                    **where,
                )
            )
            continue
        if len(cands) == 1 and (not chosen or chosen == cands):
            continue
        if not chosen:
            out.findings.append(
                base.KB1001.finding(
                    f"hardware_raw {part!r} matches {', '.join(cands)} and the record chose none; nothing is listed",
                    evidence=evidence,
                    extra={"candidates": cands},
                    **where,
                )
            )
            continue
        stray = [a for a in chosen if a not in cands]
        if stray:
            out.findings.append(
                base.KB1003.finding(
                    f"accelerator_ids {', '.join(stray)} is not a candidate for hardware_raw {part!r} "
                    f"(candidates: {', '.join(cands)}); no alternates derived",
                    evidence=evidence,
                    extra={"candidates": cands},
                    **where,
                )
            )
            continue
        alternates = [c for c in cands if c not in chosen]
        if not alternates:
            continue
        out.proposals.append(
            Proposal(
                rec.key,
                "accelerator_alternates",
                alternates,
                method="hardware_raw (device count removed) matched against accelerator aliases, names and ids "
                "(inferkb.resolve.resolve: whole string only); alternates = candidates minus accelerator_ids",
                evidence=evidence,
                basis=f"the string {part!r} names {', '.join(cands)} equally; it cannot tell {', '.join(alternates)} "
                f"apart from the chosen {', '.join(chosen)}",
            )
        )
    return out
