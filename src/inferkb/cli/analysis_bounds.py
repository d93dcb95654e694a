"""CLI commands cost, roofline and fit (plugins of the ``commands`` point): thin wrappers over :mod:`inferkb.analysis`."""

from __future__ import annotations

import click

from .analysis import _Echo, _emit_rows, _fmt_num, _table, format_option
from .common import command, emit_json, kb_option, open_kb

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
    if supply_id and (price_basis is not None or devices_per_instance is not None):
        raise AnalysisError("--supply states its own price basis; --price-basis and --devices-per-instance go with --price-per-hour")
    if price_basis == "per-device" and devices_per_instance is not None:
        raise AnalysisError("--devices-per-instance goes with --price-basis per-instance; a per-device price covers one device")
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
@click.option(
    "--count",
    type=int,
    default=1,
    show_default=True,
    help="Number of accelerators. The TP degree for the head-divisibility warning and the KV split is count x the "
    "accelerator's runtime_devices (2 per AMD MI250 module: 2 ROCm devices), as in fit.",
)
@click.option(
    "--weights",
    "--format-id",
    "fmt_id",
    required=True,
    metavar="FORMAT",
    help="Weight format: a format id or name (bf16, fp8-e4m3, nvfp4, ...).",
)
@click.option("--batch", type=int, default=1, show_default=True, help="Concurrent requests in a decode step.")
@click.option(
    "--context",
    type=int,
    default=0,
    show_default=True,
    help="Tokens of KV cache each request reads (0: weights only). The memory line checks the same context (0 as 1 token) and, at 0, also the model's maximum context, fit's default.",
)
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
        for w in res.warnings:  # on stderr for tables, as fit does, so a CSV stays parseable
            click.echo(f"warning: {w}", err=True)
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
    for w in res.warnings:
        click.echo(f"warning: {w}")
    if res.fits_in_memory is False:
        click.echo(f"warning: {res.memory_note}")
    for line in res.formula:
        click.echo(f"  {line}")
    if res.compute_bound_batch is not None:
        click.echo(f"  decode turns compute-bound near batch {res.compute_bound_batch:,.0f}")
    for a in res.assumptions:
        click.echo(f"assumes: {a}")
    if res.fits_in_memory is not False:
        click.echo(f"memory: {res.memory_note}")
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
@click.option(
    "--count",
    type=int,
    default=1,
    show_default=True,
    help="Accelerators. TP = count x the accelerator's runtime_devices (an AMD MI250 module is 2 ROCm devices, so "
    "--count 4 is TP 8); memory figures stay per accelerator.",
)
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
        for w in res.warnings:  # on stderr for tables, so a CSV stays parseable; text prints them under its first line
            click.echo(f"warning: {w}", err=True)
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
    for w in res.warnings:
        click.echo(f"warning: {w}")
    for line in res.formula:
        click.echo(f"  {line}")
    verdict = "FITS" if res.fits else "DOES NOT FIT"
    unit = "accelerator" if res.runtime_devices > 1 else "device"
    click.echo(
        f"=> {verdict}: needs {(res.weights_per_device + res.kv_per_device) / 1e9:.2f} GB of {res.usable_per_device / 1e9:.2f} GB usable per {unit}"
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
