"""Command-line interface: a thin layer over the Python API. Importing this package gives every command.

Every command prints human output by default and one JSON document with
``--format json``. Exit codes: 0 ok, 1 findings at or above the failing
severity, 2 usage or input error. No traceback reaches the user (set
``INFERKB_DEBUG=1`` to see one).

Commands are plugins of the ``commands`` extension point
(:mod:`inferkb.plugins`): each module under this package defines its commands
with :func:`~inferkb.cli.common.command` and is named once in
``BUILTINS["commands"]``; other packages add theirs through the
``inferkb.commands`` entry-point group.
"""

from __future__ import annotations

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
    fail_option,
    group,
    ignore_option,
    kb_option,
    select_option,
)

CHECK_FORMATS = click.Choice(["text", "json", "github"])  # kept for modules written before reporters became plugins


class PluginGroup(click.Group):
    """The top-level group: built-in commands at import, commands of installed plugins on first need.

    Looking a built-in command up (``inferkb validate``) does not scan entry
    points; an unknown name, ``--help`` or listing the commands does.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None:
            add_commands(self, entry_points=True)
            cmd = super().get_command(ctx, cmd_name)
        return cmd

    def list_commands(self, ctx: click.Context) -> list[str]:
        add_commands(self, entry_points=True)
        return super().list_commands(ctx)


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="inferkb")
def cli() -> None:
    """inferkb: a provenance-first knowledge base of LLM-inference facts.

    With no --kb, every command uses the KB bundled with inferkb.
    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage or input error.
    """


def add_commands(target: click.Group, *, entry_points: bool = False) -> click.Group:
    """Attach every registered command to ``target`` (with ``entry_points``, installed plugins' too); returns it."""
    for name, cmd in COMMANDS.load(entry_points=entry_points).items():
        if name not in target.commands:
            target.add_command(cmd, name)
    return target


add_commands(cli)


def main() -> None:
    """Entry point: run the CLI, turning every error into a message and an exit code."""
    add_commands(cli)  # commands registered after this package was imported
    try:
        cli.main(standalone_mode=False, prog_name="inferkb")
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(2)
    except KBError as exc:
        click.echo(f"inferkb: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the edge: no traceback for users
        if os.environ.get("INFERKB_DEBUG"):
            raise
        click.echo(
            f"inferkb: internal error: {type(exc).__name__}: {exc} (set INFERKB_DEBUG=1 for a traceback; please report it)", err=True
        )
        sys.exit(2)
    sys.exit(0)
