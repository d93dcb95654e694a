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
from functools import partial
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import PROCESSING, UsageError
from ..findings import Finding
from ..parallel import Task, run_tasks
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
    """A registered audit: ``name``, one-line ``description``, ``func(kb) -> AuditResult``, ``cost`` and ``group``.

    ``cost`` is the audit's relative run time (seconds per 20,000 synthetic
    records, ``benchmarks/bench_audit.py``), used only to balance audits
    across worker processes (:mod:`inferkb.parallel`); it may be a function
    ``cost(kb) -> float`` estimating it for one KB. Audits that share a
    ``group`` run in one process, in registration order, so a later one
    reuses what an earlier one cached on the KB (:meth:`inferkb.KB.cached`).
    """

    name: str
    description: str
    func: Callable[[KB], AuditResult]
    cost: float | Callable[[KB], float] = 0.2
    group: str | None = None


# Below this many records an audit run is too short for a worker process to pay off.
PARALLEL_MIN_RECORDS = 5000


# The audits extension point's items: ``{name: AuditSpec}`` in registration order.
AUDITS: dict[str, AuditSpec] = plugins.AUDITS.items


def audit(name: str, description: str, *, cost: float | Callable[[KB], float] = 0.2, group: str | None = None) -> Callable:
    """Decorator registering ``func(kb) -> AuditResult`` as the audit ``name`` (the one registration style for audits).

    ``cost``: relative run time, see :class:`AuditSpec` (a guess is fine; it only balances parallel runs);
    ``group``: run in the same process as the other audits of this group (see :class:`AuditSpec`).
    """

    def deco(func: Callable[[KB], AuditResult]) -> Callable[[KB], AuditResult]:
        plugins.AUDITS.register(name, AuditSpec(name, description, func, cost, group), module=func.__module__)
        return func

    return deco


def load_all() -> dict[str, AuditSpec]:
    """Load every audit (built-in modules, then ``inferkb.audits`` entry points) and return ``{name: AuditSpec}``."""
    return plugins.AUDITS.load()


def _cost(spec: AuditSpec, kb: KB) -> float:
    """``spec.cost``, or what ``spec.cost(kb)`` estimates for this KB (an audit with a cache costs less when it is warm)."""
    return float(spec.cost(kb)) if callable(spec.cost) else spec.cost


def _audit_under(name: str, func: Any, kb: Any) -> Any:
    """Run one audit with :data:`~inferkb.errors.PROCESSING` naming it (for the CLI's internal-error line)."""
    with PROCESSING.on(f"audit {name}"):
        return func(kb)


def run_audits(
    kb: KB,
    names: list[str] | None = None,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    jobs: int = 1,
    before: Task | None = None,
    first: list[Task] | tuple[Task, ...] = (),
) -> Report:
    """Run the named audits (all registered when ``None``) and merge them into one :class:`Report`.

    With ``jobs`` > 1, on a KB of at least :data:`PARALLEL_MIN_RECORDS`
    records, the audits run in up to ``jobs`` forked processes
    (:func:`inferkb.parallel.run_tasks`; the CLI passes the CPUs available);
    the report is the same as a serial run's, findings in audit order. The
    default is serial: forking a program that runs threads (a notebook
    kernel) is not safe. ``before`` is one more task (``check``
    passes validation) whose :class:`Report` comes first in the result. ``first`` are tasks whose results are
    not part of the report (``check``'s write of the load cache), placed before every other task so that each
    runs first in whichever process it lands, before any audit has run there.
    Raises :class:`UsageError` for an unknown audit name (the message lists the known ones).
    """
    registry = load_all()
    chosen = names or list(registry)
    unknown = [n for n in chosen if n not in registry]
    if unknown:
        raise UsageError(f"unknown audit {', '.join(unknown)}; audits: {', '.join(registry)}")
    tasks = [
        Task(name, partial(_audit_under, name, registry[name].func, kb), _cost(registry[name], kb), registry[name].group) for name in chosen
    ]
    if before is not None:
        tasks.insert(0, before)
    tasks[:0] = first
    if len(kb.records) < PARALLEL_MIN_RECORDS:
        jobs = 1
    results = run_tasks(tasks, jobs=jobs)[len(first) :]
    report = results.pop(0) if before is not None else Report(str(kb.root), len(kb.records))
    for name, result in zip(chosen, results, strict=True):
        report.findings.extend(result.findings)
        report.figures[name] = result.figures
    return report.filtered(select, ignore)
