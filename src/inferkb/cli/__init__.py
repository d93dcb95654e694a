"""Command-line interface: a thin layer over the Python API. ``cli.commands`` gives every command.

Every command prints human output by default and one JSON document with
``--format json``. Exit codes: 0 ok, 1 findings at or above the failing
severity, 2 usage or input error, 3 internal error. No traceback reaches the
user (``--debug`` or ``INFERKB_DEBUG=1`` shows one).

Commands are plugins of the ``commands`` extension point
(:mod:`inferkb.plugins`): each module under this package defines its commands
with :func:`~inferkb.cli.common.command` and is named once in
``BUILTINS["commands"]`` and, per command, in :data:`BUILTIN_COMMANDS`
(so running one command imports only its module); other packages add
theirs through the ``inferkb.commands`` entry-point group.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from .. import __version__
from ..errors import KBError
from ..plugins import COMMANDS
from .common import (  # noqa: F401 - re-exported: the helpers command modules written before cli/ imported from here
    FORMATS,
    SEVERITY,
    Table,
    _all_rules,
    _codes,
    _console,
    _emit_json,
    _finish,
    _open,
    command,
    emit_json,
    error_document,
    fail_option,
    group,
    ignore_option,
    kb_option,
    process,
    select_option,
    wants_json,
)

CHECK_FORMATS = click.Choice(["text", "json", "github"])  # kept for modules written before reporters became plugins


BUILTIN_COMMANDS: dict[str, str] = {
    **dict.fromkeys(("validate", "check", "audit", "rules"), "inferkb.cli.checks"),
    **dict.fromkeys(("list", "show", "search", "where", "refs", "stats", "gaps"), "inferkb.cli.query"),
    **dict.fromkeys(("init", "new"), "inferkb.cli.write"),
    **dict.fromkeys(("intake", "env"), "inferkb.cli.intake"),
    "derive": "inferkb.cli.derive",
    "export-report": "inferkb.cli.export",
    "plugins": "inferkb.cli.plugins",
    "import-community": "inferkb.cli.community",
    "compare": "inferkb.cli.analysis",
    **dict.fromkeys(("cost", "roofline", "fit"), "inferkb.cli.analysis_bounds"),
    **dict.fromkeys(("sql", "export"), "inferkb.cli.analysis_data"),
    **dict.fromkeys(("site", "serve"), "inferkb.cli.site"),
}
"""The module of ``BUILTINS["commands"]`` that defines each built-in command: running one command imports only
its module (``inferkb validate`` does not import the query, analysis or site commands). ``tests/test_cli_lazy.py``
checks it against what each module registers."""


class PluginGroup(click.Group):
    """The top-level group: each built-in command's module imported when that command runs, the commands of
    installed plugins on first need.

    Looking a built-in command up (``inferkb validate``) imports only its module and does not scan entry points;
    an unknown name, ``--help`` or listing the commands imports every built-in module and scans them.
    :attr:`commands` holds every built-in command (importing their modules when read).
    """

    _all_builtins = False

    @property
    def commands(self) -> dict[str, click.Command]:
        """``{name: command}``: every built-in command (their modules imported now), and any plugin's already added."""
        if not self._all_builtins:
            self._all_builtins = True
            for name, cmd in COMMANDS.load(entry_points=False).items():
                self._commands.setdefault(name, cmd)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = self._commands.get(cmd_name)
        if cmd is not None:
            return cmd
        module = BUILTIN_COMMANDS.get(cmd_name)
        if module is not None and cmd_name not in COMMANDS.items:
            importlib.import_module(module)
        cmd = COMMANDS.items.get(cmd_name)  # a built-in, or registered by a module imported since
        if cmd is None:
            add_commands(self, entry_points=True)
            return self._commands.get(cmd_name)
        self._commands[cmd_name] = cmd
        return cmd

    def list_commands(self, ctx: click.Context) -> list[str]:
        add_commands(self, entry_points=True)
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context):
        """Run the command; a reader that closed our stdout (``inferkb list | head -1``) raises :class:`_PipeClosed`.

        Click turns EPIPE into exit 1 by itself, which under this CLI's contract means "findings";
        ``main`` exits 0 instead.
        """
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise _PipeClosed() from exc


class _PipeClosed(Exception):
    """stdout was closed by its reader while a command was printing."""


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="inferkb")
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error (also accepted after the command).")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Read and check every record file afresh, neither using nor updating the load cache (also accepted after the "
    "command; INFERKB_NO_CACHE=1 does the same).",
)
def cli(debug: bool = False, no_cache: bool = False) -> None:
    """inferkb: a provenance-first knowledge base of LLM-inference facts.

    With no --kb, every command uses the KB bundled with inferkb.
    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage or input error,
    3 internal error (a bug; --debug shows its traceback).

    Parsed records and their per-record findings are cached per file in the
    user's cache directory (INFERKB_CACHE_DIR, else ~/.cache/inferkb) and reused
    while a file's size, inode, mtime and ctime are unchanged; --no-cache skips it.
    """
    if no_cache:
        os.environ["INFERKB_NO_CACHE"] = "1"


def add_commands(target: click.Group, *, entry_points: bool = False) -> click.Group:
    """Attach every registered command to ``target`` (with ``entry_points``, installed plugins' too); returns it."""
    for name, cmd in COMMANDS.load(entry_points=entry_points).items():
        if name not in target.commands:
            target.add_command(cmd, name)
    return target


REPORT_TO = "the inferkb issue tracker"


def _failing_file(exc: BaseException) -> str | None:
    """What the failure happened on: a ``Record`` passed as an argument to a function on the failing call
    path (innermost first), else :data:`~inferkb.errors.PROCESSING` (the file, record or audit being worked on)."""
    from ..errors import PROCESSING
    from ..store import Record

    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        code = frame.f_code
        for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            value = frame.f_locals.get(name)
            if isinstance(value, Record):
                return value.path
    if PROCESSING.record is not None and PROCESSING.record[1] in {id(f) for f in frames}:
        return PROCESSING.record[0]
    return PROCESSING.what


def _split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """``--debug`` may stand anywhere before ``--``: take it out of ``argv`` and say whether it was there.
    ``--no-cache`` likewise: taken out, it sets ``INFERKB_NO_CACHE=1`` for this process (and its workers)."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if "--no-cache" in argv[:end]:
        os.environ["INFERKB_NO_CACHE"] = "1"
    return [a for i, a in enumerate(argv) if not (i < end and a in ("--debug", "--no-cache"))], debug


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every error into a message and an exit code.

    Exit codes: 0 ok, 1 findings at or above ``--fail-on``, 2 usage or input
    error, 3 internal error (a bug: one line naming the file being processed
    and where to report it; ``--debug`` or ``INFERKB_DEBUG=1`` shows the
    traceback), 130 interrupted. With ``--format json`` an error is one JSON
    object on stdout (:func:`~inferkb.cli.common.error_document`, plus
    ``exit_code``) instead of a line on stderr.
    """
    from ..textsafe import clean

    args, debug = _split_debug(list(sys.argv[1:] if argv is None else argv))
    debug = debug or bool(os.environ.get("INFERKB_DEBUG"))
    as_json = wants_json(args)

    def fail(exc: BaseException | None, text: str, code: int, *, internal: bool = False, **extra: object) -> None:
        if as_json:
            doc = error_document(exc, internal=internal) if exc is not None else {"error": "error", "message": text}
            emit_json({**doc, "exit_code": code, **extra})
        else:
            click.echo(clean(text), err=True)
        sys.exit(code)

    process.owned = True
    try:
        cli.main(args=args, standalone_mode=False, prog_name="inferkb")
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        if not as_json:
            exc.show()
            sys.exit(2)
        fail(exc, "", 2)
    except click.exceptions.Abort as exc:
        fail(exc, "aborted", 2)
    except KBError as exc:
        if debug and exc.exit_code == 3:
            raise
        fail(exc, f"inferkb: error: {exc}", exc.exit_code)
    except (BrokenPipeError, _PipeClosed):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        fail(None, "interrupted", 130)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the edge: no traceback for users
        if debug:
            raise
        where = _failing_file(exc)
        detail = str(exc).splitlines()[0][:300] if str(exc) else ""
        fail(
            exc,
            f"inferkb: internal error{f' while processing {where}' if where else ''}: {type(exc).__name__}"
            f"{f': {detail}' if detail else ''} (a bug: please report it to {REPORT_TO} with the output of --debug)",
            3,
            internal=True,
            file=where,
        )
    sys.exit(0)
