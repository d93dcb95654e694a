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
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..arms import arm_deltas
from ..hardware import normalise
from ..query_expr import absent_value_near
from .common import AnalysisError, is_number, lookup, mlperf_division, mlperf_round, per_accelerator, rate_label, token_basis
from .comparability import CONDITION_NAMES, ConditionSet, check_vary, conditions_of, key_id
from .fold import fold_rows
from .repeats import Membership, memberships

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record
    from .compare_hint import VaryHint


@dataclass
class ArmRow:
    """One arm of a record with its computed change versus the baseline arm (``delta_pct``: stat -> percent)."""

    arm_id: str
    label: str | None
    baseline: bool
    unit: str | None
    stats: dict[str, Any]
    delta_pct: dict[str, float | None]
    better: bool | None


@dataclass
class RankedRow:
    """A benchmark placed in a class.

    ``rank`` is 1-based (``None`` when the metric has no direction);
    ``value`` is what was ranked (the per-accelerator figure when asked),
    ``headline`` the record's own value; ``label`` says the token basis and
    scope; ``varied`` holds the varied conditions' values; ``same_measurement``
    the ids folded into this row; ``context`` origin, division, round,
    submitter, system, OS (differences that come from how a number was made).
    ``repeats``: for a row standing for a repeat group, ``{"group", "n", "ids",
    "values", "min", "median", "max"}`` (ids in line order, values the members'
    ranked values); ``value`` and ``headline`` are then the medians. ``None`` otherwise.
    """

    id: str
    rank: int | None
    value: float
    headline: float
    unit: str | None
    label: str
    token_basis: str | None
    value_scope: str | None
    per_accelerator: dict[str, Any] | None
    experimental: bool
    varied: dict[str, Any] = field(default_factory=dict)
    same_measurement: list[str] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    arms: list[ArmRow] = field(default_factory=list)
    repeats: dict[str, Any] | None = None


@dataclass
class ComparisonClass:
    """One comparability class: ``id`` (hash of the key), ``key`` (condition -> value), ranked ``rows``, ``direction``.

    ``key`` shows each condition as its rows spell it (the most common spelling when they differ);
    ``spellings`` lists, for a condition whose rows spell one value differently (engine versions
    ``"10.2"`` and ``"10.2.0"``: equal under PEP 440), every spelling merged, most common first.
    """

    id: str
    key: dict[str, Any]
    fixed_by: dict[str, str]
    direction: str | None
    rows: list[RankedRow]
    spellings: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Rows in the class (after folding same-measurement groups)."""
        return len(self.rows)


@dataclass
class NotComparable:
    """A selected record that no class can take: ``missing`` names the unstated conditions, ``reason`` anything else.

    ``repeat``: ``{"group", "index", "n"}`` when the record is one of a repeat group's measurements, else ``None``.
    """

    id: str
    value: float | None
    unit: str | None
    label: str
    missing: list[str]
    reason: str
    repeat: dict[str, Any] | None = None


@dataclass
class CompareResult:
    """Result of :func:`compare`.

    ``filters`` (what was asked), ``vary`` (conditions declared irrelevant),
    ``per_accelerator`` (ranked on the per-accelerator figure),
    ``conditions`` (the class-key conditions, in order), ``classes``
    (largest first), ``not_comparable``, ``split_by`` (condition -> number of
    distinct values across classes: what keeps the classes apart),
    ``selected`` (records matching the filters) and ``metrics_without_filter``:
    when a metric filter selected nothing, ``{metric: records}`` of the
    records the other filters select (most first; ``{}`` when they select
    none either, and when no metric was asked or something was selected).
    ``values_without_filter``: when nothing was selected, for each exact-match
    filter (``scenario``, ``origin``) whose value none of the records the other
    filters select has, ``{filter: {value: records}}`` of the values they do
    have (most first), and ``did_you_mean`` ``{filter: [values]}``: the KB's
    values of that field close to the one asked (a typo such as ``ofline``, a
    prefix such as ``mlperf``). ``hint``: when more than half of the selected records are not comparable, a line naming
    the unstated conditions most often to blame and the smallest ``--vary`` set that puts most of them into classes of
    two or more rows (:mod:`inferkb.analysis.compare_hint`), with ``vary_hint`` its figures; ``None`` otherwise, and
    when ``records`` were passed in (the site) rather than selected here.
    """

    filters: dict[str, Any]
    vary: list[str]
    per_accelerator: bool
    conditions: list[str]
    classes: list[ComparisonClass]
    not_comparable: list[NotComparable]
    split_by: dict[str, int]
    selected: int
    metrics_without_filter: dict[str, int] = field(default_factory=dict)
    values_without_filter: dict[str, dict[str, int]] = field(default_factory=dict)
    did_you_mean: dict[str, list[str]] = field(default_factory=dict)
    hint: str | None = None
    vary_hint: VaryHint | None = None

    @property
    def metric_absent(self) -> bool:
        """True when a metric filter (:func:`compare` with ``metric``) is what left the selection empty."""
        return self.selected == 0 and "metric" in self.filters

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field (dataclasses converted recursively)."""
        out = asdict(self)
        for cls, raw in zip(self.classes, out["classes"], strict=True):
            raw["size"] = cls.size
        return out


def _model_labels(rec: Record) -> set[str]:
    labels = {rec.id, str(rec.data.get("name") or "")}
    labels.update(a for a in rec.data.get("aliases") or [] if isinstance(a, str))
    return {normalise(x) for x in labels if x}


def select(
    kb: KB,
    *,
    model: str | None = None,
    metric: str | None = None,
    accelerator: str | None = None,
    engine: str | None = None,
    fmt: str | None = None,
    scenario: str | None = None,
    origin: str | None = None,
    base_model: str | None = None,
) -> tuple[list[Record], dict[str, Any]]:
    """Benchmarks matching every given filter, and the resolved filters.

    ``model``, ``accelerator``, ``engine`` and ``fmt`` are record ids (or
    names/aliases) resolved with near-match hints (:class:`AnalysisError`
    when unknown). A benchmark matches a model when its ``model_id`` is that
    record, or it has no ``model_id`` and its ``model`` text is the record's
    id, name or an alias; a record that names only a ``base_model_id`` (the
    model it was derived from: an open-division MLPerf result) never matches
    ``model``. ``base_model`` (a model id, name or alias) selects the records
    whose ``base_model_id`` is that model. ``metric``, ``scenario`` and
    ``origin`` match exactly.
    """
    filters: dict[str, Any] = {}
    model_rec = lookup(kb, model, "model") if model else None
    acc_rec = lookup(kb, accelerator, "accelerator") if accelerator else None
    eng_rec = lookup(kb, engine, "engine") if engine else None
    fmt_rec = lookup(kb, fmt, "quantization", what="format") if fmt else None
    base_rec = lookup(kb, base_model, "model") if base_model else None
    if model_rec is not None:
        filters["model"] = model_rec.id
    if base_rec is not None:
        filters["base_model"] = base_rec.id
    if acc_rec is not None:
        filters["accelerator"] = acc_rec.id
    if eng_rec is not None:
        filters["engine"] = eng_rec.id
    if fmt_rec is not None:
        filters["format"] = fmt_rec.id
    for name, value in (("metric", metric), ("scenario", scenario), ("origin", origin)):
        if value:
            filters[name] = value
    if metric and kb.metrics and metric not in kb.metrics:
        raise AnalysisError(f"unknown metric {metric!r}; the KB's metric registry has: {', '.join(sorted(kb.metrics))}")
    labels = _model_labels(model_rec) if model_rec is not None else set()
    out: list[Record] = []
    if "benchmark" not in kb.profile.types:
        return out, filters
    for rec in kb.by_type("benchmark"):
        d = rec.data
        if model_rec is not None:
            mid = d.get("model_id")
            if mid:
                if mid != model_rec.id:
                    continue
            elif d.get("base_model_id") or not (isinstance(d.get("model"), str) and normalise(d["model"]) in labels):
                continue
        if base_rec is not None and d.get("base_model_id") != base_rec.id:
            continue
        if metric and d.get("metric") != metric:
            continue
        if scenario and d.get("scenario") != scenario:
            continue
        if origin and d.get("origin") != origin:
            continue
        if acc_rec is not None and acc_rec.id not in (d.get("accelerator_ids") or []):
            continue
        if eng_rec is not None and d.get("engine_id") != eng_rec.id:
            continue
        if fmt_rec is not None and d.get("format_id") != fmt_rec.id:
            continue
        out.append(rec)
    return out, filters


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


@dataclass(slots=True)
class Entry:
    """A selected record that may enter a class: its conditions ``cs``, per-accelerator figure ``pa`` (when asked, else
    ``None``), the ``value`` ranked (``pa``'s value when asked, else the headline) and the row ``label``."""

    rec: Record
    cs: ConditionSet
    pa: Any
    value: float
    label: str


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


# The exact-match filters of :func:`select` whose values form a closed vocabulary, with the record field each reads.
EXACT_FILTERS = {"scenario": "scenario", "origin": "origin"}


def values_of_selection(kb: KB, name: str, **filters: Any) -> dict[str, int]:
    """``{value: records}`` of field ``name`` over the benchmarks :func:`select` picks with ``filters``, most first, then
    by value; a record without the field counts as ``"(none)"``. With ``name="metric"`` it says, when a metric filter
    selected nothing, which metrics the rest of the selection does have. Raises what :func:`select` raises."""
    counts = Counter(str(r.data.get(name) or "(none)") for r in select(kb, **filters)[0])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _absent_values(kb: KB, asked: dict[str, Any]) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """For an empty selection: per exact-match filter whose value the rest of the selection lacks, the values it has, and
    the KB's values close to the one asked (see :class:`CompareResult`). When the rest selects nothing either, a filter
    is named only if its value is in no benchmark at all (so a right value beside a typo is not blamed)."""
    have: dict[str, dict[str, int]] = {}
    near: dict[str, list[str]] = {}
    for name, fld in EXACT_FILTERS.items():
        value = asked.get(name)
        if not value:
            continue
        values = values_of_selection(kb, fld, **{k: v for k, v in asked.items() if k != name})
        everywhere = {str(r.data.get(fld)) for r in kb.by_type("benchmark") if r.data.get(fld)}
        close = absent_value_near([value], values, everywhere)
        if close is None:
            continue  # the value exists where the rest selects, or the rest selects nothing: another filter emptied it
        have[name] = values
        near[name] = close
    return have, near


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
    for nc in not_comparable:
        if nc.id in repeat_of:
            nc.repeat = repeat_of[nc.id].to_dict()
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
            )
        )
    return ComparisonClass(key_id(key), dict(shown), dict(fixed), direction, rows)
