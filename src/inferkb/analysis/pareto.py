"""Pareto frontier of throughput per accelerator against a per-user figure, within one comparability class at a time.

The usual serving trade-off: more concurrent users raise throughput per
accelerator and lower what each user sees (tok/s per user, or a higher p99
TTFT). A frontier is only meaningful among points that differ in the load
alone, so the class key here is the compare key
(:mod:`inferkb.analysis.comparability`) without ``load`` — and never across
GPU counts, hardware or formats (those cannot be varied). Points that fit no
class (a condition missing, no per-accelerator figure, no x value) are listed
apart with the reason.

A point is on the frontier when no other point of its class is at least as
good on both axes and better on one (y: higher is better; x: the metric
registry's direction). Repeated measurements of one configuration (a
``repeat_group``, :mod:`inferkb.analysis.repeats`) are one point, at the
members' median x and median y, named by the first member and listing all of
them in ``repeats``: the frontier never picks a lucky repeat over its siblings.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .common import AnalysisError, is_number, per_accelerator
from .comparability import check_vary, conditions_of, key_id
from .compare import select, values_of_selection
from .repeats import Membership, memberships

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

PARETO_NEVER_VARIED = frozenset({"accelerator_count", "hardware", "format"})
_STATS = ("p50", "mean", "p90", "p95", "p99", "p999", "min", "max")


@dataclass
class ParetoPoint:
    """One benchmark as a point: ``x`` (the per-user figure), ``y`` (headline per accelerator), ``load`` (the sweep condition).

    ``repeats``: for a point standing for a repeat group, its members' ids in line order (``x`` and ``y`` their medians).
    """

    id: str
    x: float
    y: float
    load: Any
    on_frontier: bool
    experimental: bool
    repeats: list[str] = field(default_factory=list)


@dataclass
class ParetoClass:
    """Points of one class and the ids on its frontier, ordered by x from best to worst."""

    id: str
    key: dict[str, Any]
    points: list[ParetoPoint]
    frontier: list[str]


@dataclass
class Outside:
    """A selected record left out of every class, and why."""

    id: str
    reason: str


@dataclass
class ParetoResult:
    """Result of :func:`pareto`: axes (``x`` metric and stat, its ``x_direction``; ``y`` label), ``classes``, ``outside``.

    ``hint``: when most selected points lack the x metric, which other x metrics they carry (:func:`x_metric_hint`), else ``None``.
    """

    x: str
    x_direction: str
    y: str
    filters: dict[str, Any]
    classes: list[ParetoClass]
    outside: list[Outside] = field(default_factory=list)
    selected: int = 0
    metrics_without_filter: dict[str, int] = field(default_factory=dict)
    hint: str | None = None

    @property
    def metric_absent(self) -> bool:
        """True when a metric filter is what left the selection empty (as :attr:`CompareResult.metric_absent`)."""
        return self.selected == 0 and "metric" in self.filters

    def outside_by_reason(self) -> dict[str, int]:
        """``{reason: points}`` of :attr:`outside`, most first, then by reason."""
        counts: dict[str, int] = {}
        for o in self.outside:
            counts[o.reason] = counts.get(o.reason, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field."""
        return asdict(self)


def parse_axis(spec: str) -> tuple[str, str | None]:
    """``"ttft_ms:p99"`` -> ``("ttft_ms", "p99")``; ``"tok_s_per_user"`` -> ``("tok_s_per_user", None)``. ValueError for an unknown stat."""
    metric, _, stat = spec.partition(":")
    if stat and stat not in _STATS:
        raise ValueError(f"unknown statistic {stat!r} in {spec!r}; one of {', '.join(_STATS)}")
    return metric, stat or None


def x_value(data: dict[str, Any], metric: str, stat: str | None) -> tuple[float | None, str]:
    """The record's value of ``metric`` (``stat`` of its distribution when given), from the headline or the ``metrics`` block."""
    if data.get("metric") == metric and stat is None and is_number(data.get("value")):
        return float(data["value"]), ""
    entry = (data.get("metrics") or {}).get(metric) if isinstance(data.get("metrics"), dict) else None
    if not isinstance(entry, dict):
        return None, f"no {metric} in the record"
    stats = entry.get("stats") if isinstance(entry.get("stats"), dict) else {}
    if stat:
        v = stats.get(stat)
        if v is None and isinstance(entry.get("percentiles"), dict):
            v = entry["percentiles"].get(stat)
        return (float(v), "") if is_number(v) else (None, f"{metric} has no {stat}")
    for candidate in (entry.get("value"), stats.get("mean"), stats.get("p50")):
        if is_number(candidate):
            return float(candidate), ""
    return None, f"{metric} has no value, mean or p50"


def frontier(points: list[tuple[str, float, float]], x_higher: bool) -> list[str]:
    """Ids of the non-dominated points among ``(id, x, y)``, best x first; y is higher-is-better.

    Sort by x from best to worst (ties: higher y first); a point is on the
    frontier when its y beats every y seen before it.
    """
    ordered = sorted(points, key=lambda p: ((-p[1] if x_higher else p[1]), -p[2], p[0]))
    out: list[str] = []
    best_y = float("-inf")
    for pid, _, y in ordered:
        if y > best_y:
            out.append(pid)
            best_y = y
    return out


def x_metric_counts(kb: KB, records: Iterable[Record], exclude: str, skip: Iterable[str] = ("load",)) -> dict[str, tuple[int, int]]:
    """``{metric: (records, points)}`` for the registry metrics that could be the x axis instead of ``exclude``; best first.

    A metric qualifies as :func:`pareto` accepts it (a higher/lower ``direction`` in
    the registry) and is not a throughput (``measures`` "throughput": that is the y
    axis). ``records``: those with a per-accelerator figure and the metric in their
    ``metrics`` block (their headline metric is the y); ``points``: of those, the
    ones stating every condition a class needs (all but ``skip``), so they would
    be drawn. Best first: most points, then most records, then by name.
    """
    candidates = {
        m
        for m, info in kb.metrics.items()
        if m != exclude and info.get("direction") in ("higher", "lower") and info.get("measures") != "throughput"
    }
    counts: dict[str, list[int]] = {}
    for rec in records:
        d = rec.data
        block = d.get("metrics")
        if not isinstance(block, dict) or per_accelerator(d)[0] is None:
            continue
        carried = [m for m in candidates.intersection(block) if m != d.get("metric") and x_value(d, m, None)[0] is not None]
        if not carried:
            continue
        complete = not conditions_of(d).missing(skip)
        for m in carried:
            tally = counts.setdefault(m, [0, 0])
            tally[0] += 1
            tally[1] += complete
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
    return {m: (n, points) for m, (n, points) in ordered}


def x_metric_hint(
    kb: KB, records: list[Record], x_metric: str, outside: list[Outside], skip: Iterable[str] = ("load",), shown: int = 5
) -> str | None:
    """A ``hint:`` line when most of ``records`` lie outside because they carry no ``x_metric``; ``None`` otherwise or when none carries another x metric.

    Example: ``"hint: in this selection, ttft_ms is in 412 records (300 stating every class condition), tpot_ms in 300 (0);
    try --pareto ttft_ms"``; with no metric giving a point it says so instead of suggesting one.
    """
    absent = sum(1 for o in outside if o.reason == f"no {x_metric} in the record")
    if not records or absent * 2 <= len(records):
        return None
    counts = x_metric_counts(kb, records, x_metric, skip)
    if not counts:
        return None
    items = list(counts.items())[:shown]
    (m0, (n0, p0)), rest = items[0], items[1:]
    listed = ", ".join(
        [
            f"{m0} is in {n0} record{'s' if n0 != 1 else ''} ({p0} stating every class condition)",
            *(f"{m} in {n} ({p})" for m, (n, p) in rest),
        ]
    )
    more = f", and {len(counts) - shown} more metric(s)" if len(counts) > shown else ""
    advice = f"try --pareto {m0}" if p0 else "none of them states every condition a class needs (reasons below)"
    return f"hint: in this selection, {listed}{more}; {advice}"


def _fold_repeats(points: list[ParetoPoint], repeat_of: dict[str, Membership]) -> list[ParetoPoint]:
    """Points of one class with each repeat group (two or more members present) replaced by one point at the medians."""
    by_group: dict[str, list[ParetoPoint]] = {}
    out: list[ParetoPoint] = []
    for p in points:
        if p.id in repeat_of:
            by_group.setdefault(repeat_of[p.id].group, []).append(p)
        else:
            out.append(p)
    for members in by_group.values():
        if len(members) < 2:
            out.extend(members)
            continue
        members.sort(key=lambda p: (repeat_of[p.id].index, p.id))
        first = members[0]
        x = statistics.median(p.x for p in members)
        y = statistics.median(p.y for p in members)
        out.append(ParetoPoint(first.id, x, y, first.load, False, any(p.experimental for p in members), [p.id for p in members]))
    return out


def pareto(
    kb: KB,
    *,
    x: str = "tok_s_per_user",
    model: str | None = None,
    metric: str | None = None,
    accelerator: str | None = None,
    engine: str | None = None,
    fmt: str | None = None,
    scenario: str | None = None,
    origin: str | None = None,
    vary: Iterable[str] = (),
    records: list[Record] | None = None,
) -> ParetoResult:
    """Frontier of throughput per accelerator (y) against ``x`` (``metric[:stat]``, e.g. ``tok_s_per_user`` or ``ttft_ms:p99``).

    Filters as :func:`inferkb.analysis.compare.select`. ``vary`` may not name
    ``accelerator_count``, ``hardware`` or ``format``. Raises
    :class:`AnalysisError` for unknown ids, axes or conditions.
    """
    try:
        x_metric, x_stat = parse_axis(x)
        varied = check_vary(vary)
    except ValueError as exc:
        raise AnalysisError(str(exc)) from None
    bad = PARETO_NEVER_VARIED.intersection(varied)
    if bad:
        raise AnalysisError(f"a Pareto frontier is never drawn across {', '.join(sorted(bad))}; remove it from --vary")
    direction = (kb.metrics.get(x_metric) or {}).get("direction")
    if kb.metrics and x_metric not in kb.metrics:
        raise AnalysisError(f"unknown metric {x_metric!r} for the x axis; the registry has: {', '.join(sorted(kb.metrics))}")
    if direction not in ("higher", "lower"):
        raise AnalysisError(f"metric {x_metric!r} has no direction in the registry; a frontier needs one")
    without_metric: dict[str, int] = {}
    selected_here = records is None
    if records is None:
        others = dict(model=model, accelerator=accelerator, engine=engine, fmt=fmt, scenario=scenario, origin=origin)
        records, filters = select(kb, metric=metric, **others)
        if metric and not records:
            without_metric = values_of_selection(kb, "metric", **others)
    else:
        filters = {"records": len(records)}
    skip = (*varied, "load")
    groups: dict[tuple, list[ParetoPoint]] = {}
    shown: dict[tuple, dict[str, Any]] = {}
    outside: list[Outside] = []
    for rec in records:
        d = rec.data
        pa, why = per_accelerator(d)
        if pa is None:
            outside.append(Outside(rec.id, f"no per-accelerator figure: {why}"))
            continue
        xv, why = x_value(d, x_metric, x_stat)
        if xv is None:
            outside.append(Outside(rec.id, why))
            continue
        cs = conditions_of(d)
        cs.values["value_scope"] = "per accelerator"
        missing = cs.missing(skip)
        if missing:
            outside.append(Outside(rec.id, f"conditions not stated: {', '.join(missing)}"))
            continue
        key = cs.key(skip)
        groups.setdefault(key, []).append(ParetoPoint(rec.id, xv, pa.value, cs.values.get("load"), False, d.get("experimental") is True))
        shown.setdefault(key, {n: v for n, v in cs.values.items() if n not in skip})
    # Members of a group share model, metric, hardware, engine and format (KB127), so a selection holds all or none.
    repeat_of = memberships(records)
    classes = []
    for key, points in groups.items():
        points = _fold_repeats(points, repeat_of)
        front = frontier([(p.id, p.x, p.y) for p in points], direction == "higher")
        on = set(front)
        for p in points:
            p.on_frontier = p.id in on
        points.sort(key=lambda p: (-p.x if direction == "higher" else p.x, p.id))
        classes.append(ParetoClass(key_id(key), shown[key], points, front))
    classes.sort(key=lambda c: (-len(c.points), c.id))
    x_label = f"{x_metric}{':' + x_stat if x_stat else ''}"
    # The hint is advice for a command line (--pareto); callers passing ``records`` (the site, per group) skip its extra pass.
    hint = x_metric_hint(kb, records, x_metric, outside, skip) if selected_here else None
    return ParetoResult(
        x_label, direction, "headline throughput per accelerator", filters, classes, outside, len(records), without_metric, hint
    )
