"""The static web site of a KB, and a local server for it.

Python API (``inferkb site build`` and ``inferkb serve`` are thin layers over it)::

    import inferkb
    from inferkb.site import build_site, serve

    result = build_site(inferkb.open(), "out/site")     # SiteBuild: pages, records, charts, timings
    serve(inferkb.open(), port=8000)                      # builds to a temp dir, serves on 127.0.0.1

Pages: home, one index per record type (sortable, filterable), one page per
record, condition gaps, roofline, the analysis pages registered as
``site_pages`` plugins (compare, Pareto, MLPerf history; see
:mod:`inferkb.site.extra`), docs (``docs/*.md``), search (Pagefind),
404. Everything is static: the pages work from any static host, and offline
(search needs the pages served over http, as Pagefind fetches its index).
"""

from __future__ import annotations

from .build import CSP, MARKER, SiteBuild, build_site
from .search import SearchIndexError
from .serve import serve

__all__ = ["build_site", "serve", "SiteBuild", "SearchIndexError", "CSP", "MARKER"]
