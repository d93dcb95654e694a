"""Render a KB's ``docs/*.md`` with markdown-it-py: raw HTML off, only http(s) and relative links, ``[[dir/id]]`` resolved.

A citation ``[[benchmarks/some-id]]`` (or a bare ``[[some-id]]``) becomes a
link to the record's page when the KB has that record, and a visibly marked
"unresolved" span when it does not. Link targets pass through
:func:`inferkb.site.views.safe_href`, so ``javascript:`` and other schemes
are rendered as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from ..urls import safe_href

if TYPE_CHECKING:
    from ..kb import KB

CITATION = re.compile(r"\[\[([a-z0-9][a-z0-9_\-]*(?:/[a-z0-9][a-z0-9\-]*)?)\]\]")


@dataclass(slots=True)
class Doc:
    """One rendered doc: ``slug`` (file stem), ``title`` (first heading or the slug), ``html``, ``citations`` and ``unresolved`` keys."""

    slug: str
    title: str
    html: str
    citations: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def _citation_rule(resolve: Callable[[str], str | None], seen: list[tuple[str, str | None]]):
    def rule(state: StateInline, silent: bool) -> bool:
        if not state.src.startswith("[[", state.pos):
            return False
        m = CITATION.match(state.src, state.pos)
        if not m:
            return False
        if not silent:
            ref = m.group(1)
            href = resolve(ref)
            seen.append((ref, href))
            token = state.push("kb_citation", "", 0)
            token.meta = {"ref": ref, "href": href}
        state.pos = m.end()
        return True

    return rule


def _render_citation(self, tokens, idx, options, env) -> str:
    from markupsafe import escape

    meta = tokens[idx].meta
    ref = escape(meta["ref"])
    if meta["href"]:
        return f'<a class="cite" href="{escape(env.get("root", "") + meta["href"])}">{ref}</a>'
    return f'<span class="cite unresolved" title="no such record in this KB">{ref} (unresolved)</span>'


def make_parser(resolve: Callable[[str], str | None], seen: list[tuple[str, str | None]]) -> MarkdownIt:
    """A CommonMark parser with tables, raw HTML disabled, safe links only and the ``[[ref]]`` citation rule."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.validateLink = lambda url: safe_href(url) is not None
    md.inline.ruler.before("link", "kb_citation", _citation_rule(resolve, seen))
    md.add_render_rule("kb_citation", _render_citation)
    return md


def render_docs(kb: KB, record_href: Callable[[object], str]) -> list[Doc]:
    """Render every ``docs/*.md`` of ``kb`` (sorted by name). Links in the HTML are relative to the site root via ``env['root']``.

    A file that is not UTF-8 is rendered with replacement characters rather
    than dropped (the text is still the author's).
    """
    docs_dir = kb.root / "docs"
    if not docs_dir.is_dir():
        return []

    def resolve(ref: str) -> str | None:
        rec = kb.resolve(ref)
        return record_href(rec) if rec is not None else None

    out = []
    for path in sorted(docs_dir.glob("*.md")):
        seen: list[tuple[str, str | None]] = []
        md = make_parser(resolve, seen)
        text = path.read_bytes().decode("utf-8", errors="replace")
        html = md.render(text, {"root": "../"})
        title = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("# ")), path.stem)
        out.append(Doc(path.stem, title, html, [r for r, h in seen if h], sorted({r for r, h in seen if not h})))
    return out
