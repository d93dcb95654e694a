"""``build_site``: write the whole static site for a KB into a directory, atomically.

Pages are rendered with Jinja2 (autoescape on for every template), the
search index is made by Pagefind (the ``pagefind`` binary from PyPI) over the
written pages, and the Vega-Lite/vega-embed bundle comes from
vl-convert-python at build time, so nothing is loaded from a CDN. The site is
written into a temporary directory beside ``out`` and renamed into place
only when complete; an existing ``out`` is replaced only if an earlier build
made it (it holds the marker file :data:`MARKER`).
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
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__
from ..errors import UsageError
from ..traps import known_traps
from . import analysis_charts as AC
from . import charts as CH
from . import views as V
from .bundle import vega_bundle
from .data import BANNERS, STATUS_ORDER, SiteData, today
from .markdown import render_docs
from .roofline_measured import measured_utilisation, utilisation_points
from .roofline_page import roofline_data
from .search import run_pagefind, search_text

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
MAX_BACKREFS = 100
# Rows of a filterable table drawn at once; the page arrives with the rest hidden (site.js pages through them).
PAGE_ROWS = 500
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
        site = self.site
        status = rec.data.get("status")
        backrefs = site.backrefs.get(rec.key, [])
        shown = sorted(backrefs, key=lambda b: (b.source.type, site.title(b.source)))[:MAX_BACKREFS]
        lc = site.load_conditions(rec) if rec.type == "benchmark" else []
        findings = site.findings(rec)
        ctx = {
            "title": site.title(rec),
            "rec": rec,
            "banner": BANNERS.get(status) if isinstance(status, str) else None,
            "n_findings": len(findings),
            "facets": [
                {"name": f.name, "label": f.label, "values": vals}
                for f in facets
                if (vals := V.facet_values(self.kb, rec, f, self.computed))
            ],
            "fields": V.field_nodes(site.linker, rec, skip=frozenset({"sources", "provenance", "arms", "conditions", "condition_gaps"})),
            "sources": site.sources(rec),
            "outgoing": site.outgoing(rec),
            "backrefs": [
                {
                    "href": site.linker.record_href(b.source),
                    "title": site.title(b.source),
                    "type": b.source.type,
                    "field": b.field,
                    "label": V.BACKREF_LABELS.get((b.source.type, b.field)),
                }
                for b in shown
            ],
            "backrefs_total": len(backrefs),
            "traps": [
                {
                    "href": site.linker.record_href(g),
                    "title": site.title(g),
                    "severity": g.data.get("severity"),
                    "class": g.data.get("class"),
                    "status": g.data.get("status"),
                    "symptom": g.data.get("symptom"),
                    "workaround": g.data.get("workaround"),
                }
                for g in known_traps(self.kb, rec)
            ],
            "backref_groups": self._backref_groups(rec, backrefs),
            "provenance": site.provenance(rec),
            "findings": findings,
            "load_conditions": lc,
            "lc_present": sum(1 for c in lc if c["status"] == "present"),
            "conditions": site.conditions(rec) if rec.type == "benchmark" else [],
            "arms": site.arms(rec),
            "comparable": self._comparable(rec) if rec.type == "benchmark" else None,
            "current": rec.dir,
            "index_body": True,
        }
        self.render("record.html", f"{rec.dir}/{rec.id}.html", **ctx)
        self.result.records += 1
        if self.search:
            stub = self.stub_template.render(
                title=ctx["title"], type=rec.type, key=rec.key, status=status, facets=ctx["facets"], text=search_text(rec.data)
            )
            _write(self.staging / rec.dir / f"{rec.id}.html", stub)

    def _comparable(self, rec: Record) -> dict[str, Any] | None:
        """The record's strict comparability class (:mod:`inferkb.site.comparable`) as plain values for the template."""
        from .comparable import CONDITION_LABELS, LENSES, MAX_LISTED, comparisons

        pl = comparisons(self.kb).placement(rec)
        if pl is None:
            return None
        linker, kb = self.site.linker, self.kb

        def links(ids: list[str]) -> list[dict[str, Any]]:
            out = []
            for i in ids:
                target = kb.resolve(i, "benchmark")
                out.append({"text": self.site.title(target) if target else i, "href": linker.record_href(target) if target else None})
            return out

        has_compare = any(x.slug == "compare" for x in self.extra_pages)
        return {
            "status": pl.status,
            "class_id": pl.class_id,
            "others": links(pl.others[:MAX_LISTED]),
            "others_total": len(pl.others),
            "folded": links(pl.folded),
            "missing": [{"label": CONDITION_LABELS.get(m, m), "why": why} for m, why in pl.missing],
            "reason": pl.reason,
            "nearest": [{"label": CONDITION_LABELS.get(c, c), "links": links(ids), "total": n} for c, ids, n in pl.nearest],
            "model": pl.group.name,
            "class_href": pl.href if has_compare else None,
            "model_href": pl.group.href(LENSES[0]) if has_compare else None,
            "hw_href": pl.group.href(LENSES[1]) if has_compare else None,
        }

    def _backref_groups(self, rec: Record, backrefs: list) -> list[dict[str, Any]]:
        """Back-references counted by (type, field), each with a link to that type's table filtered to this record when a facet allows."""
        counts: dict[tuple[str, str], int] = {}
        for b in backrefs:
            counts[(b.source.type, b.field)] = counts.get((b.source.type, b.field), 0) + 1
        out = []
        for (type_name, fld), n in sorted(counts.items(), key=lambda kv: -kv[1]):
            spec = self.kb.profile.types[type_name]
            facet = next((f for f in V.facets_for(type_name) if f.path == fld and not f.via), None)
            href = f"{spec.dir}/index.html?{urlencode({facet.name: rec.id})}" if facet else None
            out.append({"type": type_name, "field": fld, "count": n, "href": href, "label": V.BACKREF_LABELS.get((type_name, fld))})
        return out

    def type_index(self, spec_name: str, spec_dir: str, recs: list[Record], facets: tuple[V.Facet, ...]) -> None:
        columns = V.columns_for(spec_name)
        rows = []
        facet_counts: dict[str, dict[str, int]] = {f.name: {} for f in facets}
        for rec in recs:
            fvals = {}
            for f in facets:
                vals = V.facet_values(self.kb, rec, f, self.computed)
                for v in vals:
                    facet_counts[f.name][v] = facet_counts[f.name].get(v, 0) + 1
                fvals[f.name] = "\t".join(vals)
            cells = []
            for col in columns:
                raw = V.column_value(rec, col)
                cells.append(self._cell(rec, col, raw))
            status = rec.data.get("status")
            rows.append(
                {
                    "href": f"{rec.id}.html",
                    "title": self.site.title(rec),
                    "status": status,
                    "status_rank": STATUS_ORDER.get(str(status), 1),
                    "cells": cells,
                    "updated": rec.data.get("updated"),
                    "facets": fvals,
                }
            )
        # A facet is offered only when some value would narrow the table: a filter that cannot change the rows is noise.
        offered = []
        for f in facets:
            counts = facet_counts[f.name]
            narrowing = {v: n for v, n in counts.items() if n < len(recs)}
            if len(counts) >= 2 or narrowing:
                names = self._facet_labels(f, counts)
                options = [
                    {"value": v, "text": names.get(v, v), "count": n} for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                ]
                offered.append({"name": f.name, "label": f.label, "options": options})
        # Only offered facets, and no attribute for an empty value (the script reads a missing one as empty).
        names = {o["name"] for o in offered}
        for row in rows:
            row["facets"] = {k: v for k, v in row["facets"].items() if k in names and v}
        charts = self.charted([CH.benchmarks_by_origin(self.site)]) if spec_name == "benchmark" else []
        self.render(
            "type_index.html",
            f"{spec_dir}/index.html",
            title=f"{spec_name} records",
            type_name=spec_name,
            columns=columns,
            rows=rows,
            facets=offered,
            charts=charts,
            current=spec_dir,
            page_rows=PAGE_ROWS,
            prehidden=bool(offered) and len(rows) > PAGE_ROWS,
        )

    def _facet_labels(self, facet: V.Facet, counts: dict[str, int]) -> dict[str, str]:
        target = {"accelerator": "accelerator", "engine": "engine", "format": "quantization"}.get(facet.name)
        if not target:
            return {}
        out = {}
        for v in counts:
            rec = self.kb.resolve(v, target)
            if rec is not None and self.site.title(rec) != v:
                out[v] = f"{self.site.title(rec)} [{v}]"
        return out

    def _cell(self, rec: Record, col: V.Column, raw: Any) -> dict[str, Any]:
        spec = self.kb.profile.types.get(rec.type)
        last = col.path.rsplit(".", 1)[-1]
        is_ref = bool(spec and last in spec.refs and "." not in col.path)
        cell: dict[str, Any] = {"numeric": col.numeric, "sort": None, "links": None, "text": ""}
        if is_ref and raw:
            links = []
            for ref in raw if isinstance(raw, list) else [raw]:
                target = self.site.linker.target(rec.type, last, ref) if isinstance(ref, str) else None
                links.append({"text": str(ref), "href": self.site.linker.record_href(target) if target else None})
            cell["links"] = links
            return cell
        if col.numeric and isinstance(raw, (int, float)) and not isinstance(raw, bool):
            cell["sort"] = raw
        if isinstance(raw, list):
            cell["text"] = ", ".join(V.fmt_scalar(v) for v in raw if not isinstance(v, (dict, list)))
        elif raw is None or isinstance(raw, dict):
            cell["text"] = "—" if raw is None else "…"
        else:
            cell["text"] = V.fmt_scalar(raw)
        if col.unit == "@unit" and raw is not None and rec.data.get("unit"):
            cell["text"] += f" {rec.data['unit']}"
        return cell

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
