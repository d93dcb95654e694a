"""Audits: read-only checks over the whole KB that produce findings and figures.

Each audit is a module in this package that decorates one function with
:func:`audit`; adding an audit is adding a module and naming it in
:data:`AUDIT_MODULES`. An audit function takes the loaded :class:`~inferkb.store.KB`
and returns an :class:`AuditResult`; it never writes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..findings import Finding
from ..report import Report

if TYPE_CHECKING:
    from ..store import KB

# Order is the order `inferkb audit` / `check` run and print them.
AUDIT_MODULES = (
    "load_conditions",
    "metric_consistency",
    "plausibility",
    "model_geometry",
    "citations",
    "provenance_tiers",
    "identity",
    "staleness",
    "device_count",
    "datasheet",
)


@dataclass
class AuditResult:
    """What one audit found: ``findings`` and ``figures`` (a JSON-able dict of counts and lists)."""

    name: str
    findings: list[Finding] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditSpec:
    """A registered audit: ``name``, one-line ``description`` and ``func(kb) -> AuditResult``."""

    name: str
    description: str
    func: Callable[[KB], AuditResult]


AUDITS: dict[str, AuditSpec] = {}


def audit(name: str, description: str) -> Callable:
    """Decorator registering ``func(kb) -> AuditResult`` as the audit ``name``."""

    def deco(func: Callable[[KB], AuditResult]) -> Callable[[KB], AuditResult]:
        AUDITS[name] = AuditSpec(name, description, func)
        return func

    return deco


def load_all() -> dict[str, AuditSpec]:
    """Import every audit module (registering them) and return the registry."""
    for mod in AUDIT_MODULES:
        importlib.import_module(f"{__name__}.{mod}")
    return AUDITS


def run_audits(
    kb: KB,
    names: list[str] | None = None,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
) -> Report:
    """Run the named audits (all registered when ``None``) and merge them into one :class:`Report`.

    Raises :class:`UsageError` for an unknown audit name (the message lists the known ones).
    """
    registry = load_all()
    chosen = names or list(registry)
    unknown = [n for n in chosen if n not in registry]
    if unknown:
        raise UsageError(f"unknown audit {', '.join(unknown)}; audits: {', '.join(registry)}")
    report = Report(str(kb.root), len(kb.records))
    for name in chosen:
        result = registry[name].func(kb)
        report.findings.extend(result.findings)
        report.figures[name] = result.figures
    return report.filtered(select, ignore)
