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
        kept = [f for f in self.findings if (not select or matches(f.code, select)) and not matches(f.code, ignore)]
        return Report(self.kb, self.records, kept, self.figures, self.notes)

    def extend(self, other: Report) -> None:
        """Append another report's findings, figures and notes (used by ``check`` to merge validate and audits)."""
        self.findings.extend(other.findings)
        self.figures.update(other.figures)
        self.notes.extend(n for n in other.notes if n not in self.notes)

    def fails(self, fail_on: str = "error") -> bool:
        """True when a finding at or above ``fail_on`` severity remains (the CLI then exits 1)."""
        return fails(self.findings, fail_on)

    def summary(self) -> dict[str, Any]:
        """``{"by_code", "by_severity", "figures"[, "notes"]}`` as printed under ``summary``."""
        out = summarize(self.findings)
        out["figures"] = self.figures
        if self.notes:
            out["notes"] = self.notes
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document: ``{"kb", "records", "findings", "summary"}``, findings sorted by path and code."""
        self.findings.sort(key=Finding.sort_key)
        return {
            "kb": self.kb,
            "records": self.records,
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
