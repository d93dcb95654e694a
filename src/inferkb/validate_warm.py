"""Warm ``validate``: the unchanged record files are neither read nor parsed, nor taken whole from the load cache.

A validate needs of an unchanged file only what the findings cache already
holds for it: its per-record findings (schema and the rules of
:func:`inferkb.validate.record_rules`) and what the cross-record rules read of
it (:func:`inferkb.validate.cross_record_data`: ``sources``, the reference
fields, a repeat group member's whole data). :func:`validate_path` lists the
KB's record files (:func:`inferkb.store.loader.walk`), stamps each one as the
loader does (:func:`inferkb.store.loader.entry_stamp`: one ``lstat``) and takes
those entries for every file whose stamp is the stored one; only the other
files are read, parsed and checked, then the cross-record rules run over every
record as in :func:`inferkb.validate.validate`, so the report is the one a cold
run gives, finding for finding and in the same order. The load cache's shards
(each record's whole parsed object: at 20,000 records 30 MB of JSON, whose
decoding was most of a warm validate) are not read.

The same entries, the same stamps, the same invalidation as the findings cache
of :func:`inferkb.validate.validate` (file size, inode, mtime and ctime; code,
``kb.toml``, schemas, metric registries, jsonschema-rs build and today's date
in the fingerprint); a file changed since is checked afresh and its entry
replaced. It applies when the load cache is on and the findings cache holds
entries for this KB and day (else the caller loads the KB as usual, which
fills the cache).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable

from .kb import KB
from .profile import load_profile
from .report import Report
from .schemas import schema_set
from .store import Record, gc_paused, locate
from .store import cache as load_cache
from .store.cache import CacheFile, StampsOnly, now_ns
from .store.loader import Item, Loaded, entry_stamp, load_indexed, report_interrupted_writes, walk
from .validate import cached_findings, findings_cache, validate

__all__ = ["validate_path"]


def validate_path(
    path: str | os.PathLike | None,
    *,
    types: list[str] | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_dangling_refs: int | None = None,
    today: _dt.date | None = None,
    keep: Callable[[KB], object] | None = None,
) -> Report | None:
    """Open the KB at ``path`` and validate it from the findings cache; ``None`` when that does not apply (the load
    cache is off, or the findings cache holds nothing for this KB and day: load the KB with :func:`inferkb.open` and
    call :meth:`~inferkb.KB.validate`, which fills it).

    The options and the report are those of :func:`inferkb.validate.validate`. The KB given to ``keep`` (and used for
    the report) holds, for each record taken from the cache, only its :func:`~inferkb.validate.cross_record_data`:
    it is for this report, not for other queries. Raises what :func:`inferkb.open` and
    :func:`inferkb.validate.validate` raise (``KBNotFound``, ``KBError`` for a bad ``kb.toml``, ``UsageError`` for an
    unknown type).
    """
    if not load_cache.enabled():
        return None
    root, bundled = locate(path)
    kb = KB(root, load_profile(root), bundled=bundled)
    kb.use_cache = True
    today = today or _dt.date.today()
    with gc_paused():
        cache = findings_cache(kb, schema_set(kb), today)
        if cache is None or not cache.entries:
            return None
        if keep is not None:
            keep(kb)
        started = now_ns()  # before the walk, as the loader takes it
        items = walk(root, kb.profile)
        loaded, checked = _load(kb, items, cache, started)
        report_interrupted_writes(loaded, root, kb.profile)
        kb.install(loaded)
        options = {"types": types, "select": select, "ignore": ignore, "max_dangling_refs": max_dangling_refs}
        return validate(kb, **options, today=today, checked=checked, cache=cache)


def _load(kb: KB, items: list[Item], cache: CacheFile, started: int) -> tuple[Loaded, dict[str, list]]:
    """The walk's records in its order, and ``{key: per-record findings}`` of those taken from ``cache``.

    A file whose findings entry has its stamp becomes a record holding the entry's cross-record data; every other
    item is loaded as the loader does (read, parsed, stamped for the findings cache that :func:`validate` fills)."""
    stored = cache.entries
    placed: list[tuple[int, Record]] = []
    checked: dict[str, list] = {}
    rest: list[int] = []
    get = cache.get
    for i, item in enumerate(items):
        if type(item) is tuple:
            entry, spec = item
            rel = f"data/{spec.dir}/{entry.name}"
            # An entry is stored only for a file the loader stamped (a kebab-case .json name) under that file's path,
            # so a path found here names such a file; entry_stamp is None unless it is still a regular file.
            if rel in stored:
                found = cached_findings(get(rel, entry_stamp(entry, started)))
                if found is not None:
                    stem = entry.name[:-5]
                    key = f"{spec.dir}/{stem}"
                    placed.append((i, Record(key, stem, spec.name, spec.dir, rel, stored[rel][2])))  # positional: faster
                    checked[key] = found
                    continue
        rest.append(i)
    fresh = Loaded()
    record_items, finding_items = load_indexed(fresh, items, rest, kb.root, kb.profile, stamps=StampsOnly(), started=started)
    if record_items:  # two runs, each in walk order
        placed.extend(zip(record_items, fresh.records.values(), strict=True))
        placed.sort(key=_walk_index)
    out = Loaded(url_clear=fresh.url_clear, duration_clear=fresh.duration_clear, stamps=fresh.stamps)
    out.records = {rec.key: rec for _, rec in placed}
    out.files_seen = fresh.files_seen + len(checked)
    for _, found in finding_items:
        out.findings.extend(found)
    return out, checked


def _walk_index(pair: tuple[int, Record]) -> int:
    return pair[0]
