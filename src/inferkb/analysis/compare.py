"""``compare``: select benchmarks, group them into comparability classes, rank within each class.

Python API::

    from inferkb.analysis import compare
    result = compare.compare(kb, model="llama-2-70b", scenario="offline", vary=("engine", "engine_version"))
    result.to_dict()       # JSON-able: classes (key, ranked rows), not_comparable, split_by

Ranking rules (shared data contracts): one row per ``same_measurement_as``
group (the others are folded into it); one row per ``repeat_group`` (repeated
measurements of one configuration, :mod:`inferkb.analysis.repeats`): the row
takes the group's first member's id, ranks on the members' median and carries
``repeats`` (n, ids, values, min, median, max), so a repeat is never ranked as
a second setup nor its best value picked; a not-comparable record in a repeat
group carries ``repeat`` (group, index, n); rows with ``experimental: true`` are
labelled; MLPerf closed and open divisions are never in one class (the
``division`` condition cannot be varied). Direction (higher or lower is
better) comes from the KB's metric registry; a metric without one is listed
unranked. With ``per_accelerator=True`` the ranked value is the
per-accelerator figure (:func:`inferkb.analysis.common.per_accelerator`).

The selection is :mod:`inferkb.analysis.compare_select`, the result's shapes :mod:`inferkb.analysis.compare_result`
(both re-exported here); this module places and ranks.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..arms import arm_deltas
from .common import AnalysisError, is_number, mlperf_division, mlperf_round, per_accelerator, rate_label, token_basis
from .comparability import CONDITION_NAMES, check_vary, conditions_of, key_id
from .compare_result import ArmRow, CompareResult, ComparisonClass, Entry, NotComparable, RankedRow
from .compare_select import EXACT_FILTERS, _absent_values, select, values_of_selection
from .fold import fold_rows
from .repeats import Membership, memberships

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record


__all__ = [
    "EXACT_FILTERS",
    "ArmRow",
    "CompareResult",
    "ComparisonClass",
    "Entry",
    "NotComparable",
    "RankedRow",
    "compare",
    "entry_of",
    "select",
    "values_of_selection",
]


def _context(d: dict[str, Any]) -> dict[str, Any]:
    sub = d.get("submission") if isinstance(d.get("submission"), dict) else {}
    env = d.get("environment") if isinstance(d.get("environment"), dict) else {}
    ctx = {
        "origin": d.get("origin"),
        "division": mlperf_division(d),
        "round": mlperf_round(d),
        "submitter": sub.get("submitter"),
        "system": sub.get("system_name"),
        "os": env.get("os"),
        "hardware_raw": d.get("hardware_raw"),
        "status": d.get("status"),
    }
    return {k: v for k, v in ctx.items() if v is not None}


def _flags(kb: KB, d: dict[str, Any]) -> list[str]:
    """Audit verdicts shown beside a ranked row: KB512 when the run is longer than its model's context window."""
    from ..audit.context_window import window_check

    _, excess = window_check(kb, d)
    return [excess.note()] if excess else []


def _arm_rows(d: dict[str, Any], direction: str | None) -> list[ArmRow]:
    arms = d.get("arms")
    if not isinstance(arms, list) or not arms:
        return []
    deltas = arm_deltas(d)
    base = d.get("baseline_arm")
    rows = []
    for arm in arms:
        if not isinstance(arm, dict):
            continue
        aid = str(arm.get("id"))
        delta = deltas.get(aid, {})
        headline = delta.get("mean_delta_pct", delta.get("p50_delta_pct"))
        better = None
        if is_number(headline) and direction in ("higher", "lower") and headline != 0:
            better = (headline > 0) == (direction == "higher")
        rows.append(ArmRow(aid, arm.get("label"), aid == base, arm.get("unit"), dict(arm.get("stats") or {}), delta, better))
    return rows


def entry_of(rec: Record, per_accelerator_basis: bool = False) -> Entry | NotComparable:
    """The :class:`Entry` of one benchmark, or a :class:`NotComparable` (no ``missing``) when it has no numeric value or,
    with ``per_accelerator_basis``, no per-accelerator figure. Whether its conditions are all stated depends on what is
    varied, so that is the caller's check (``entry.cs.missing(vary)``)."""
    d = rec.data
    value = d.get("value")
    label = rate_label(d)
    pa = None
    if per_accelerator_basis:
        pa, why = per_accelerator(d)
        if pa is None:
            return NotComparable(rec.id, value if is_number(value) else None, d.get("unit"), label, [], f"no per-accelerator figure: {why}")
        label = label.rsplit(", ", 1)[0] + ", per accelerator"
    if not is_number(value):
        return NotComparable(rec.id, None, d.get("unit"), label, [], "no numeric value")
    cs = conditions_of(d)
    if per_accelerator_basis:
        cs.values["value_scope"] = "per accelerator"
    return Entry(rec, cs, pa, float(pa.value if pa else value), label)


def compare(
    kb: KB,
    *,
    model: str | None = None,
    metric: str | None = None,
    accelerator: str | None = None,
    engine: str | None = None,
    fmt: str | None = None,
    scenario: str | None = None,
    origin: str | None = None,
    vary: Iterable[str] = (),
    per_accelerator_basis: bool = False,
    records: list[Record] | None = None,
    base_model: str | None = None,
) -> CompareResult:
    """Group the selected benchmarks into comparability classes and rank each class.

    Filters as in :func:`select` (or pass ``records`` directly). ``vary``
    names conditions declared irrelevant (see
    :mod:`inferkb.analysis.comparability`); ``per_accelerator_basis`` ranks
    on the per-accelerator figure and treats per-device and divided-down
    per-system values as one scope. Raises :class:`AnalysisError` for unknown
    ids or condition names.
    """
    try:
        varied = check_vary(vary)
    except ValueError as exc:
        raise AnalysisError(str(exc)) from None
    without_metric: dict[str, int] = {}
    absent_values: dict[str, dict[str, int]] = {}
    near_values: dict[str, list[str]] = {}
    selected_here = records is None
    if records is None:
        others = dict(model=model, accelerator=accelerator, engine=engine, fmt=fmt, scenario=scenario, origin=origin, base_model=base_model)
        records, filters = select(kb, metric=metric, **others)
        if metric and not records:
            without_metric = values_of_selection(kb, "metric", **others)
        if not records:
            absent_values, near_values = _absent_values(kb, dict(others, metric=metric))
    else:
        filters = {"records": len(records)}
    groups: dict[tuple, list[tuple[Record, Any, float]]] = {}
    spelt: dict[tuple, dict[str, Counter]] = {}
    fixed: dict[tuple, dict[str, str]] = {}
    not_comparable: list[NotComparable] = []
    entries: list[Entry] = []
    for rec in records:
        entry = entry_of(rec, per_accelerator_basis)
        if isinstance(entry, NotComparable):
            not_comparable.append(entry)
            continue
        entries.append(entry)
        cs = entry.cs
        missing = cs.missing(varied)
        if missing:
            d = rec.data
            not_comparable.append(NotComparable(rec.id, float(d["value"]), d.get("unit"), entry.label, missing, "conditions not stated"))
            continue
        key = cs.key(varied)
        groups.setdefault(key, []).append((rec, entry.pa, entry.value))
        counts = spelt.setdefault(key, {})
        for n, v in cs.values.items():
            if n not in varied:
                counts.setdefault(n, Counter())[v] += 1
        fixed.setdefault(key, {n: v for n, v in cs.fixed_by.items() if n not in varied})
    # Members of a group share model, metric, hardware, engine and format (KB127), so a selection holds all or none.
    repeat_of = memberships(records)
    by_id = {rec.id: rec for rec in records}
    for nc in not_comparable:
        if nc.id in repeat_of:
            nc.repeat = repeat_of[nc.id].to_dict()
        if nc.id in by_id:
            nc.flags = _flags(kb, by_id[nc.id].data)
    classes = []
    for key, members in groups.items():
        shown, spellings = _shown(spelt[key])
        cls = _rank(kb, key, members, shown, fixed[key], varied, repeat_of)
        cls.spellings = spellings
        classes.append(cls)
    classes.sort(key=lambda c: (-c.size, c.id))
    split_by: dict[str, int] = {}
    if len(groups) > 1:
        for i, name in enumerate(n for n in CONDITION_NAMES if n not in varied):
            # Counted in the compared form, so two spellings of one version are one value.
            distinct = {repr(key[i][1]) for key in groups}
            if len(distinct) > 1:
                split_by[name] = len(distinct)
    hint = None
    if selected_here:
        from .compare_hint import vary_hint

        hint = vary_hint(entries, not_comparable, len(records), varied, repeat_of, per_accelerator_basis)
    return CompareResult(
        filters,
        list(varied),
        per_accelerator_basis,
        list(CONDITION_NAMES),
        classes,
        not_comparable,
        split_by,
        len(records),
        without_metric,
        absent_values,
        near_values,
        hint.text if hint else None,
        hint,
    )


def _shown(counts: dict[str, Counter]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """(condition -> the spelling shown, condition -> every spelling merged when there are several), from spelling counts.

    The shown spelling is the most common one; on a tie the first in sorted text order, so the output does not depend
    on the order records were read in.
    """
    shown: dict[str, Any] = {}
    merged: dict[str, list[Any]] = {}
    for name, counter in counts.items():
        ordered = sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))
        shown[name] = ordered[0][0]
        if len(ordered) > 1:
            merged[name] = [v for v, _ in ordered]
    return shown, merged


def _rank(
    kb: KB,
    key: tuple,
    members: list[tuple[Record, Any, float]],
    shown: dict,
    fixed: dict,
    varied: tuple[str, ...],
    repeat_of: dict[str, Membership] | None = None,
) -> ComparisonClass:
    metric = shown.get("metric")
    direction = (kb.metrics.get(metric) or {}).get("direction") if metric else None
    reps, folded, grouped = fold_rows(members, repeat_of or {})
    ordered = list(reps.items())
    if direction in ("higher", "lower"):
        ordered.sort(key=lambda item: (-item[1][2] if direction == "higher" else item[1][2], item[1][0].id))
    rows = []
    for pos, (root, (rec, pa, value)) in enumerate(ordered, start=1):
        d = rec.data
        vc = conditions_of(d).values
        info = grouped.get(root)
        headline = float(d["value"])
        own_pa = pa if pa is not None else per_accelerator(d)[0]
        pa_dict = own_pa.to_dict() if own_pa else None
        if info is not None:
            headline = statistics.median(info.pop("headlines"))
            if pa_dict is not None and pa_dict.get("divisor"):
                # Members share the device count (KB127), so the median divides down like one value.
                pa_dict = dict(pa_dict, value=headline / pa_dict["divisor"], source="median of repeats")
        rows.append(
            RankedRow(
                id=rec.id,
                rank=pos if direction in ("higher", "lower") else None,
                value=value,
                headline=headline,
                unit=d.get("unit"),
                label=rate_label(d) if pa is None else rate_label(d).rsplit(", ", 1)[0] + ", per accelerator",
                token_basis=token_basis(d.get("metric")),
                value_scope=d.get("value_scope"),
                per_accelerator=pa_dict,
                experimental=d.get("experimental") is True,
                varied={n: vc.get(n) for n in varied},
                same_measurement=folded.get(root, []),
                context=_context(d),
                arms=_arm_rows(d, direction),
                repeats=info,
                flags=_flags(kb, d),
            )
        )
    return ComparisonClass(key_id(key), dict(shown), dict(fixed), direction, rows)
