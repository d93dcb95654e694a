"""The commands that create KBs and records: init, new (thin layers over :func:`init_kb` and :mod:`inferkb.skeleton`)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import command, kb_option, open_kb


@command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--with-data", is_flag=True, help="Also copy the bundled records (a writable copy of the bundled KB).")
def init(path, with_data) -> None:
    """Create a new KB at PATH with inferkb's kb.toml, schemas and metric registry.

    \b
    Examples:
      inferkb init ./my-kb                 # empty KB, bundled schemas
      inferkb init ./kb-copy --with-data   # writable copy of the bundled KB
    """
    from ..skeleton import init_kb

    dest = init_kb(path, with_data=with_data)
    click.echo(f"created KB at {dest}; add records with: inferkb new TYPE --name ... --kb {dest}")


@command()
@click.argument("type_name", metavar="TYPE")
@click.option("--name", required=True, help="Display name; the id is derived from it unless --id is given.")
@click.option("--id", "record_id", help="Explicit kebab-case id.")
@click.option("--source", help="Source id to cite (must exist).")
@kb_option
def new(type_name, name, record_id, source, kb_path) -> None:
    """Write a skeleton record that will validate once filled in (never overwrites).

    \b
    Examples:
      inferkb new source --name "NVIDIA H200 datasheet"
      inferkb new accelerator --name "NVIDIA H200 NVL" --source nv-h200-datasheet
    """
    from ..skeleton import write_new

    path = write_new(open_kb(kb_path, write=True), type_name, name, record_id=record_id, source=source)
    click.echo(f"wrote {path}; fill in the null fields, then run: inferkb validate")
