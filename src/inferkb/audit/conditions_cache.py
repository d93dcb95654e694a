"""The load-conditions audit's reading of each unchanged benchmark file, kept between runs in the load cache.

A record's load-conditions result (its KB301-KB304 findings, what it adds to
the audit's figures and its :class:`~inferkb.audit.conditions_devices.DeviceCount`)
depends only on the record itself, on the engine names of its KB
(:func:`inferkb.resolve.engine_names`) and on the accelerator tokens of the
parts it names (:func:`inferkb.hardware.record_accelerator_tokens`). So it is
kept per record file in a :class:`~inferkb.store.cache.CacheFile` of kind
``conditions``, under the same rules as the loader's entries: an entry is used
only while the file's stamp is the one stored (the file unchanged, and the
record not rewritten since loading: :meth:`inferkb.store.Store.file_stamp`),
the shard's fingerprint (the loader's, plus a digest of the engine names) is
the current one, and the accelerator tokens stored in the entry equal the
record's tokens now. Anything else is read again. Off with the load cache
(``--no-cache`` / ``INFERKB_NO_CACHE``; the test suite runs with it off).

An entry is ``[stamp, sorted tokens, row, device count]``: ``row`` is what
:func:`inferkb.audit.load_conditions.record_row` returns (finding rows and
figure keys), the device count ``[count, field, quote, reason]``.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import orjson

from ..store import cache as load_cache
from .conditions_devices import DeviceCount

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

KIND = "conditions"
_TABLE = "conditions.cache"


def conditions_cache(kb: KB, engines: dict[str, tuple[str, ...]]) -> load_cache.CacheFile | None:
    """The ``conditions`` cache file of ``kb`` read with ``engines``, or ``None`` when the load cache is off.

    Opened once per KB (a derived table: dropped after a write), so the audit's
    cost estimate and the audit itself (in the same process, or in a worker
    forked after the estimate) share one read of the shards.
    """
    if not getattr(kb, "use_cache", False):
        return None

    def build() -> load_cache.CacheFile:
        names = hashlib.sha256(orjson.dumps(engines, option=orjson.OPT_SORT_KEYS)).hexdigest()
        return load_cache.CacheFile(kb.root, KIND, f"{kb.cache_fingerprint()}|{names}")

    return kb.cached(_TABLE, build)


def cached_reading(cache: load_cache.CacheFile | None, kb: KB, rec: Record, tokens: frozenset[str]) -> tuple[list, DeviceCount] | None:
    """``(row, device count)`` stored for ``rec`` when its file, the fingerprint and its accelerator tokens are unchanged."""
    if cache is None:
        return None
    entry = cache.entries.get(rec.key)
    if type(entry) is not list or len(entry) != 4 or entry[1] != sorted(tokens):
        return None
    if cache.get(rec.key, kb.file_stamp(rec)) is None:
        return None
    dev = entry[3]
    if type(entry[2]) is not list or type(dev) is not list or len(dev) != 4:
        return None
    return entry[2], DeviceCount(*dev)


def keep_reading(cache: load_cache.CacheFile | None, kb: KB, rec: Record, tokens: frozenset[str], row: list, dev: DeviceCount) -> None:
    """Record a fresh reading of ``rec`` for the next run (nothing when the cache is off or the file has no stamp)."""
    if cache is None:
        return
    stamp = kb.file_stamp(rec)
    if stamp is not None:
        cache.put(rec.key, [stamp, sorted(tokens), row, [dev.count, dev.field, dev.quote, dev.reason]])


def hit_share(kb: KB, engines: dict[str, tuple[str, ...]], records: list[Record]) -> float:
    """The share of ``records`` whose reading the cache holds for their current file stamp (0.0 when it is off)."""
    cache = conditions_cache(kb, engines)
    if cache is None or not records:
        return 0.0
    hits = 0
    for rec in records:
        entry = cache.entries.get(rec.key)
        if type(entry) is list and entry and entry[0] == kb.file_stamp(rec):
            hits += 1
    return hits / len(records)
