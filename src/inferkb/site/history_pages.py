"""MLPerf history pages: the same system series across rounds, with the software that changed between them.

From :func:`inferkb.analysis.history.history` per model record. A line is one
``system_series`` for one benchmark, scenario, metric and division (closed and
open are separate lines, and separate charts here); within a round one record
per ``same_measurement_as`` group is kept. ``history.html`` lists the models;
``history/<model>.html`` draws one chart per benchmark, scenario, division and
metric (a line per series, a point per round) with the table of changes below.
"""

from __future__ import annotations

from typing import Any

from ..analysis.common import round_order
from ..analysis.history import HistoryLine, history
from . import analysis_charts as AC
from .comparable import slugify
from .compare_pages import fmt_num
from .extra import PageContext, page


def _round_rank(label: str | None) -> int:
    """A number that sorts round labels as :func:`inferkb.analysis.common.round_order` does (v4.1 < v5.0 < v6.1; unknown last)."""
    unknown, parts = round_order(label)
    return 10**9 if unknown else sum(p * 1000 ** (2 - i) for i, p in enumerate(parts[:3]))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f}%"


@page("history", "MLPerf history")
def build(ctx: PageContext) -> None:
    """``history.html`` and one page per model with at least one line seen in two rounds."""
    kb = ctx.site.kb
    ctx.intro = (
        "The same submitter's system (a system_series: submitter, accelerator, nodes x accelerators per node, host CPU) across "
        "MLPerf Inference rounds, per benchmark, scenario, metric and division. Each step shows the change of the headline and "
        "of the per-accelerator figure, and the software fields that changed (engine, version, framework, CUDA/ROCm, driver, OS, "
        "weight format). Records without a system_series are counted, never guessed into one."
    )
    models = sorted(kb.by_type("model"), key=lambda r: r.id) if "model" in kb.profile.types else []
    rows = []
    for mrec in models:
        res = history(kb, model=mrec.id)
        if not res.lines:
            continue
        slug = slugify(mrec.id)
        child = ctx.child(slug, f"MLPerf history: {ctx.site.title(mrec)}")
        _model_page(child, mrec, res.lines, res.single_round_lines)
        child.render()
        rows.append(
            [
                {"text": ctx.site.title(mrec), "href": f"history/{slug}.html"},
                {"text": len(res.lines), "num": True},
                {"text": sum(len(ln.points) for ln in res.lines), "num": True},
                {"text": res.single_round_lines, "num": True},
            ]
        )
    if rows:
        ctx.section(
            "Models with a system seen in two or more rounds",
            "",
            columns=["model", "series lines", "points (rounds)", "lines seen in one round only"],
            rows=rows,
        )
    else:
        ctx.section("No history", "No system_series of this KB appears in two or more rounds.")


def _model_page(ctx: PageContext, mrec: Any, lines: list[HistoryLine], single: int) -> None:
    ctx.intro = (
        f"{len(lines)} series line(s) of {ctx.site.title(mrec)} seen in two or more rounds; {single} line(s) seen in one round only "
        "are left out. Closed and open division results are never drawn together."
    )
    groups: dict[tuple, list[HistoryLine]] = {}
    for ln in lines:
        groups.setdefault((ln.benchmark, ln.scenario, ln.division, ln.metric), []).append(ln)
    kb = ctx.site.kb
    for n, ((bench, scenario, division, metric), glines) in enumerate(sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))), 1):
        unit = next((p.unit for ln in glines for p in ln.points if p.unit), "")
        label = glines[0].label
        points, rows = [], []
        for ln in glines:
            for p in ln.points:
                changed = "; ".join(f"{k}: {a} -> {b}" for k, (a, b) in p.software_changed.items())
                points.append(
                    {
                        "series": ln.system_series,
                        "round": p.round or "round not stated",
                        "round_order": _round_rank(p.round),
                        "record": p.id,
                        "value": p.value,
                        "change %": round(p.change_pct, 2) if p.change_pct is not None else None,
                        "software changed": changed or "—",
                    }
                )
                rec = kb.resolve(p.id, "benchmark")
                rows.append(
                    [
                        ln.system_series,
                        p.round or "—",
                        {
                            "text": ctx.site.title(rec) if rec is not None else p.id,
                            "href": ctx.site.linker.record_href(rec) if rec is not None else None,
                            "badge": "experimental" if p.experimental else None,
                            "note": f"counted once with {len(p.same_measurement)} same-measurement record(s)"
                            if p.same_measurement
                            else None,
                        },
                        {"text": f"{fmt_num(p.value)} {unit}".strip(), "num": True, "sort": p.value},
                        _pct(p.change_pct),
                        {"text": fmt_num(p.per_accelerator), "num": True},
                        _pct(p.per_accelerator_change_pct),
                        changed or "—",
                    ]
                )
        title = f"{bench} {scenario or ''} ({division or 'division not stated'}), {metric}"
        y_title = f"{label} ({unit})" if unit else label
        chart = AC.history_lines(
            f"history-{slugify(mrec.id)}-{n}",
            title,
            f"{len(glines)} system series across rounds; {y_title}. Each point is one round's record.",
            y_title,
            points,
        )
        ctx.section(
            title,
            "",
            chart=chart,
            columns=[
                "system series",
                "round",
                "benchmark",
                f"value ({label})",
                "change",
                "per accelerator",
                "change per accelerator",
                "software changed",
            ],
            rows=rows,
            anchor=f"h-{n}",
        )
