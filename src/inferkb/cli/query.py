"""The query commands: list, show, search, where, refs, stats, gaps (thin layers over :mod:`inferkb.query`)."""

from __future__ import annotations

import click

from ..textsafe import clean, markup_escape
from .common import FORMATS, command, console, emit_json, kb_option, open_kb
from .output import ROW_FORMATS, emit_rows


def table_options(default_limit: int | None):
    """The options every row-listing command shares: --fields, --sort, --limit, --first-per, --format."""

    def deco(func):
        for opt in reversed(
            [
                click.option("--fields", metavar="A,B.C", help="Columns: dotted field paths, comma-separated (also key, type, path)."),
                click.option("--sort", metavar="FIELD[:desc]", help="Sort by a field (missing values last); several: a,b:desc."),
                click.option(
                    "--limit",
                    type=click.IntRange(min=1),
                    default=default_limit,
                    show_default=default_limit is not None,
                    help="At most N rows (after sorting).",
                ),
                click.option("--first-per", metavar="FIELD", help="Keep only the first row (after --sort) for each value of FIELD."),
                click.option("--format", "fmt", type=ROW_FORMATS, default="text", show_default=True),
            ]
        ):
            func = opt(func)
        return func

    return deco


def count_title(rows, what: str, first_per: str | None) -> str:
    """'26 of 281 records where ... (first per accelerator_ids)' when --first-per or --limit cut the matches, else '281 ...'."""
    if rows.matched is None or rows.matched == len(rows):
        return f"{len(rows)} {what}"
    return f"{len(rows)} of {rows.matched:,} {what}" + (f" (first per {first_per})" if first_per else "")


@command("list")
@click.argument("type_name", metavar="TYPE")
@kb_option
@table_options(None)
def list_cmd(type_name, kb_path, fields, sort, limit, first_per, fmt) -> None:
    """List the records of one TYPE (accelerator, benchmark, source, ...), sorted by id.

    Text output is a table on a terminal and tab-separated rows (header first) in a pipe.

    \b
    Examples:
      inferkb list accelerator
      inferkb list accelerator --fields id,memory_bandwidth_gbps,tdp_w --sort memory_bandwidth_gbps:desc --limit 5
      inferkb list model --format csv > models.csv
    """
    from ..query import list_records

    rows = list_records(kb_path, type_name, fields=fields, sort=sort, limit=limit, first_per=first_per)
    emit_rows(rows, rows.columns, fmt, title=count_title(rows, f"{type_name} records", first_per), notes=rows.notes)


@command()
@click.argument("record_id", metavar="ID")
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--audits", is_flag=True, help="Also run every audit over the KB and list this record's findings (slow).")
def show(record_id, kb_path, fmt, audits) -> None:
    """Show one record: a readable summary, or --format json for the record and what is computed from it.

    ID is a bare id, dir/id, the data/<dir>/<id>.json path that `check` prints, an exact
    name or alias ("NVIDIA H100 80GB HBM3"), in any letter case. A text that names several
    records lists them as candidates (exit 2).

    \b
    Examples:
      inferkb show nvidia-h100-sxm
      inferkb show "NVIDIA H100 80GB HBM3"
      inferkb show data/benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.json
      inferkb show vllm-mtp-regression-qwen3-next-80b-a3b --format json | jq .computed
    """
    from ..record_view import find_record, record_document, summary_lines

    kb = open_kb(kb_path)
    rec = find_record(kb, record_id)
    if fmt == "json":
        emit_json(record_document(kb, rec, audits=audits))
        return
    for line in summary_lines(kb, rec, audits=audits):
        click.echo(clean(line))


@command()
@click.argument("text", nargs=-1, required=True)
@kb_option
@click.option("--type", "type_name", metavar="TYPE", help="Only records of this type.")
@table_options(20)
def search(text, kb_path, type_name, fields, sort, limit, first_per, fmt) -> None:
    """Full-text search across every field, ranked in tiers, BM25 within a tier (id and name weigh most).

    Every word must occur; a hyphenated name is found whole and in part (gpt-oss-120b, oss-120b,
    120b); a number matches as written (3.1 is not 3.10, 70B not 7B). Tiers (the tier column):
    1 the id, name or an alias is the text (any case, spacing, hyphens, dots); 2 a name holds the
    text as a phrase (closest name first); 3 any field holds the phrase; 4 every word occurs.
    When no record is named the text, a note says so. Matched words appear in [brackets] in the
    match column.

    \b
    Examples:
      inferkb search gpt-oss-120b
      inferkb search "NVIDIA H100 80GB HBM3"
      inferkb search "Llama 3.1 70B" --fields key,name,tier
      inferkb search speculative decoding --type benchmark
      inferkb search llama2-70b --type benchmark --fields key,metric,value,unit --sort value:desc --limit 10
    """
    from ..query import search as do_search

    words = " ".join(text)
    rows = do_search(kb_path, words, limit=limit, type_name=type_name, fields=fields, sort=sort, first_per=first_per)
    columns = rows.columns if fields else ["key", *rows.columns]
    emit_rows(rows, columns, fmt, title=f"{len(rows)} results for {words!r}", notes=rows.notes)


@command()
@click.argument("condition", nargs=-1, required=True)
@kb_option
@click.option("--type", "type_name", metavar="TYPE", help="Only records of this type.")
@table_options(None)
def where(condition, kb_path, type_name, fields, sort, limit, first_per, fmt) -> None:
    """Records where every CONDITION holds (AND).

    A condition is FIELD OP VALUE with OP one of = == != < > <= >= ~ (substring, any case),
    FIELD in A,B,C, FIELD is null, FIELD is not null. FIELD is a dotted path; a list matches when
    any element does; a numeric segment indexes (arms.0.id). Give each condition as one quoted
    word, or as separate words; quote values with spaces. Anything unreadable is an error.

    \b
    Examples:
      inferkb where metric = e2e_latency_ms
      inferkb where 'conditions.tensor_parallel > 1' 'accelerator_ids = nvidia-h100-sxm'
      inferkb where 'model_id in llama-2-70b,gpt-oss-120b' 'format_id is null' --type benchmark
      inferkb where 'name ~ mlperf' --type benchmark --fields key,metric,value --format csv
      inferkb where 'model_id = llama-2-70b' 'scenario = offline' 'submission.division = closed' 'metric = output_tok_s' \
          --fields accelerator_ids,per_accelerator.value,accelerator_count,key --sort per_accelerator.value:desc \
          --first-per accelerator_ids
    """
    from ..query import parse_conditions
    from ..query import where as do_where

    conds = parse_conditions(condition)
    rows = do_where(kb_path, *conds, type_name=type_name, fields=fields, sort=sort, limit=limit, first_per=first_per)
    columns = rows.columns if fields else ["key", *rows.columns]
    title = count_title(rows, f"records where {' and '.join(map(str, conds))}", first_per)
    emit_rows(rows, columns, fmt, title=title, notes=rows.notes)


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
    out.print(f"[bold]{markup_escape(data['key'])}[/bold] cites {len(data['cites'])}:")
    for c in data["cites"]:
        out.print(clean(f"  {c['field']:24} {c['key'] or c['id']}{'' if c['resolved'] else '  (UNRESOLVED)'}"), markup=False)
    out.print(f"[bold]cited by {len(data['cited_by'])}:[/bold]")
    for c in data["cited_by"]:
        out.print(clean(f"  {c['key']}  (via {c['field']})"), markup=False)


@command()
@kb_option
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def stats(kb_path, fmt) -> None:
    """Counts by type and status, mean confidence, and benchmark records per origin (data set) and per round
    and division for the records that state a round (MLPerf)."""
    from ..query import stats as do_stats

    data = do_stats(open_kb(kb_path))
    if fmt == "json":
        emit_json(data)
        return
    rows = [
        {
            "type": name,
            "records": t["count"],
            "by status": ", ".join(f"{k} {v}" for k, v in sorted(t["by_status"].items())),
            "mean confidence": None if t["mean_confidence"] is None else round(t["mean_confidence"], 2),
        }
        for name, t in data["types"].items()
    ]
    emit_rows(rows, ["type", "records", "by status", "mean confidence"], "text", title=f"{data['records']} records")
    if data["benchmark_origins"]:
        origins = [{"origin": origin, "benchmark records": n} for origin, n in data["benchmark_origins"].items()]
        click.echo("")
        emit_rows(origins, ["origin", "benchmark records"], "text", title="benchmark records per origin")
    rounds = [
        {"origin": origin, "round": rnd, "division": division, "benchmark records": n}
        for origin, by_round in data.get("benchmark_rounds", {}).items()
        for rnd, divisions in by_round.items()
        for division, n in divisions.items()
    ]
    if rounds:
        click.echo("")
        emit_rows(rounds, ["origin", "round", "division", "benchmark records"], "text", title="benchmark records per round")


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
    out.print(f"[bold]types with no records:[/bold] {markup_escape(', '.join(data['empty_types']) or 'none')}")
    for t, fields in data["unfilled_fields"].items():
        out.print(f"[bold]{markup_escape(t)}[/bold]: no record fills {markup_escape(', '.join(fields))}", highlight=False)
