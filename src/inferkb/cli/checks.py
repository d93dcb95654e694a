"""The checking commands: validate, check, audit, rules (thin layers over ``KB.validate/check/audit`` and :mod:`inferkb.rules`)."""

from __future__ import annotations

import click

from ..errors import UsageError
from .common import (
    FORMATS,
    all_rules,
    codes,
    command,
    console,
    emit_json,
    fail_option,
    finish,
    ignore_option,
    jobs_option,
    kb_option,
    keep_to_exit,
    loading,
    open_kb,
    reporter_formats,
    select_option,
)


@command()
@kb_option
@click.option("--type", "types", multiple=True, metavar="TYPE", help="Only check records of this type (repeatable).")
@select_option
@ignore_option
@click.option("--max-dangling-refs", type=click.IntRange(min=0), metavar="N", help="Override the KB's dangling-reference budget.")
@click.option("--format", "fmt", type=reporter_formats(), default="text", show_default=True)
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
    from ..parallel import default_jobs
    from ..validate_split import validate_path
    from ..validate_warm import validate_path as validate_warm

    options = {"types": list(types) or None, "select": codes(select), "ignore": codes(ignore), "max_dangling_refs": max_dangling_refs}
    with loading():
        # load cache on, findings cache filled: the unchanged files from it
        report = validate_warm(kb_path, keep=keep_to_exit, **options)
        if report is None:  # two idle CPUs (or INFERKB_JOBS>=2), large KB: two processes (filling the findings cache)
            report = validate_path(kb_path, default_jobs(), keep=keep_to_exit, **options)
        if report is None:
            kb = open_kb(kb_path)
            keep_to_exit(kb)
            report = kb.validate(**options)
    finish(report, fmt, fail_on, title="validate", include_info=bool(select))


@command()
@kb_option
@select_option
@ignore_option
@click.option("--format", "fmt", type=reporter_formats(), default="text", show_default=True)
@fail_option
@click.option("--all", "show_all", is_flag=True, help="Print every finding (text format shows 5 per code by default).")
@jobs_option
def check(kb_path, select, ignore, fmt, fail_on, show_all, jobs) -> None:
    """The main job: validate the KB, run every audit, print a summary.

    \b
    Examples:
      inferkb check
      inferkb check --kb ../shared/corpus/inference-research
      inferkb check --format json > report.json
    """
    kb = open_kb(kb_path, defer_save=True)  # the load cache is written by one of check's tasks
    try:
        report = kb.check(select=codes(select), ignore=codes(ignore), jobs=_jobs(jobs))
    finally:
        kb.save_load_cache()  # when no task wrote it (an audit raised first)
    finish(report, fmt, fail_on, title="check", max_per_code=None if show_all else 5, figures=True, include_info=bool(select))


@command()
@click.argument("names", nargs=-1)
@kb_option
@select_option
@ignore_option
@click.option("--format", "fmt", type=reporter_formats(), default="text", show_default=True)
@fail_option
@click.option("--list", "list_only", is_flag=True, help="List the audits and exit.")
@click.option("--all", "show_all", is_flag=True, help="Print every finding (text format shows 5 per code by default).")
@jobs_option
def audit(names, kb_path, select, ignore, fmt, fail_on, list_only, show_all, jobs) -> None:
    """Run read-only audits (all when no NAME is given); the report has the shape and caps of `check`.

    \b
    Examples:
      inferkb audit --list
      inferkb audit load-conditions --kb ../shared/corpus/inference-research
      inferkb audit citations identity --format json
    """
    from ..audit import load_all

    registry = load_all()
    if list_only:
        if fmt == "json":
            emit_json([{"name": s.name, "description": s.description} for s in registry.values()])
            return
        for spec in registry.values():
            click.echo(f"{spec.name:24} {spec.description}")
        return
    kb = open_kb(kb_path)
    report = kb.audit(*names, select=codes(select), ignore=codes(ignore), jobs=_jobs(jobs))
    finish(report, fmt, fail_on, title="audit", max_per_code=None if show_all else 5, figures=True, include_info=bool(select))


def _jobs(jobs: int | None) -> int:
    from ..parallel import default_jobs

    return jobs if jobs is not None else default_jobs()


@command()
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
    from .. import rules as registry

    all_rules()
    if code:
        rule = registry.get(code)
        if rule is None:
            raise UsageError(f"no rule {code!r}; `inferkb rules` lists them")
        if fmt == "json":
            emit_json(rule.__dict__ if hasattr(rule, "__dict__") else {s: getattr(rule, s) for s in rule.__slots__})
            return
        out = console()
        out.print(f"[bold]{rule.code} {rule.slug}[/bold] ({rule.severity}, {rule.family})")
        out.print(rule.summary)
        out.print(f"\n[bold]Why[/bold]\n{rule.rationale}")
        if rule.passing:
            out.print("\n[bold]Passes[/bold]", markup=True)
            out.print(rule.passing, markup=False)
        if rule.failing:
            out.print("\n[bold]Fails[/bold]", markup=True)
            out.print(rule.failing, markup=False)
        return
    rows = sorted(registry.RULES.values(), key=lambda r: (len(r.code), r.code))
    if fmt == "json":
        emit_json([{"code": r.code, "rule": r.slug, "severity": r.severity, "family": r.family, "summary": r.summary} for r in rows])
        return
    # Plain aligned lines (like linters print), never cropped and easy to grep.
    width = max(len(r.slug) for r in rows)
    fam = max(len(r.family) for r in rows)
    for r in rows:
        click.echo(f"{r.code:7} {r.slug:{width}}  {r.severity:7}  {r.family:{fam}}  {r.summary}")
