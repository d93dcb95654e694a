"""The Pareto page: frontiers of throughput per accelerator against a per-user figure, within one class at a time.

From :func:`inferkb.analysis.pareto.pareto`, run per model (the groups of
:mod:`inferkb.site.comparable`) for each x axis of :data:`X_AXES` whose
metric the KB's registry knows with a direction. A class here is the compare
key without the load (never across GPU counts, hardware or format); a class
with at least two points gets a chart (its frontier drawn through the
non-dominated points) and a table. Points outside every class are counted by
the reason the analysis gives, so an empty page still says why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..analysis.common import AnalysisError
from ..analysis.pareto import pareto
from . import analysis_charts as AC
from .comparable import comparisons
from .compare_pages import fmt_num
from .extra import PageContext, page

X_AXES = ("tok_s_per_user", "ttft_ms:p99", "tpot_ms:p99", "e2e_latency_ms")
REASONS_LISTED = 8


@page("pareto", "pareto")
def build(ctx: PageContext) -> None:
    """``pareto.html``: per x axis, a chart and table per class with two or more points, and why the rest are outside."""
    kb = ctx.site.kb
    cmp = comparisons(kb)
    ctx.intro = (
        "More concurrent users raise throughput per accelerator and lower what each user sees. A frontier is drawn only among "
        "points that differ in the load alone: same model, metric, value scope, weight format, hardware and count, scenario, "
        "division, benchmark definition, ISL, OSL, warmup, engine and version. A point is on the frontier when no other point "
        "of its class is at least as good on both axes and better on one; y is throughput per accelerator (higher is better), "
        "x's direction comes from the metric registry."
    )
    for axis in X_AXES:
        metric = axis.split(":", 1)[0]
        if kb.metrics and metric not in kb.metrics:
            continue
        placed = 0
        outside: Counter[str] = Counter()
        drawn = 0
        for grp in cmp.groups:
            try:
                res = pareto(kb, x=axis, records=grp.records)
            except AnalysisError as exc:
                ctx.section(f"x = {axis}", f"Not drawn: {exc}")
                break
            outside.update(o.reason for o in res.outside)
            for cls in res.classes:
                placed += len(cls.points)
                if len(cls.points) < 2:
                    outside["alone in its class (no other point differs in the load only)"] += len(cls.points)
                    continue
                drawn += 1
                _class_section(ctx, grp.name, grp.slug, axis, res.x_direction, res.y, cls)
        rows = [[reason, {"text": n, "num": True}] for reason, n in outside.most_common(REASONS_LISTED)]
        rest = sum(n for _, n in outside.most_common()[REASONS_LISTED:])
        if rest:
            rows.append([f"{len(outside) - REASONS_LISTED} other reason(s)", {"text": rest, "num": True}])
        ctx.section(
            f"x = {axis}: points without a frontier",
            f"{placed} point(s) fit a class, {drawn} class(es) with two or more points are drawn above; the others, by reason:",
            columns=["reason", "benchmarks"],
            rows=rows,
            anchor=f"outside-{axis.replace(':', '-')}",
        )


def _class_section(ctx: PageContext, model: str, slug: str, axis: str, direction: str, y_label: str, cls: Any) -> None:
    order = {pid: i for i, pid in enumerate(cls.frontier)}
    points, rows = [], []
    for p in cls.points:
        rec = ctx.site.kb.resolve(p.id, "benchmark")
        on = p.id in order
        points.append(
            {
                "x": p.x,
                "y": p.y,
                "x_order": order.get(p.id, -1),
                "frontier": on,
                "on frontier": "yes" if on else "no",
                "record": p.id,
                "load": str(p.load),
            }
        )
        rows.append(
            [
                {
                    "text": ctx.site.title(rec) if rec is not None else p.id,
                    "href": ctx.site.linker.record_href(rec) if rec is not None else None,
                    "badge": "experimental" if p.experimental else None,
                    "note": f"median of {len(p.repeats)} repeats of one configuration" if p.repeats else None,
                },
                str(p.load),
                {"text": fmt_num(p.x), "num": True},
                {"text": fmt_num(p.y), "num": True},
                "yes" if on else "no",
            ]
        )
    key = ", ".join(f"{k}={v}" for k, v in cls.key.items() if k not in ("model",) and v not in (None, "n/a"))
    x_title = f"{axis} ({direction} is better)"
    chart = AC.pareto_scatter(
        f"pareto-{slug}-{axis.replace(':', '-')}-{cls.id}",
        f"{model}: class {cls.id}",
        f"{len(cls.points)} points differing in the load only ({key}); the dashed line joins the frontier.",
        x_title,
        y_label,
        points,
    )
    ctx.section(
        f"{model}, x = {axis}: class {cls.id}",
        key,
        chart=chart,
        columns=["benchmark", "load", axis, y_label, "on the frontier"],
        rows=rows,
        anchor=f"pareto-{slug}-{axis.replace(':', '-')}-{cls.id}",
    )
