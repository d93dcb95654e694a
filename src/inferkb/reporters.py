"""Render a :class:`~inferkb.report.Report` as text, JSON or GitHub annotations.

All reporters share one interface: ``render(report, console)`` (``console``
is a rich Console or anything with a ``file`` attribute). A reporter is
registered with :func:`reporter` and becomes a ``--format`` choice of
``validate``, ``audit`` and ``check``; another package uses the
``inferkb.reporters`` entry-point group.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import plugins
from .findings import Finding
from .report import Report

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def reporter(name: str):
    """Decorator registering ``render(report, console)`` as the ``--format`` ``name``."""
    return plugins.decorator(plugins.REPORTERS, name)


@reporter("json")
def render_json(report: Report, console: Console) -> None:
    """The DESIGN.md document, streamed: one finding per line, so a huge report never exists as one string."""
    out = console.file
    report.findings.sort(key=Finding.sort_key)
    out.write("{\n")
    out.write(f'  "kb": {json.dumps(report.kb, ensure_ascii=False)},\n  "records": {report.records},\n  "findings": [')
    last = len(report.findings) - 1
    for i, f in enumerate(report.findings):
        out.write("\n    " + json.dumps(f.to_dict(), ensure_ascii=False, default=str) + ("," if i < last else "\n  "))
    summary = json.dumps(report.summary(), indent=2, ensure_ascii=False, default=str).replace("\n", "\n  ")
    out.write(f'],\n  "summary": {summary}\n}}\n')


def _gh_escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


@reporter("github")
def render_github(report: Report, console: Console) -> None:
    """GitHub Actions workflow commands: ``::error file=PATH,title=CODE::message``."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for f in sorted(report.findings, key=Finding.sort_key):
        loc = f"file={f.path}," if f.path else ""
        console.file.write(f"::{level[f.severity]} {loc}title={f.code} {f.rule}::{_gh_escape(f.message)}\n")


def finding_line(f: Finding) -> str:
    """``path: CODE slug: message`` — the one-line form every text reporter prints."""
    where = f.path or f.record or "(kb)"
    return f"{where}: {f.code} {f.rule}: {f.message}"


def cap_per_code(findings: list[Finding], limit: int | None) -> tuple[list[Finding], dict[str, int]]:
    """The first ``limit`` findings of each code (all when ``None``), in the given order, and the count per code."""
    kept: list[Finding] = []
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.code] = counts.get(f.code, 0) + 1
        if limit is None or counts[f.code] <= limit:
            kept.append(f)
    return kept, counts


@reporter("text")
def render_text(report: Report, console: Console, *, max_per_code: int | None = None, title: str = "summary") -> None:
    """One line per finding (``path: CODE slug: message``), then a summary table by code."""
    kept, counts = cap_per_code(sorted(report.findings, key=Finding.sort_key), max_per_code)
    for f in kept:
        console.print(finding_line(f), style=_STYLE[f.severity], markup=False, highlight=False, soft_wrap=True)
    if len(kept) < sum(counts.values()):
        console.print(f"... {sum(counts.values()) - len(kept)} more findings not shown (use --format json, or --select CODE)", style="dim")
    render_summary(report, console, title=title)


def render_summary(report: Report, console: Console, *, title: str = "summary") -> None:
    """A table of finding counts by code, the severity totals and the report's notes."""
    from rich.table import Table

    from .rules import RULES

    summary = report.summary()
    table = Table(title=f"{title}: {report.records} records in {report.kb}", title_justify="left")
    table.add_column("code")
    table.add_column("rule")
    table.add_column("severity")
    table.add_column("count", justify="right")
    for code, count in summary["by_code"].items():
        rule = RULES.get(code)
        sev = rule.severity if rule else "?"
        table.add_row(code, rule.slug if rule else "?", sev, str(count), style=_STYLE.get(sev))
    if summary["by_code"]:
        console.print(table)
    sev = summary["by_severity"]
    console.print(f"{sev['error']} errors, {sev['warning']} warnings, {sev['info']} info", style="bold")
    for note in report.notes:
        console.print(f"note: {note}", style="dim")


def render_stages(report: Report, console: Console) -> None:
    """A table of findings per stage (validate, then each audit) and severity: the check summary."""
    from rich.table import Table

    from .rules import RULES

    counts: dict[str, dict[str, int]] = {}
    for f in report.findings:
        rule = RULES.get(f.code)
        stage = rule.family if rule else "other"
        row = counts.setdefault(stage, {"error": 0, "warning": 0, "info": 0})
        row[f.severity] += 1
    stages = ["validate"] + [k for k in report.figures if k != "validate"]
    table = Table(title="check: findings by stage", title_justify="left")
    for col in ("stage", "errors", "warnings", "info"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for stage in stages + sorted(set(counts) - set(stages)):
        row = counts.get(stage, {"error": 0, "warning": 0, "info": 0})
        style = "bold red" if row["error"] else ("yellow" if row["warning"] else None)
        table.add_row(stage, str(row["error"]), str(row["warning"]), str(row["info"]), style=style)
    console.print(table)


def render_figures(figures: dict[str, Any], console: Console) -> None:
    """Print each audit's headline figures as ``name: key=value`` lines (nested values summarised)."""
    for name, figs in figures.items():
        if not isinstance(figs, dict):
            continue
        parts = []
        for k, v in figs.items():
            if isinstance(v, (int, float, str)) or v is None:
                parts.append(f"{k}={v}")
            elif isinstance(v, dict) and all(isinstance(x, (int, float)) for x in v.values()) and len(v) <= 8:
                parts.append(f"{k}=" + ",".join(f"{a}:{b}" for a, b in v.items()))
            elif isinstance(v, dict):
                # one level down: the headline scalars of a nested figure (e.g. figure_weighted.share_a_or_c)
                parts.extend(f"{k}.{a}={b}" for a, b in v.items() if isinstance(b, (int, float, str)))
            elif isinstance(v, list):
                parts.append(f"{k}: {len(v)} listed (see --format json)")
        console.print(f"[bold]{name}[/bold]: " + "  ".join(parts), highlight=False, soft_wrap=True)


# The reporters extension point's items: ``{format name: render}`` (text, json, github, then plugins).
REPORTERS = plugins.REPORTERS.items
