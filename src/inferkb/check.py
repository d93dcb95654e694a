"""``inferkb check``: the main job — validate, then every audit, one report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .report import Report

if TYPE_CHECKING:
    from .kb import KB


def check(
    kb: KB,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_dangling_refs: int | None = None,
    jobs: int = 1,
) -> Report:
    """Validate ``kb`` and run all audits; returns the merged :class:`Report` (validation findings first).

    Validation is one more task beside the audits, so on a large KB it runs in
    parallel with them (``jobs``: see :func:`inferkb.audit.run_audits`).
    """
    from functools import partial

    from .audit import run_audits
    from .parallel import Task
    from .validate import validate

    validation = Task("validate", partial(validate, kb, max_dangling_refs=max_dangling_refs), VALIDATE_COST)
    return run_audits(kb, jobs=jobs, before=validation).filtered(select, ignore)


# Validation's relative cost next to the audits' (see inferkb.audit.AuditSpec.cost).
VALIDATE_COST = 0.7
