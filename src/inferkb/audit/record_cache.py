"""Per-record audit results kept between runs in the load cache, for audits whose result for one record depends
only on that record and on a digest of what else it reads.

An audit with such a result (load-conditions, physical-plausibility, citations,
metric-consistency) keeps, per record file, ``[stamp, payload]`` in a
:class:`~inferkb.store.cache.CacheFile` of its own ``kind``. The entry is used only while the file's stamp is the one
stored (the file unchanged, and the record not rewritten since loading:
:meth:`inferkb.store.Store.file_stamp`) and the shard's fingerprint is the
current one: the loader's (:meth:`inferkb.store.Store.cache_fingerprint`:
inferkb's code, ``kb.toml``, the layout) plus the audit's own digest of its
other inputs. A payload is stored only when it survives a JSON round trip
unchanged (no tuple, no NaN), so what a warm run rebuilds is what a cold run
computed. Off with the load cache (``--no-cache`` / ``INFERKB_NO_CACHE``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from ..findings import Finding
from ..store import cache as load_cache

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record


def open_cache(kb: KB, kind: str, digest: Callable[[], str]) -> load_cache.CacheFile | None:
    """The ``kind`` cache file of ``kb`` (fingerprint: the loader's plus ``digest()``), or ``None`` when caching is off.

    Opened once per KB object (a derived table, dropped after any write), so an
    audit's cost estimate and the audit itself (in this process or a worker
    forked after the estimate) share one read of the shards.
    """
    if not getattr(kb, "use_cache", False):
        return None
    return kb.cached(f"record_cache.{kind}", lambda: load_cache.CacheFile(kb.root, kind, f"{kb.cache_fingerprint()}|{digest()}"))


def stored(cache: load_cache.CacheFile | None, kb: KB, rec: Record, accept: Callable[[Any], bool] | None = None) -> Any:
    """The payload kept for ``rec`` when its file is unchanged (and ``accept(payload)``, when given, is true), else ``None``.

    Only a payload returned counts as a hit of the cache file (``cache.hits``).
    """
    if cache is None:
        return None
    entry = cache.entries.get(rec.key)
    if type(entry) is not list or len(entry) != 2 or (accept is not None and not accept(entry[1])):
        return None
    return entry[1] if cache.get(rec.key, kb.file_stamp(rec)) is not None else None


def store(cache: load_cache.CacheFile | None, kb: KB, rec: Record, payload: Any) -> None:
    """Keep ``payload`` (JSON data) for ``rec`` for the next run; nothing when caching is off, the file has no stamp
    or the payload would not come back from JSON as it is."""
    if cache is None:
        return
    stamp = kb.file_stamp(rec)
    if stamp is None:
        return
    try:
        same = orjson.loads(orjson.dumps(payload)) == payload
    except (TypeError, orjson.JSONEncodeError):
        return
    if same:
        cache.put(rec.key, [stamp, payload])


def hit_share(cache: load_cache.CacheFile | None, kb: KB, records: list[Record]) -> float:
    """The share of ``records`` whose entry matches their current file stamp (0.0 when caching is off)."""
    if cache is None or not records:
        return 0.0
    hits = 0
    for rec in records:
        entry = cache.entries.get(rec.key)
        if type(entry) is list and entry and entry[0] == kb.file_stamp(rec):
            hits += 1
    return hits / len(records)


def digest_of(*parts: Any) -> str:
    """A short hex digest of JSON-able ``parts`` (sorted keys)."""
    import hashlib

    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def finding_rows(findings: Iterable[Finding], rec: Record) -> list[list] | None:
    """``[code, rule, severity, message, field, evidence, extra]`` per finding, or ``None`` when one is not about ``rec``."""
    rows = []
    for f in findings:
        if f.record != rec.key or f.path != rec.path:
            return None
        rows.append([f.code, f.rule, f.severity, f.message, f.field, f.evidence, f.extra])
    return rows


def findings_from(rows: list[list], rec: Record) -> list[Finding]:
    """The findings :func:`finding_rows` stored, about ``rec`` again."""
    return [Finding(code, rule, sev, msg, rec.key, rec.path, field, ev, extra) for code, rule, sev, msg, field, ev, extra in rows]
