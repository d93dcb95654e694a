"""Command-line interface: a thin layer over the Python API.

Every command prints human output by default and one JSON document with
``--format json``. Exit codes: 0 ok, 1 findings at or above the failing
severity, 2 usage or input error. No traceback reaches the user (set
``INFERKB_DEBUG=1`` to see one).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from . import __version__
from .errors import KBError, UsageError
from .report import Report

FORMATS = click.Choice(["text", "json"])
CHECK_FORMATS = click.Choice(["text", "json", "github"])
SEVERITY = click.Choice(["error", "warning", "info"])


def _console():
    # rich is imported only for text output: --format json should not pay for it.
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def Table(*columns, **kw):  # noqa: N802 - stands in for rich.table.Table, imported lazily
    from rich.table import Table as RichTable

    return RichTable(*columns, **kw)


def _open(kb_path: str | None):
    from . import open as open_kb

    return open_kb(kb_path)


def _all_rules() -> dict:
    """Import every module that registers rules and return the registry."""
    from . import rules as registry
    from . import validate_rules  # noqa: F401
    from .audit import load_all
    from .derive import load_all as load_derivations
    from .intake import common, dataset, table_rules  # noqa: F401  (register the KB11xx intake rules)

    load_all()
    load_derivations()
    return registry.RULES


def _codes(values: tuple[str, ...]) -> list[str]:
    """Split --select/--ignore values; a code or prefix that matches no rule is a usage error (a typo must not switch checks off)."""
    codes = [c.strip() for v in values for c in v.split(",") if c.strip()]
    if codes:
        known = _all_rules()
        for code in codes:
            if not any(k.startswith(code.upper()) for k in known):
                raise UsageError(f"--select/--ignore {code!r} matches no rule code; `inferkb rules` lists them")
    return codes


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


kb_option = click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
select_option = click.option(
    "--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated, e.g. KB1,KB201)."
)
ignore_option = click.option("--ignore", multiple=True, metavar="CODES", help="Drop these codes or prefixes.")
fail_option = click.option(
    "--fail-on", type=SEVERITY, default="error", show_default=True, help="Exit 1 when a finding at or above this severity remains."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="inferkb")
def cli() -> None:
    """inferkb: a provenance-first knowledge base of LLM-inference facts.

    With no --kb, every command uses the KB bundled with inferkb.
    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage or input error.
    """


def _finish(report: Report, fmt: str, fail_on: str, *, title: str, max_per_code: int | None = None, figures: bool = False) -> None:
    from types import SimpleNamespace

    from .reporters import REPORTERS, render_figures, render_stages, render_text

    if fmt == "text":
        console = _console()
        render_text(report, console, max_per_code=max_per_code, title=title)
        if figures:
            render_figures(report.figures, console)
            render_stages(report, console)
    else:
        REPORTERS[fmt](report, SimpleNamespace(file=sys.stdout))
    sys.exit(1 if report.fails(fail_on) else 0)


@cli.command()
@kb_option
@click.option("--type", "types", multiple=True, metavar="TYPE", help="Only check records of this type (repeatable).")
@select_option
@ignore_option
@click.option("--max-dangling-refs", type=click.IntRange(min=0), metavar="N", help="Override the KB's dangling-reference budget.")
@click.option("--format", "fmt", type=CHECK_FORMATS, default="text", show_default=True)
@fail_option
def validate(kb_path, types, select, ignore, max_dangling_refs, fmt, fail_on) -> None:
    """Check files, JSON, schemas, ids, dates and references of a KB.

    \b
    Examples:
      inferkb validate
      inferkb validate --kb ../shared/corpus/inference-research --format json
      inferkb validate --type benchmark --select KB1 --ignore KB110
      inferkb validate --max-dangling-refs 0 --format github
    """
    kb = _open(kb_path)
    report = kb.validate(types=list(types) or None, select=_codes(select), ignore=_codes(ignore), max_dangling_refs=max_dangling_refs)
    _finish(report, fmt, fail_on, title="validate")


@cli.command()
@kb_option
@select_option
@ignore_option
@click.option("--format", "fmt", type=CHECK_FORMATS, default="text", show_default=True)
@fail_option
@click.option("--all", "show_all", is_flag=True, help="Print every finding (text format shows 5 per code by default).")
def check(kb_path, select, ignore, fmt, fail_on, show_all) -> None:
    """The main job: validate the KB, run every audit, print a summary.

    \b
    Examples:
      inferkb check
      inferkb check --kb ../shared/corpus/inference-research
      inferkb check --format json > report.json
    """
    kb = _open(kb_path)
    report = kb.check(select=_codes(select), ignore=_codes(ignore))
    _finish(report, fmt, fail_on, title="check", max_per_code=None if show_all else 5, figures=True)


@cli.command()
@click.argument("names", nargs=-1)
@kb_option
@select_option
@ignore_option
@click.option("--format", "fmt", type=CHECK_FORMATS, default="text", show_default=True)
@fail_option
@click.option("--list", "list_only", is_flag=True, help="List the audits and exit.")
def audit(names, kb_path, select, ignore, fmt, fail_on, list_only) -> None:
    """Run read-only audits (all when no NAME is given).

    \b
    Examples:
      inferkb audit --list
      inferkb audit load-conditions --kb ../shared/corpus/inference-research
      inferkb audit citations identity --format json
    """
    from .audit import load_all

    registry = load_all()
    if list_only:
        if fmt == "json":
            _emit_json([{"name": s.name, "description": s.description} for s in registry.values()])
            return
        for spec in registry.values():
            click.echo(f"{spec.name:24} {spec.description}")
        return
    kb = _open(kb_path)
    report = kb.audit(*names, select=_codes(select), ignore=_codes(ignore))
    _finish(report, fmt, fail_on, title="audit", figures=True)


@cli.command()
@click.argument("code", required=False)
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def rules(code, fmt) -> None:
    """List every rule, or explain one (by code or slug).

    \b
    Examples:
      inferkb rules
      inferkb rules KB301
      inferkb rules schema-violation
    """
    from . import rules as registry

    _all_rules()
    if code:
        rule = registry.get(code)
        if rule is None:
            raise UsageError(f"no rule {code!r}; `inferkb rules` lists them")
        if fmt == "json":
            _emit_json(rule.__dict__ if hasattr(rule, "__dict__") else {s: getattr(rule, s) for s in rule.__slots__})
            return
        console = _console()
        console.print(f"[bold]{rule.code} {rule.slug}[/bold] ({rule.severity}, {rule.family})")
        console.print(rule.summary)
        console.print(f"\n[bold]Why[/bold]\n{rule.rationale}")
        if rule.passing:
            console.print("\n[bold]Passes[/bold]", markup=True)
            console.print(rule.passing, markup=False)
        if rule.failing:
            console.print("\n[bold]Fails[/bold]", markup=True)
            console.print(rule.failing, markup=False)
        return
    rows = sorted(registry.RULES.values(), key=lambda r: (len(r.code), r.code))
    if fmt == "json":
        _emit_json([{"code": r.code, "rule": r.slug, "severity": r.severity, "family": r.family, "summary": r.summary} for r in rows])
        return
    # Plain aligned lines (like linters print), never cropped and easy to grep.
    width = max(len(r.slug) for r in rows)
    fam = max(len(r.family) for r in rows)
    for r in rows:
        click.echo(f"{r.code:7} {r.slug:{width}}  {r.severity:7}  {r.family:{fam}}  {r.summary}")


def main() -> None:
    """Entry point: run the CLI, turning every error into a message and an exit code."""
    from . import cli_query  # noqa: F401  (registers the query commands)
    from .cli_analysis import ANALYSIS_COMMANDS  # noqa: F401  (importing registers them)
    from .cli_extra import register_extra
    from .cli_import import register_import

    register_extra(cli)
    register_import(cli)
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
