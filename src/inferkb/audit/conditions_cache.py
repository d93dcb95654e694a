"""The load-conditions audit's reading of each unchanged benchmark file, kept between runs in the load cache.

A record's load-conditions result (its KB301-KB304 findings, what it adds to
the audit's figures and its :class:`~inferkb.audit.conditions_devices.DeviceCount`)
depends only on the record itself, on the engine names of its KB
(:func:`inferkb.resolve.engine_names`) and on the accelerator tokens of the
parts it names (:func:`inferkb.hardware.record_accelerator_tokens`). So it is
kept per record file (:mod:`inferkb.audit.record_cache`, kind ``conditions``)
with a digest of the engine names in the fingerprint and the record's sorted
accelerator tokens in the entry: an entry is used only while the file, the
fingerprint and the tokens are unchanged; anything else is read again.

A payload is ``[sorted tokens, row, device count]``: ``row`` is what
:func:`inferkb.audit.load_conditions.record_row` returns (finding rows and
figure keys), the device count ``[count, field, quote, reason]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import cache as load_cache
from . import record_cache
from .conditions_devices import DeviceCount

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KIND = "conditions"


def conditions_cache(kb: KB, engines: dict[str, tuple[str, ...]]) -> load_cache.CacheFile | None:
    """The ``conditions`` cache file of ``kb`` read with ``engines``, or ``None`` when the load cache is off."""
    return record_cache.open_cache(kb, KIND, lambda: record_cache.digest_of(engines))


def cached_reading(cache: load_cache.CacheFile | None, kb: KB, rec: Record, tokens: frozenset[str]) -> tuple[list, DeviceCount] | None:
    """``(row, device count)`` stored for ``rec`` when its file, the fingerprint and its accelerator tokens are unchanged."""
    want = sorted(tokens)
    payload = record_cache.stored(cache, kb, rec, lambda p: _well_formed(p) and p[0] == want)
    return None if payload is None else (payload[1], DeviceCount(*payload[2]))


def _well_formed(payload: object) -> bool:
    return (
        type(payload) is list
        and len(payload) == 3
        and type(payload[1]) is list
        and len(payload[1]) == 4
        and type(payload[2]) is list
        and len(payload[2]) == 4
    )


def keep_reading(cache: load_cache.CacheFile | None, kb: KB, rec: Record, tokens: frozenset[str], row: list, dev: DeviceCount) -> None:
    """Record a fresh reading of ``rec`` for the next run (nothing when the cache is off or the file has no stamp)."""
    record_cache.store(cache, kb, rec, [sorted(tokens), row, [dev.count, dev.field, dev.quote, dev.reason]])


def hit_share(kb: KB, engines: dict[str, tuple[str, ...]], records: list[Record]) -> float:
    """The share of ``records`` whose reading the cache holds for their current file stamp (0.0 when it is off)."""
    return record_cache.hit_share(conditions_cache(kb, engines), kb, records)
