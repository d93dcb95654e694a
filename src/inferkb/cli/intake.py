"""The import commands: intake (harness outputs and result tables -> benchmark records) and env (capture the local environment)."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import click

from ..errors import InputError, RecordInvalid, UsageError
from ..findings import fails
from ..textsafe import clean
from .common import command, emit_json, fail_option, open_kb


def _load_env(path: str | None) -> dict | None:
    if not path:
        return None
    from ..jsonio import parse_bytes, read_regular

    try:
        raw = read_regular(path, 16 << 20)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
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


def _inputs(files: tuple[str, ...], arms: list[tuple[str, Path]], shown: int = 3) -> str:
    """The input files of one intake for a message: all of them up to ``shown``, then how many more."""
    paths = [str(f) for f in files] + [str(p) for _, p in arms]
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def _diff(old: dict, new: dict) -> None:
    a = json.dumps(old, indent=2, ensure_ascii=False).splitlines()
    b = json.dumps(new, indent=2, ensure_ascii=False).splitlines()
    for line in difflib.unified_diff(a, b, "existing", "imported", lineterm=""):
        click.echo(clean(line))


def _agreement(kb, key_of: dict, existing: list[str]):
    """Compare the records of a dry run that exist with different content against their stored versions."""
    from ..intake.agreement import agreement

    paths = set(existing)
    pairs = []
    for key, rec in key_of.items():
        stored = kb.resolve(key)
        if stored is not None and str(kb.record_path(rec["type"], rec["id"])) in paths:
            pairs.append((key, stored.data, rec))
    return agreement(pairs)


# A text dry run lists its records one a line up to this many without --show-records.
LISTED = 20


def _record_line(rec: dict, dirs: dict[str, str]) -> str:
    """One record of a dry run on one line: ``dir/id``, then ``metric = value unit`` of a benchmark or the name."""
    key = f"{dirs.get(rec.get('type'), rec.get('type'))}/{rec.get('id')}"
    if rec.get("type") == "benchmark" and rec.get("metric") is not None:
        value = rec.get("value")
        shown = f"{value:,.6g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else value
        return f"{key}  {rec['metric']} = {shown} {rec.get('unit') or ''}".rstrip()
    return f"{key}  {rec.get('name') or ''}".rstrip()


def _model_id_lines(records: list[dict], preset: set[int]) -> list[str]:
    """One line per (model string, model_id) pair of the benchmark records: which model record each string resolved to,
    how many records, and whether the importer set it (``preset``: ``id()`` of those records) or the model resolver."""
    from collections import Counter

    pairs: Counter = Counter()
    for rec in records:
        if rec.get("type") == "benchmark" and rec.get("model_id") and isinstance(rec.get("model"), str):
            pairs[(rec["model"], rec["model_id"], "the importer" if id(rec) in preset else "the model resolver")] += 1
    return [
        f"model_id: {model!r} -> {mid} ({n} record{'s' if n != 1 else ''}, set by {by})" for (model, mid, by), n in sorted(pairs.items())
    ]


@command()
@click.argument("fmt_name", metavar="FORMAT", required=False)
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
@click.option(
    "--dry-run",
    is_flag=True,
    help="List the records (one line each in text, whole in --format json) and run the write's validation (same findings, "
    "same exit code); write nothing. "
    "Records that exist with different content are listed, not refused, and every number they share with the "
    "stored records is compared (equal / differ, and the numbers only one side has).",
)
@click.option(
    "--show-records",
    is_flag=True,
    help=f"Text dry run: list every record on one line (default: only when there are at most {LISTED} of them; "
    "--format json prints them whole).",
)
@click.option("--update", is_flag=True, help="Replace existing records (shows the diff).")
@click.option("--list", "--list-formats", "list_only", is_flag=True, help="List the formats and exit (same as FORMAT 'list').")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@fail_option
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
    show_records,
    update,
    list_only,
    fmt,
    fail_on,
) -> None:
    """Import harness outputs or result tables as benchmark records.

    FORMAT is one of the registered importers (`inferkb intake --list`, or
    `inferkb intake list`, lists them). Conditions come only from the file or
    from these options; anything else stays null with a stated gap. Exits 1
    when the import reported a finding at or above --fail-on (records that
    were built are still written unless --dry-run).

    \b
    Examples:
      inferkb intake vllm-latency --arm baseline=a.json --arm mtp=b.json --baseline baseline \\
          --model Qwen/Qwen3-8B --accelerator nvidia-h100-sxm --count 1 --engine vllm --source my-run --dry-run
      inferkb intake vllm-serve result.json --hardware-raw "NVIDIA H100 80GB HBM3" --count 8 --engine vllm
      inferkb intake llama-bench bench.json --engine llama-cpp --source my-run
      inferkb intake mlperf summary.csv --dry-run --format json
    """
    from ..intake import IntakeOptions, load_all
    from ..intake.base import commit, link_models
    from ..intake.counts import count_by_type, describe

    registry = load_all()
    if not fmt_name and not list_only:
        raise UsageError(f"give a FORMAT ({', '.join(registry)}) or --list")
    if list_only or fmt_name == "list":
        if fmt == "json":
            emit_json([{"name": i.name, "description": i.description} for i in registry.values()])
            return
        for imp in registry.values():
            click.echo(f"{imp.name:18} {imp.description}")
        return
    if fmt_name not in registry:
        near = difflib.get_close_matches(fmt_name, list(registry), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UsageError(f"unknown format {fmt_name!r}{hint}; formats: {', '.join(registry)}")
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
    kb = open_kb(kb_path, write=not dry_run)
    result = importer.parse(list(files), options, kb)
    unlinked: list[str] = []
    preset = {id(r) for r in result.records if r.get("model_id")}
    linked = link_models(kb, result.records, unlinked)
    written: list[str] = []
    unchanged: list[str] = []
    existing: list[str] = []
    if result.records:  # a dry run validates the batch as the write would and writes nothing
        try:
            keys = commit(
                kb,
                result.records,
                update=update,
                on_diff=None if fmt == "json" else _diff,
                unchanged=unchanged,
                dry_run=dry_run,
                existing=existing,
            )
        except RecordInvalid as exc:  # the message names record and field; say which input the record came from
            raise RecordInvalid(f"{_inputs(files, arm_list)}: {exc}", exc.findings) from exc
        written = [] if dry_run else keys
    paths = {key: str(kb.root / kb.records[key].path) for key in written if key in kb.records}
    key_of = {f"{kb.profile.types[r['type']].dir}/{r['id']}": r for r in result.records if r.get("type") in kb.profile.types}
    built = count_by_type(result.records)
    agree = _agreement(kb, key_of, existing) if existing else None
    wrote = count_by_type(key_of[k] for k in written if k in key_of)
    if fmt == "json":
        emit_json(
            {
                "format": fmt_name,
                "dry_run": dry_run,
                "records": result.records,
                "built_by_type": built,
                "written": written,
                "written_by_type": wrote,
                "written_paths": [paths.get(k) for k in written],
                "model_ids": linked,
                "model_ids_unresolved": unlinked,
                "unchanged": unchanged,
                "exists_different": existing,
                "exists_different_agreement": agree.to_dict() if agree else None,
                "findings": [f.to_dict() for f in result.findings],
                "stats": result.stats,
            }
        )
        sys.exit(1 if fails(result.findings, fail_on) else 0)
    if dry_run:  # one line per record when they fit a screen; the records themselves are in --format json
        if show_records or len(result.records) <= LISTED:
            dirs = {name: spec.dir for name, spec in kb.profile.types.items()}
            for rec in result.records:
                click.echo(clean(_record_line(rec, dirs)))
        else:
            click.echo(f"{len(result.records):,} records not listed (--show-records lists them, --format json prints them whole)")
    from ..arms import delta_lines

    for rec in result.records:
        if rec.get("arms") and rec.get("baseline_arm"):
            for line in delta_lines(rec):
                click.echo(clean(f"{rec['id']}: {line}"))
    for f in result.findings:
        click.echo(clean(f"{f.path or f.record or '-'}: {f.code} {f.rule}: {f.message}"), err=True)
    for line in _model_id_lines(result.records, preset):
        click.echo(clean(line))
    for note in unlinked:
        click.echo(clean(f"model_id: {note}"))
    for key in written:
        click.echo(clean(f"wrote {key}  {paths.get(key, '')}"))
    if existing:
        click.echo(
            clean(f"{len(existing)} records exist with different content: a write refuses them without --update (first: {existing[0]})")
        )
        for line in agree.lines():
            click.echo(clean(line))
    if dry_run:
        outcome = "wrote nothing (dry run)"
    else:
        outcome = f"wrote {describe(wrote)}" if written else "wrote nothing"
        if unchanged:
            same = count_by_type(key_of[k] for k in unchanged if k in key_of)
            outcome += f", {describe(same)} unchanged (already in the KB)"
    click.echo(f"{fmt_name}: built {describe(built)}; {outcome}")
    if result.stats:
        click.echo(clean("stats: " + json.dumps(result.stats, ensure_ascii=False, default=str)))
    sys.exit(1 if fails(result.findings, fail_on) else 0)


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
