"""CLI commands that write or import: intake, env, derive, export-report.

Kept apart from :mod:`inferkb.cli` (the read-only commands) so each module
stays small; both are thin layers over the Python API.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import click

from .cli import _emit_json
from .errors import InputError, UsageError


def _load_env(path: str | None) -> dict | None:
    if not path:
        return None
    from .jsonio import parse_bytes

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


def init_kb(dest: Path, *, with_data: bool = False) -> Path:
    """Create a new KB at ``dest`` from the bundled one: kb.toml, schemas/, metric registry, empty type dirs.

    ``with_data`` also copies every bundled record. Refuses (UsageError) when
    ``dest`` exists and is not an empty directory; builds in a temp directory
    beside ``dest`` and renames it into place, so a failure leaves nothing.
    """
    import shutil
    import tempfile

    from .store import bundled_root

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty directory")
    src = bundled_root()
    parent = dest.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    try:
        shutil.copy2(src / "kb.toml", tmp / "kb.toml")
        shutil.copytree(src / "schemas", tmp / "schemas")
        for extra in src.glob("*.json"):
            shutil.copy2(extra, tmp / extra.name)
        if with_data:
            shutil.copytree(src / "data", tmp / "data")
        else:
            for sub in (src / "data").iterdir():
                if sub.is_dir():
                    (tmp / "data" / sub.name).mkdir(parents=True)
        if dest.exists():
            dest.rmdir()
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def register_extra(cli: click.Group) -> None:
    """Attach the writing/import commands to the CLI group."""

    @cli.command()
    @click.argument("path", type=click.Path(path_type=Path))
    @click.option("--with-data", is_flag=True, help="Also copy the bundled records (a writable copy of the bundled KB).")
    def init(path, with_data) -> None:
        """Create a new KB at PATH with inferkb's kb.toml, schemas and metric registry.

        \b
        Examples:
          inferkb init ./my-kb                 # empty KB, bundled schemas
          inferkb init ./kb-copy --with-data   # writable copy of the bundled KB
        """
        dest = init_kb(path, with_data=with_data)
        click.echo(f"created KB at {dest}; add records with: inferkb new TYPE --name ... --kb {dest}")

    @cli.command()
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
        from . import open as open_kb
        from .intake import IntakeOptions, load_all
        from .intake.base import commit

        registry = load_all()
        if fmt_name == "list":
            if fmt == "json":
                _emit_json([{"name": i.name, "description": i.description} for i in registry.values()])
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
            _emit_json(
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
        from .arms import delta_lines

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

    @cli.command()
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    def env(fmt) -> None:
        """Capture the local environment (GPU tool output, driver, CUDA/ROCm, engine versions, Python, CPU, OS).

        \b
        Example: inferkb env --format json > env.json; inferkb intake ... --env env.json
        """
        from .intake.envinfo import capture_env

        data = capture_env()
        if fmt == "json":
            _emit_json(data)
            return
        for k, v in data.items():
            if isinstance(v, dict):
                v = ", ".join(f"{a}={b}" for a, b in v.items())
            click.echo(f"{k:16} {v if v is not None else '(not found)'}")

    @cli.command()
    @click.argument("name")
    @click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
    @click.option("--write", is_flag=True, help="Write the changes (default: dry run, print the diff).")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    def derive(name, kb_path, write, fmt) -> None:
        """Backfill fields that evidence proves, with provenance; dry-run diff by default.

        NAME is a derivation (`inferkb derive list` lists them).

        \b
        Examples:
          inferkb derive interconnect-ids
          inferkb derive format-id --kb ./my-kb --write
          inferkb derive accelerator-alternates --format json
        """
        from . import derive as derive_mod
        from . import open as open_kb
        from .reporters import cap_per_code, finding_line

        registry = derive_mod.load_all()
        if name == "list":
            if fmt == "json":
                _emit_json([{"name": d.name, "description": d.description, "fields": list(d.fields)} for d in registry.values()])
                return
            for spec in registry.values():
                click.echo(f"{spec.name:24} {spec.description}")
            return
        kb = open_kb(kb_path)
        try:
            result = derive_mod.run(kb, name, write=write)
        except derive_mod.DeriveRefused as exc:
            if fmt == "json":
                _emit_json(exc.result.to_dict())
            else:
                click.echo(exc.result.proof.to_text())
            raise
        if fmt == "json":
            _emit_json(result.to_dict())
            return
        if result.diff_text:
            click.echo(result.diff_text)
        kept, counts = cap_per_code(result.findings, 5)
        for f in kept:
            click.echo(finding_line(f), err=True)
        if len(kept) < len(result.findings):
            per_code = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
            click.echo(
                f"... {len(result.findings) - len(kept)} more findings not shown ({per_code}); --format json lists them all", err=True
            )
        click.echo(result.proof.to_text())
        if write:
            click.echo(f"{name}: wrote {len(result.changes)} values in {len(result.files)} files")
        else:
            click.echo(f"{name}: {len(result.changes)} values would change in {len(result.files)} files (dry run; --write to apply)")

    @cli.command("export-report")
    @click.argument("record_id", metavar="ID")
    @click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
    @click.option("--arm", help="Arm to export for a multi-arm record (default: its baseline arm).")
    @click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
    @click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to this file (atomically) instead of stdout.")
    def export_report(record_id, kb_path, arm, fmt, output) -> None:
        """Write a benchmark record as an llm-d Benchmark Report (v0.2).

        \b
        A multi-arm record is exported one arm at a time (--arm); what the
        document leaves out, and the record's metric/identity warnings, are
        printed on stderr.

        \b
        Examples:
          inferkb export-report vllm-mtp-regression-qwen3-next-80b-a3b --format json
          inferkb export-report vllm-mtp-regression-qwen3-next-80b-a3b --arm mtp-2 -o mtp.yaml
        """
        from . import open as open_kb
        from .audit import run_audits
        from .intake.llmd_report import export_omissions
        from .intake.llmd_report import export_report as do_export
        from .jsonio import atomic_write_text
        from .reporters import finding_line

        if output is not None and output.is_dir():
            raise UsageError(f"-o {output}: is a directory; give a file path")
        kb = open_kb(kb_path)
        doc = do_export(kb, record_id, arm)
        for note in export_omissions(kb, record_id, arm):
            click.echo(f"note: {note}", err=True)
        key = kb.get(record_id).key
        # A number travelling to another ecosystem should carry its known problems with it.
        for f in run_audits(kb, ["metric-consistency", "identity"]).findings:
            if f.record == key and f.severity in ("warning", "error"):
                click.echo(f"warning: {finding_line(f)}", err=True)
        if fmt == "json":
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        else:
            import yaml

            text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        if output:
            atomic_write_text(output, text)
            click.echo(f"wrote {output}")
        else:
            sys.stdout.write(text)
