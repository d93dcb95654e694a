"""The table of a type's index page: one row per record with its columns, the facets worth offering (with their
counts and record titles), and each cell's text, sort key or links. :mod:`inferkb.site.build` renders it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import views as V
from .data import STATUS_ORDER

if TYPE_CHECKING:
    from ..store import Record
    from .build import _Builder

__all__ = ["PAGE_ROWS", "facet_labels", "table_cell", "type_table"]

# Rows of a filterable table drawn at once; the page arrives with the rest hidden (site.js pages through them).
PAGE_ROWS = 500


def type_table(builder: _Builder, spec_name: str, recs: list[Record], facets: tuple[V.Facet, ...]) -> dict[str, Any]:
    """The table of one type's index page: ``{"columns", "rows", "facets"}``, each row ``{href, title, status,
    status_rank, cells, updated, facets}``; a facet is offered only when one of its values would narrow the rows."""
    columns = V.columns_for(spec_name)
    rows = []
    facet_counts: dict[str, dict[str, int]] = {f.name: {} for f in facets}
    for rec in recs:
        fvals = {}
        for f in facets:
            vals = V.facet_values(builder.kb, rec, f, builder.computed)
            for v in vals:
                facet_counts[f.name][v] = facet_counts[f.name].get(v, 0) + 1
            fvals[f.name] = "\t".join(vals)
        cells = []
        for col in columns:
            raw = V.column_value(rec, col)
            cells.append(table_cell(builder, rec, col, raw))
        status = rec.data.get("status")
        rows.append(
            {
                "href": f"{rec.id}.html",
                "title": builder.site.title(rec),
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
            names = facet_labels(builder, f, counts)
            options = [{"value": v, "text": names.get(v, v), "count": n} for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            offered.append({"name": f.name, "label": f.label, "options": options})
    # Only offered facets, and no attribute for an empty value (the script reads a missing one as empty).
    names = {o["name"] for o in offered}
    for row in rows:
        row["facets"] = {k: v for k, v in row["facets"].items() if k in names and v}
    return {"columns": columns, "rows": rows, "facets": offered}


def facet_labels(builder: _Builder, facet: V.Facet, counts: dict[str, int]) -> dict[str, str]:
    """``{value: "<title> [<value>]"}`` for the accelerator, engine and format facet values whose record has another title."""
    target = {"accelerator": "accelerator", "engine": "engine", "format": "quantization"}.get(facet.name)
    if not target:
        return {}
    out = {}
    for v in counts:
        rec = builder.kb.resolve(v, target)
        if rec is not None and builder.site.title(rec) != v:
            out[v] = f"{builder.site.title(rec)} [{v}]"
    return out


def table_cell(builder: _Builder, rec: Record, col: V.Column, raw: Any) -> dict[str, Any]:
    """One cell of a type table: ``{numeric, sort, links, text}``; reference fields become links, numbers get a sort key."""
    spec = builder.kb.profile.types.get(rec.type)
    last = col.path.rsplit(".", 1)[-1]
    is_ref = bool(spec and last in spec.refs and "." not in col.path)
    cell: dict[str, Any] = {"numeric": col.numeric, "sort": None, "links": None, "text": ""}
    if is_ref and raw:
        links = []
        for ref in raw if isinstance(raw, list) else [raw]:
            target = builder.site.linker.target(rec.type, last, ref) if isinstance(ref, str) else None
            links.append({"text": str(ref), "href": builder.site.linker.record_href(target) if target else None})
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
