"""Extension point for pages built from analyses (compare, Pareto, MLPerf history ...): register, do not edit the builder.

A module registers a page with :func:`page`; registration goes into the
``site_pages`` extension point of :mod:`inferkb.plugins` (built-ins listed in
``plugins.BUILTINS["site_pages"]``, other packages through the entry-point
group ``inferkb.site_pages``), so a plain ``inferkb site build`` finds every
page without an import made for it. The builder renders every registered
page after the core pages, lists it in the navigation and reserves its slug.

A page function receives a :class:`PageContext` and calls, for each part:

- ``ctx.section(heading, text, spec=..., points=..., columns=..., rows=...)``:
  a chart from a Vega-Lite spec and/or a table (rows may carry facet values,
  ``facets=`` then offers filters over them, keyboard usable);
- ``ctx.switch(heading, text, choices=[Choice(...), ...])``: one chart at a
  time with a picker (grouped, e.g. by metric), each choice with its own table;
- ``ctx.picker(label, options)``: a navigation picker (e.g. "another model"),
  submitted with a button;

and ``ctx.child(name, title)`` for a page below it (``<slug>/<name>.html``,
rendered with the same template). ``ctx.render()`` writes the page once (the
builder calls it if the function did not). The generic
``analysis_page.html`` template lays the parts out, escaping every value like
every other page; no page function writes HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import plugins
from .charts import Chart

if TYPE_CHECKING:
    from .data import SiteData

SLUG = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class ExtraPage:
    """A registered page: ``slug`` (file ``<slug>.html``), ``nav`` label, ``build(ctx)``."""

    slug: str
    nav: str
    build: Callable[[PageContext], None]


def page(slug: str, nav: str) -> Callable[[Callable[[PageContext], None]], Callable[[PageContext], None]]:
    """Decorator registering ``func(ctx)`` as the page ``<slug>.html`` shown in the navigation as ``nav``.

    ``slug`` is lower-case letters, digits, ``.``, ``_``, ``-``; ``ValueError`` otherwise.
    A second module registering the same slug is a :class:`inferkb.plugins.PluginError`.
    """
    if not SLUG.fullmatch(slug):
        raise ValueError(f"site page slug {slug!r}: use lower-case letters, digits, '.', '_' or '-'")

    def deco(func: Callable[[PageContext], None]) -> Callable[[PageContext], None]:
        plugins.SITE_PAGES.register(slug, ExtraPage(slug, nav, func), module=func.__module__)
        return func

    return deco


def pages() -> list[ExtraPage]:
    """Every registered page (built-ins, then entry points), in registration order."""
    return [p for p in plugins.SITE_PAGES.load().values() if isinstance(p, ExtraPage)]


@dataclass(slots=True)
class Choice:
    """One option of a switchable chart: ``id`` (unique on the site; also the anchor ``#<id>``), ``label``, ``group``
    (an optgroup, e.g. the metric), the :class:`Chart` (or ``None`` when there is nothing to draw), a
    ``description`` list of ``(term, value)`` pairs and the same data as a table (``columns``, ``rows``)."""

    id: str
    label: str
    group: str
    chart: Chart | None
    description: list[tuple[str, str]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)


@dataclass(slots=True)
class Picker:
    """A navigation picker: ``label`` and ``options`` ``[{"text", "href" (site-root-relative), "selected", "group"?}]``."""

    id: str
    label: str
    options: list[dict[str, Any]]


@dataclass(slots=True)
class Section:
    """One part of a page: ``heading``, ``text``, an optional :class:`Chart`, an optional table (``columns``, ``rows``).

    A table cell is a plain value or a dict ``{"text", "href"?, "note"?, "badge"?, "sort"?}``: ``href`` is a
    site-root-relative URL, ``note`` small text after it, ``badge`` a label such as "experimental", ``sort``
    a number the column sorts by. ``facets`` (``[(name, label)]``) offers filters over ``row_facets`` (one dict
    ``{name: [values]}`` per row). ``choices`` makes a switchable chart; ``anchor`` is the section's id.
    """

    heading: str
    text: str = ""
    chart: Chart | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    facets: list[tuple[str, str]] = field(default_factory=list)
    row_facets: list[dict[str, list[str]]] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    anchor: str = ""
    facet_options: list[dict[str, Any]] = field(default_factory=list)

    @property
    def charts(self) -> list[Chart]:
        """The section's charts (its own and its choices')."""
        return [c for c in [self.chart, *(ch.chart for ch in self.choices)] if c is not None]


@dataclass(slots=True)
class PageContext:
    """What a page function gets: the ``site`` data, the page's ``slug`` (path without ``.html``) and ways to add parts."""

    site: SiteData
    slug: str
    title: str
    intro: str = ""
    nav: str = ""
    sections: list[Section] = field(default_factory=list)
    pickers: list[Picker] = field(default_factory=list)
    crumbs: list[dict[str, str]] = field(default_factory=list)
    see_also: list[dict[str, str]] = field(default_factory=list)
    rendered: bool = False
    _render: Callable[[PageContext], None] | None = None

    def section(
        self,
        heading: str,
        text: str = "",
        *,
        spec: dict[str, Any] | None = None,
        points: int = 0,
        chart: Chart | None = None,
        chart_id: str | None = None,
        anchor: str = "",
        facets: list[tuple[str, str]] | None = None,
        row_facets: list[dict[str, list[str]]] | None = None,
        **table: Any,
    ) -> Section:
        """Add a section; ``spec`` (Vega-Lite) becomes a chart drawing ``points`` marks, ``columns``/``rows`` a table.

        ``chart`` passes a ready :class:`Chart` instead of ``spec``/``points``.
        ``chart_id`` names the chart (default ``<slug>-<n>``, ``/`` replaced); ``facets`` with ``row_facets``
        make the table filterable (``ValueError`` when ``row_facets`` does not have one entry per row).
        """
        columns, rows = list(table.get("columns", [])), list(table.get("rows", []))
        if chart is not None and chart.points <= 0:
            chart = None
        if chart is None and spec is not None and points > 0:
            cid = chart_id or f"{self.slug.replace('/', '-')}-{len(self.sections) + 1}"
            chart = Chart(cid, heading, text, spec, columns, rows, points)
        row_facets = list(row_facets or [])
        if facets and len(row_facets) != len(rows):
            raise ValueError(f"{self.slug}: section {heading!r} has {len(rows)} rows but {len(row_facets)} row_facets")
        sec = Section(heading, text, chart, columns, rows, list(facets or []), row_facets, anchor=anchor)
        sec.facet_options = _facet_options(sec)
        self.sections.append(sec)
        return sec

    def switch(self, heading: str, text: str = "", *, choices: list[Choice], anchor: str = "") -> Section:
        """Add a switchable chart: a picker over ``choices`` (grouped by ``Choice.group``) drawing one at a time.

        Without JavaScript every choice's table is shown; with it, the picked choice's chart and table.
        An address ending in ``#<choice id>`` opens that choice.
        """
        sec = Section(heading, text, choices=list(choices), anchor=anchor)
        self.sections.append(sec)
        return sec

    def picker(self, label: str, options: list[dict[str, Any]]) -> Picker:
        """Add a navigation picker (a select and a "show" button) at the top of the page."""
        p = Picker(f"pick-{len(self.pickers) + 1}", label, list(options))
        self.pickers.append(p)
        return p

    def link(self, label: str, text: str, href: str) -> None:
        """Add a "label: text" link under the introduction (``href`` site-root-relative)."""
        self.see_also.append({"label": label, "text": text, "href": href})

    def child(self, name: str, title: str, intro: str = "") -> PageContext:
        """A page below this one, ``<slug>/<name>.html``, rendered with the same template (``ValueError`` for a bad name)."""
        if not SLUG.fullmatch(name):
            raise ValueError(f"child page name {name!r}: use lower-case letters, digits, '.', '_' or '-'")
        root = self.slug.split("/", 1)[0]
        crumbs = [{"text": self.nav or self.title, "href": f"{root}.html"}]
        return PageContext(self.site, f"{root}/{name}", title, intro, nav=self.nav or root, crumbs=crumbs, _render=self._render)

    def render(self) -> None:
        """Write the page (once)."""
        if self._render is not None and not self.rendered:
            self._render(self)
            self.rendered = True


def _facet_options(sec: Section) -> list[dict[str, Any]]:
    """Per offered facet: ``{"name", "label", "options": [{"value", "count"}]}``, most common value first."""
    out = []
    for name, label in sec.facets:
        counts: dict[str, int] = {}
        for rf in sec.row_facets:
            for v in rf.get(name, []):
                counts[v] = counts.get(v, 0) + 1
        # Offered only when a value would narrow the table: a filter that cannot change the rows is noise.
        if len(counts) >= 2 or any(n < len(sec.rows) for n in counts.values()):
            opts = [{"value": v, "count": n} for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            out.append({"name": name, "label": label, "options": opts})
    return out
