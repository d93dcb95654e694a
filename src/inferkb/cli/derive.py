"""The derive command: backfills with provenance, dry-run diff by default (a thin layer over :func:`inferkb.derive.run`)."""

from __future__ import annotations

import sys

import click

from ..errors import UsageError
from ..textsafe import clean
from .common import command, emit_json, error_document, open_kb


@command()
@click.argument("name", required=False)
@click.option("--kb", "kb_path", metavar="PATH", help="KB directory (default: the bundled KB).")
@click.option("--write", is_flag=True, help="Write the changes (default: dry run, print the diff).")
@click.option("--list", "list_only", is_flag=True, help="List the derivations and exit (same as NAME 'list').")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def derive(name, kb_path, write, list_only, fmt) -> None:
    """Backfill fields that evidence proves, with provenance; dry-run diff by default.

    NAME is a derivation (`inferkb derive --list` or `inferkb derive list` lists them).

    \b
    Examples:
      inferkb derive --list
      inferkb derive interconnect-ids
      inferkb derive format-id --kb ./my-kb --write
      inferkb derive accelerator-alternates --format json
    """
    from .. import derive as derive_mod
    from ..reporters import cap_per_code, finding_line

    registry = derive_mod.load_all()
    if not name and not list_only:
        raise UsageError(f"give a derivation NAME ({', '.join(registry)}) or --list")
    if list_only or name == "list":
        if fmt == "json":
            emit_json([{"name": d.name, "description": d.description, "fields": list(d.fields)} for d in registry.values()])
            return
        for spec in registry.values():
            click.echo(f"{spec.name:24} {spec.description}")
        return
    kb = open_kb(kb_path, write=write)
    try:
        result = derive_mod.run(kb, name, write=write)
    except derive_mod.DeriveRefused as exc:
        if fmt == "json":  # one document: the dry-run result and the error that refused the write
            emit_json({**error_document(exc), **exc.result.to_dict()})
            sys.exit(exc.exit_code)
        else:
            click.echo(clean(exc.result.proof.to_text(), keep_newlines=True))
        raise
    if fmt == "json":
        emit_json(result.to_dict())
        return
    if result.diff_text:
        click.echo(clean(result.diff_text, keep_newlines=True))
    kept, counts = cap_per_code(result.findings, 5)
    for f in kept:
        click.echo(finding_line(f), err=True)
    if len(kept) < len(result.findings):
        per_code = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
        click.echo(f"... {len(result.findings) - len(kept)} more findings not shown ({per_code}); --format json lists them all", err=True)
    click.echo(clean(result.proof.to_text(), keep_newlines=True))
    if write:
        click.echo(f"{name}: wrote {len(result.changes)} values in {len(result.files)} files")
    else:
        click.echo(f"{name}: {len(result.changes)} values would change in {len(result.files)} files (dry run; --write to apply)")
