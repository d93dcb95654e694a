"""Charts of the site: Vega-Lite specs built at build time with Altair, rendered in the browser by vega-embed.

Each builder returns a :class:`Chart`: an id, a title, a one-sentence
description, the Vega-Lite spec (a dict, data inline) and the same data as a
table, which the page shows under the chart so the numbers can be read
without JavaScript or a mouse. A builder returns ``None`` when there is no
data point to draw: an empty chart would claim a result that does not exist.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .data import SiteData

MARK_COLOUR = "#1f5fa8"
CHART_WIDTH = 560


@dataclass(slots=True)
class Chart:
    """One chart: ``spec`` is Vega-Lite JSON; ``columns``/``rows`` the same data as a table; ``points`` how many marks it draws."""

    id: str
    title: str
    description: str
    spec: dict[str, Any]
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    points: int = 0


def _alt():
    import altair as alt

    return alt


def _finish(chart: Any, title: str) -> dict[str, Any]:
    # A fixed width, scaled down by CSS on narrow screens: vega-embed's "container" width warns on every discrete axis.
    spec = chart.properties(title=title, width=CHART_WIDTH).configure_view(stroke=None).to_dict()
    spec.setdefault("usermeta", {})["embedOptions"] = {"actions": False}
    return spec


def benchmarks_by_origin(site: SiteData) -> Chart | None:
    """Bar chart: benchmark records per ``origin`` (unstated shown as such), stacked by status."""
    if "benchmark" not in site.kb.profile.types:
        return None
    counts: dict[tuple[str, str], int] = {}
    for rec in site.kb.by_type("benchmark"):
        key = (str(rec.data.get("origin") or "(origin not stated)"), str(rec.data.get("status") or "unstated"))
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        return None
    values = [{"origin": o, "status": s, "records": n} for (o, s), n in sorted(counts.items())]
    alt = _alt()
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            y=alt.Y("origin:N", title="origin (data set / harness family)", sort="-x"),
            x=alt.X("records:Q", title="benchmark records", stack="zero"),
            color=alt.Color("status:N", title="status"),
            tooltip=["origin:N", "status:N", "records:Q"],
        )
    )
    return Chart(
        "benchmarks-by-origin",
        "Benchmark records by origin and status",
        "How many benchmark records each data set or harness family contributed, split by record status.",
        _finish(chart, "Benchmark records by origin"),
        ["origin", "status", "records"],
        [[v["origin"], v["status"], v["records"]] for v in values],
        len(values),
    )


def absent_conditions(site: SiteData) -> Chart | None:
    """Bar chart: per load condition, how many benchmarks lack it, split by whether the record documents why."""
    gaps = site.condition_gaps()["conditions"]
    values = []
    for g in gaps:
        for kind in ("documented", "undocumented"):
            if g[kind]:
                values.append({"condition": g["label"], "gap": f"{kind} gap", "benchmarks": g[kind]})
    if not values:
        return None
    alt = _alt()
    order = [g["label"] for g in gaps]
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            y=alt.Y("condition:N", title="load condition", sort=order),
            x=alt.X("benchmarks:Q", title="benchmark records lacking it"),
            color=alt.Color("gap:N", title="reason recorded in the record?"),
            tooltip=["condition:N", "gap:N", "benchmarks:Q"],
        )
    )
    return Chart(
        "absent-conditions",
        "Benchmarks lacking each load condition",
        "For each of the seven load conditions, how many benchmark records do not establish it; a documented gap "
        "is one whose record gives a reason in condition_gaps.",
        _finish(chart, "Absent load conditions"),
        ["condition", "gap", "benchmarks"],
        [[v["condition"], v["gap"], v["benchmarks"]] for v in values],
        len(values),
    )


@cache
def _roofline_template() -> dict[str, Any]:
    """The roofline spec without data, built (and validated) by Altair once; each chart fills its named datasets."""
    alt = _alt()
    x = alt.X("active parameters (B):Q", scale=alt.Scale(type="log"), title="active parameters (billions)")
    y = alt.Y("tok/s per device:Q", scale=alt.Scale(type="log"), title="measured tok/s per device")
    lines = (
        alt.Chart(alt.NamedData("ceilings"))
        .mark_line(strokeDash=[4, 3])
        .encode(x=x, y=y, color=alt.Color("ceiling:N", title="ceiling"), detail="ceiling:N")
    )
    points = (
        alt.Chart(alt.NamedData("points"))
        .mark_point(filled=True, size=60, color=MARK_COLOUR)
        .encode(
            x=x,
            y=y,
            shape=alt.Shape("scenario:N", title="scenario"),
            tooltip=["record:N", "scenario:N", "active parameters (B):Q", "tok/s per device:Q", "MFU %:Q"],
        )
    )
    return _finish(alt.layer(lines, points), "")


def roofline_chart(acc: dict[str, Any]) -> Chart | None:
    """Log-log chart for one accelerator: measured tok/s per device against active parameters, under its ceilings.

    ``acc`` is one entry of :func:`inferkb.site.roofline_page.roofline_data`
    (``id``, ``name``, ``points``, ``ceilings``). The ceilings are lines
    sampled over the points' parameter range. Returns ``None`` without points.
    """
    points = acc["points"]
    if not points:
        return None
    point_values = [
        {
            "active parameters (B)": p["active_params_b"],
            "tok/s per device": p["per_device_tok_s"],
            "record": p["title"],
            "scenario": p["scenario"] or "unstated",
            "MFU %": round(p["mfu"] * 100, 2) if p["mfu"] is not None else None,
        }
        for p in points
    ]
    spec = copy.deepcopy(_roofline_template())
    spec["title"] = f"{acc['name']} roofline"
    spec["datasets"] = {"ceilings": acc["ceilings"], "points": point_values}
    if not acc["ceilings"]:  # no FLOPs row and no bandwidth: draw the points alone (an empty layer has no extent)
        spec["layer"] = [layer for layer in spec["layer"] if layer["data"]["name"] != "ceilings"]
    return Chart(
        f"roofline-{acc['id']}",
        f"{acc['name']}: measured throughput under its ceilings",
        f"Each point is one benchmark record on {acc['name']}: its throughput divided by the device count, against the "
        "model's active parameters. Dashed lines are the compute ceiling at the fastest dense peak the weight format allows "
        "and the memory-bandwidth ceiling of one request (batch 1).",
        spec,
        ["record", "scenario", "active parameters (B)", "tok/s per device", "MFU %"],
        [[v["record"], v["scenario"], v["active parameters (B)"], v["tok/s per device"], v["MFU %"]] for v in point_values],
        len(point_values),
    )
