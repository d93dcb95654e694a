"""The context of one record's page: its fields and facets, sources, outgoing links and back-references (grouped,
with a link to the filtered type table), known traps, provenance, findings, load conditions, arms and its strict
comparability class. :mod:`inferkb.site.build` renders it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ..traps import known_traps
from . import views as V
from .data import BANNERS

if TYPE_CHECKING:
    from ..store import Record
    from .build import _Builder

__all__ = ["MAX_BACKREFS", "backref_groups", "comparable", "record_context"]

MAX_BACKREFS = 100


def record_context(builder: _Builder, rec: Record, facets: tuple[V.Facet, ...]) -> dict[str, Any]:
    """The template context of ``rec``'s page (``record.html``): its fields, facets, sources, links both ways, traps,
    provenance, findings, load conditions, arms and comparability class; at most :data:`MAX_BACKREFS` back-references
    are listed (all are counted)."""
    site = builder.site
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
            if (vals := V.facet_values(builder.kb, rec, f, builder.computed))
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
            for g in known_traps(builder.kb, rec)
        ],
        "backref_groups": backref_groups(builder, rec, backrefs),
        "provenance": site.provenance(rec),
        "findings": findings,
        "load_conditions": lc,
        "lc_present": sum(1 for c in lc if c["status"] == "present"),
        "conditions": site.conditions(rec) if rec.type == "benchmark" else [],
        "arms": site.arms(rec),
        "comparable": comparable(builder, rec) if rec.type == "benchmark" else None,
        "current": rec.dir,
        "index_body": True,
    }
    return ctx


def comparable(builder: _Builder, rec: Record) -> dict[str, Any] | None:
    """The record's strict comparability class (:mod:`inferkb.site.comparable`) as plain values for the template."""
    from .comparable import CONDITION_LABELS, LENSES, MAX_LISTED, comparisons

    pl = comparisons(builder.kb).placement(rec)
    if pl is None:
        return None
    linker, kb = builder.site.linker, builder.kb

    def links(ids: list[str]) -> list[dict[str, Any]]:
        out = []
        for i in ids:
            target = kb.resolve(i, "benchmark")
            out.append({"text": builder.site.title(target) if target else i, "href": linker.record_href(target) if target else None})
        return out

    has_compare = any(x.slug == "compare" for x in builder.extra_pages)
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


def backref_groups(builder: _Builder, rec: Record, backrefs: list) -> list[dict[str, Any]]:
    """Back-references counted by (type, field), each with a link to that type's table filtered to this record when a facet allows."""
    counts: dict[tuple[str, str], int] = {}
    for b in backrefs:
        counts[(b.source.type, b.field)] = counts.get((b.source.type, b.field), 0) + 1
    out = []
    for (type_name, fld), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        spec = builder.kb.profile.types[type_name]
        facet = next((f for f in V.facets_for(type_name) if f.path == fld and not f.via), None)
        href = f"{spec.dir}/index.html?{urlencode({facet.name: rec.id})}" if facet else None
        out.append({"type": type_name, "field": fld, "count": n, "href": href, "label": V.BACKREF_LABELS.get((type_name, fld))})
    return out
