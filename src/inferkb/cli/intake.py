"""The import commands: intake (harness outputs and result tables -> benchmark records) and env (capture the local environment)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import click

from ..errors import InputError, UsageError
from .common import command, emit_json, open_kb


def _load_env(path: str | None) -> dict | None:
    if not path:
        return None
    from ..jsonio import parse_bytes

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    data, problem = parse_bytes(raw)
    if problem:
        raise InputError(f"{problem.message} (line {problem.line})", path=path)
    return data


def _arms(values: tuple[str, ...]) -> list[tuple[str, Path]]:
    out = []
    for v in values:
        if "=" not in v:
            raise UsageError(f"--arm {v!r}: expected ID=PATH, e.g. --arm baseline=a.json")
        arm_id, path = v.split("=", 1)
        out.append((arm_id.strip(), Path(path)))
    return out


def _diff(old: dict, new: dict) -> None:
    a = json.dumps(old, indent=2, ensure_ascii=False).splitlines()
    b = json.dumps(new, indent=2, ensure_ascii=False).splitlines()
    for line in difflib.unified_diff(a, b, "existing", "imported", lineterm=""):
        click.echo(line)


@command()
@click.argument("fmt_name", metavar="FORMAT")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
@click.option("--arm", "arms", multiple=True, metavar="ID=PATH", help="One arm per file (vllm-latency).")
@click.option("--baseline", help="Id of the baseline arm.")
@click.option("--model", help="Model name as run (e.g. a Hugging Face repo id).")
@click.option("--model-id", help="Model record id.")
@click.option("--accelerator", help="Accelerator record id.")
@click.option("--hardware-raw", help="Hardware string as the tool printed it (resolved via aliases).")
@click.option("--count", type=click.IntRange(min=1), help="Total accelerator count.")
@click.option("--engine", help="Engine record id.")
@click.option("--engine-version", help="Engine release or commit.")
@click.option("--input-len", type=click.IntRange(min=1), help="Input tokens per request (ISL).")
@click.option("--output-len", type=click.IntRange(min=1), help="Output tokens per request (OSL).")
@click.option("--batch-size", type=click.IntRange(min=1))
@click.option("--concurrency", type=click.IntRange(min=1))
@click.option("--num-prompts", type=click.IntRange(min=1))
@click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size.")
@click.option("--pp", type=click.IntRange(min=1), help="Pipeline-parallel size.")
@click.option("--ep", type=click.IntRange(min=1), help="Expert-parallel size.")
@click.option("--dp", type=click.IntRange(min=1), help="Data-parallel size.")
@click.option("--warmup", help="Warmup as run (e.g. '10 iters').")
@click.option("--dataset")
@click.option("--source", help="Source record id to cite.")
@click.option("--id", "record_id", help="Record id (default: generated).")
@click.option("--name", help="Record name (default: generated).")
@click.option("--env", "env_path", metavar="ENV.JSON", help="Environment captured by `inferkb env --format json`.")
@click.option("--dry-run", is_flag=True, help="Print the records; write nothing.")
@click.option("--update", is_flag=True, help="Replace existing records (shows the diff).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def intake(
    fmt_name,
    files,
    kb_path,
    arms,
    baseline,
    model,
    model_id,
    accelerator,
    hardware_raw,
    count,
    engine,
    engine_version,
    input_len,
    output_len,
    batch_size,
    concurrency,
    num_prompts,
    tp,
    pp,
    ep,
    dp,
    warmup,
    dataset,
    source,
    record_id,
    name,
    env_path,
    dry_run,
    update,
    fmt,
) -> None:
    """Import harness outputs or result tables as benchmark records.

    FORMAT is one of the registered importers (`inferkb intake --list-formats`
    is `inferkb intake list`). Conditions come only from the file or from
    these options; anything else stays null with a stated gap.

    \b
    Examples:
      inferkb intake vllm-latency --arm baseline=a.json --arm mtp=b.json --baseline baseline \\
          --model Qwen/Qwen3-8B --accelerator nvidia-h100-sxm --count 1 --engine vllm --source my-run --dry-run
      inferkb intake vllm-serve result.json --hardware-raw "NVIDIA H100 80GB HBM3" --count 8 --engine vllm
      inferkb intake llama-bench bench.json --engine llama-cpp --source my-run
      inferkb intake mlperf summary.csv --dry-run --format json
    """
    from ..intake import IntakeOptions, load_all
    from ..intake.base import commit

    registry = load_all()
    if fmt_name == "list":
        if fmt == "json":
            emit_json([{"name": i.name, "description": i.description} for i in registry.values()])
            return
        for imp in registry.values():
            click.echo(f"{imp.name:18} {imp.description}")
        return
    if fmt_name not in registry:
        raise UsageError(f"unknown format {fmt_name!r}; formats: {', '.join(registry)}")
    importer = registry[fmt_name]
    arm_list = _arms(arms)
    if not files and not arm_list:
        raise UsageError("give at least one FILE (or --arm ID=PATH)")
    options = IntakeOptions(
        model=model,
        model_id=model_id,
        accelerator=accelerator,
        hardware_raw=hardware_raw,
        count=count,
        engine=engine,
        engine_version=engine_version,
        input_len=input_len,
        output_len=output_len,
        batch_size=batch_size,
        concurrency=concurrency,
        num_prompts=num_prompts,
        tensor_parallel=tp,
        pipeline_parallel=pp,
        expert_parallel=ep,
        data_parallel=dp,
        warmup=warmup,
        dataset=dataset,
        source=source,
        record_id=record_id,
        name=name,
        env=_load_env(env_path),
        arms=arm_list,
        baseline=baseline,
    )
    kb = open_kb(kb_path)
    result = importer.parse(list(files), options, kb)
    written: list[str] = []
    unchanged: list[str] = []
    if not dry_run and result.records:
        written = commit(kb, result.records, update=update, on_diff=None if fmt == "json" else _diff, unchanged=unchanged)
    if fmt == "json":
        emit_json(
            {
                "format": fmt_name,
                "dry_run": dry_run,
                "records": result.records,
                "written": written,
                "unchanged": unchanged,
                "findings": [f.to_dict() for f in result.findings],
                "stats": result.stats,
            }
        )
        return
    if dry_run:
        for rec in result.records:
            click.echo(json.dumps(rec, indent=2, ensure_ascii=False))
    from ..arms import delta_lines

    for rec in result.records:
        if rec.get("arms") and rec.get("baseline_arm"):
            for line in delta_lines(rec):
                click.echo(f"{rec['id']}: {line}")
    for f in result.findings:
        click.echo(f"{f.path or f.record or '-'}: {f.code} {f.rule}: {f.message}", err=True)
    tail = " (dry run)" if dry_run else (f", {len(unchanged)} unchanged (already in the KB)" if unchanged else "")
    click.echo(f"{fmt_name}: {len(result.records)} records built, {len(written)} written{tail}")
    if result.stats:
        click.echo("stats: " + json.dumps(result.stats, ensure_ascii=False, default=str))


@command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def env(fmt) -> None:
    """Capture the local environment (GPU tool output, driver, CUDA/ROCm, engine versions, Python, CPU, OS).

    \b
    Example: inferkb env --format json > env.json; inferkb intake ... --env env.json
    """
    from ..intake.envinfo import capture_env

    data = capture_env()
    if fmt == "json":
        emit_json(data)
        return
    for k, v in data.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        click.echo(f"{k:16} {v if v is not None else '(not found)'}")
