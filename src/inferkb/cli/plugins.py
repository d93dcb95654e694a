"""The plugins command: every extension point, what is registered in it and where it came from."""

from __future__ import annotations

import click

from .common import FORMATS, command, emit_json


@command("plugins")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def plugins_cmd(fmt) -> None:
    """List the extension points (rules, audits, importers, derivations, exporters, reporters, commands, site pages) and their plugins.

    Built-ins are listed by module; a third-party plugin also names its
    distribution. A plugin that failed to load is listed with the reason.

    \b
    Examples:
      inferkb plugins
      inferkb plugins --format json
    """
    from ..plugins import load_all

    points = load_all(commands=True)
    doc = {
        name: {
            "entry_point_group": p.group,
            "items": {k: {"module": o.module, "distribution": o.distribution} for k, o in p.origins.items()},
            "failed": p.failed,
        }
        for name, p in points.items()
    }
    if fmt == "json":
        emit_json(doc)
        return
    for name, info in doc.items():
        click.echo(f"{name} ({info['entry_point_group']}): {len(info['items'])} registered")
        if name == "rules":
            by_family: dict[str, int] = {}
            for k in info["items"]:
                fam = points["rules"].items[k].family
                by_family[fam] = by_family.get(fam, 0) + 1
            click.echo("  " + ", ".join(f"{fam} {n}" for fam, n in by_family.items()))
        else:
            for item, origin in info["items"].items():
                dist = f"  [{origin['distribution']}]" if origin["distribution"] else ""
                click.echo(f"  {item:26} {origin['module']}{dist}")
        for label, why in info["failed"].items():
            click.echo(f"  FAILED {label}: {why}", err=True)
