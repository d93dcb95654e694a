"""``inferkb check``: the main job — validate, then every audit, one report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .report import Report

if TYPE_CHECKING:
    from .kb import KB


def check(kb: KB, *, select: list[str] | None = None, ignore: list[str] | None = None, max_dangling_refs: int | None = None) -> Report:
    """Validate ``kb`` and run all audits; returns the merged :class:`Report`."""
    from .audit import run_audits

    report = kb.validate(max_dangling_refs=max_dangling_refs)
    report.extend(run_audits(kb))
    return report.filtered(select, ignore)
