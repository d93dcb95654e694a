"""Audits: read-only checks over the whole KB that produce findings and figures.

Each audit is a module that decorates one function with :func:`audit`;
adding a built-in audit is adding a module here and naming it once in
:data:`inferkb.plugins.BUILTINS` ``["audits"]`` (another package uses the
``inferkb.audits`` entry-point group). An audit function takes the loaded
:class:`~inferkb.KB` and returns an :class:`AuditResult`; it never writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import UsageError
from ..findings import Finding
from ..report import Report

if TYPE_CHECKING:
    from ..kb import KB

# The built-in audit modules (short names), in the order `inferkb audit` / `check` run and print them;
# declared in inferkb.plugins.BUILTINS, kept here for code written before the registry.
AUDIT_MODULES = tuple(m.rsplit(".", 1)[1] for m in plugins.BUILTINS["audits"])


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


# The audits extension point's items: ``{name: AuditSpec}`` in registration order.
AUDITS: dict[str, AuditSpec] = plugins.AUDITS.items


def audit(name: str, description: str) -> Callable:
    """Decorator registering ``func(kb) -> AuditResult`` as the audit ``name`` (the one registration style for audits)."""

    def deco(func: Callable[[KB], AuditResult]) -> Callable[[KB], AuditResult]:
        plugins.AUDITS.register(name, AuditSpec(name, description, func), module=func.__module__)
        return func

    return deco


def load_all() -> dict[str, AuditSpec]:
    """Load every audit (built-in modules, then ``inferkb.audits`` entry points) and return ``{name: AuditSpec}``."""
    return plugins.AUDITS.load()


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
