"""The :class:`KB` facade: a :class:`~inferkb.store.Store` plus the checks that run over it.

``inferkb.open(path)`` returns a ``KB``. Storage (loading, lookups, the
write counter, batch writes) lives in :mod:`inferkb.store`, which imports
nothing above it; this module adds validation, audits, ``check`` and the
metric registry, and makes writes validate by default. Each method imports
its stage lazily, so opening a KB costs only what is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .store import Record, Store, gc_paused

if TYPE_CHECKING:
    from .report import Report
    from .store.writer import Check

__all__ = ["KB"]


def _validation_check(kb: Store, records: list[Record]) -> list:
    from .validate import validate_records

    return validate_records(kb, records)


class KB(Store):
    """A loaded knowledge base with its checks: ``validate()``, ``audit()``, ``check()``, ``metrics``.

    Everything of :class:`~inferkb.store.Store` (``records``, ``get``,
    ``resolve``, ``by_type``, ``write_records``, ...) is available; writes
    validate each record (schema, rules, references) before anything is written.
    """

    def validate(self, **options: Any) -> Report:
        """Run every validation rule; returns a :class:`inferkb.report.Report`. See :func:`inferkb.validate.validate`."""
        from .validate import validate

        with gc_paused():
            return validate(self, **options)

    def audit(self, *names: str, **options: Any) -> Report:
        """Run the named audits (all when none); returns a :class:`inferkb.report.Report`. See :func:`inferkb.audit.run_audits`."""
        from .audit import run_audits

        with gc_paused():
            return run_audits(self, list(names) or None, **options)

    def check(self, **options: Any) -> Report:
        """Validate, then run every audit; one combined :class:`inferkb.report.Report`. See :func:`inferkb.check.check`."""
        from .check import check

        with gc_paused():
            return check(self, **options)

    @cached_property
    def metrics(self) -> dict[str, dict[str, Any]]:
        """The metric registry ``{name: {dimension, unit, direction, ...}}`` from ``kb/metrics.json``; empty when the KB has none.

        Read once per KB object (validation asks for it once per record); it does not change with record writes.
        """
        from .metrics import load_metrics

        return load_metrics(self)

    def write_records(
        self,
        records: Sequence[dict[str, Any]],
        *,
        overwrite: bool = False,
        validate: bool = True,
        check: Check | None = None,
        texts: Mapping[str, str] | None = None,
        files: Sequence[tuple[str, str]] = (),
        basis: Mapping[str, str | None] | None = None,
    ) -> list[Record]:
        """Write a batch of records, all or nothing, validating each first unless ``validate=False``.

        ``check`` replaces the validation (for callers that checked already, such as
        derivations comparing errors before and after). Raises as
        :func:`inferkb.store.writer.write_records`: :class:`RecordInvalid` (with the
        findings) when a record has validation errors — nothing is written then.
        """
        if check is None and validate:
            check = _validation_check
        return super().write_records(records, overwrite=overwrite, check=check, texts=texts, files=files, basis=basis)

    def write_record(self, data: dict[str, Any], *, overwrite: bool = False, validate: bool = True) -> Record:
        """Validate ``data`` and write it atomically to ``data/<dir>/<id>.json``; see :meth:`write_records`.

        Raises :class:`UsageError` for a bad id or type, :class:`RecordExists` if
        the file exists and not ``overwrite``, :class:`RecordInvalid` if validation fails.
        """
        return self.write_records([data], overwrite=overwrite, validate=validate)[0]
