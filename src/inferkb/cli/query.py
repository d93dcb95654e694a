"""The query commands: list, show, search, where, refs, stats, gaps (thin layers over :mod:`inferkb.query`)."""

from __future__ import annotations

import json

import click

from .common import FORMATS, Table, command, console, emit_json, kb_option, open_kb


@command("list")
@click.argument("type_name", metavar="TYPE")
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def list_cmd(type_name, kb_path, fmt) -> None:
    """List the records of one TYPE (accelerator, benchmark, source, ...).

    \b
    Example: inferkb list accelerator
    """
    from ..query import list_records

    rows = list_records(open_kb(kb_path), type_name)
    if fmt == "json":
        emit_json(rows)
        return
    table = Table("id", "name", "status", "confidence", "updated", title=f"{len(rows)} {type_name} records", title_justify="left")
    for r in rows:
        table.add_row(
            r["id"],
            str(r["name"] or ""),
            str(r["status"] or ""),
            str(r["confidence"] if r["confidence"] is not None else ""),
            str(r["updated"] or ""),
        )
    console().print(table)


@command()
@click.argument("record_id", metavar="ID")
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def show(record_id, kb_path, fmt) -> None:
    """Show one record by bare id or dir/id; suggests near matches when absent.

    \b
    Examples:
      inferkb show nvidia-h100-sxm
      inferkb show benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b --format json
    """
    kb = open_kb(kb_path)
    rec = kb.get(record_id)
    if fmt == "json":
        emit_json(rec.data)
        return
    # Plain text, never cropped: long prose and quotes are the evidence a reader came for.
    click.echo(f"# {rec.key}  ({rec.path})")
    click.echo(json.dumps(rec.data, indent=2, ensure_ascii=False))
    if rec.type == "benchmark" and rec.data.get("arms"):
        from ..arms import delta_lines

        for line in delta_lines(rec.data):
            click.echo(f"# {line}")


@command()
@click.argument("text", nargs=-1, required=True)
@kb_option
@click.option("--type", "type_name", metavar="TYPE", help="Only records of this type.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def search(text, kb_path, type_name, limit, fmt) -> None:
    """Full-text search across every field, ranked (BM25; id and name weigh most).

    \b
    Examples:
      inferkb search h100 hbm3
      inferkb search speculative decoding --type benchmark
    """
    from ..query import search as do_search

    rows = do_search(open_kb(kb_path), " ".join(text), limit=limit, type_name=type_name)
    if fmt == "json":
        emit_json(rows)
        return
    table = Table("key", "score", "match", title=f"{len(rows)} results", title_justify="left")
    for r in rows:
        table.add_row(r["key"], f"{r['score']:.2f}", r["snippet"])
    console().print(table)


@command()
@click.argument("condition", nargs=-1, required=True)
@kb_option
@click.option("--type", "type_name", metavar="TYPE", help="Only records of this type.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def where(condition, kb_path, type_name, fmt) -> None:
    """Records where FIELD OP VALUE holds (dotted paths; OP one of = != < > <= >= ~).

    A list matches when any element does. Quote the condition for the shell.

    \b
    Examples:
      inferkb where metric = e2e_latency_ms
      inferkb where 'conditions.tensor_parallel > 1'
      inferkb where 'accelerator_ids = nvidia-h100-sxm'
      inferkb where 'arms.stats.p99 >= 1600'
      inferkb where 'name ~ mlperf' --type benchmark
    """
    from ..query import parse_condition
    from ..query import where as do_where

    field, op, value = parse_condition(list(condition))
    rows = do_where(open_kb(kb_path), field, op, value, type_name=type_name)
    if fmt == "json":
        emit_json(rows)
        return
    columns = ["key", "name"] + ([] if field == "name" else [field])
    table = Table(*columns, title=f"{len(rows)} records where {field} {op} {value}", title_justify="left")
    for r in rows:
        cells = [r["key"], str(r["name"] or "")] + ([] if field == "name" else [", ".join(map(str, r["values"]))])
        table.add_row(*cells)
    console().print(table)


@command()
@click.argument("record_id", metavar="ID")
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def refs(record_id, kb_path, fmt) -> None:
    """What a record cites, and what cites it.

    \b
    Example: inferkb refs nvidia-h100-sxm
    """
    from ..query import refs as do_refs

    data = do_refs(open_kb(kb_path), record_id)
    if fmt == "json":
        emit_json(data)
        return
    out = console()
    out.print(f"[bold]{data['key']}[/bold] cites {len(data['cites'])}:")
    for c in data["cites"]:
        out.print(f"  {c['field']:24} {c['key'] or c['id']}{'' if c['resolved'] else '  (UNRESOLVED)'}", markup=False)
    out.print(f"[bold]cited by {len(data['cited_by'])}:[/bold]")
    for c in data["cited_by"]:
        out.print(f"  {c['key']}  (via {c['field']})", markup=False)


@command()
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def stats(kb_path, fmt) -> None:
    """Counts by type and status, mean confidence, and benchmark records per origin (data set)."""
    from ..query import stats as do_stats

    data = do_stats(open_kb(kb_path))
    if fmt == "json":
        emit_json(data)
        return
    table = Table("type", "records", "by status", "mean confidence", title=f"{data['records']} records", title_justify="left")
    for name, t in data["types"].items():
        table.add_row(
            name,
            str(t["count"]),
            ", ".join(f"{k} {v}" for k, v in sorted(t["by_status"].items())),
            "" if t["mean_confidence"] is None else f"{t['mean_confidence']:.2f}",
        )
    out = console()
    out.print(table)
    if data["benchmark_origins"]:
        origins = Table("origin", "benchmark records", title="benchmark records per origin", title_justify="left")
        for origin, n in data["benchmark_origins"].items():
            origins.add_row(origin, str(n))
        out.print(origins)


@command()
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def gaps(kb_path, fmt) -> None:
    """Types with no records, and schema fields that no record fills."""
    from ..query import gaps as do_gaps

    data = do_gaps(open_kb(kb_path))
    if fmt == "json":
        emit_json(data)
        return
    out = console()
    out.print(f"[bold]types with no records:[/bold] {', '.join(data['empty_types']) or 'none'}")
    for t, fields in data["unfilled_fields"].items():
        out.print(f"[bold]{t}[/bold]: no record fills {', '.join(fields)}", highlight=False)
