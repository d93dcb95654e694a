"""CLI command compare, and the output helpers the analysis commands share (plugins of the ``commands`` point).

cost, roofline and fit are in :mod:`inferkb.cli.analysis_bounds`; sql and
export in :mod:`inferkb.cli.analysis_data`.

Thin wrappers over :mod:`inferkb.analysis` and :mod:`inferkb.export`: parse
options, call the API, render. Every command prints text by default and
``--format json`` (one document), ``csv`` or ``markdown``; errors exit 2.
"""

from __future__ import annotations

import csv
import sys
from typing import Any

import click

from ..errors import UsageError
from .common import command, emit_json, kb_option, open_kb

ANALYSIS_FORMATS = click.Choice(["text", "json", "csv", "markdown"])
format_option = click.option("--format", "fmt", type=ANALYSIS_FORMATS, default="text", show_default=True)


def _fmt_num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{digits}g}"
    return str(v)


def _emit_rows(rows: list[dict[str, Any]], fmt: str) -> None:
    """Rows as CSV (formula cells neutralised) or a Markdown table on stdout."""
    from ..export.writers import neutralise

    columns: list[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    if fmt == "csv":
        w = csv.writer(sys.stdout)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else neutralise(r.get(c)) for c in columns])
        return
    sys.stdout.write("| " + " | ".join(columns) + " |\n")
    sys.stdout.write("|" + "|".join("---" for _ in columns) + "|\n")
    for r in rows:
        cells = [_fmt_num(r.get(c)).replace("|", "\\|").replace("\n", " ") for c in columns]
        sys.stdout.write("| " + " | ".join(cells) + " |\n")


def _split_multi(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for val in values for v in val.split(",") if v.strip()]


class _Plain:
    """A plain aligned text table (like linters print): never cropped, easy to grep; the last column is not padded."""

    def __init__(self, title: str, columns: list[str]) -> None:
        self.title, self.columns, self.rows = title, columns, []

    def add_row(self, *cells: Any) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        widths = [max([len(c)] + [len(r[i]) for r in self.rows]) for i, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        for cells in [self.columns, *self.rows]:
            lines.append(
                "  "
                + "  ".join(c.ljust(w) if i < len(cells) - 1 else c for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
            )
        return "\n".join(lines)


def _table(title: str, columns: list[str]) -> _Plain:
    return _Plain(title, columns)


class _Echo:
    """Stands in for a rich console: prints plain tables and strings."""

    def print(self, obj: Any = "") -> None:
        from ..textsafe import clean  # record text is data: control characters shown as escapes

        click.echo(clean(obj.render() if isinstance(obj, _Plain) else obj, keep_newlines=True))


# ---- compare ----------------------------------------------------------------


def _compare_rows(result) -> list[dict[str, Any]]:
    rows = []
    for cls in result.classes:
        for r in cls.rows:
            row = {
                "class": cls.id,
                "rank": r.rank,
                "id": r.id,
                "value": r.value,
                "headline": r.headline,
                "unit": r.unit,
                "label": r.label,
                "per_accelerator": (r.per_accelerator or {}).get("value"),
                "divisor": (r.per_accelerator or {}).get("divisor"),
                "experimental": r.experimental,
                "origin": r.context.get("origin"),
                "same_measurement": ";".join(r.same_measurement) or None,
                "repeat_group": (r.repeats or {}).get("group"),
                "repeats": (r.repeats or {}).get("n"),
                "repeat_min": (r.repeats or {}).get("min"),
                "repeat_max": (r.repeats or {}).get("max"),
            }
            row.update({f"varied.{k}": v for k, v in r.varied.items()})
            rows.append(row)
    for n in result.not_comparable:
        rows.append(
            {
                "class": "not-comparable",
                "id": n.id,
                "value": n.value,
                "unit": n.unit,
                "label": n.label,
                "missing": ";".join(n.missing) or None,
                "reason": n.reason,
                "repeat_group": (n.repeat or {}).get("group"),
                "repeat": f"{n.repeat['index']}/{n.repeat['n']}" if n.repeat else None,
            }
        )
    return rows


def _filters_text(filters: dict) -> str:
    """``model = llama-2-70b, scenario = offline`` (values of list filters joined by ``|``), or ``no filter``."""
    parts = [f"{k} = {'|'.join(map(str, v)) if isinstance(v, (list, tuple, set, frozenset)) else v}" for k, v in (filters or {}).items()]
    return ", ".join(parts) or "no filter"


def _metric_absent_text(result) -> str:
    """The line saying that no selected benchmark has the metric asked for, and which metrics the rest of the selection has."""
    rest = _filters_text({k: v for k, v in result.filters.items() if k != "metric"})
    if result.metrics_without_filter:
        have = ", ".join(f"{m} {n}" for m, n in result.metrics_without_filter.items())
        return f"no benchmark selected by {rest} has metric {result.filters['metric']}; the metrics they have: {have}"
    return f"no benchmark is selected by {rest} with any metric"


def _values_absent_lines(result) -> list[str]:
    """One line per exact-match filter (scenario, origin) whose value the rest of the selection lacks: did you mean, and
    the values the rest has, with counts (``CompareResult.values_without_filter``)."""
    lines = []
    for name, values in result.values_without_filter.items():
        rest = _filters_text({k: v for k, v in result.filters.items() if k != name})
        near = result.did_you_mean.get(name)
        line = f"no benchmark selected by {rest} has {name} {result.filters[name]}"
        line += f" (did you mean {' or '.join(near)}?)" if near else ""
        have = ", ".join(f"{v} {n:,}" for v, n in values.items())
        lines.append(line + (f"; the {name} values they have: {have}" if have else "; they select no benchmark either"))
    return lines


def _print_compare(result, show_all: bool) -> None:
    console = _Echo()
    console.print(
        f"compare {result.selected} benchmark(s) selected by {_filters_text(result.filters)}; "
        f"{len(result.classes)} comparability class(es), {len(result.not_comparable)} not comparable"
        + (f"; varied: {', '.join(result.vary)}" if result.vary else "")
    )
    if result.metric_absent:
        console.print(_metric_absent_text(result))
    for line in _values_absent_lines(result):
        console.print(line)
    if result.hint:
        console.print(result.hint)
    if result.split_by:
        console.print("classes are split by: " + ", ".join(f"{k} ({v} values)" for k, v in result.split_by.items()))
    limit = None if show_all else 10
    for cls in result.classes[: None if show_all else 8]:
        key = ", ".join(f"{k}={'fixed' if k in cls.fixed_by else _short(v)}" for k, v in cls.key.items() if v != "n/a")
        if cls.spellings:
            key += "\n  merged spellings: " + "; ".join(f"{k}: {' = '.join(_short(v) for v in vs)}" for k, vs in cls.spellings.items())
        label = cls.rows[0].label if cls.rows else ""
        t = _table(
            f"\nclass {cls.id}: {cls.size} row(s), {label}; {cls.direction or 'no direction, unranked'}{' is better' if cls.direction else ''}\n  key: {key}",
            ["#", "value", "per accelerator", *list(result.vary), "benchmark", "notes"],
        )
        mixed_origins = len({r.context.get("origin") for r in cls.rows}) > 1
        for r in cls.rows[:limit]:
            notes = []
            if r.experimental:
                notes.append("EXPERIMENTAL")
            if r.same_measurement:
                notes.append("same measurement: " + ", ".join(r.same_measurement))
            if r.repeats:
                rp = r.repeats
                notes.append(f"median of {rp['n']} repeats (min {_fmt_num(rp['min'])}, max {_fmt_num(rp['max'])}): " + ", ".join(rp["ids"]))
            if mixed_origins and r.context.get("origin"):
                notes.append(r.context["origin"])
            pa = r.per_accelerator
            pa_text = f"{_fmt_num(pa['value'])} (÷{pa['divisor']})" if pa else "—"
            t.add_row(
                _fmt_num(r.rank),
                f"{_fmt_num(r.headline)} {r.unit or ''}",
                pa_text,
                *[_short(r.varied.get(v)) for v in result.vary],
                r.id,
                "; ".join(notes),
            )
        console.print(t)
        if limit and cls.size > limit:
            console.print(f"  ... {cls.size - limit} more (--all)")
        for r in cls.rows[:limit]:
            for arm in r.arms:
                delta = ", ".join(f"{k} {v:+.1f}%" for k, v in arm.delta_pct.items() if isinstance(v, (int, float)))
                tag = "baseline" if arm.baseline else ("better" if arm.better else "worse" if arm.better is False else "")
                console.print(f"  arm {arm.arm_id} of {r.id}: {tag} {delta}")
    if len(result.classes) > 8 and not show_all:
        console.print(f"... {len(result.classes) - 8} more classes (--all)")
    if result.not_comparable:
        t = _table("\nnot comparable (a condition is not stated, or no value)", ["value", "missing / reason", "benchmark"])
        for n in result.not_comparable[: None if show_all else 10]:
            shown = f"{n.id} (repeat {n.repeat['index']}/{n.repeat['n']})" if n.repeat else n.id
            t.add_row(f"{_fmt_num(n.value)} {n.unit or ''}", ", ".join(n.missing) if n.missing else n.reason, shown)
        console.print(t)
        if not show_all and len(result.not_comparable) > 10:
            console.print(f"... {len(result.not_comparable) - 10} more (--all)")


def _short(v: Any) -> str:
    s = _fmt_num(v)
    return s if len(s) <= 48 else s[:45] + "..."


@command()
@click.option("--model", help="Model id (or name/alias).")
@click.option(
    "--base-model",
    metavar="MODEL",
    help="Model id: results derived from it (base_model_id; open-division MLPerf), never mixed with --model's.",
)
@click.option("--metric", help="Metric name from the registry (e.g. output_tok_s).")
@click.option("--accelerator", help="Accelerator id: only benchmarks that ran on it.")
@click.option("--engine", help="Engine id.")
@click.option("--format-id", "fmt_id", metavar="FORMAT", help="Quantization format id (e.g. nvfp4).")
@click.option("--scenario", help="Scenario (offline, server, interactive, ...).")
@click.option("--origin", help="Data-set / harness family (e.g. mlperf-inference).")
@click.option(
    "--vary",
    multiple=True,
    metavar="CONDITIONS",
    help="Conditions declared irrelevant (comma-separated): they leave the class key and become columns. "
    "When most selected records are not comparable, a 'hint:' line (JSON 'hint' and 'vary_hint'; stderr for CSV/Markdown) "
    "names the unstated conditions to blame and the smallest --vary set of format, hardware, warmup, engine, "
    "engine_version (and accelerator_count with --per-accelerator) that puts most of them into classes of 2+ rows; "
    "it never suggests model, metric, value_scope, scenario, division, benchmark_definition, input_tokens, "
    "output_tokens or load (a different workload or quantity, not a setup difference).",
)
@click.option("--per-accelerator", "per_acc", is_flag=True, help="Rank on throughput per accelerator (nodes x accelerators per node).")
@click.option("--why", nargs=2, metavar="ID_A ID_B", help="Only say which conditions split two benchmarks.")
@click.option(
    "--pareto",
    "pareto_x",
    metavar="METRIC[:STAT]",
    help="Pareto frontier of per-accelerator throughput vs this metric, per class (e.g. tok_s_per_user, ttft_ms:p99). "
    "When most selected records lack the metric, a 'hint:' line (JSON 'hint') names the x metrics they do carry, best first.",
)
@click.option(
    "--history", "history_mode", is_flag=True, help="The same system (system_series) across MLPerf rounds, with software changes."
)
@click.option("--plot", "plot_path", metavar="PATH", help="Draw the result: .html, .svg, .png (or .json for the Vega-Lite spec).")
@click.option("--all", "show_all", is_flag=True, help="Print every class and row (text shows the first ones).")
@kb_option
@format_option
def compare(
    model,
    base_model,
    metric,
    accelerator,
    engine,
    fmt_id,
    scenario,
    origin,
    vary,
    per_acc,
    why,
    pareto_x,
    history_mode,
    plot_path,
    show_all,
    kb_path,
    fmt,
) -> None:
    """Rank benchmarks only within comparability classes; say what splits the rest.

    A class is records with equal load conditions (model, metric, scope, format,
    hardware and count, scenario, MLPerf division and benchmark definition,
    ISL/OSL, load, warmup, engine and version). A condition a record does not
    state makes it "not comparable" — never silently equal. A known --metric that no selected
    benchmark has selects nothing (exit 0) and the metrics the rest of the selection has are
    listed with counts; an unknown metric name is an error (exit 2).
    Repeated measurements of one configuration (records sharing a repeat_group) are one
    row, ranked on their median, with n, min and max beside it (CSV/Markdown columns
    repeat_group, repeats, repeat_min, repeat_max); a not-comparable repeat is marked
    "repeat k/n".

    \b
    Examples:
      inferkb compare --model llama-2-70b --scenario offline
      inferkb compare --model llama-2-70b --scenario offline --per-accelerator \\
          --vary hardware,accelerator_count,format,engine,engine_version --plot rank.html
      inferkb compare --why BENCHMARK_A BENCHMARK_B
      inferkb compare --model gpt-oss-120b --pareto tok_s_per_user --format json
      inferkb compare --model llama-2-70b --history
      inferkb compare --base-model llama-3-1-70b    # open-division results built from it
    """
    from ..analysis import compare as cmp
    from ..analysis import plot

    kb = open_kb(kb_path)
    varied = _split_multi(vary)
    if why:
        from ..analysis.comparability import split

        a, b = (kb.get(x) for x in why)
        for r in (a, b):
            if r.type != "benchmark":
                article = "an" if r.type[:1] in "aeiou" else "a"
                raise UsageError(f"--why takes two benchmark ids: {r.id} is {article} {r.type}, not a benchmark")
        res = split(a.id, a.data, b.id, b.data, varied)
        if fmt == "json":
            emit_json(res.to_dict())
            return
        if fmt in ("csv", "markdown"):
            rows = [{"condition": k, "a": v[0], "b": v[1], "kind": "differs"} for k, v in res.differ.items()]
            rows += [{"condition": k, "missing_on": v, "kind": "missing"} for k, v in res.missing.items()]
            _emit_rows(rows, fmt)
            return
        click.echo(f"{a.id}\n{b.id}")
        if res.comparable:
            click.echo("comparable: every condition is stated and equal")
        for k, (va, vb) in res.differ.items():
            click.echo(f"  differs  {k}: {va!r} vs {vb!r}")
        for k, side in res.missing.items():
            click.echo(f"  missing  {k}: not stated by {'both' if side == 'both' else ('the first' if side == 'a' else 'the second')}")
        return
    if history_mode:
        from ..analysis.history import history

        res = history(kb, model=model, scenario=scenario)
        if fmt == "json":
            emit_json(res.to_dict())
            return
        rows = [
            {
                "system_series": ln.system_series,
                "benchmark": ln.benchmark,
                "scenario": ln.scenario,
                "division": ln.division,
                "round": p.round,
                "id": p.id,
                "value": p.value,
                "change_pct": p.change_pct,
                "per_accelerator": p.per_accelerator,
                "software_changed": "; ".join(f"{k}: {v[0]} -> {v[1]}" for k, v in p.software_changed.items()) or None,
            }
            for ln in res.lines
            for p in ln.points
        ]
        if fmt in ("csv", "markdown"):
            _emit_rows(rows, fmt)
            return
        console = _Echo()
        console.print(
            f"history {len(res.lines)} series line(s); {res.without_series} record(s) carry no system_series; "
            f"{res.single_round_lines} line(s) seen in one round only"
        )
        for ln in res.lines:
            t = _table(
                f"{ln.system_series} — {ln.benchmark} {ln.scenario} ({ln.division or 'no division'}); {ln.label}",
                ["round", "benchmark", "value", "change", "per accelerator", "software changed"],
            )
            for p in ln.points:
                t.add_row(
                    p.round or "?",
                    p.id,
                    _fmt_num(p.value),
                    f"{p.change_pct:+.1f}%" if p.change_pct is not None else "",
                    _fmt_num(p.per_accelerator),
                    "; ".join(f"{k}: {v[0]} -> {v[1]}" for k, v in p.software_changed.items()),
                )
            console.print(t)
        return
    if pareto_x:
        from ..analysis.pareto import pareto

        res = pareto(
            kb,
            x=pareto_x,
            model=model,
            metric=metric,
            accelerator=accelerator,
            engine=engine,
            fmt=fmt_id,
            scenario=scenario,
            origin=origin,
            vary=varied,
        )
        if plot_path:
            plot.write(plot.pareto_spec(res), plot_path)
        if fmt == "json":
            emit_json(res.to_dict())
            return
        rows = [
            {
                "class": c.id,
                "id": p.id,
                "x": p.x,
                "y": p.y,
                "load": p.load,
                "frontier": p.on_frontier,
                "experimental": p.experimental,
                "repeats": ";".join(p.repeats) or None,
            }
            for c in res.classes
            for p in c.points
        ]
        rows += [{"class": "outside", "id": o.id, "reason": o.reason} for o in res.outside]
        if fmt in ("csv", "markdown"):
            _emit_rows(rows, fmt)
            if res.metric_absent:
                from ..textsafe import clean as _clean

                click.echo(_clean(_metric_absent_text(res)), err=True)  # stdout holds the (empty) table only
            return
        console = _Echo()
        console.print(
            f"pareto y = {res.y}, x = {res.x} ({res.x_direction} is better); {res.selected} benchmark(s) selected by "
            f"{_filters_text(res.filters)}; {len(res.classes)} class(es), {len(res.outside)} point(s) outside any class"
        )
        if res.metric_absent:
            console.print(_metric_absent_text(res))
        if res.hint:
            console.print(res.hint)
        by_reason = res.outside_by_reason()
        if len(res.outside) > 10 and not show_all:
            console.print("outside by reason:")
            for reason, n in by_reason.items():
                console.print(f"  {n:>6,}  {reason}")
        for c in res.classes:
            t = _table(
                f"class {c.id}: " + ", ".join(f"{k}={_short(v)}" for k, v in c.key.items() if v != "n/a"),
                ["benchmark", "load", res.x, "per accelerator", "frontier"],
            )
            for p in c.points:
                t.add_row(
                    p.id + (" [EXPERIMENTAL]" if p.experimental else "") + (f" [median of {len(p.repeats)} repeats]" if p.repeats else ""),
                    _fmt_num(p.load),
                    _fmt_num(p.x),
                    _fmt_num(p.y),
                    "*" if p.on_frontier else "",
                )
            console.print(t)
        for o in res.outside[: None if show_all else 10]:
            console.print(f"  outside: {o.id}: {o.reason}")
        if plot_path:
            console.print(f"wrote {plot_path}")
        return
    res = cmp.compare(
        kb,
        model=model,
        base_model=base_model,
        metric=metric,
        accelerator=accelerator,
        engine=engine,
        fmt=fmt_id,
        scenario=scenario,
        origin=origin,
        vary=varied,
        per_accelerator_basis=per_acc,
    )
    if plot_path:
        plot.write(plot.compare_spec(res), plot_path)
    if fmt == "json":
        emit_json(res.to_dict())
    elif fmt in ("csv", "markdown"):
        _emit_rows(_compare_rows(res), fmt)
        from ..textsafe import clean

        if res.metric_absent:
            click.echo(clean(_metric_absent_text(res)), err=True)  # stdout holds the (empty) table only
        for line in _values_absent_lines(res):
            click.echo(clean(line), err=True)
        if res.hint:
            click.echo(clean(res.hint), err=True)  # a comment line would be a data row to a CSV reader
    else:
        _print_compare(res, show_all)
        if plot_path:
            click.echo(f"wrote {plot_path}")
