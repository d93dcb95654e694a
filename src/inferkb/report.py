"""The result of validate / audit / check: findings plus figures, one JSON shape.

``Report.to_dict()`` is what ``--format json`` prints (DESIGN.md):
``{"kb": path, "records": n, "findings": [...], "summary": {...}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .findings import Finding, fails, summarize
from .rules import matches


@dataclass
class Report:
    """Findings and figures of one run. ``figures`` maps an audit (or ``validate``) name to its numbers."""

    kb: str
    records: int
    findings: list[Finding] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def filtered(self, select: list[str] | None = None, ignore: list[str] | None = None) -> Report:
        """A copy keeping findings whose code matches ``select`` (all when empty) and not ``ignore`` (codes or prefixes)."""
        kept = [
            f
            for f in self.findings
            if (not select or matches(f.code, select)) and not matches(f.code, ignore)
        ]
        return Report(self.kb, self.records, kept, self.figures, self.notes)

    def extend(self, other: Report) -> None:
        self.findings.extend(other.findings)
        self.figures.update(other.figures)
        self.notes.extend(n for n in other.notes if n not in self.notes)

    def fails(self, fail_on: str = "error") -> bool:
        return fails(self.findings, fail_on)

    def summary(self) -> dict[str, Any]:
        out = summarize(self.findings)
        out["figures"] = self.figures
        if self.notes:
            out["notes"] = self.notes
        return out

    def to_dict(self) -> dict[str, Any]:
        self.findings.sort(key=Finding.sort_key)
        return {
            "kb": self.kb,
            "records": self.records,
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
