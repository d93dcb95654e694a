"""Audit ``distinct-names``: benchmark records that share a ``name``.

KB1401 ``duplicate-name`` (warning): the site, ``show``, ``compare`` and the
rankings print names; two different records under one name look like one
record printed twice, or hide that they are repeats. One finding per record
of a group, naming every other id. ``inferkb derive distinct-names`` fixes
the groups whose records hold a distinguishing fact.

Figures: ``{"benchmarks": n, "groups": n, "records": n}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB

KB1401 = register(
    Rule(
        "KB1401",
        "duplicate-name",
        "warning",
        "distinct-names",
        "Two or more benchmark records share one name.",
        "Names are what readers see in the site, show, compare and rankings; identical names make different records look like "
        "duplicates or hide that they are repeats. Put the distinguishing fact (dashboard, run time, platform, repeat) in the name.",
        '"name": "... batch 64 (Perplexity dashboard)" and "name": "... batch 64 (Throughput dashboard)"',
        '"name": "... batch 64" on both lib-perplexity-...-bs64 and lib-throughput-...-bs64',
    )
)


@audit("distinct-names", "benchmark records that share a name (KB1401)", cost=0.01)
def run(kb: KB) -> AuditResult:
    """KB1401 for every benchmark whose ``name`` another benchmark also has."""
    result = AuditResult("distinct-names")
    by_name: dict[str, list] = {}
    count = 0
    for rec in kb.by_type("benchmark"):
        count += 1
        name = rec.data.get("name")
        if isinstance(name, str):
            by_name.setdefault(name, []).append(rec)
    groups = [g for g in by_name.values() if len(g) > 1]
    for group in groups:
        for rec in group:
            others = sorted(o.id for o in group if o is not rec)
            result.findings.append(
                KB1401.finding(
                    f"name {rec.data['name']!r} is also the name of {', '.join(others)}",
                    record=rec.key,
                    path=rec.path,
                    field="name",
                    extra={"others": others},
                )
            )
    result.figures = {"benchmarks": count, "groups": len(groups), "records": sum(len(g) for g in groups)}
    return result
