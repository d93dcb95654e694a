"""The one shape every check reports in (DESIGN.md, "Findings").

A :class:`Finding` is a value: validate, audit, derive and intake all return
lists of them, reporters render them, and the CLI maps the worst severity that
was asked to fail onto the exit code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SEVERITIES = ("info", "warning", "error")
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}


@dataclass(slots=True)
class Finding:
    """One problem (or fact worth reporting) about one record or file.

    Fields follow DESIGN.md: ``code`` (stable, e.g. ``"KB301"``), ``rule`` (its
    slug), ``severity`` (``info`` | ``warning`` | ``error``), ``record``
    (``"<dir>/<id>"`` or ``None`` for KB-level findings), ``path`` (file path
    relative to the KB root), ``field`` (dotted path inside the record),
    ``message`` (one sentence for a human) and ``evidence``
    (``{"field": ..., "quote": ...}`` or ``None``). ``extra`` carries
    machine-readable details (candidates, counts) and is emitted in JSON.
    """

    code: str
    rule: str
    severity: str
    message: str
    record: str | None = None
    path: str | None = None
    field: str | None = None
    evidence: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the DESIGN.md JSON shape (``extra`` only when present)."""
        out: dict[str, Any] = {
            "code": self.code,
            "rule": self.rule,
            "severity": self.severity,
            "record": self.record,
            "path": self.path,
            "field": self.field,
            "message": self.message,
            "evidence": self.evidence,
        }
        if self.extra:
            out["extra"] = self.extra
        return out

    def sort_key(self) -> tuple:
        """Order for reports: by path, then code, field and message."""
        return (self.path or "", self.code, self.field or "", self.message)


def summarize(findings: Iterable[Finding]) -> dict[str, Any]:
    """Count findings by code and by severity.

    Returns ``{"by_code": {code: n}, "by_severity": {"error": n, "warning": n, "info": n}}``.
    """
    by_code: Counter[str] = Counter()
    by_sev: Counter[str] = Counter({s: 0 for s in SEVERITIES})
    for f in findings:
        by_code[f.code] += 1
        by_sev[f.severity] += 1
    return {"by_code": dict(sorted(by_code.items())), "by_severity": {s: by_sev[s] for s in reversed(SEVERITIES)}}


def worst_severity(findings: Iterable[Finding]) -> str | None:
    """Return the highest severity present, or ``None`` for no findings."""
    worst = -1
    for f in findings:
        worst = max(worst, SEVERITY_RANK[f.severity])
    return SEVERITIES[worst] if worst >= 0 else None


def fails(findings: Iterable[Finding], fail_on: str = "error") -> bool:
    """True when any finding is at or above ``fail_on`` severity."""
    threshold = SEVERITY_RANK[fail_on]
    return any(SEVERITY_RANK[f.severity] >= threshold for f in findings)
