"""The citations audit's result for each unchanged record file, kept between runs in the load cache.

A record's KB601/KB604 findings and whether the audit walked it field by
field (:func:`inferkb.audit.citations.record_findings`) depend on the record
itself (its data, id, type and file) and, through the KB, on three things
only: the id vocabulary (:func:`inferkb.audit.citations.source_id_vocabulary`,
ids and counts), the ids of the source records (KB601 says whether the cited
id has one) and each type's reference fields in the profile (they are not
searched). So the fingerprint of its cache file
(:mod:`inferkb.audit.record_cache`, kind ``citations``) adds a digest of
those: a new or removed source record, or a new id in any ``sources`` list,
scans every record again; an edited record is scanned again alone (its file
stamp). The ``docs/`` checks are not per record and always run.

Every record gets an entry, so a warm run does no work for a record with
nothing to report; a payload is kept small because there is one per record:
``0`` (not walked, nothing found), ``1`` (walked, nothing found) or the
non-empty list of :func:`inferkb.audit.record_cache.finding_rows` (walked).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..store import cache as load_cache
from . import record_cache

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KIND = "citations"
# What a record with nothing to report yields, shared: no allocation per record on a warm run.
_NOTHING: dict[int, tuple[Sequence[Finding], bool]] = {0: ((), False), 1: ((), True)}


def citations_cache(kb: KB, ids: Collection[str], counts: Mapping[str, int]) -> load_cache.CacheFile | None:
    """The ``citations`` cache file of ``kb`` for the vocabulary ``(ids, counts)``, or ``None`` when the load cache is off."""

    def digest() -> str:
        refs = {name: sorted(spec.refs) for name, spec in kb.profile.types.items()}
        return record_cache.digest_of(sorted(ids), dict(counts), sorted(kb.ids_of_type("source")), refs)

    return record_cache.open_cache(kb, KIND, digest)


def _well_formed(payload: object) -> bool:
    if type(payload) is int:
        return payload in (0, 1)
    return type(payload) is list and bool(payload) and all(type(row) is list and len(row) == 7 for row in payload)


def cached_result(cache: load_cache.CacheFile | None, kb: KB, rec: Record) -> tuple[Sequence[Finding], bool] | None:
    """``(findings, walked)`` stored for ``rec`` when its file and the fingerprint are unchanged, else ``None``."""
    payload = record_cache.stored(cache, kb, rec, _well_formed)
    if payload is None:
        return None
    if type(payload) is int:
        return _NOTHING[payload]
    return record_cache.findings_from(payload, rec), True


def keep_result(cache: load_cache.CacheFile | None, kb: KB, rec: Record, findings: list[Finding], walked: bool) -> None:
    """Record a fresh result of ``rec`` for the next run (nothing when the cache is off or the file has no stamp)."""
    if cache is None or (findings and not walked):  # a list payload reads back as walked
        return
    payload: Any = record_cache.finding_rows(findings, rec) if findings else int(walked)
    if payload is not None:
        record_cache.store(cache, kb, rec, payload)
