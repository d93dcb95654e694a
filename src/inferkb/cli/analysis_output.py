"""Output helpers the analysis commands share (``compare``, ``cost``, ``roofline``, ``fit``, ``sql``, ``export``):
the ``--format`` option, numbers as text, rows as CSV (formula cells neutralised) or Markdown, and plain aligned text
tables printed with record text made safe.
"""

from __future__ import annotations

import csv
import sys
from typing import Any

import click

__all__ = ["ANALYSIS_FORMATS", "format_option"]

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
        from ..textsafe import clean  # record text is data: control characters shown as escapes

        click.echo(clean(obj.render() if isinstance(obj, _Plain) else obj, keep_newlines=True))
