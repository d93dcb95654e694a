"""CLI command compare (a plugin of the ``commands`` point); its text and rows are :mod:`inferkb.cli.compare_output`,
the output helpers the analysis commands share :mod:`inferkb.cli.analysis_output` (re-exported here).

cost, roofline and fit are in :mod:`inferkb.cli.analysis_bounds`; sql and
export in :mod:`inferkb.cli.analysis_data`.

Thin wrappers over :mod:`inferkb.analysis` and :mod:`inferkb.export`: parse
options, call the API, render. Every command prints text by default and
``--format json`` (one document), ``csv`` or ``markdown``; errors exit 2.
"""

from __future__ import annotations

import click

from ..errors import UsageError
from .analysis_output import ANALYSIS_FORMATS as ANALYSIS_FORMATS
from .analysis_output import _Echo, _emit_rows, _fmt_num, _split_multi, _table, format_option
from .common import command, emit_json, kb_option, open_kb
from .compare_output import _compare_rows, _filters_text, _metric_absent_text, _print_compare, _short, _values_absent_lines


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
