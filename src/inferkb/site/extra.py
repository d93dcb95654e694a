"""Extension point for pages built from analyses (compare, Pareto, MLPerf history ...): register, do not edit the builder.

A module registers a page with :func:`page`; the builder renders every
registered page after the core pages, lists it in the navigation, and
reserves its slug. A page function receives a :class:`PageContext` and calls
``ctx.section(...)`` for each part (a chart from a Vega-Lite spec and/or a
table) and ``ctx.render()`` once; the generic ``analysis_page.html``
template lays them out, escaping every value like every other page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .charts import Chart

if TYPE_CHECKING:
    from .data import SiteData


@dataclass(frozen=True, slots=True)
class ExtraPage:
    """A registered page: ``slug`` (file ``<slug>.html``), ``nav`` label, ``build(ctx)``."""

    slug: str
    nav: str
    build: Callable[[PageContext], None]


PAGES: dict[str, ExtraPage] = {}


def page(slug: str, nav: str) -> Callable[[Callable[[PageContext], None]], Callable[[PageContext], None]]:
    """Decorator registering ``func(ctx)`` as the page ``<slug>.html`` shown in the navigation as ``nav``."""

    def deco(func: Callable[[PageContext], None]) -> Callable[[PageContext], None]:
        PAGES[slug] = ExtraPage(slug, nav, func)
        return func

    return deco


@dataclass(slots=True)
class Section:
    """One part of a page: ``heading``, ``text``, an optional :class:`Chart`, an optional table (``columns``, ``rows``).

    A table cell is a plain value or ``{"text": ..., "href": site-root-relative URL}``.
    """

    heading: str
    text: str = ""
    chart: Chart | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)


@dataclass(slots=True)
class PageContext:
    """What a page function gets: the ``site`` data and a way to add sections and render."""

    site: SiteData
    slug: str
    title: str
    intro: str = ""
    sections: list[Section] = field(default_factory=list)
    rendered: bool = False
    _render: Callable[[PageContext], None] | None = None

    def section(self, heading: str, text: str = "", *, spec: dict[str, Any] | None = None, points: int = 0, **table: Any) -> Section:
        """Add a section; ``spec`` (Vega-Lite) becomes a chart drawing ``points`` marks, ``columns``/``rows`` a table."""
        chart = None
        if spec is not None and points > 0:
            chart = Chart(
                f"{self.slug}-{len(self.sections) + 1}", heading, text, spec, table.get("columns", []), table.get("rows", []), points
            )
        sec = Section(heading, text, chart, list(table.get("columns", [])), list(table.get("rows", [])))
        self.sections.append(sec)
        return sec

    def render(self) -> None:
        """Write the page (once)."""
        if self._render is not None and not self.rendered:
            self._render(self)
            self.rendered = True
