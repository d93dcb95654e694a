"""Render a :class:`~inferkb.report.Report` as text, JSON or GitHub annotations.

All reporters share one interface: ``render(report, console)`` (``console``
is a rich Console or anything with a ``file`` attribute). A reporter is
registered with :func:`reporter` and becomes a ``--format`` choice of
``validate``, ``audit`` and ``check``; another package uses the
``inferkb.reporters`` entry-point group.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from . import plugins
from .findings import Finding
from .report import Report
from .textsafe import clean, markup_escape, rich_text

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def reporter(name: str):
    """Decorator registering ``render(report, console)`` as the ``--format`` ``name``."""
    return plugins.decorator(plugins.REPORTERS, name)


@reporter("json")
def render_json(report: Report, console: Console) -> None:
    """The DESIGN.md document, streamed: one finding per line, so a huge report never exists as one string.

    Each finding is serialised by orjson (UTF-8, unescaped; about ten times
    faster than the stdlib for the tens of thousands of findings of a large
    KB); a value orjson refuses (an integer beyond 64 bits) falls back to the
    stdlib encoder, which gives the same JSON.
    """
    out = console.file
    report.findings.sort(key=Finding.sort_key)
    out.write("{\n")
    out.write(f'  "kb": {json.dumps(report.kb, ensure_ascii=False)},\n  "records": {report.records},\n  "findings": [')
    last = len(report.findings) - 1
    for i, f in enumerate(report.findings):
        out.write("\n    " + _one_line(f.to_dict()) + ("," if i < last else "\n  "))
    summary = json.dumps(report.summary(), indent=2, ensure_ascii=False, default=str).replace("\n", "\n  ")
    out.write(f'],\n  "summary": {summary}\n}}\n')


def _one_line(value: Any) -> str:
    """``value`` as one line of compact JSON, non-ASCII unescaped (orjson; the stdlib for what orjson refuses)."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError (a TypeError): e.g. an integer beyond 64 bits
        return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _gh_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped (so no text can end the line and start a command)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """A workflow command's property value: the message escapes plus ``:`` and ``,`` (which end a property)."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def repository_root(kb_root: Path) -> Path | None:
    """The folder GitHub annotation paths are relative to: ``$GITHUB_WORKSPACE`` when the KB is inside it, else the
    nearest folder above the KB holding ``.git`` (a repository or a worktree), else the working directory when the KB is
    inside it; ``None`` otherwise."""
    kb_root = kb_root.resolve()
    candidates = []
    if os.environ.get("GITHUB_WORKSPACE"):
        candidates.append(Path(os.environ["GITHUB_WORKSPACE"]).resolve())
    candidates += [d for d in (kb_root, *kb_root.parents) if (d / ".git").exists()][:1]
    candidates.append(Path.cwd().resolve())
    for base in candidates:
        if kb_root == base or base in kb_root.parents:
            return base
    return None


@reporter("github")
def render_github(report: Report, console: Console) -> None:
    """GitHub Actions workflow commands, ``::error file=PATH,line=N,title=CODE slug::message``.

    ``PATH`` is relative to the repository root (:func:`repository_root`), ``line`` is where the finding's field sits in
    the file (:mod:`inferkb.jsonpos`; left out when unknown). Info findings are annotated only when
    ``console.include_info`` is true (the CLI sets it for ``--fail-on info`` or an explicit ``--select``); otherwise one
    notice says how many were left out.

    Escaped per GitHub's workflow-command rules (actions/toolkit ``command.ts``): in the message ``%`` -> ``%25``,
    CR -> ``%0D``, LF -> ``%0A``; in property values also ``:`` -> ``%3A`` and ``,`` -> ``%2C``. A file name or record
    text therefore cannot start a command of its own (``::stop-commands::``). Other control characters are shown as
    visible escapes first (:func:`inferkb.textsafe.clean`).
    """
    from .jsonpos import field_line, field_lines

    level = {"error": "error", "warning": "warning", "info": "notice"}
    include_info = bool(getattr(console, "include_info", False))
    kb_root = Path(report.kb)
    base = repository_root(kb_root)
    lines_of: dict[str, dict] = {}
    skipped = 0
    for f in sorted(report.findings, key=Finding.sort_key):
        if f.severity == "info" and not include_info:
            skipped += 1
            continue
        props = []
        if f.path:
            full = kb_root / f.path
            shown = os.path.relpath(full, base) if base is not None else str(full)
            props.append(f"file={_gh_property(clean(Path(shown).as_posix()))}")
            if f.field and full.is_file() and f.path.endswith(".json"):
                if f.path not in lines_of:
                    try:
                        lines_of[f.path] = field_lines(full.read_text(encoding="utf-8"))
                    except (OSError, UnicodeDecodeError):
                        lines_of[f.path] = {}
                line = field_line(lines_of[f.path], f.field)
                if line is not None:
                    props.append(f"line={line}")
        props.append(f"title={_gh_property(clean(f'{f.code} {f.rule}'))}")
        console.file.write(f"::{level[f.severity]} {','.join(props)}::{_gh_data(clean(f.message, keep_newlines=True))}\n")
    if skipped:
        console.file.write(
            f"::notice title=inferkb::{skipped} info findings not annotated (--fail-on info or --select CODE annotates them)\n"
        )


def finding_line(f: Finding) -> str:
    """``path: CODE slug: message`` — the one-line form every text reporter prints (control characters made visible)."""
    where = f.path or f.record or "(kb)"
    return clean(f"{where}: {f.code} {f.rule}: {f.message}")


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
    from rich.text import Text

    table = Table(title=Text(f"{title}: {report.records} records in {report.kb}"), title_justify="left")
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
        console.print(rich_text(f"note: {note}", style="dim"))


def render_stages(report: Report, console: Console, *, title: str = "check") -> None:
    """A table of findings per stage that ran (validate when it did, then each audit) and severity."""
    from rich.table import Table

    from .rules import RULES

    counts: dict[str, dict[str, int]] = {}
    for f in report.findings:
        rule = RULES.get(f.code)
        stage = rule.family if rule else "other"
        row = counts.setdefault(stage, {"error": 0, "warning": 0, "info": 0})
        row[f.severity] += 1
    stages = list(report.figures)
    table = Table(title=f"{title}: findings by stage", title_justify="left")
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
        console.print(f"[bold]{markup_escape(name)}[/bold]: " + markup_escape("  ".join(parts)), highlight=False, soft_wrap=True)


# The reporters extension point's items: ``{format name: render}`` (text, json, github, then plugins).
REPORTERS = plugins.REPORTERS.items
