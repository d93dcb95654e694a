"""CLI commands for analysis and exports: compare, cost, roofline, fit, sql, export (plugins of the ``commands`` point).

Thin wrappers over :mod:`inferkb.analysis` and :mod:`inferkb.export`: parse
options, call the API, render. Every command prints text by default and
``--format json`` (one document), ``csv`` or ``markdown``; errors exit 2.
"""

from __future__ import annotations

import csv
import sys
from typing import Any

import click

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
        click.echo(obj.render() if isinstance(obj, _Plain) else obj)


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
            }
        )
    return rows


def _print_compare(result, show_all: bool) -> None:
    console = _Echo()
    console.print(
        f"compare {result.selected} benchmark(s) selected by {result.filters or 'no filter'}; "
        f"{len(result.classes)} comparability class(es), {len(result.not_comparable)} not comparable"
        + (f"; varied: {', '.join(result.vary)}" if result.vary else "")
    )
    if result.split_by:
        console.print("classes are split by: " + ", ".join(f"{k} ({v} values)" for k, v in result.split_by.items()))
    limit = None if show_all else 10
    for cls in result.classes[: None if show_all else 8]:
        key = ", ".join(f"{k}={'fixed' if k in cls.fixed_by else _short(v)}" for k, v in cls.key.items() if v != "n/a")
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
            t.add_row(f"{_fmt_num(n.value)} {n.unit or ''}", ", ".join(n.missing) if n.missing else n.reason, n.id)
        console.print(t)
        if not show_all and len(result.not_comparable) > 10:
            console.print(f"... {len(result.not_comparable) - 10} more (--all)")


def _short(v: Any) -> str:
    s = _fmt_num(v)
    return s if len(s) <= 48 else s[:45] + "..."


@command()
@click.option("--model", help="Model id (or name/alias).")
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
    help="Conditions declared irrelevant (comma-separated): they leave the class key and become columns.",
)
@click.option("--per-accelerator", "per_acc", is_flag=True, help="Rank on throughput per accelerator (nodes x accelerators per node).")
@click.option("--why", nargs=2, metavar="ID_A ID_B", help="Only say which conditions split two benchmarks.")
@click.option(
    "--pareto",
    "pareto_x",
    metavar="METRIC[:STAT]",
    help="Pareto frontier of per-accelerator throughput vs this metric, per class (e.g. tok_s_per_user, ttft_ms:p99).",
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
    state makes it "not comparable" — never silently equal.

    \b
    Examples:
      inferkb compare --model llama-2-70b --scenario offline
      inferkb compare --model llama-2-70b --scenario offline --per-accelerator \\
          --vary hardware,accelerator_count,format,engine,engine_version --plot rank.html
      inferkb compare --why BENCHMARK_A BENCHMARK_B
      inferkb compare --model gpt-oss-120b --pareto tok_s_per_user --format json
      inferkb compare --model llama-2-70b --history
    """
    from ..analysis import compare as cmp
    from ..analysis import plot

    kb = open_kb(kb_path)
    varied = _split_multi(vary)
    if why:
        from ..analysis.comparability import split

        a, b = (kb.get(x) for x in why)
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
            {"class": c.id, "id": p.id, "x": p.x, "y": p.y, "load": p.load, "frontier": p.on_frontier, "experimental": p.experimental}
            for c in res.classes
            for p in c.points
        ]
        rows += [{"class": "outside", "id": o.id, "reason": o.reason} for o in res.outside]
        if fmt in ("csv", "markdown"):
            _emit_rows(rows, fmt)
            return
        console = _Echo()
        console.print(
            f"pareto y = {res.y}, x = {res.x} ({res.x_direction} is better); {len(res.classes)} class(es), {len(res.outside)} point(s) outside any class"
        )
        for c in res.classes:
            t = _table(
                f"class {c.id}: " + ", ".join(f"{k}={_short(v)}" for k, v in c.key.items() if v != "n/a"),
                ["benchmark", "load", res.x, "per accelerator", "frontier"],
            )
            for p in c.points:
                t.add_row(
                    p.id + (" [EXPERIMENTAL]" if p.experimental else ""),
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
    else:
        _print_compare(res, show_all)
        if plot_path:
            click.echo(f"wrote {plot_path}")


# ---- cost -------------------------------------------------------------------


@command()
@click.option("--benchmark", "benchmark_id", required=True, help="Benchmark id.")
@click.option("--price-per-hour", type=float, metavar="USD", help="Hourly price; needs --price-basis.")
@click.option(
    "--price-basis",
    type=click.Choice(["per-device", "per-instance"]),
    help="What the price covers: one device, or an instance of --devices-per-instance.",
)
@click.option(
    "--devices-per-instance", type=click.IntRange(min=1), help="Devices in one priced instance (with --price-basis per-instance)."
)
@click.option("--supply", "supply_id", help="Supply record id stating a price with its basis.")
@click.option(
    "--utilisation", type=float, default=1.0, show_default=True, help="Share of paid hours producing tokens at the measured rate (0-1]."
)
@click.option("--allow-other-hardware", is_flag=True, help="Use a supply price for other hardware than the benchmark ran on.")
@kb_option
@format_option
def cost(
    benchmark_id, price_per_hour, price_basis, devices_per_instance, supply_id, utilisation, allow_other_hardware, kb_path, fmt
) -> None:
    """Cost per 1M output tokens (and total tokens when input is known) of a measured benchmark.

    \b
    Examples:
      inferkb cost --benchmark BENCHMARK_ID --supply spheron-b200-on-demand-2026-03
      inferkb cost --benchmark BENCHMARK_ID --price-per-hour 3.5 --price-basis per-device
      inferkb cost --benchmark BENCHMARK_ID --price-per-hour 98.32 --price-basis per-instance --devices-per-instance 8
    """
    from ..analysis.common import AnalysisError
    from ..analysis.cost import Price, price_from_supply
    from ..analysis.cost import cost as run_cost

    kb = open_kb(kb_path)
    if supply_id and price_per_hour is not None:
        raise AnalysisError("give either --supply or --price-per-hour, not both")
    if supply_id:
        price = price_from_supply(kb, supply_id)
    elif price_per_hour is not None:
        if price_basis is None:
            raise AnalysisError("--price-per-hour needs --price-basis per-device|per-instance; a price without a basis is refused")
        if price_basis == "per-instance" and devices_per_instance is None:
            raise AnalysisError("--price-basis per-instance needs --devices-per-instance N")
        price = Price(price_per_hour, price_basis, 1 if price_basis == "per-device" else devices_per_instance, None, "command line")
    else:
        raise AnalysisError("no price: give --supply ID or --price-per-hour USD --price-basis ...")
    res = run_cost(kb, benchmark_id, price, utilisation=utilisation, allow_other_hardware=allow_other_hardware)
    if fmt == "json":
        emit_json(res.to_dict())
        return
    row = {
        "benchmark": res.benchmark,
        "value": res.value,
        "label": res.label,
        "devices": res.devices,
        "price_usd_per_hour": res.price["usd_per_hour"],
        "price_scope": res.price["scope"],
        "system_usd_per_hour": res.system_usd_per_hour,
        "utilisation": res.utilisation,
        "usd_per_1m_output": res.usd_per_million_output,
        "usd_per_1m_total": res.usd_per_million_total,
        "price_source": res.price["source"],
    }
    if fmt in ("csv", "markdown"):
        _emit_rows([row], fmt)
        return
    click.echo(f"{res.benchmark}: {_fmt_num(res.value)} {res.unit} ({res.label})")
    click.echo(
        f"price: ${res.price['usd_per_hour']:g}/hour {res.price['scope']} ({res.price['source']}{', ' + res.price['date'] if res.price.get('date') else ''})"
    )
    click.echo(f"devices: {res.devices} ({res.devices_basis})")
    for line in res.formula:
        click.echo(f"  {line}")
    click.echo(
        f"=> ${_fmt_num(res.usd_per_million_output)} per 1M output tokens"
        if res.usd_per_million_output is not None
        else f"=> ${_fmt_num(res.usd_per_million_headline)} per 1M tokens ({res.token_basis})"
    )
    click.echo(
        f"=> per 1M total tokens: ${_fmt_num(res.usd_per_million_total)}"
        if res.usd_per_million_total is not None
        else f"=> per 1M total tokens: {res.total_basis}"
    )
    for a in res.assumptions:
        click.echo(f"assumes: {a}")


# ---- roofline, fit ----------------------------------------------------------


@command()
@click.option("--model", required=True, help="Model id (or name/alias).")
@click.option("--accelerator", required=True, help="Accelerator id (or name/alias).")
@click.option("--count", type=int, default=1, show_default=True, help="Number of accelerators.")
@click.option(
    "--weights",
    "--format-id",
    "fmt_id",
    required=True,
    metavar="FORMAT",
    help="Weight format: a format id or name (bf16, fp8-e4m3, nvfp4, ...).",
)
@click.option("--batch", type=int, default=1, show_default=True, help="Concurrent requests in a decode step.")
@click.option("--context", type=int, default=0, show_default=True, help="Tokens of KV cache each request reads (0: weights only).")
@click.option("--kv-format", help="KV-cache format (default bf16).")
@click.option("--plot", "plot_path", metavar="PATH", help="Draw the decode ceiling against batch: .html, .svg, .png, .json.")
@kb_option
@format_option
def roofline(model, accelerator, count, fmt_id, batch, context, kv_format, plot_path, kb_path, fmt) -> None:
    """Bandwidth-bound decode ceiling, compute-bound prefill ceiling and ridge point; measured runs placed against them (MBU/MFU).

    \b
    Examples:
      inferkb roofline --model llama-3-3-70b --accelerator nvidia-h100-sxm --count 8 --format-id fp8-e4m3
      inferkb roofline --model llama-2-70b --accelerator nvidia-b300 --count 8 --format-id nvfp4 --batch 64 --context 2048 --plot r.svg
    """
    from ..analysis import plot
    from ..analysis.roofline import roofline as run

    kb = open_kb(kb_path)
    res = run(kb, model, accelerator, count=count, fmt=fmt_id, batch=batch, context=context, kv_format=kv_format)
    if plot_path:
        plot.write(plot.roofline_spec(res), plot_path)
    if fmt == "json":
        emit_json(res.to_dict())
        return
    if fmt in ("csv", "markdown"):
        rows = [
            {"ceiling": "decode per request (tok/s)", "value": res.decode_per_request_tok_s},
            {
                "ceiling": f"decode aggregate at batch {res.batch} (tok/s)",
                "value": res.decode_aggregate_tok_s,
                "bound": res.decode_aggregate_bound,
            },
            {"ceiling": "prefill / compute (tok/s)", "value": res.prefill_tok_s},
            {"ceiling": "ridge point (FLOP/byte)", "value": res.ridge_flop_per_byte},
        ]
        rows += [
            {"ceiling": "measured", "id": m.id, "value": m.value, "kind": m.kind, "utilisation": m.utilisation, "basis": m.basis}
            for m in res.measured
        ]
        _emit_rows(rows, fmt)
        return
    click.echo(f"{res.model} on {res.count}x {res.accelerator}, weights {res.weight_format}, batch {res.batch}, context {res.context}")
    for line in res.formula:
        click.echo(f"  {line}")
    if res.compute_bound_batch is not None:
        click.echo(f"  decode turns compute-bound near batch {res.compute_bound_batch:,.0f}")
    for a in res.assumptions:
        click.echo(f"assumes: {a}")
    if res.measured:
        t = _table(
            f"measured {res.model} on {res.accelerator} ({len(res.measured)} benchmark(s), each with its own device count)",
            ["benchmark", "value", "label", "devices", "utilisation", "basis"],
        )
        ordered = sorted(res.measured, key=lambda m: (m.utilisation is None, -(m.utilisation or 0.0), m.id))
        for m in ordered[:10]:
            t.add_row(
                m.id,
                _fmt_num(m.value),
                m.label,
                _fmt_num(m.devices),
                f"{m.kind} {m.utilisation:.1%}" if m.utilisation is not None else "—",
                m.basis,
            )
        _Echo().print(t)
        if len(ordered) > 10:
            click.echo(f"  ... {len(ordered) - 10} more, highest utilisation first (--format json lists all)")
    else:
        click.echo("measured: no benchmark of this model on this accelerator alone")
    if plot_path:
        click.echo(f"wrote {plot_path}")


@command()
@click.option("--model", required=True, help="Model id (or name/alias).")
@click.option("--accelerator", required=True, help="Accelerator id (or name/alias).")
@click.option("--count", type=int, default=1, show_default=True, help="Accelerators (TP degree).")
@click.option("--weights", "--format-id", "fmt_id", required=True, metavar="FORMAT", help="Weight format id or name.")
@click.option("--kv-format", help="KV-cache format (default bf16).")
@click.option("--context", type=int, help="Context length in tokens (default: the model's max_position_embeddings).")
@click.option("--batch", type=int, default=1, show_default=True, help="Concurrent sequences.")
@click.option("--usable", type=float, default=0.9, show_default=True, help="Share of device memory the engine may use.")
@kb_option
@format_option
def fit(model, accelerator, count, fmt_id, kv_format, context, batch, usable, kb_path, fmt) -> None:
    """Memory envelope: weights + KV cache per device; fits or not, largest context at batch B, largest batch at context L.

    Knows GQA, MLA (DeepSeek), hybrid linear-attention (Qwen3-Next) and sliding-window (gpt-oss) layers.

    \b
    Examples:
      inferkb fit --model llama-3-3-70b --accelerator nvidia-h100-sxm --count 2 --format-id fp8-e4m3 --context 32768 --batch 8
      inferkb fit --model deepseek-r1 --accelerator nvidia-b200 --count 8 --format-id fp8-block-scaled --context 32768
    """
    from ..analysis.fit import fit as run

    kb = open_kb(kb_path)
    res = run(kb, model, accelerator, count=count, fmt=fmt_id, kv_format=kv_format, context=context, batch=batch, usable=usable)
    if fmt == "json":
        emit_json(res.to_dict())
        return
    if fmt in ("csv", "markdown"):
        keys = (
            "model",
            "accelerator",
            "count",
            "batch",
            "context",
            "weights_per_device",
            "kv_per_device",
            "usable_per_device",
            "fits",
            "max_batch_at_context",
            "max_context_at_batch",
            "kv_bytes_per_token",
        )
        _emit_rows([{k: getattr(res, k) for k in keys}], fmt)
        return
    click.echo(f"{res.model} on {res.count}x {res.accelerator} (TP {res.tp}), batch {res.batch}, context {res.context:,}")
    for line in res.formula:
        click.echo(f"  {line}")
    verdict = "FITS" if res.fits else "DOES NOT FIT"
    click.echo(
        f"=> {verdict}: needs {(res.weights_per_device + res.kv_per_device) / 1e9:.2f} GB of {res.usable_per_device / 1e9:.2f} GB usable per device"
    )
    cap = " (the model's maximum)" if res.context_capped else ""
    click.echo(
        f"=> largest context at batch {res.batch}: {res.max_context_at_batch:,}{cap}; largest batch at {res.context:,} tokens: {res.max_batch_at_context:,}"
    )
    if (
        res.stated_kv_bytes_per_token is not None
        and res.bytes_per_kv_element == 2
        and abs(res.stated_kv_bytes_per_token - res.kv_bytes_per_token) > 0.5
    ):
        click.echo(
            f"note: the model record states kv_cache_bytes_per_token {res.stated_kv_bytes_per_token:,.0f}; the geometry gives {res.kv_bytes_per_token:,.0f}"
        )
    for a in res.assumptions:
        click.echo(f"assumes: {a}")


# ---- sql, export --------------------------------------------------------------


@command()
@click.argument("query", required=False)
@click.option(
    "--db", "db_path", metavar="PATH", help="Query this DuckDB file (from `inferkb export --to duckdb`) instead of loading the KB."
)
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds before the query is interrupted.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many rows.")
@click.option("--tables", "list_tables", is_flag=True, help="List the tables (with their column counts) instead of running a query.")
@kb_option
@format_option
def sql(query, db_path, timeout, limit, list_tables, kb_path, fmt) -> None:
    """Read-only DuckDB SQL over the KB's tables (README lists them and their columns).

    The connection is read-only with file access disabled: writes, ATTACH,
    COPY TO and reading other files are refused.

    \b
    Examples:
      inferkb sql "SELECT metric, count(*) FROM benchmarks GROUP BY 1 ORDER BY 2 DESC"
      inferkb sql "SELECT b.id, c.input_tokens FROM benchmarks b JOIN conditions c ON c.benchmark_id = b.id LIMIT 5" --format csv
      inferkb sql --tables
    """
    from ..export.sql import Database

    if not query and not list_tables:
        raise click.UsageError("give a QUERY (or --tables)")
    if db_path:
        db = Database.open(db_path)
    else:
        db = Database.build(open_kb(kb_path))
    with db:
        if list_tables:
            res = db.query("SELECT table_name, count(*) AS columns FROM information_schema.columns GROUP BY 1 ORDER BY 1", timeout=timeout)
        else:
            res = db.query(query, timeout=timeout, limit=limit)
    if fmt == "json":
        emit_json(res.to_dict())
        return
    rows = [dict(zip(res.columns, r, strict=True)) for r in res.rows]
    if fmt in ("csv", "markdown"):
        _emit_rows(rows, fmt) if rows else click.echo(",".join(res.columns))
        return
    t = _table(f"{len(res.rows)} row(s) in {res.elapsed_s * 1000:.1f} ms", res.columns)
    for r in res.rows:
        t.add_row(*[_fmt_num(v) for v in r])
    _Echo().print(t)


@command("export")
@click.option(
    "--to", "fmt_to", required=True, type=click.Choice(["duckdb", "parquet", "sqlite", "csv", "datapackage"]), help="Output format."
)
@click.option("--out", required=True, metavar="PATH", help="File (duckdb, sqlite) or folder (parquet, csv, datapackage) to write.")
@click.option(
    "--findings",
    type=click.Choice(["validate", "check", "none"]),
    default="validate",
    show_default=True,
    help="Which findings fill the findings table (check runs every audit: slow on big KBs).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing PATH (atomically).")
@kb_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def export_cmd(fmt_to, out, findings, overwrite, kb_path, fmt) -> None:
    """Export the KB's tables: DuckDB, Parquet, Datasette-ready SQLite, CSV, or a Frictionless data package with Croissant JSON-LD.

    \b
    Examples:
      inferkb export --to sqlite --out kb.sqlite        # then: datasette kb.sqlite
      inferkb export --to datapackage --out kb-data     # CSV + datapackage.json + croissant.json
      inferkb export --to parquet --out kb-parquet
    """
    import time

    from ..export.tables import build_tables  # noqa: F401  (import errors surface before any writing)
    from ..export.writers import export as run

    kb = open_kb(kb_path)
    start = time.perf_counter()
    path = run(kb, fmt_to, out, overwrite=overwrite, findings=findings)
    elapsed = time.perf_counter() - start
    if fmt == "json":
        emit_json({"kb": str(kb.root), "records": len(kb.records), "format": fmt_to, "out": str(path), "seconds": elapsed})
    else:
        click.echo(f"wrote {path} ({fmt_to}, {len(kb.records)} records, {elapsed:.2f} s)")
