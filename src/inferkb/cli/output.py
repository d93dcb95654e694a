"""How the query commands print rows: a table on a terminal, plain tab-separated rows into a pipe, or JSON, JSON lines,
CSV or Markdown (``--format``).

Record text is data, never markup: every cell reaches rich as a ``Text`` object, and ids are never cut (the key
column is as wide as its longest key; a terminal too narrow for that gets plain rows instead).
"""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

import click

from ..textsafe import clean

ROW_FORMATS = click.Choice(["text", "json", "jsonl", "csv", "markdown"])
KEY_COLUMNS = ("key", "id", "path")


def cell(value: Any, *, exact: bool = False) -> str:
    """One value as table text: lists joined with ``", "``, objects as compact JSON, ``None`` as empty.

    A float is shown to 6 significant digits for reading (``403.581``), or with ``exact`` as the shortest text
    that reads back as the same float (``403.5809313421254``): CSV and rows piped to another program carry the
    stored value, not a rounded one.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if exact or (abs(value) < 1e-4 and value != 0) else f"{value:g}"
    if isinstance(value, list):
        return ", ".join(cell(v, exact=exact) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _plain(text: str) -> str:
    """One line of text: tabs and line breaks become spaces, terminal control characters visible escapes."""
    return clean(" ".join(text.replace("\t", " ").splitlines()))


def is_terminal() -> bool:
    """True when stdout is a terminal (then text output is a table)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def emit_rows(rows: list[dict[str, Any]], columns: list[str], fmt: str, *, title: str = "", notes: list[str] = ()) -> None:
    """Print ``rows`` (dicts holding every name in ``columns``) in ``fmt``; ``title`` and ``notes`` go to a table's
    caption on a terminal and to stderr otherwise (so a pipe receives rows only)."""
    out = sys.stdout
    if fmt == "json":
        out.write(json.dumps(list(rows), indent=2, ensure_ascii=False, default=str) + "\n")
    elif fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([cell(row.get(c), exact=True) for c in columns])
    elif fmt == "markdown":
        esc = lambda s: _plain(s).replace("\\", "\\\\").replace("|", "\\|")  # noqa: E731
        out.write("| " + " | ".join(esc(c) for c in columns) + " |\n")
        out.write("|" + "|".join("---" for _ in columns) + "|\n")
        for row in rows:
            out.write("| " + " | ".join(esc(cell(row.get(c))) for c in columns) + " |\n")
    elif is_terminal() and _table(rows, columns, title, notes):
        return
    else:
        out.write("\t".join(columns) + "\n")
        for row in rows:
            out.write("\t".join(_plain(cell(row.get(c), exact=True)) for c in columns) + "\n")
    for line in ([title] if title and fmt == "text" else []) + list(notes):
        click.echo(clean(line), err=True)


def _table(rows: list[dict[str, Any]], columns: list[str], title: str, notes: list[str]) -> bool:
    """A rich table on the terminal; ``False`` (nothing printed) when the terminal cannot show every id whole."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=False)
    texts = [[clean(cell(r.get(c)), keep_newlines=True) for c in columns] for r in rows]
    ids = [i for i, c in enumerate(columns) if c in KEY_COLUMNS]
    widths = {i: max([len(columns[i])] + [len(t[i]) for t in texts]) for i in ids}
    if sum(widths.values()) + 4 * len(columns) + 12 * (len(columns) - len(ids)) > console.width:
        return False
    caption = Text(clean("\n".join(notes), keep_newlines=True)) if notes else None
    table = Table(title=Text(clean(title)) if title else None, title_justify="left", caption=caption, caption_justify="left")
    for i, name in enumerate(columns):
        if i in ids:
            table.add_column(Text(name), no_wrap=True, min_width=widths[i])
        else:
            table.add_column(Text(name), overflow="fold", justify="right" if name in ("score", "value") else "left")
    for t in texts:
        table.add_row(*(Text(v) for v in t))
    console.print(table)
    return True
