"""Derivations: backfills that write, with a dry-run diff by default, provenance, and a no-number-changed proof.

Each derivation is a module that decorates one function with
:func:`derivation`; adding a built-in one is adding a module here and naming
it once in :data:`inferkb.plugins.BUILTINS` ``["derivations"]`` (another
package uses the ``inferkb.derivations`` entry-point group). A derivation function takes the loaded KB and returns
a :class:`~inferkb.derive.base.DerivationOutput` (proposals + findings); it
never writes. :func:`run` places the proposals (record or sidecar, from the
KB's own schema), proves the result, renders the diff and, only with
``write=True`` and a passing proof, writes atomically.

Example::

    import inferkb
    from inferkb import derive
    kb = inferkb.open("path/to/kb")
    result = derive.run(kb, "format-id")           # dry run
    print(result.diff_text); print(result.proof.to_text())
    derive.run(kb, "format-id", write=True)         # raises DeriveRefused if the proof fails
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import KBError, UsageError
from ..findings import Finding, summarize
from . import apply
from .base import DerivationOutput, Proposal
from .proof import Proof

if TYPE_CHECKING:
    from ..kb import KB

# The built-in derivation modules (short names), in the order `inferkb derive list` shows them;
# declared in inferkb.plugins.BUILTINS, kept here for older code.
DERIVE_MODULES = tuple(m.rsplit(".", 1)[1] for m in plugins.BUILTINS["derivations"])

__all__ = ["DeriveResult", "DeriveRefused", "DerivationOutput", "Proposal", "derivation", "load_all", "run", "DERIVATIONS"]


@dataclass(frozen=True)
class DerivationSpec:
    """A registered derivation: ``name``, ``description``, the ``fields`` it may fill, ``func(kb) -> DerivationOutput``.

    ``computed``: the fields among ``fields`` whose values are numbers computed
    from the record's own numbers (the proof lets new numbers appear there only).
    """

    name: str
    description: str
    fields: tuple[str, ...]
    func: Callable[[KB], DerivationOutput]
    computed: tuple[str, ...] = ()


# The derivations extension point's items: ``{name: DerivationSpec}``.
DERIVATIONS: dict[str, DerivationSpec] = plugins.DERIVATIONS.items


def derivation(name: str, description: str, fields: tuple[str, ...], computed: tuple[str, ...] = ()) -> Callable:
    """Decorator registering ``func(kb) -> DerivationOutput`` as derivation ``name`` filling ``fields`` (``computed``: see DerivationSpec)."""

    def deco(func: Callable[[KB], DerivationOutput]) -> Callable[[KB], DerivationOutput]:
        plugins.DERIVATIONS.register(name, DerivationSpec(name, description, tuple(fields), func, tuple(computed)), module=func.__module__)
        return func

    return deco


def load_all() -> dict[str, DerivationSpec]:
    """Load every derivation (built-in modules, then ``inferkb.derivations`` entry points) and return the registry."""
    return plugins.DERIVATIONS.load()


@dataclass
class DeriveResult:
    """Outcome of one :func:`run`.

    ``changes`` (:class:`~inferkb.derive.apply.Change` list), ``findings``
    (ambiguities, missing evidence, refusals), ``diff_text`` (unified diff per
    file, then a summary table), ``proof`` (:class:`~inferkb.derive.proof.Proof`),
    ``written`` (True only after a successful write), ``files`` (KB-relative
    paths planned or written), ``counts`` (per field: filled / ambiguous /
    no evidence / conflict).
    """

    name: str
    kb: str
    changes: list[apply.Change] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    diff_text: str = ""
    proof: Proof = field(default_factory=Proof)
    written: bool = False
    files: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        """True when the run cannot be written (proof failed or a write would add validation errors)."""
        return not self.proof.ok or any(f.code == "KB1004" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "derivation": self.name,
            "kb": self.kb,
            "written": self.written,
            "files": self.files,
            "changes": [c.to_dict() for c in self.changes],
            "findings": [f.to_dict() for f in sorted(self.findings, key=Finding.sort_key)],
            "proof": self.proof.to_dict(),
            "summary": {"counts": self.counts, **summarize(self.findings)},
        }


class DeriveRefused(KBError):
    """``write=True`` was asked but the proof failed or a record would stop validating; nothing was written.

    ``result`` carries the dry-run :class:`DeriveResult` with the reasons.
    """

    exit_code = 1

    def __init__(self, message: str, result: DeriveResult) -> None:
        self.result = result
        super().__init__(message)


def _counts(spec: DerivationSpec, changes: list[apply.Change], findings: list[Finding]) -> dict[str, dict[str, int]]:
    out = {f: {"filled": 0, "ambiguous": 0, "no_evidence": 0, "conflict": 0} for f in spec.fields}
    kinds = {"KB1001": "ambiguous", "KB1002": "no_evidence", "KB1003": "conflict"}
    for c in changes:
        out.setdefault(c.field, {"filled": 0, "ambiguous": 0, "no_evidence": 0, "conflict": 0})["filled"] += 1
    for f in findings:
        if f.code in kinds and f.field in out:
            out[f.field][kinds[f.code]] += 1
    return out


def run(kb: KB, name: str, *, write: bool = False, today: _dt.date | None = None) -> DeriveResult:
    """Run derivation ``name`` on ``kb``; dry run unless ``write``.

    ``today`` dates the provenance entries (default: today). Raises
    :class:`UsageError` for an unknown name, :class:`DeriveRefused` when
    ``write`` is asked and the proof fails or a touched record would gain
    validation errors (nothing is written then), ``OSError`` if a file
    cannot be written (files already written are complete; see
    :mod:`inferkb.derive.apply` for the order).
    """
    registry = load_all()
    if name not in registry:
        raise UsageError(f"unknown derivation {name!r}; derivations: {', '.join(registry)}")
    spec = registry[name]
    today = today or _dt.date.today()
    output = spec.func(kb)
    changes, writes, refusals = apply.plan(kb, f"derive:{name}", spec.fields, output.proposals, today)
    refusals += apply.validation_regressions(kb, writes)
    proof = apply.prove(writes, spec.computed)
    diff = apply.unified_diff(writes)
    table = apply.summary_table(changes)
    result = DeriveResult(
        name=name,
        kb=str(kb.root),
        changes=changes,
        findings=list(output.findings) + refusals,
        diff_text=(diff + "\n" if diff else "") + table + "\n",
        proof=proof,
        files=[w.rel for w in writes],
        counts=_counts(spec, changes, output.findings),
    )
    if write and writes:
        if result.refused:
            raise DeriveRefused(
                f"derivation {name} refused to write: " + ("; ".join(f.message for f in refusals[:3]) or proof.to_text()), result
            )
        result.files = apply.write_all(kb, writes)
        result.written = True
    return result
