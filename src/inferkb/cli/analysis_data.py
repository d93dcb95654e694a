"""CLI commands sql and export (plugins of the ``commands`` point): thin wrappers over :mod:`inferkb.export`."""

from __future__ import annotations

import click

from .analysis import _Echo, _emit_rows, _fmt_num, _table, format_option
from .common import command, emit_json, kb_option, open_kb

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
