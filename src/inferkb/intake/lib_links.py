"""``same_measurement_as`` between LLM-Inference-Bench records: one run published in two dashboard CSVs.

The dashboard's tables re-publish rows of one another: the Perplexity table's
row 106 (``Throughput`` ``261.9463347``) is the Throughput table's row 3532
(``261.946334709452``) printed with fewer digits. The importer skips only
rows whose text repeats exactly (KB1131); rows that differ in printed
precision become two records, and a ranking would count the run twice.

The rule (:func:`link_groups`). Two records repeat one measurement when

1. they agree on the hardware string (``hardware_raw``), the device count
   (``accelerator_count``), the framework (``environment.framework``), the
   model string, ``conditions.input_tokens``/``output_tokens``/``batch_size``,
   the metric and its unit; and
2. their values, *as printed in the CSV cells*, agree at the coarser one's
   printed precision: with ``e`` the larger decimal exponent of the two
   printed numbers (``261.9463347`` -> -7; a seconds cell read as ms is
   shifted by 3), ``|a - b| <= 5 x 10^(e-1)``, i.e. the finer value lies in
   the rounding interval of the coarser one's last printed digit (exact
   decimal arithmetic; the boundary counts as inside, whichever way the
   publisher rounded a tie); and
3. the coarser printed value carries at least :data:`MIN_DIGITS` significant
   digits, so that agreement cannot be the coincidence of two coarse
   roundings of different runs (the bundled KB's pairs carry 9-10).

The printed number is read from the record's import evidence (the CSV row
quoted in its ``intake-llm-inference-bench`` provenance entry): the cell whose
value, as a float and scaled by 1 or by 1000 (seconds to ms), is exactly the
record's ``value``. A record whose cell cannot be found (quote cut short,
hand-edited record) or is found twice with different text is never linked.
Records linked transitively must all match one another pairwise; a chain
that does not (a~b, b~c, not a~c) is reported and left unlinked.

Every member of a group lists the others (sorted ids) in
``same_measurement_as``; ids already listed there are kept. The importer and
the derivation ``same-measurement`` apply this one rule and write the same
provenance entry (tag :data:`TAG`, action ``backfill``), so a re-import of a
derived record is a no-op.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

FIELD = "same_measurement_as"
TAG = "derive:same-measurement"
DATA_SET = "LLM-Inference-Bench (Argonne)"
IMPORT_TAG = "intake-llm-inference-bench"
MIN_DIGITS = 6
METHOD = (
    "same hardware string, device count, framework, model, input/output length, batch size, metric and unit; values equal "
    f"at the coarser printed precision (|a - b| <= half a unit of its last printed digit, at least {MIN_DIGITS} significant "
    "digits), read from the CSV cells quoted at import (rule in inferkb.intake.lib_links)"
)


@dataclass(frozen=True, slots=True)
class Printed:
    """A record's value as its CSV cell printed it: ``cell`` text, ``number`` (exact, in the record's unit), ``evidence`` path."""

    cell: str
    number: Decimal
    evidence_field: str


@dataclass
class LinkPlan:
    """What :func:`link_groups` found: ``groups`` (lists of records, each a repeated measurement), ``printed`` (id -> Printed),
    ``unread`` (ids in a shared bucket whose printed value could not be read), ``chains`` (id lists that match only transitively)."""

    groups: list[list[dict[str, Any]]] = field(default_factory=list)
    printed: dict[str, Printed] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    chains: list[list[str]] = field(default_factory=list)


def is_lib_record(rec: dict[str, Any]) -> bool:
    """True for a benchmark record of the LLM-Inference-Bench data set (``submission.data_set``)."""
    return rec.get("type", "benchmark") == "benchmark" and (rec.get("submission") or {}).get("data_set") == DATA_SET


def match_key(rec: dict[str, Any]) -> tuple:
    """The conditions two records must share (rule 1 of the module docstring)."""
    cond = rec.get("conditions") or {}
    return (
        rec.get("hardware_raw"),
        rec.get("accelerator_count"),
        (rec.get("environment") or {}).get("framework"),
        rec.get("model"),
        cond.get("input_tokens"),
        cond.get("output_tokens"),
        cond.get("batch_size"),
        rec.get("metric"),
        rec.get("unit"),
    )


def printed_value(rec: dict[str, Any]) -> Printed | None:
    """The record's ``value`` as printed in its CSV row (see the module docstring), or ``None`` when it cannot be read uniquely."""
    value = rec.get("value")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    for i, entry in enumerate(rec.get("provenance") or []):
        if not (isinstance(entry, dict) and entry.get("tag") == IMPORT_TAG and entry.get("field") == "*"):
            continue
        quote = (entry.get("evidence") or {}).get("quote")
        if not isinstance(quote, str):
            return None
        found: dict[str, tuple[Decimal, str]] = {}
        for cell in quote.split(","):
            try:
                number, as_float = Decimal(cell), float(cell)
            except (InvalidOperation, ValueError):
                continue
            if not number.is_finite():
                continue
            if as_float == value:
                found[str(number)] = (number, cell)
            elif as_float * 1000.0 == value:
                found[str(number.scaleb(3))] = (number.scaleb(3), cell)
        if len(found) != 1:
            return None
        ((number, cell),) = found.values()
        return Printed(cell, number, f"provenance[{i}].evidence.quote")
    return None


def same_printed(a: Decimal, b: Decimal) -> bool:
    """True when ``a`` and ``b`` agree at the coarser one's printed precision and it has ``MIN_DIGITS`` significant digits.

    ``Decimal('261.9463347')`` and ``Decimal('261.946334709452')`` -> True
    (difference 9.5e-9 <= 5e-8); ``Decimal('2619.46')`` and ``Decimal('2618.46')``
    -> False.
    """
    exp_a, exp_b = int(a.as_tuple().exponent), int(b.as_tuple().exponent)
    coarse = a if exp_a >= exp_b else b
    if len(coarse.as_tuple().digits) < MIN_DIGITS:
        return False
    return abs(a - b) <= Decimal(5).scaleb(max(exp_a, exp_b) - 1)


def _components(numbers: list[Decimal]) -> tuple[list[list[int]], list[list[int]]]:
    """Index groups of ``numbers`` connected by :func:`same_printed`: ``(all pairs match, matching only along a chain)``."""
    parent = list(range(len(numbers)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = set()
    for i in range(len(numbers)):
        for j in range(i + 1, len(numbers)):
            if same_printed(numbers[i], numbers[j]):
                pairs.add((i, j))
                parent[find(i)] = find(j)
    comps: dict[int, list[int]] = defaultdict(list)
    for i in range(len(numbers)):
        comps[find(i)].append(i)
    cliques, chains = [], []
    for comp in comps.values():
        if len(comp) < 2:
            continue
        whole = all((i, j) in pairs for n, i in enumerate(comp) for j in comp[n + 1 :])
        (cliques if whole else chains).append(comp)
    return cliques, chains


def link_groups(records: Iterable[dict[str, Any]]) -> LinkPlan:
    """Groups of LLM-Inference-Bench records that repeat one measurement (the module docstring's rule); records are not changed."""
    plan = LinkPlan()
    buckets: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        if is_lib_record(rec) and isinstance(rec.get("id"), str):
            buckets[match_key(rec)].append(rec)
    for members in buckets.values():
        if len(members) < 2:
            continue
        readable = []
        for rec in members:
            p = printed_value(rec)
            if p is None:
                plan.unread.append(rec["id"])
            else:
                plan.printed[rec["id"]] = p
                readable.append(rec)
        readable.sort(key=lambda r: r["id"])
        cliques, chains = _components([plan.printed[r["id"]].number for r in readable])
        plan.groups.extend([readable[i] for i in comp] for comp in cliques)
        plan.chains.extend([readable[i]["id"] for i in comp] for comp in chains)
    plan.groups.sort(key=lambda g: g[0]["id"])
    return plan


def _where(rec: dict[str, Any]) -> str:
    sub = rec.get("submission") or {}
    return f"{sub.get('table')} line {sub.get('line')}"


def link_entry(rec: dict[str, Any], group: list[dict[str, Any]], plan: LinkPlan) -> tuple[list[str], dict[str, str], str]:
    """``(value, evidence, basis)`` of ``same_measurement_as`` for ``rec`` in ``group``: existing ids kept, the others added."""
    mine = plan.printed[rec["id"]]
    others = [r for r in group if r["id"] != rec["id"]]
    existing = [i for i in rec.get(FIELD) or [] if isinstance(i, str)]
    value = sorted(set(existing) | {r["id"] for r in others})
    shown = "; ".join(f"{_where(r)} printed {plan.printed[r['id']].cell}" for r in others)
    basis = (
        f"this row ({_where(rec)}) printed {mine.cell}; {shown}: equal at the coarser printed precision, under the same "
        "hardware, device count, framework, model, lengths and batch size; the dashboard tables re-publish one run"
    )
    return value, {"field": mine.evidence_field, "quote": mine.cell}, basis


def link_records(records: list[dict[str, Any]], date: _dt.date) -> int:
    """Set ``same_measurement_as`` (in place) on the records that repeat one measurement, for the importer; returns groups linked.

    Appends the same provenance entry the derivation ``same-measurement`` writes (dated ``date``).
    """
    from ..derive.base import Proposal, provenance_entry, same_entry

    plan = link_groups(records)
    for group in plan.groups:
        for rec in group:
            value, evidence, basis = link_entry(rec, group, plan)
            entry = provenance_entry(Proposal(f"benchmarks/{rec['id']}", FIELD, value, METHOD, evidence, basis), TAG, date)
            rec[FIELD] = value
            prov = rec.setdefault("provenance", [])
            if not any(isinstance(e, dict) and same_entry(e, entry) for e in prov):
                prov.append(entry)
    return len(plan.groups)


__all__ = [
    "FIELD",
    "TAG",
    "MIN_DIGITS",
    "Printed",
    "LinkPlan",
    "link_groups",
    "link_entry",
    "link_records",
    "printed_value",
    "same_printed",
]
