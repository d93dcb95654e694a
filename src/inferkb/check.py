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
    parallel with them (``jobs``: see :func:`inferkb.audit.run_audits`); so is writing the load cache of a KB
    loaded with ``defer_save`` (:meth:`inferkb.store.Store.save_load_cache`).
    """
    from functools import partial

    from .audit import run_audits
    from .parallel import Task
    from .validate import validate

    validation = Task("validate", partial(validate, kb, max_dangling_refs=max_dangling_refs), VALIDATE_COST)
    share = kb.unsaved_load_cache_share()
    tasks = [Task("load cache", kb.save_load_cache, LOAD_CACHE_COST * share)] if share else []
    report = run_audits(kb, jobs=jobs, before=validation, first=tasks)
    if tasks:  # written here or by a worker (whose copy of the pending entries was the one written)
        kb.drop_load_cache()
    return report.filtered(select, ignore)


# Validation's relative cost next to the audits' (see inferkb.audit.AuditSpec.cost).
VALIDATE_COST = 0.7
# Writing the whole load cache, on the same scale: 0.95 s of CPU at 100,000 synthetic records on 2026-12-07, a day
# when validation took 0.26 s at 20,000 (so about 0.5 here). A KB loaded with ``defer_save`` (the CLI's check) has
# it written as one more task, in a worker when there is one, instead of before the audits start.
LOAD_CACHE_COST = 0.5
