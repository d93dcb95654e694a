"""``inferkb site build`` and ``inferkb serve``: thin layers over :mod:`inferkb.site`."""

from __future__ import annotations

from pathlib import Path

import click

from .common import FORMATS, command, emit_json, group, kb_option, open_kb


@group()
def site() -> None:
    """Build the static web site of a KB."""


@site.command("build")
@kb_option
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), metavar="DIR", help="Directory to write the site into.")
@click.option("--no-search", is_flag=True, help="Skip the Pagefind search index (and the search page).")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
def site_build(kb_path, out, no_search, fmt) -> None:
    """Write a fully static site: home, type tables, record pages, gaps, roofline, compare, Pareto, MLPerf history, docs, search, 404.

    The site works from any static host; open DIR/index.html directly, or serve
    DIR over http for search. DIR is replaced only if an earlier build made it.

    \b
    Examples:
      inferkb site build --out out/site
      inferkb site build --kb ../shared/corpus/inference-research --out out/corpus-site
      inferkb site build --out out/site --no-search --format json
    """
    from ..site import build_site

    kb = open_kb(kb_path)
    result = build_site(kb, out, search=not no_search)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    secs = result.seconds
    click.echo(
        f"wrote {result.pages} pages ({result.records} records, {len(result.charts)} charts, "
        f"{result.docs} docs) to {result.out} in {secs.get('total', 0):.1f} s"
    )
    if result.search:
        click.echo(f"search index: {result.search_pages} pages (open via http, e.g. `inferkb serve`, for search)")
    for u in result.unresolved_citations:
        click.echo(f"unresolved citation: {u}")


@command()
@kb_option
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port on 127.0.0.1 (0 = any free port).")
@click.option("--no-watch", is_flag=True, help="Do not rebuild when records change.")
@click.option("--no-search", is_flag=True, help="Skip the Pagefind search index.")
@click.option("--verbose", is_flag=True, help="Log every request.")
def serve(kb_path, port, no_watch, no_search, verbose) -> None:
    """Build the site into a temporary directory and serve it on 127.0.0.1 (rebuilds when records change).

    Only the loopback address is bound, and only files inside the built site
    are served. Stop with Ctrl-C; the temporary directory is removed.

    \b
    Examples:
      inferkb serve                      # http://127.0.0.1:8000/
      inferkb serve --kb ./my-kb --port 8080
    """
    from ..site import serve as serve_site

    kb = open_kb(kb_path)

    def on_ready(server) -> None:
        server.verbose = verbose

    try:
        serve_site(kb, port=port, watch=not no_watch, search=not no_search, reload=lambda: open_kb(kb_path), ready=on_ready, log=click.echo)
    except OSError as exc:
        from ..errors import UsageError

        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
