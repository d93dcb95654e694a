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

import json
import sys
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
    """A ``rich.table.Table``, imported on first use."""
    from rich.table import Table as RichTable

    return RichTable(*columns, **kw)


def open_kb(kb_path: str | None):
    """``inferkb.open(kb_path)``: the bundled KB when ``None``."""
    from .. import open as _open_kb

    return _open_kb(kb_path)


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
    """Print ``data`` as one indented JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


kb_option = click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
select_option = click.option(
    "--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated, e.g. KB1,KB201)."
)
ignore_option = click.option("--ignore", multiple=True, metavar="CODES", help="Drop these codes or prefixes.")
fail_option = click.option(
    "--fail-on", type=SEVERITY, default="error", show_default=True, help="Exit 1 when a finding at or above this severity remains."
)


def finish(report: Report, fmt: str, fail_on: str, *, title: str, max_per_code: int | None = None, figures: bool = False) -> None:
    """Render ``report`` with the reporter ``fmt`` and exit 1 when a finding at or above ``fail_on`` remains, else 0."""
    from types import SimpleNamespace

    from ..plugins import REPORTERS
    from ..reporters import render_figures, render_stages, render_text

    if fmt == "text":
        out = console()
        render_text(report, out, max_per_code=max_per_code, title=title)
        if figures:
            render_figures(report.figures, out)
            render_stages(report, out)
    else:
        (REPORTERS.load(entry_points=False).get(fmt) or REPORTERS.load()[fmt])(report, SimpleNamespace(file=sys.stdout))
    sys.exit(1 if report.fails(fail_on) else 0)


# The names the pre-package CLI modules used (``from inferkb.cli import _emit_json, _open, ...``).
_console, _open, _emit_json, _codes, _all_rules, _finish = console, open_kb, emit_json, codes, all_rules, finish
