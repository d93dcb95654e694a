"""The storage layer: read a KB in one pass, index its records, write them in checked batches.

``Store.load(path)`` walks ``data/<dir>/*.json`` once (:mod:`.loader`) and
keeps the problems met while loading as findings; records stay plain dicts
(``Record.data``) for speed. The :class:`~.index.Index` holds them with a
write counter, so every table derived from the records (ids, aliases,
resolver tables) rebuilds after a write. :meth:`Store.write_records`
(:mod:`.writer`) is the only way records reach disk.

This package imports nothing above it (no validation, audits or CLI); the
:class:`inferkb.KB` facade adds those on top.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import PROCESSING, KBNotFound, UsageError
from ..profile import Profile, TypeSpec, load_profile
from . import cache as load_cache
from .index import Index
from .loader import Loaded, load_records
from .records import KEBAB, MAX_ID_LENGTH, Record, bundled_root, check_id, gc_paused

if TYPE_CHECKING:
    from .writer import Check

T = TypeVar("T")

__all__ = ["Store", "locate", "Record", "Index", "KEBAB", "MAX_ID_LENGTH", "bundled_root", "check_id", "gc_paused", "Check"]


def __getattr__(name: str) -> Any:
    """``Check`` (the type of a write's record check), imported from :mod:`inferkb.store.writer` on first use."""
    if name == "Check":
        from .writer import Check

        return Check
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def locate(path: str | os.PathLike | None) -> tuple[Path, bool]:
    """``(resolved KB root, is_bundled)`` for ``path`` (``None`` = the bundled KB).

    Raises :class:`KBNotFound` if the path does not exist, is not a directory
    or has no ``data/`` directory.
    """
    bundled = path is None
    root = bundled_root() if bundled else Path(path)
    if not root.exists():
        raise KBNotFound(f"KB path {str(root)!r} does not exist")
    if not root.is_dir():
        raise KBNotFound(f"KB path {str(root)!r} is not a directory")
    if not (root / "data").is_dir():
        raise KBNotFound(f"KB path {str(root)!r} has no data/ directory; a KB keeps records in data/<type-dir>/<id>.json")
    return root.resolve(), bundled


# Keys of the records the loader proved free of KB112 candidates (a table of the index: dropped on any write).
_URL_CLEAR = "url_clear"
_DURATION_CLEAR = "duration_clear"
STAMPS = "load.stamps"  # {key: file stamp} seeded by load; an index table, so dropped on any write


def _marking(records: list[Record]) -> Iterator[Record]:
    """Yield ``records``, naming each in ``PROCESSING.record`` with the frame that iterates (see :func:`by_type`)."""
    loop = id(sys._getframe(1))  # the frame running the for loop: an error is this record's only if it passes there
    for rec in records:
        PROCESSING.record = (rec.path, loop)
        yield rec
    PROCESSING.record = None


class Store:
    """A loaded knowledge base, without the checks (see :class:`inferkb.KB` for those).

    Attributes: ``root`` (resolved Path), ``profile`` (:class:`Profile`),
    ``bundled`` (True for the KB shipped with inferkb), ``index``
    (:class:`Index`), ``records`` (read-only ``{key: Record}`` in load order),
    ``load_findings`` (problems met while reading files), ``files_seen``.
    """

    def __init__(self, root: Path, profile: Profile, *, bundled: bool = False) -> None:
        self.root = root
        self.profile = profile
        self.bundled = bundled
        self.index = Index()
        self.load_findings: list = []
        self.files_seen = 0
        self._memo: dict[str, Any] = {}

    # ---- loading -------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike | None = None, *, cache: bool | None = None, defer_save: bool = False):
        """Open the KB at ``path`` (``None`` = the bundled KB); returns an instance of ``cls``.

        ``cache`` (default: on unless ``INFERKB_NO_CACHE`` is set, see :mod:`inferkb.store.cache`) reuses
        the parsed object of every record file unchanged since an earlier load and keeps the cache up to date.
        ``defer_save``: the cache files are written by :meth:`save_load_cache` (``check`` runs it as one of its
        tasks, in a worker process when it has one) instead of before this returns.
        Raises :class:`KBNotFound` if the path does not exist, is not a
        directory or has no ``data/`` directory; :class:`KBError` if its
        ``kb.toml`` is malformed.
        """
        root, bundled = locate(path)
        store = cls(root, load_profile(root), bundled=bundled)
        store.use_cache = load_cache.enabled() if cache is None else cache and load_cache.cache_dir() is not None
        with gc_paused():
            file = load_cache.CacheFile(root, "load", store.cache_fingerprint()) if store.use_cache else None
            loaded = load_records(store.root, store.profile, cache=file)
            if file is not None:
                store.cache_hits = file.hits
                if defer_save:
                    store._unsaved_load_cache = file
                else:
                    file.save()
        store.install(loaded)
        return store

    _unsaved_load_cache = None  # the load cache file :meth:`load` was asked not to write yet

    def unsaved_load_cache_share(self) -> float:
        """The share of the records whose load cache entry is new and not yet written (0.0 when nothing is pending)."""
        file = self._unsaved_load_cache
        return len(file.fresh) / max(1, len(self.index.records)) if file is not None else 0.0

    def save_load_cache(self) -> bool:
        """Write the load cache files :meth:`load` left unwritten (``defer_save``), once; True when there were some."""
        file, self._unsaved_load_cache = self._unsaved_load_cache, None
        if file is None:
            return False
        file.save()
        return True

    def drop_load_cache(self) -> None:
        """Forget the unwritten load cache files (another process wrote them)."""
        self._unsaved_load_cache = None

    def install(self, loaded: Loaded) -> None:
        """Make what a loader read (:class:`~inferkb.store.loader.Loaded`) this store's records, load findings and
        file count, replacing any it had; the index starts afresh (version 0)."""
        self.index = Index(loaded.records)
        self.index.seed(_URL_CLEAR, loaded.url_clear)
        self.index.seed(_DURATION_CLEAR, loaded.duration_clear)
        self.index.seed(STAMPS, loaded.stamps)
        self.load_findings = loaded.findings
        self.files_seen = loaded.files_seen

    use_cache = False  # set by load: whether results may be kept in, and taken from, the on-disk load cache
    cache_hits = 0  # record files the load took from the cache (neither read nor parsed)

    def cache_fingerprint(self) -> str:
        """What the loader's results depend on besides the record files: inferkb's code, ``kb.toml``, the size limit
        and the type directories (:mod:`inferkb.store.cache`)."""
        dirs = ",".join(f"{d}={t.name}" for d, t in sorted(self.profile.by_dir().items()))
        toml = load_cache.digest_file(self.root / "kb.toml")
        return f"{load_cache.code_version()}|{toml}|{self.profile.max_record_bytes}|{dirs}"

    def file_stamp(self, rec: Record) -> str | None:
        """The cache stamp of ``rec``'s file as loaded, when ``rec`` is the indexed record unchanged since loading and
        the loader could stamp it (:func:`inferkb.store.cache.file_stamp`); else ``None``."""
        stamps = self.index.peek(STAMPS)
        if not stamps or self.index.records.get(rec.key) is not rec:
            return None
        return stamps.get(rec.key)

    # ---- caches ----------------------------------------------------------
    @property
    def records(self) -> Mapping[str, Record]:
        """``{key: Record}`` in load order (read-only; write with :meth:`write_records`)."""
        return self.index.records

    @property
    def version(self) -> int:
        """The index's write counter: 0 after loading, +1 for every change to the records."""
        return self.index.version

    def cached(self, name: str, build: Callable[[], T]) -> T:
        """A table derived from the records, rebuilt by ``build()`` after any write (see :class:`Index`)."""
        return self.index.cached(name, build)

    def url_scan_needed(self, rec: Record) -> bool:
        """False when the loader proved that ``rec`` (the indexed record, unchanged since loading) holds no string
        rule KB112 could report (:func:`inferkb.urls.may_hold_unsafe_url` on the bytes it parsed); else True."""
        clear = self.index.peek(_URL_CLEAR)
        return clear is None or rec.key not in clear or self.index.records.get(rec.key) is not rec

    def duration_scan_needed(self, rec: Record) -> bool:
        """False when the loader saw that ``"duration`` occurs nowhere in the bytes of ``rec`` (the indexed record,
        unchanged since loading), so rule KB122 has no run duration to read there; else True."""
        clear = self.index.peek(_DURATION_CLEAR)
        return clear is None or rec.key not in clear or self.index.records.get(rec.key) is not rec

    def memo(self, name: str, build: Callable[[], T]) -> T:
        """A value that depends on the KB's files other than records (schemas, metric registry): built once."""
        try:
            return self._memo[name]
        except KeyError:
            value = self._memo[name] = build()
            return value

    # ---- lookups -------------------------------------------------------
    @property
    def by_id(self) -> dict[str, list[Record]]:
        """Bare id -> records with that file stem (more than one = ambiguous across types)."""
        return self.index.by_id()

    def ids_of_type(self, type_name: str) -> set[str]:
        """Set of record ids of one type (exact type name)."""
        return self.index.ids_by_type().get(type_name, set())

    def by_type(self, type_name: str) -> Iterator[Record]:
        """Records of one type (name or directory, e.g. ``accelerator`` or ``accelerators``), in load order.

        Raises :class:`UsageError` for an unknown type. While a record is being
        handled, :data:`inferkb.errors.PROCESSING` names its file (so an
        internal error in an audit's loop names the record it failed on).
        """
        return _marking(self.index.of_type(self.type_spec(type_name).name))

    def type_spec(self, type_name: str) -> TypeSpec:
        """The :class:`TypeSpec` for a type name or its directory name; :class:`UsageError` when unknown."""
        spec = self.profile.types.get(type_name)
        if spec is None:
            spec = self.profile.by_dir().get(type_name)
        if spec is None:
            raise UsageError(f"unknown type {type_name!r}; types of this KB: {', '.join(sorted(self.profile.types))}")
        return spec

    def resolve(self, ref: str, type_name: str | None = None) -> Record | None:
        """Find a record by ``dir/id`` or bare id (optionally of one type); ``None`` if absent or ambiguous."""
        if "/" in ref:
            return self.index.records.get(ref)
        hits = self.index.by_id().get(ref, [])
        if type_name is not None:
            hits = [r for r in hits if r.type == type_name]
        return hits[0] if len(hits) == 1 else None

    def get(self, ref: str) -> Record:
        """Return the record for ``ref`` (bare id or ``dir/id``).

        Raises :class:`UsageError` for an unsafe id, an ambiguous bare id, or
        no such record (the message suggests near matches).
        """
        if "\x00" in ref or ".." in ref or ref.count("/") > 1 or "\\" in ref:
            raise UsageError(f"refused id {ref!r}: ids may not contain '..', '\\', NUL or more than one '/'")
        if "/" in ref:
            rec = self.index.records.get(ref)
        else:
            hits = self.index.by_id().get(ref, [])
            if len(hits) > 1:
                raise UsageError(f"id {ref!r} is ambiguous: {', '.join(h.key for h in hits)}; use dir/id")
            rec = hits[0] if hits else None
        if rec is None:
            near = self.suggest(ref)
            hint = f"; did you mean: {', '.join(near)}" if near else ""
            raise UsageError(f"no record {ref!r} in {self.root}{hint}")
        return rec

    def suggest(self, ref: str, limit: int = 5) -> list[str]:
        """Near matches for a missing id (rapid fuzzy ratio over keys and ids)."""
        from rapidfuzz import fuzz, process, utils

        bare = ref.split("/")[-1]
        hits = process.extract(
            bare,
            {k: k.split("/", 1)[1] for k in self.index.records},
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit,
            score_cutoff=60,
        )
        return [key for _, _, key in hits]

    # ---- writing -------------------------------------------------------
    def ensure_writable(self) -> None:
        """Refuse to write into the bundled KB of an installed package.

        The bundled KB may be edited from a source checkout (its maintainers grow
        it there); inside an installed wheel it is package data, and a write would
        silently change every user's KB. Raises :class:`UsageError` then.
        """
        if self.bundled and not (self.root.parents[2] / "pyproject.toml").is_file():
            raise UsageError(
                "refusing to write into the bundled KB of an installed inferkb; "
                "make a writable copy with `inferkb init ./my-kb --with-data` and pass --kb ./my-kb"
            )

    def write_lock(self):
        """Context manager: hold the KB-wide write lock (:func:`inferkb.store.lock.kb_lock`) across a read-modify-write.

        Re-entrant: :meth:`write_records` inside the block does not wait for it.
        Raises :class:`~inferkb.errors.WriteConflict` when another writer keeps it busy.
        """
        from .lock import kb_lock

        return kb_lock(self.root)

    def record_path(self, type_name: str, record_id: str) -> Path:
        """``data/<dir>/<id>.json`` under the KB root; raises UsageError for an unknown type or an unsafe id."""
        spec = self.type_spec(type_name)
        check_id(record_id)
        return self.root / "data" / spec.dir / f"{record_id}.json"

    def write_records(
        self,
        records: Sequence[dict[str, Any]],
        *,
        overwrite: bool = False,
        check: Check | None = None,
        texts: Mapping[str, str] | None = None,
        files: Sequence[tuple[str, str]] = (),
        basis: Mapping[str, str | None] | None = None,
    ) -> list[Record]:
        """Write a batch of records, all or nothing; see :func:`inferkb.store.writer.write_records`."""
        from .writer import write_records  # here: a read-only command does not import the write path (and its lock)

        return write_records(self, records, overwrite=overwrite, check=check, texts=texts, files=files, basis=basis)

    def write_record(self, data: dict[str, Any], *, overwrite: bool = False, check: Check | None = None) -> Record:
        """Write one record (a batch of one); see :meth:`write_records`."""
        return self.write_records([data], overwrite=overwrite, check=check)[0]
