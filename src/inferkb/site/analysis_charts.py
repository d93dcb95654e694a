"""Vega-Lite charts of the analysis pages (compare classes, Pareto frontiers, MLPerf history, measured utilisation).

Each spec shape is built and validated by Altair once (:func:`functools.cache`)
with a named dataset; a chart is a deep copy with its data and titles filled
in, so a build with hundreds of classes pays Altair's schema validation a few
times, not hundreds (see ``benchmarks/README.md``, site build). Every builder
returns a :class:`~inferkb.site.charts.Chart` whose ``points`` is the number
of data marks it draws (bars or point symbols; lines are not counted) — the
browser tests count the marks against it.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from .charts import CHART_WIDTH, MARK_COLOUR, Chart, _alt, _finish

KIND_COLOURS = {"measured": MARK_COLOUR, "experimental (labelled)": "#c2571a"}


@cache
def _bars_template() -> dict[str, Any]:
    alt = _alt()
    chart = (
        alt.Chart(alt.NamedData("rows"))
        .mark_bar()
        .encode(
            y=alt.Y("row:N", sort=alt.EncodingSortField("order", order="ascending"), title=None, axis=alt.Axis(labelLimit=320)),
            x=alt.X("value:Q", title="value"),
            color=alt.Color(
                "kind:N",
                title="row",
                scale=alt.Scale(domain=list(KIND_COLOURS), range=list(KIND_COLOURS.values())),
            ),
            tooltip=["row:N", "value:Q"],
        )
    )
    return _finish(chart, "")


def class_bars(chart_id: str, title: str, description: str, x_title: str, rows: list[dict[str, Any]]) -> Chart | None:
    """Horizontal bars of one comparability class, best first; ``rows``: ``{row, order, value, kind, record, unit, per accelerator, varied}``.

    ``None`` without rows.
    """
    if not rows:
        return None
    spec = copy.deepcopy(_bars_template())
    spec["title"] = title
    spec["encoding"]["x"]["title"] = x_title
    spec["datasets"] = {"rows": rows}
    return Chart(chart_id, title, description, spec, [], [], len(rows))


@cache
def _stacked_template() -> dict[str, Any]:
    alt = _alt()
    chart = (
        alt.Chart(alt.NamedData("rows"))
        .mark_bar()
        .encode(
            y=alt.Y("model:N", sort=alt.EncodingSortField("total", order="descending"), title=None, axis=alt.Axis(labelLimit=240)),
            x=alt.X("benchmarks:Q", title="benchmark records", stack="zero"),
            color=alt.Color("standing:N", title="in the strict comparison"),
            tooltip=["model:N", "standing:N", "benchmarks:Q"],
        )
    )
    return _finish(chart, "")


def standing_bars(chart_id: str, title: str, description: str, rows: list[dict[str, Any]]) -> Chart | None:
    """Stacked bars per model: benchmarks in a class with others, alone in their class, not comparable. ``None`` without rows."""
    if not rows:
        return None
    spec = copy.deepcopy(_stacked_template())
    spec["title"] = title
    spec["datasets"] = {"rows": rows}
    columns = ["model", "standing", "benchmarks"]
    return Chart(chart_id, title, description, spec, columns, [[r[c] for c in columns] for r in rows], len(rows))


@cache
def _history_template() -> dict[str, Any]:
    alt = _alt()
    base = alt.Chart(alt.NamedData("points")).encode(
        x=alt.X("round:O", title="MLPerf round", sort=alt.EncodingSortField("round_order", order="ascending"), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", title="value"),
        color=alt.Color("series:N", title="system series", legend=alt.Legend(labelLimit=320, symbolLimit=40)),
        detail="series:N",
    )
    lines = base.mark_line()
    points = base.mark_point(filled=True, size=60).encode(
        tooltip=["series:N", "round:O", "record:N", "value:Q", "change %:Q", "software changed:N"]
    )
    return _finish(alt.layer(lines, points), "")


def history_lines(chart_id: str, title: str, description: str, y_title: str, points: list[dict[str, Any]]) -> Chart | None:
    """One line per system series across rounds, a point per round; ``points``: ``{series, round, round_order, record, value, ...}``."""
    if not points:
        return None
    spec = copy.deepcopy(_history_template())
    spec["title"] = title
    spec["datasets"] = {"points": points}
    for layer in spec["layer"]:
        enc = layer.get("encoding") or {}
        if "y" in enc:
            enc["y"]["title"] = y_title
    if "encoding" in spec and "y" in spec["encoding"]:
        spec["encoding"]["y"]["title"] = y_title
    return Chart(chart_id, title, description, spec, [], [], len(points))


@cache
def _pareto_template() -> dict[str, Any]:
    alt = _alt()
    base = alt.Chart(alt.NamedData("points")).encode(x=alt.X("x:Q", title="x"), y=alt.Y("y:Q", title="y"))
    front = base.transform_filter("datum.frontier").mark_line(color="#888888", strokeDash=[4, 3]).encode(order="x_order:Q")
    dots = base.mark_point(filled=True, size=70).encode(
        color=alt.Color("on frontier:N", title="on the frontier", scale=alt.Scale(domain=["yes", "no"], range=[MARK_COLOUR, "#9aa7b4"])),
        tooltip=["record:N", "load:N", "x:Q", "y:Q", "on frontier:N"],
    )
    return _finish(alt.layer(front, dots), "")


def pareto_scatter(chart_id: str, title: str, description: str, x_title: str, y_title: str, points: list[dict[str, Any]]) -> Chart | None:
    """Points of one class with the frontier drawn through its points; ``points``: ``{x, y, x_order, frontier, on frontier, record, load}``."""
    if not points:
        return None
    spec = copy.deepcopy(_pareto_template())
    spec["title"] = title
    spec["datasets"] = {"points": points}
    _set_axis_titles(spec, x_title, y_title)
    return Chart(chart_id, title, description, spec, [], [], len(points))


@cache
def _utilisation_template() -> dict[str, Any]:
    alt = _alt()
    chart = (
        alt.Chart(alt.NamedData("points"))
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("utilisation %:Q", title="utilisation (%), a lower bound"),
            y=alt.Y("model:N", title=None, axis=alt.Axis(labelLimit=240)),
            color=alt.Color("kind:N", title="measure"),
            shape=alt.Shape("kind:N", title="measure"),
            tooltip=["record:N", "model:N", "kind:N", "utilisation %:Q", "devices:Q", "weights:N"],
        )
    )
    return _finish(chart, "")


def utilisation_dots(chart_id: str, title: str, description: str, points: list[dict[str, Any]]) -> Chart | None:
    """One dot per placed benchmark: MBU or MFU (%) per model on one accelerator. ``None`` without points."""
    if not points:
        return None
    spec = copy.deepcopy(_utilisation_template())
    spec["title"] = title
    spec["datasets"] = {"points": points}
    return Chart(chart_id, title, description, spec, [], [], len(points))


def _set_axis_titles(spec: dict[str, Any], x_title: str, y_title: str) -> None:
    for holder in [spec, *spec.get("layer", [])]:
        enc = holder.get("encoding") or {}
        if "x" in enc:
            enc["x"]["title"] = x_title
        if "y" in enc:
            enc["y"]["title"] = y_title


__all__ = ["class_bars", "standing_bars", "history_lines", "pareto_scatter", "utilisation_dots", "CHART_WIDTH"]
