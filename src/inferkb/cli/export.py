"""The export commands: export-report (a benchmark record as an llm-d Benchmark Report, through the exporter registry)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import UsageError
from .common import command, open_kb


@command("export-report")
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
    from ..audit import run_audits
    from ..export import load_all
    from ..jsonio import atomic_write_text
    from ..reporters import finding_line

    if output is not None and output.is_dir():
        raise UsageError(f"-o {output}: is a directory; give a file path")
    kb = open_kb(kb_path)
    spec = load_all()["llmd-report"]
    doc = spec.func(kb, record_id, arm)
    for note in spec.omissions(kb, record_id, arm):
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
