"""Compare pages: ``compare.html`` (every model, how its benchmarks stand) and one page per model and lens.

A model page (``compare/<model>.html``, ``compare/<model>--across-hardware.html``)
shows, from :func:`inferkb.analysis.compare.compare` (via
:mod:`inferkb.site.comparable`):

- a picker for another model and for the lens (static pages: the picker opens
  the other page; no server);
- the comparable groups: one chart at a time (picked by metric and class), bars
  ranked within the class, values with unit, token basis and value scope, the
  per-accelerator figure beside each value; ``same_measurement_as`` groups
  counted once (the others named in the row); ``experimental`` rows labelled;
  MLPerf closed and open never in one class (``division`` is never varied);
- classes of one, with the conditions that split each from its nearest class
  (:func:`inferkb.analysis.comparability.split`);
- not-comparable rows apart, filterable by metric, missing condition and
  origin, with a summary of the reasons the records give for each gap.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..analysis.comparability import split
from . import analysis_charts as AC
from .comparable import CONDITION_LABELS, LENSES, Comparisons, Lens, ModelGroup, comparisons
from .extra import Choice, PageContext, page

if TYPE_CHECKING:
    from ..analysis.compare import CompareResult, ComparisonClass, RankedRow
    from ..store import Record

REASONS_SHOWN = 2


def fmt_num(value: Any) -> str:
    """A number for a table: thousands separators, about four significant digits (``24,528``, ``162.5``, ``3.06``, ``0.0123``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "—" if value is None else str(value)
    a = abs(value)
    if a >= 1000:
        return f"{value:,.0f}"
    if a >= 1:
        text = f"{value:,.1f}" if a >= 100 else f"{value:,.2f}"
        return text.rstrip("0").rstrip(".")
    return f"{value:.3g}"


def _sort(value: float | None) -> str | None:
    """A short sort key for a number (six significant digits are enough to order a table)."""
    return None if value is None else f"{value:.6g}"


def _href(ctx: PageContext, rec_id: str) -> str | None:
    rec = ctx.site.kb.resolve(rec_id, "benchmark")
    return ctx.site.linker.record_href(rec) if rec is not None else None


def _link(ctx: PageContext, rec_id: str, text: str | None = None) -> dict[str, Any]:
    rec = ctx.site.kb.resolve(rec_id, "benchmark")
    return {"text": text or (ctx.site.title(rec) if rec is not None else rec_id), "href": _href(ctx, rec_id)}


@page("compare", "compare")
def build(ctx: PageContext) -> None:
    """``compare.html`` and every model page below it."""
    cmp = comparisons(ctx.site.kb)
    ctx.intro = (
        "Benchmark numbers are ranked against each other only inside a comparability class: records whose model, metric "
        "(with its token basis), value scope, weight format, hardware and count, scenario, MLPerf division, benchmark "
        "definition, ISL, OSL, load, warmup, engine and engine version all match. A condition a record does not state makes "
        "it not comparable; two absent values are never treated as equal. The strict lens declares nothing irrelevant; the "
        "across-hardware lens lets hardware, device count, weight format, engine and version differ (they become columns) "
        "and ranks throughput per accelerator."
    )
    if not cmp.groups:
        ctx.section("No benchmarks", "This KB has no benchmark records to compare.")
        return
    ctx.picker("model", _model_options(cmp, None, LENSES[0]))
    _overview(ctx, cmp)
    for grp in cmp.groups:
        for lens in LENSES:
            child = ctx.child(f"{grp.slug}{lens.suffix}", f"Compare: {grp.name}")
            model_page(child, cmp, grp, lens)
            child.render()


def _model_options(cmp: Comparisons, current: ModelGroup | None, lens: Lens) -> list[dict[str, Any]]:
    return [{"text": f"{g.name} ({len(g.records)} benchmarks)", "href": g.href(lens), "selected": g is current} for g in cmp.groups]


def _folded_note(row: RankedRow) -> str | None:
    """What a row counts once: the other repeats of its configuration (median shown), then same-measurement records."""
    parts = []
    if row.repeats:
        rp = row.repeats
        parts.append(f"median of {rp['n']} repeats of one configuration (min {fmt_num(rp['min'])}, max {fmt_num(rp['max'])}); the others:")
    if row.same_measurement:
        parts.append(f"counted once with {len(row.same_measurement)} same-measurement record(s):")
    return " ".join(parts) or None


def _standing(res: CompareResult) -> tuple[int, int, int]:
    """(benchmarks in a class with others, alone in their class, not comparable); folded same-measurement rows count."""
    shared = alone = 0
    for cls in res.classes:
        n = sum(1 + len(r.same_measurement) + ((r.repeats or {}).get("n", 1) - 1) for r in cls.rows)
        if cls.size > 1:
            shared += n
        else:
            alone += n
    return shared, alone, len(res.not_comparable)


def _overview(ctx: PageContext, cmp: Comparisons) -> None:
    strict, hw = LENSES
    chart_rows, rows = [], []
    for g in cmp.groups:
        shared, alone, nc = _standing(g.results[strict.name])
        for standing, n in (("in a class with others", shared), ("alone in its class", alone), ("not comparable", nc)):
            if n:
                chart_rows.append({"model": g.name, "standing": standing, "benchmarks": n, "total": len(g.records)})
        hw_classes = sum(1 for c in g.results[hw.name].classes if c.size > 1)
        rows.append(
            [
                {"text": g.name, "href": g.href(strict)},
                {"text": len(g.records), "num": True},
                {"text": sum(1 for c in g.results[strict.name].classes if c.size > 1), "num": True},
                {"text": shared, "num": True},
                {"text": nc, "num": True},
                {"text": f"{hw_classes} class(es)", "href": g.href(hw)},
            ]
        )
    chart = AC.standing_bars(
        "compare-standing",
        "How each model's benchmarks stand in the strict comparison",
        "For each model, how many benchmark records share a comparability class with another record, are alone in theirs, "
        "or are not comparable because a condition is not stated.",
        chart_rows,
    )
    if chart is not None:
        ctx.section("Standing of every model", chart.description, chart=chart, anchor="standing")
    ctx.section(
        "Models",
        "Pick a model above, or follow a link: each model has a strict page and an across-hardware page.",
        columns=["model", "benchmarks", "classes (2+ rows, strict)", "in a class with others", "not comparable", "across hardware"],
        rows=rows,
        anchor="models",
    )


def model_page(ctx: PageContext, cmp: Comparisons, grp: ModelGroup, lens: Lens) -> None:
    """Fill one model's compare page under ``lens``."""
    res = grp.results[lens.name]
    ctx.picker("model", _model_options(cmp, grp, lens))
    ctx.picker("comparison", [{"text": ln.label, "href": grp.href(ln), "selected": ln is lens} for ln in LENSES])
    multi = [c for c in res.classes if c.size > 1]
    singles = [c for c in res.classes if c.size == 1]
    model_rec = ctx.site.kb.resolve(grp.model_id, "model") if grp.model_id else None
    split_text = ", ".join(f"{CONDITION_LABELS.get(k, k)} ({n} values)" for k, n in res.split_by.items())
    ctx.intro = (
        f"{res.selected} benchmark record(s) of {grp.name} under the {lens.label} lens: {len(multi)} class(es) with two or more "
        f"rows, {len(singles)} class(es) of one, {len(res.not_comparable)} not comparable."
        + (f" Classes are split by {split_text}." if split_text else "")
        + (
            " Varied (shown as columns, not part of the class): " + ", ".join(CONDITION_LABELS[v] for v in res.vary) + "."
            if res.vary
            else ""
        )
    )
    if model_rec is not None:
        ctx.link("model record", ctx.site.title(model_rec), ctx.site.linker.record_href(model_rec))
    if multi:
        ctx.switch(
            "Comparable groups",
            "Pick a class (grouped by metric); the chart ranks its rows, best first by the metric registry's direction.",
            choices=[_class_choice(ctx, grp, lens, cls) for cls in multi],
            anchor="groups",
        )
    else:
        other = LENSES[1] if lens is LENSES[0] else LENSES[0]
        ctx.section(
            "Comparable groups",
            f"No two benchmark records of {grp.name} share every condition under this lens, so nothing is ranked here. "
            f"See the {other.name} lens, or the reasons below.",
            anchor="groups",
        )
    if singles:
        _singles(ctx, grp, lens, res, singles, multi)
    if res.not_comparable:
        _not_comparable(ctx, cmp, grp, res)


def _class_choice(ctx: PageContext, grp: ModelGroup, lens: Lens, cls: ComparisonClass) -> Choice:
    first = cls.rows[0]
    unit = first.unit or ""
    direction = {"higher": "higher is better", "lower": "lower is better"}.get(
        cls.direction or "", "no direction in the metric registry: unranked"
    )
    label = f"class {cls.id}: {_key_summary(cls, lens)} ({cls.size} rows)"
    group = f"{cls.key.get('metric')} — {first.label}"
    description = [("metric", f"{cls.key.get('metric')}: {first.label}; {direction}")]
    for name, value in cls.key.items():
        if name in ("model", "metric"):
            continue
        text = str(value)
        if name in cls.fixed_by:
            text = f"fixed by {cls.fixed_by[name]}"
        elif name in cls.spellings:
            text += " (one value, spelled " + ", ".join(repr(str(v)) for v in cls.spellings[name]) + " by the records)"
        description.append((CONDITION_LABELS.get(name, name), text))
    for name in lens.vary:
        description.append((CONDITION_LABELS.get(name, name), "varies: see the table"))
    chart_rows, rows = [], []
    for pos, row in enumerate(cls.rows, start=1):
        rec = ctx.site.kb.resolve(row.id, "benchmark")
        title = ctx.site.title(rec) if rec is not None else row.id
        pa = _per_accelerator_text(row, lens)
        kind = "experimental (labelled)" if row.experimental else "measured"
        # Only what the chart draws: the site embeds charts without tooltips, and the table below has the rest.
        chart_rows.append({"row": f"{row.rank or pos}. {title}", "order": pos, "value": row.value, "kind": kind})
        cells: list[Any] = [
            {"text": row.rank if row.rank is not None else "—", "num": True},
            {
                "text": title,
                "href": _href(ctx, row.id),
                "badge": "experimental" if row.experimental else None,
                "note": _folded_note(row),
                "links": [_link(ctx, x, x) for x in (*(row.repeats or {}).get("ids", [])[1:], *row.same_measurement)],
            },
            {"text": f"{fmt_num(row.value)} {unit}".strip(), "num": True, "sort": _sort(row.value)},
            {"text": pa},
        ]
        cells += [{"text": "not stated" if row.varied.get(v) is None else str(row.varied.get(v))} for v in lens.vary]
        cells.append(
            {
                "text": " ".join(str(row.context[k]) for k in ("division", "round", "submitter") if k in row.context)
                or row.context.get("origin")
            }
        )
        rows.append(cells)
    value_title = f"{first.label} ({unit})" if unit else first.label
    chart = AC.class_bars(
        f"cmp-{grp.slug}{lens.suffix}-{cls.id}",
        f"{grp.name}: class {cls.id}",
        f"{cls.size} benchmark rows that share every class condition ({_key_summary(cls, lens)}); {value_title}, {direction}.",
        value_title,
        chart_rows,
    )
    columns = ["rank", "benchmark", f"value ({first.label})", "per accelerator", *(CONDITION_LABELS[v] for v in lens.vary), "context"]
    return Choice(f"class-{cls.id}", label, group, chart, description, columns, rows)


def _key_summary(cls: ComparisonClass, lens: Lens) -> str:
    parts = []
    for name in ("hardware", "accelerator_count", "format", "scenario", "division", "engine", "engine_version"):
        value = cls.key.get(name)
        if name in lens.vary or value in (None, "n/a"):
            continue
        parts.append(f"{value}" if name != "accelerator_count" else f"x{value}")
    definition = cls.key.get("benchmark_definition")
    if definition not in (None, "n/a"):
        parts.append(str(definition))
    return ", ".join(parts) or "all conditions equal"


def _per_accelerator_text(row: RankedRow, lens: Lens) -> str:
    pa = row.per_accelerator
    if not pa:
        return "—"
    if lens.per_accelerator:
        return f"ranked: {fmt_num(row.headline)} ÷ {pa['divisor']}"
    return f"{fmt_num(pa['value'])} (÷{pa['divisor']})"


def _singles(ctx: PageContext, grp: ModelGroup, lens: Lens, res: CompareResult, singles: list, multi: list) -> None:
    """Classes of one: the record, its value, and what keeps it from the nearest class of the same metric."""
    kb = ctx.site.kb
    reps: dict[str, list[tuple[ComparisonClass, Record]]] = {}
    for cls in res.classes:
        rec = kb.resolve(cls.rows[0].id, "benchmark")
        if rec is not None:
            reps.setdefault(str(cls.key.get("metric")), []).append((cls, rec))
    rows = []
    for cls in singles:
        row = cls.rows[0]
        rec = kb.resolve(row.id, "benchmark")
        best = None
        if rec is not None:
            for other, orec in reps.get(str(cls.key.get("metric")), []):
                if other is cls:
                    continue
                sp = split(rec.id, rec.data, orec.id, orec.data, vary=lens.vary)
                n = len(sp.differ) + len(sp.missing)
                if best is None or n < best[0] or (n == best[0] and other.size > best[1].size):
                    best = (n, other, sp)
        if best is None:
            differs = "no other class of this metric"
            nearest: Any = "—"
        else:
            _, other, sp = best
            differs = "; ".join(f"{CONDITION_LABELS.get(k, k)}: {a} vs {b}" for k, (a, b) in sp.differ.items()) or "—"
            nearest = (
                {"text": f"class {other.id} ({other.size} rows)", "href": f"{grp.href(lens)}#class-{other.id}"}
                if other.size > 1
                else {"text": other.rows[0].id, "href": _href(ctx, other.rows[0].id)}
            )
        rows.append(
            [
                {
                    "text": ctx.site.title(rec) if rec is not None else row.id,
                    "href": _href(ctx, row.id),
                    "badge": "experimental" if row.experimental else None,
                },
                {"text": f"{fmt_num(row.value)} {row.unit or ''}".strip(), "note": row.label, "sort": _sort(row.value)},
                nearest,
                differs,
            ]
        )
    ctx.section(
        "Classes of one",
        "Every condition of these records is stated, but no other record shares all of them; the nearest class of the same "
        "metric (fewest differing conditions) and what differs are named.",
        columns=["benchmark", "value", "nearest class", "differs in"],
        rows=rows,
        anchor="alone",
    )


def _not_comparable(ctx: PageContext, cmp: Comparisons, grp: ModelGroup, res: CompareResult) -> None:
    kb = ctx.site.kb
    reasons: dict[str, Counter[str]] = {}
    rows, facets = [], []
    for nc in res.not_comparable:
        rec = kb.resolve(nc.id, "benchmark")
        for m in nc.missing:
            why = cmp.why_missing(rec, m) if rec is not None else ""
            reasons.setdefault(m, Counter())[why] += 1
        missing = ", ".join(CONDITION_LABELS.get(m, m) for m in nc.missing)
        rows.append(
            [
                {
                    "text": ctx.site.title(rec) if rec is not None else nc.id,
                    "href": _href(ctx, nc.id),
                    "badge": "experimental" if rec is not None and rec.data.get("experimental") is True else None,
                    "note": f"repeat {nc.repeat['index']} of {nc.repeat['n']} (repeat_group {nc.repeat['group']})" if nc.repeat else None,
                },
                {"text": f"{fmt_num(nc.value)} {nc.unit or ''}".strip(), "note": nc.label, "sort": _sort(nc.value)},
                missing or nc.reason,
            ]
        )
        facets.append(
            {
                "metric": [str(rec.data.get("metric"))] if rec is not None else [],
                "missing": [CONDITION_LABELS.get(m, m) for m in nc.missing] or ["(none: see reason)"],
                "origin": [str(rec.data.get("origin") or "not stated")] if rec is not None else [],
            }
        )
    summary = [
        [
            CONDITION_LABELS.get(m, m),
            {"text": sum(c.values()), "num": True},
            "; ".join(f"{why} ({n})" for why, n in c.most_common(REASONS_SHOWN))
            + (f"; {len(c) - REASONS_SHOWN} other reason(s)" if len(c) > REASONS_SHOWN else ""),
        ]
        for m, c in sorted(reasons.items(), key=lambda kv: -sum(kv[1].values()))
    ]
    if summary:
        ctx.section(
            "Why rows are not comparable",
            "For each condition the not-comparable records lack: how many lack it, and the reasons their condition_gaps give.",
            columns=["condition", "records lacking it", "most common reasons (records)"],
            rows=summary,
            anchor="why",
        )
    ctx.section(
        "Not comparable",
        "Listed apart, never ranked: a condition is not stated (named), or the record has no number to rank.",
        columns=["benchmark", "value", "missing conditions (or reason)"],
        rows=rows,
        facets=[("metric", "metric"), ("missing", "missing condition"), ("origin", "origin")],
        row_facets=facets,
        anchor="not-comparable",
    )
