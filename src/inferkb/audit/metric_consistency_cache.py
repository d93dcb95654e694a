"""The metric-consistency audit's result for each unchanged benchmark file, kept between runs in the load cache.

A benchmark's KB401-KB406 findings and what it adds to the audit's figures
(:func:`inferkb.audit.metric_consistency.check_record`) depend on the record
itself and, through the KB, only on the metric registries (the KB's and the
bundled one, :func:`inferkb.audit.metric_consistency.metric_info`). So the
fingerprint of its cache file (:mod:`inferkb.audit.record_cache`, kind
``metric-consistency``) adds a digest of both registries: another registry
checks every benchmark again; an edited benchmark is checked again alone (its
file stamp).

Every benchmark gets an entry; a payload is kept small because there is one
per benchmark: ``-1`` (no registry describes its metric: skipped), ``n >= 0``
(checked, ``n`` quoted percentages recomputed, nothing found) or
``[n, finding rows]`` (checked, with the rows of
:func:`inferkb.audit.record_cache.finding_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..metrics import bundled_metrics
from ..store import cache as load_cache
from . import record_cache

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KIND = "metric-consistency"
SKIPPED = -1  # the "percent quotes checked" of a record whose metric no registry describes
# What a benchmark with nothing to report yields, one shared value per count: no allocation per record on a warm run.
_NOTHING: dict[int, tuple[Sequence[Finding], int]] = {}


def metric_consistency_cache(kb: KB) -> load_cache.CacheFile | None:
    """The ``metric-consistency`` cache file of ``kb``, or ``None`` when the load cache is off."""
    return record_cache.open_cache(kb, KIND, lambda: record_cache.digest_of(kb.metrics, bundled_metrics()))


def _well_formed(payload: object) -> bool:
    if type(payload) is int:
        return payload >= SKIPPED
    return (
        type(payload) is list
        and len(payload) == 2
        and type(payload[0]) is int
        and payload[0] >= 0
        and type(payload[1]) is list
        and bool(payload[1])
        and all(type(row) is list and len(row) == 7 for row in payload[1])
    )


def cached_result(cache: load_cache.CacheFile | None, kb: KB, rec: Record) -> tuple[Sequence[Finding], int] | None:
    """``(findings, percent quotes checked or SKIPPED)`` stored for ``rec`` when its file and the fingerprint are
    unchanged, else ``None``."""
    payload = record_cache.stored(cache, kb, rec, _well_formed)
    if payload is None:
        return None
    if type(payload) is int:
        nothing = _NOTHING.get(payload)
        if nothing is None:
            nothing = _NOTHING[payload] = ((), payload)
        return nothing
    return record_cache.findings_from(payload[1], rec), payload[0]


def keep_result(cache: load_cache.CacheFile | None, kb: KB, rec: Record, findings: list[Finding], quotes_checked: int) -> None:
    """Record a fresh result of ``rec`` for the next run (nothing when the cache is off or the file has no stamp)."""
    if cache is None or (findings and quotes_checked == SKIPPED):  # a skipped record has no findings to keep
        return
    rows = record_cache.finding_rows(findings, rec) if findings else None
    payload: Any = [quotes_checked, rows] if findings else quotes_checked
    if not findings or rows is not None:
        record_cache.store(cache, kb, rec, payload)
