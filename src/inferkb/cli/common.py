"""What every CLI command shares: options, output helpers, the exit-code rule and the ``@command`` decorator.

A command module does::

    import click

    from .common import FORMATS, command, emit_json, kb_option, open_kb

    @command("my-command")
    @kb_option
    @click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
    def my_command(kb_path, fmt) -> None:
        '''One line of what it does, then examples (every command has them).'''
        ...

and is named once in :data:`inferkb.plugins.BUILTINS` ``["commands"]`` (or,
from another package, in its ``inferkb.commands`` entry points).
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..errors import UsageError
from ..plugins import COMMANDS
from ..report import Report

FORMATS = click.Choice(["text", "json"])
SEVERITY = click.Choice(["error", "warning", "info"])


class ReporterChoice(click.Choice):
    """``--format`` of the checking commands: every registered reporter (text, json, github, then plugins').

    A built-in name is accepted without looking for plugins; another name, or
    the help text, loads the reporters of installed packages first.
    """

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self):  # noqa: D102 - click reads this for help and for error messages
        from ..plugins import REPORTERS

        return sorted(REPORTERS.load(), key=lambda n: n != "text")

    @choices.setter
    def choices(self, value) -> None:
        pass

    def convert(self, value, param, ctx):
        from ..plugins import REPORTERS

        if value in REPORTERS.load(entry_points=False):
            return value
        return super().convert(value, param, ctx)


def reporter_formats() -> click.Choice:
    """The ``--format`` type of ``validate``, ``audit`` and ``check`` (see :class:`ReporterChoice`)."""
    return ReporterChoice()


def command(name: str | None = None, **attrs: Any):
    """Decorator: make the function a click command and register it (the one way commands are added)."""

    def deco(func):
        cmd = click.command(name, **attrs)(func)
        COMMANDS.register(cmd.name, cmd, module=func.__module__)
        return cmd

    return deco


def group(name: str | None = None, **attrs: Any):
    """Decorator: like :func:`command` for a click group (a command with sub-commands)."""

    def deco(func):
        grp = click.group(name, **attrs)(func)
        COMMANDS.register(grp.name, grp, module=func.__module__)
        return grp

    return deco


def console():
    """A rich console for text output (rich is imported only here: ``--format json`` does not pay for it)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def Table(*columns, **kw):  # noqa: N802 - stands in for rich.table.Table, imported lazily
    """A ``rich.table.Table`` (imported on first use) whose cells and title are data, never markup.

    Every ``str`` cell, column header and the title go through
    :func:`inferkb.textsafe.rich_text`: record text such as ``[/INST]`` is
    shown as written and terminal control characters as visible escapes.
    Pass a ``rich.text.Text`` to style a cell on purpose.
    """
    from rich.table import Table as RichTable

    from ..textsafe import rich_text

    class SafeTable(RichTable):
        def add_row(self, *cells, **kwargs):  # noqa: D102 - rich.table.Table.add_row, with str cells made literal
            return super().add_row(*(rich_text(c) if isinstance(c, str) else c for c in cells), **kwargs)

    if isinstance(kw.get("title"), str):
        kw["title"] = rich_text(kw["title"])
    table = SafeTable(**kw)
    for col in columns:
        if isinstance(col, str):
            table.add_column(rich_text(col))
        else:
            table.columns.append(col)
    return table


class _Process:
    """``owned`` is True when :func:`inferkb.cli.main` runs as the process's entry point (set there)."""

    owned = False


process = _Process()

_KEPT: list = []
_KEPT.append(_KEPT)  # a cycle: after gc.freeze() nothing collects it, not even the collection at interpreter exit


def keep_to_exit(obj: object) -> None:
    """When the CLI owns the process, keep ``obj`` (a loaded KB) alive to the process's end and never free it.

    Call it inside :func:`loading`, whose end freezes the collector's objects: the process then exits without
    deallocating the records one by one (at 20,000 records about 0.05 s of a cold ``validate``); the operating
    system takes the memory back at once. Not done when the CLI runs inside another program. Raises nothing.
    """
    if process.owned:
        _KEPT.append(obj)


def open_kb(kb_path: str | None, *, write: bool = False, defer_save: bool = False):
    """``inferkb.open(kb_path)``: the bundled KB when ``None``.

    ``write``: the command is about to write; a batch a killed writer left half applied is rolled back first
    (:func:`inferkb.store.writer.recover_interrupted`) and the KB read again, so the command plans its write from
    the files as they are after the rollback. ``defer_save``: the load cache is written later, by
    :meth:`~inferkb.store.Store.save_load_cache` (see :meth:`~inferkb.store.Store.load`).
    """
    kb = _load_kb(kb_path, defer_save)
    if write:
        from ..store.writer import recover_interrupted

        if recover_interrupted(kb) is not None:
            kb = _load_kb(kb_path)
    return kb


def _load_kb(kb_path: str | None, defer_save: bool = False):
    from ..kb import KB

    with loading():
        return KB.load(kb_path, defer_save=defer_save)


@contextmanager
def loading() -> Iterator[None]:
    """Around a command's load of a KB: when the CLI is the process's entry point, keep the collector off during the
    block and freeze what it allocated at its end (:func:`gc.freeze`); otherwise do nothing."""
    if not process.owned:
        yield
        return
    # The command's process keeps the loaded records to its end: moving them to the collector's permanent
    # generation spares every later collection re-traversing millions of record objects (records hold no
    # reference cycles, so nothing collectable is kept; refcounting still frees them). The collector stays
    # off until they are frozen: re-enabled first, its next young-generation pass would traverse every object
    # the load made (about 0.1 s at 20,000 records). Not done when the CLI runs inside another program
    # (a test's CliRunner), whose later garbage it would keep.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


def all_rules() -> dict:
    """Every registered rule (loads every extension point that declares rules)."""
    from .. import rules

    return rules.all_rules()


def codes(values: tuple[str, ...]) -> list[str]:
    """Split --select/--ignore values; a code or prefix that matches no rule is a usage error (a typo must not switch checks off)."""
    out = [c.strip() for v in values for c in v.split(",") if c.strip()]
    if out:
        known = all_rules()
        for code in out:
            if not any(k.startswith(code.upper()) for k in known):
                raise UsageError(f"--select/--ignore {code!r} matches no rule code; `inferkb rules` lists them")
    return out


def emit_json(data: Any) -> None:
    """Print ``data`` as one indented JSON document on stdout (a lone surrogate is written as its ``\\udXXX`` escape)."""
    from ..textsafe import json_safe_bytes

    text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(json_safe_bytes(text))
    buffer.flush()


kb_option = click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
select_option = click.option(
    "--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated, e.g. KB1,KB201)."
)
ignore_option = click.option("--ignore", multiple=True, metavar="CODES", help="Drop these codes or prefixes.")
jobs_option = click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Worker processes for the audits on a large KB (default: one per idle CPU by the load average, at most 4; env INFERKB_JOBS).",
)
fail_option = click.option(
    "--fail-on", type=SEVERITY, default="error", show_default=True, help="Exit 1 when a finding at or above this severity remains."
)


def wants_json(argv: list[str]) -> bool:
    """True when the command line asks for ``--format json`` (``--format json`` or ``--format=json``, before any ``--``)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--format=json" or (arg == "--format" and i + 1 < len(argv) and argv[i + 1] == "json"):
            return True
    return False


# The ``error`` slug of the JSON error object, per exception class name (most specific first); anything else is "error".
_ERROR_KINDS = {
    "KBNotFound": "kb-not-found",
    "UsageError": "usage",
    "InputError": "input",
    "RecordExists": "record-exists",
    "RecordInvalid": "record-invalid",
    "DeriveRefused": "derive-refused",
    "WriteConflict": "write-conflict",
    "WriteFailed": "write-failed",
    "JournalRefused": "journal-refused",
    "BadParameter": "usage",
    "NoSuchOption": "usage",
    "MissingParameter": "usage",
    "BadOptionUsage": "usage",
    "BadArgumentUsage": "usage",
    "ClickException": "usage",
    "FileError": "input",
}


def error_document(exc: BaseException, *, internal: bool = False) -> dict[str, Any]:
    """The one JSON object an error becomes under ``--format json``: ``{"error": slug, "message": text, ...}``.

    ``error`` is ``usage``, ``input``, ``kb-not-found``, ``record-exists``,
    ``record-invalid``, ``derive-refused``, ``write-conflict``, ``write-failed``, ``journal-refused``,
    ``internal`` or ``error``;
    ``path``/``field`` are added for an input error that names them and
    ``findings`` for a record that failed validation.
    """
    if internal:
        return {"error": "internal", "message": f"{type(exc).__name__}: {exc}"}
    kind = next((_ERROR_KINDS[c.__name__] for c in type(exc).__mro__ if c.__name__ in _ERROR_KINDS), "error")
    message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
    doc: dict[str, Any] = {"error": kind, "message": message}
    for attr in ("path", "field"):
        if getattr(exc, attr, None) is not None and not isinstance(exc, click.ClickException):
            doc[attr] = getattr(exc, attr)
    findings = getattr(exc, "findings", None)
    if findings:
        doc["findings"] = [f.to_dict() if hasattr(f, "to_dict") else f for f in findings]
    return doc


def finish(
    report: Report,
    fmt: str,
    fail_on: str,
    *,
    title: str,
    max_per_code: int | None = None,
    figures: bool = False,
    include_info: bool = False,
) -> None:
    """Render ``report`` with the reporter ``fmt`` and exit 1 when a finding at or above ``fail_on`` remains, else 0.

    ``include_info`` (or ``fail_on="info"``) asks reporters that leave info findings out by default (github) to keep them.
    """
    from types import SimpleNamespace

    from ..plugins import REPORTERS
    from ..reporters import render_figures, render_stages, render_text

    # The process ends after the report: when the CLI owns it, the collector stays off while it renders. Re-enabled
    # after a large check, its first full pass would traverse every object the audits left (the findings, their
    # evidence, the audits' tables): at 100,000 records the report's sort triggered one of 1.7 s (the sort itself
    # takes 0.06).
    collecting = process.owned and gc.isenabled()
    if collecting:
        gc.disable()
    try:
        if fmt == "text":
            out = console()
            render_text(report, out, max_per_code=max_per_code, title=title)
            if figures:
                render_figures(report.figures, out)
                render_stages(report, out, title=title)
        else:
            target = SimpleNamespace(file=sys.stdout, include_info=include_info or fail_on == "info")
            (REPORTERS.load(entry_points=False).get(fmt) or REPORTERS.load()[fmt])(report, target)
    finally:
        if collecting:
            gc.enable()
    sys.exit(1 if report.fails(fail_on) else 0)


# The names the pre-package CLI modules used (``from inferkb.cli import _emit_json, _open, ...``).
_console, _open, _emit_json, _codes, _all_rules, _finish = console, open_kb, emit_json, codes, all_rules, finish
