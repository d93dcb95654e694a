"""``build_site``: write the whole static site for a KB into a directory, atomically.

Pages are rendered with Jinja2 (autoescape on for every template), the
search index is made by Pagefind (the ``pagefind`` binary from PyPI) over the
written pages, and the Vega-Lite/vega-embed bundle comes from
vl-convert-python at build time, so nothing is loaded from a CDN. The site is
written into a temporary directory beside ``out`` and renamed into place
only when complete; an existing ``out`` is replaced only if an earlier build
made it (it holds the marker file :data:`MARKER`).

A record page's context comes from :mod:`inferkb.site.record_page`, a type table's from
:mod:`inferkb.site.type_table`; this module renders every page and writes the site.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__
from ..errors import UsageError
from . import analysis_charts as AC
from . import charts as CH
from . import views as V
from .bundle import vega_bundle
from .data import SiteData, today
from .markdown import render_docs
from .record_page import record_context
from .roofline_measured import measured_utilisation, utilisation_points
from .roofline_page import roofline_data
from .search import run_pagefind, search_text
from .type_table import PAGE_ROWS, type_table

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

MARKER = ".inferkb-site"
STATIC = Path(__file__).with_name("static")
# Pages and folders of the site itself; a record type directory may not use these names.
RESERVED = frozenset({"assets", "docs", "pagefind", "roofline", "index.html", "gaps.html", "roofline.html", "search.html", "404.html"})
# No inline script anywhere: scripts only from the site's own files. 'wasm-unsafe-eval' lets Pagefind run its
# WebAssembly search; Vega runs with its expression interpreter, so no 'unsafe-eval'.
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
GAP_LIST_LIMIT = 300


@dataclass(slots=True)
class SiteBuild:
    """What a build wrote: ``out`` (Path), ``pages`` (HTML files), ``records``, ``charts`` (id -> data points), ``search`` (indexed?), timings (s)."""

    out: Path
    pages: int = 0
    records: int = 0
    charts: dict[str, int] = field(default_factory=dict)
    search: bool = False
    search_pages: int | None = None
    docs: int = 0
    unresolved_citations: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape printed by ``inferkb site build --format json``."""
        return {
            "out": str(self.out),
            "pages": self.pages,
            "records": self.records,
            "charts": self.charts,
            "search": self.search,
            "search_pages": self.search_pages,
            "docs": self.docs,
            "unresolved_citations": self.unresolved_citations,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("inferkb.site", "templates"),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
    )
    return env


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "doc"


class _Builder:
    def __init__(self, kb: KB, tmp: Path, *, search: bool, kb_label: str) -> None:
        self.kb = kb
        self.tmp = tmp
        self.search = search
        self.env = _env()
        self.result = SiteBuild(out=tmp)
        t = time.perf_counter()
        self.site = SiteData(kb, kb.check())
        self.result.seconds["check"] = time.perf_counter() - t
        types = [t for t in kb.profile.types.values() if any(True for _ in kb.by_type(t.name))]
        for t in types:
            if t.dir in RESERVED or not re.fullmatch(r"[A-Za-z0-9._-]+", t.dir):
                raise UsageError(
                    f"type {t.name!r} uses directory {t.dir!r}, which the site needs for itself (reserved: {', '.join(sorted(RESERVED))})"
                )
        self.nav_types = types
        from . import extra

        self.extra_pages = extra.pages()
        for x in self.extra_pages:
            if x.slug in {t.dir for t in types} or x.slug in RESERVED or f"{x.slug}.html" in RESERVED:
                raise UsageError(f"extra page {x.slug!r} collides with a page or type directory of the site")
        self.staging = tmp.with_name(tmp.name + ".search")
        self.stub_template = self.env.get_template("search_stub.html")
        self.computed = {"lacks": self.site.lacking}
        self.common = {
            "site_name": kb.profile.name or ("inferkb bundled KB" if kb.bundled else kb.root.name),
            "nav_types": types,
            "csp": CSP,
            "built": today(),
            "version": __version__,
            "kb_label": kb_label,
            "has_search": search,
            "has_docs": False,
            "extra_pages": self.extra_pages,
        }

    def render(self, template: str, rel: str, **ctx: Any) -> None:
        depth = rel.count("/")
        root = ctx.pop("root", "../" * depth)
        html = self.env.get_template(template).render(**self.common, root=root, **ctx)
        _write(self.tmp / rel, html)
        self.result.pages += 1

    def charted(self, charts: list[CH.Chart | None]) -> list[CH.Chart]:
        kept = [c for c in charts if c is not None and c.points > 0]
        for c in kept:
            self.result.charts[c.id] = c.points
        return kept

    # ---- pages ------------------------------------------------------------------------
    def record_page(self, rec: Record, facets: tuple[V.Facet, ...]) -> None:
        status = rec.data.get("status")
        ctx = record_context(self, rec, facets)
        self.render("record.html", f"{rec.dir}/{rec.id}.html", **ctx)
        self.result.records += 1
        if self.search:
            stub = self.stub_template.render(
                title=ctx["title"], type=rec.type, key=rec.key, status=status, facets=ctx["facets"], text=search_text(rec.data)
            )
            _write(self.staging / rec.dir / f"{rec.id}.html", stub)

    def type_index(self, spec_name: str, spec_dir: str, recs: list[Record], facets: tuple[V.Facet, ...]) -> None:
        table = type_table(self, spec_name, recs, facets)
        rows, offered = table["rows"], table["facets"]
        charts = self.charted([CH.benchmarks_by_origin(self.site)]) if spec_name == "benchmark" else []
        self.render(
            "type_index.html",
            f"{spec_dir}/index.html",
            title=f"{spec_name} records",
            type_name=spec_name,
            columns=table["columns"],
            rows=rows,
            facets=offered,
            charts=charts,
            current=spec_dir,
            page_rows=PAGE_ROWS,
            prehidden=bool(offered) and len(rows) > PAGE_ROWS,
        )

    def home(self) -> None:
        site = self.site
        self.render(
            "home.html",
            "index.html",
            title="Home",
            counts=site.counts(),
            audit=site.audit_summary(),
            recent=site.recently_updated(),
            attention=site.needs_attention(),
            charts=self.charted([CH.benchmarks_by_origin(site)]),
            current="home",
        )

    def gaps(self) -> None:
        self.render(
            "gaps.html",
            "gaps.html",
            title="Condition gaps",
            gaps=self.site.condition_gaps(),
            audit=self.site.audit_summary(),
            charts=self.charted([CH.absent_conditions(self.site)]),
            limit=GAP_LIST_LIMIT,
            current="gaps",
        )

    def roofline(self) -> None:
        data = roofline_data(self.site)
        measured = measured_utilisation(self.site)
        by_id = {acc["id"]: acc for acc in data["accelerators"]}
        for aid in sorted(set(measured) - set(by_id)):
            if measured[aid]["placed"] or measured[aid]["ceilings"]:
                rec = self.kb.resolve(aid, "accelerator")
                if rec is not None:
                    by_id[aid] = {
                        "id": aid,
                        "name": self.site.title(rec),
                        "href": self.site.linker.record_href(rec),
                        "bandwidth_gbps": rec.data.get("memory_bandwidth_gbps"),
                        "points": [],
                        "ceilings": [],
                    }
        data["accelerators"] = [by_id[k] for k in sorted(by_id)]
        for acc in data["accelerators"]:
            mfus = [p["mfu"] for p in acc["points"] if p["mfu"] is not None]
            acc["max_mfu"] = max(mfus) if mfus else None
            chart = CH.roofline_chart(acc)
            acc["chart"] = self.charted([chart])[0] if chart else None
            m = measured.get(acc["id"], {"placed": [], "ceilings": [], "skipped": {}})
            acc["analysis"] = m
            acc["placed_count"] = len(m["placed"])
            uchart = AC.utilisation_dots(
                f"utilisation-{acc['id']}",
                f"{acc['name']}: measured utilisation (MBU / MFU)",
                f"Each dot is one benchmark record on {acc['name']}, placed by the analysis roofline with its own device count: "
                "MBU for per-request or per-user decode rates (weights only), MFU for throughput (headline tokens only); "
                "both are lower bounds.",
                utilisation_points(m["placed"]),
            )
            acc["utilisation_chart"] = self.charted([uchart])[0] if uchart else None
            self.render(
                "roofline_acc.html",
                f"roofline/{acc['id']}.html",
                title=f"Roofline: {acc['name']}",
                acc=acc,
                charts=bool(acc["chart"] or acc["utilisation_chart"]),
                current="roofline",
            )
        self.render(
            "roofline.html",
            "roofline.html",
            title="Roofline",
            accelerators=data["accelerators"],
            skipped=data["skipped"],
            current="roofline",
        )

    def extras(self) -> None:
        """Render every page registered in :mod:`inferkb.site.extra`."""
        from .extra import PageContext

        for spec in self.extra_pages:

            def write(ctx: PageContext, slug: str = spec.slug) -> None:
                charts = self.charted([c for s in ctx.sections for c in s.charts])
                long = any(sec.facet_options and len(sec.rows) > PAGE_ROWS for sec in ctx.sections)
                self.render(
                    "analysis_page.html",
                    f"{ctx.slug}.html",
                    title=ctx.title,
                    page=ctx,
                    charts=charts,
                    current=slug,
                    page_rows=PAGE_ROWS,
                    prehidden=long,
                )

            ctx = PageContext(self.site, spec.slug, spec.nav, nav=spec.nav, _render=write)
            spec.build(ctx)
            ctx.render()

    def docs(self) -> None:
        docs = render_docs(self.kb, self.site.linker.record_href)
        if not docs:
            return
        self.common["has_docs"] = True
        seen: set[str] = set()
        for d in docs:
            slug = _slug(d.slug)
            while slug in seen or slug == "index":
                slug += "-1"
            seen.add(slug)
            d.slug = slug
            self.render("doc.html", f"docs/{slug}.html", title=d.title, doc=d, current="docs", index_body=True)
            if self.search:
                _write(self.staging / "docs" / f"{slug}.html", (self.tmp / "docs" / f"{slug}.html").read_text(encoding="utf-8"))
            self.result.unresolved_citations += [f"docs/{slug}: {u}" for u in d.unresolved]
        self.render("docs_index.html", "docs/index.html", title="Docs", docs=docs, current="docs")
        self.result.docs = len(docs)

    def assets(self) -> None:
        assets = self.tmp / "assets"
        assets.mkdir(parents=True, exist_ok=True)
        for f in STATIC.iterdir():
            if f.is_file():
                shutil.copyfile(f, assets / f.name)
        _write(assets / "vega-embed.js", vega_bundle())


def build_site(kb: KB, out: str | os.PathLike, *, search: bool = True, kb_label: str | None = None) -> SiteBuild:
    """Write the static site of ``kb`` into ``out``; returns a :class:`SiteBuild`.

    ``search=False`` skips the Pagefind index (the search page is left out).
    ``out`` must not exist, be an empty directory, or be an earlier build
    (holding :data:`MARKER`); otherwise :class:`UsageError`. The build goes to
    a temporary sibling directory first, so ``out`` is either the previous
    site or the complete new one, never half of each. Raises
    :class:`SearchIndexError` when Pagefind fails.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise UsageError(f"{out} exists and is not an inferkb site (no {MARKER} marker); refusing to overwrite it")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        t0 = time.perf_counter()
        label = kb_label or ("the bundled KB" if kb.bundled else kb.root.name)
        b = _Builder(kb, tmp, search=search, kb_label=label)
        t = time.perf_counter()
        b.docs()
        b.assets()
        for spec in b.nav_types:
            recs = b.site.records_sorted(spec.name)
            facets = V.facets_for(spec.name)
            b.type_index(spec.name, spec.dir, recs, facets)
            for rec in recs:
                b.record_page(rec, facets)
        b.home()
        b.gaps()
        b.roofline()
        b.extras()
        if search:
            b.render("search.html", "search.html", title="Search", current="search", uses_search=True)
        b.render("404.html", "404.html", title="Not found", root="/")
        b.result.seconds["render"] = time.perf_counter() - t
        if search:
            t = time.perf_counter()
            b.result.search_pages = run_pagefind(b.staging, tmp)
            b.result.search = True
            b.result.seconds["search_index"] = time.perf_counter() - t
        (tmp / MARKER).write_text(f"inferkb {__version__} site of {kb.root}\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        _swap_into_place(tmp, out)
        b.result.out = out
        b.result.seconds["total"] = time.perf_counter() - t0
        return b.result
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp.with_name(tmp.name + ".search"), ignore_errors=True)


def _swap_into_place(tmp: Path, out: Path) -> None:
    """Rename ``tmp`` to ``out``; an earlier build at ``out`` is moved aside first and removed after."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
