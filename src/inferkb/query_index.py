"""The query catalogue: a SQLite copy of a KB's records with a full-text index, so ``search``, ``where`` and ``list``
answer without parsing every record file.

``Catalog.open(path)`` keeps one SQLite file per KB in the user's cache
directory (``$INFERKB_CACHE_DIR``, else ``$XDG_CACHE_HOME/inferkb``, else
``~/.cache/inferkb``; ``INFERKB_CACHE_DIR=`` (empty) keeps it in memory only).
Each open compares every record file's size, inode, mtime and ctime (one
``stat`` per file, no reads) with what the catalogue holds and re-reads only the
files that changed, through the store's own loader (the same parsing and
skipping rules as :func:`inferkb.open`). A file modified within two seconds of
being read is re-read on the next open (a second write inside the file system's
timestamp granularity would otherwise go unseen: git's "racy clean" rule).
The catalogue is a cache: deleting it only costs one rebuild, and a catalogue
that cannot be read or written is replaced by one in memory.

``Catalog.of(kb)`` builds the same tables in memory from a loaded
:class:`~inferkb.store.Store` (kept with ``kb.cached``, so rebuilt after a write).

Full-text search uses SQLite FTS5 (``unicode61`` tokenizer, so ``-``, ``_``,
``.`` and ``/`` separate words). Before indexing, and in every query word, a
zero-width space is put between a letter and a digit, so ``llama2-70b``,
``Llama-2-70B`` and ``llama2-70b-99`` all read as ``llama 2 70 b`` and
``H100`` as ``h 100``; each query word becomes a phrase, its last token a
prefix, so a name is found whole (``gpt-oss-120b``) and in part (``oss-120b``,
``120b``, ``hbm3``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .errors import UsageError
from .profile import Profile, load_profile
from .query_search import TIERS, record_snippet, search
from .query_text import _LETTER_DIGIT as _LETTER_DIGIT  # re-exported: the tests keep it as split_words' reference
from .query_text import ZWSP as ZWSP
from .query_text import _body, _words, fts_query, phrase_query, split_words, tokens
from .query_text import _flatten_values as _flatten_values  # re-exported for the tests
from .store import Record, locate

if TYPE_CHECKING:
    from .store import Store

__all__ = ["Catalog", "TIERS", "cache_dir", "fts_query", "phrase_query", "split_words", "tokens"]

FORMAT = "1"  # bump when tables, text normalisation or tokenizer change: old catalogues are rebuilt
RACY_NS = 2_000_000_000

# The full-text index keeps no copy of the text: its content is a view that re-derives each record's text from the
# stored JSON (kb_words, kb_body are registered on every connection), so the catalogue is about the size of the KB.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, stamp TEXT);
CREATE TABLE IF NOT EXISTS records(
    rid INTEGER PRIMARY KEY, key TEXT UNIQUE, type TEXT, id TEXT, path TEXT, name TEXT, names TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS records_type ON records(type);
CREATE INDEX IF NOT EXISTS records_path ON records(path);
CREATE TABLE IF NOT EXISTS names(norm TEXT, rid INTEGER);
CREATE INDEX IF NOT EXISTS names_norm ON names(norm);
CREATE VIEW IF NOT EXISTS fts_source(rid, ident, names, body) AS
    SELECT rid, kb_words(id), kb_words(names), kb_body(data) FROM records;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    ident, names, body, content='fts_source', content_rowid='rid', tokenize='unicode61');
"""


def cache_dir() -> Path | None:
    """Where on-disk catalogues live; ``None`` when ``INFERKB_CACHE_DIR`` is set empty (in-memory only).
    The same folder as the load cache's (:func:`inferkb.store.cache.cache_dir`)."""
    from .store.cache import cache_dir as folder

    return folder()


def _dumps(data: Any) -> str:
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # an integer beyond 64 bits (the strict loader keeps them)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def loads(text: str) -> Any:
    """Parse a catalogue row's JSON (orjson, or the standard library for integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _body_of_json(text: str | None) -> str:
    return _body(loads(text)) if text else ""


class Catalog:
    """The tables ``records`` (key, type, id, path, name, data as JSON), ``names`` (normalised id, name and aliases per
    record, as the resolver reads them) and ``fts`` of one KB. Build with :meth:`open` (on disk) or :meth:`of` (in memory).

    ``root`` and ``profile`` are the KB's; ``file`` is the SQLite file (``None`` in memory); ``refreshed`` counts the
    record files (re)read by the last open.
    """

    def __init__(self, con: sqlite3.Connection, root: Path, profile: Profile, file: Path | None = None) -> None:
        self.con = con
        self.root = root
        self.profile = profile
        self.file = file
        self.refreshed = 0

    # ---- building ------------------------------------------------------------
    @classmethod
    def of(cls, kb: Store) -> Catalog:
        """The catalogue of a loaded KB, in memory (cached on ``kb``; rebuilt after any write)."""

        def build() -> Catalog:
            cat = cls(_connect(":memory:"), kb.root, kb.profile)
            cat.con.executescript(_SCHEMA)
            with cat.con:
                cat._insert(kb.records.values())
            cat.refreshed = len(kb.records)
            return cat

        return kb.cached("query.catalog", build)

    @classmethod
    def open(cls, path: str | os.PathLike | None = None) -> Catalog:
        """The on-disk catalogue of the KB at ``path`` (``None`` = bundled), brought up to date with the files.

        Raises :class:`~inferkb.errors.KBNotFound` as :func:`inferkb.open` does. A catalogue file that is
        corrupt is rebuilt; one that cannot be opened or written falls back to memory.
        """
        root, _ = locate(path)
        profile = load_profile(root)
        folder = cache_dir()
        if folder is not None:
            file = folder / f"catalog-{hashlib.sha256(str(root).encode()).hexdigest()[:24]}.sqlite"
            for attempt in (1, 2):
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                    cat = cls(_connect(str(file)), root, profile, file)
                    cat._refresh()
                    return cat
                except sqlite3.DatabaseError as exc:
                    if attempt == 1 and not isinstance(exc, sqlite3.OperationalError):
                        _remove(file)  # corrupt or not a catalogue: a cache, so rebuild it
                        continue
                    break
                except OSError:
                    break
        cat = cls(_connect(":memory:"), root, profile)
        cat._refresh()
        return cat

    def _fingerprint(self) -> str:
        toml = self.root / "kb.toml"
        parts = [FORMAT, str(self.root), str(self.profile.max_record_bytes), ",".join(sorted(self.profile.by_dir()))]
        parts.append(hashlib.sha256(toml.read_bytes()).hexdigest() if toml.is_file() else "-")
        return "|".join(parts)

    def _refresh(self) -> None:
        fingerprint = self._fingerprint()
        if self.file is not None and _meta(self.con).get("fingerprint") not in (None, fingerprint):
            # another format, KB layout or kb.toml: start from an empty file rather than migrate a cache
            self.con.close()
            _remove(self.file)
            self.con = _connect(str(self.file))
        con = self.con
        con.executescript(_SCHEMA)
        started = time.time_ns()
        disk = _disk_state(self.root, self.profile, started)
        stored = dict(con.execute("SELECT path, stamp FROM files"))
        if _meta(con).get("fingerprint") == fingerprint and stored == disk:
            return
        con.execute("BEGIN IMMEDIATE")
        try:
            if _meta(con).get("fingerprint") != fingerprint:
                con.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            stored = dict(con.execute("SELECT path, stamp FROM files"))
            changed = {p for p, stamp in disk.items() if stored.get(p) != stamp}
            removed = set(stored) - set(disk)
            self._drop(changed | removed)
            con.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in removed])
            if changed:
                from .store.loader import load_records
                from .store.records import gc_paused

                with gc_paused():
                    loaded = load_records(self.root, self.profile, only=changed)
                    self._insert(loaded.records.values())
                con.executemany("INSERT OR REPLACE INTO files VALUES (?, ?)", [(p, disk[p]) for p in changed])
            self.refreshed = len(changed)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _drop(self, paths: Iterable[str]) -> None:
        rids = [rid for path in paths for (rid,) in self.con.execute("SELECT rid FROM records WHERE path = ?", (path,))]
        for rid in rids:
            # an external-content index is told the old text to forget: the view still derives it from the stored row
            self.con.execute(
                "INSERT INTO fts(fts, rowid, ident, names, body) SELECT 'delete', rid, ident, names, body FROM fts_source WHERE rid = ?",
                (rid,),
            )
            self.con.execute("DELETE FROM names WHERE rid = ?", (rid,))
            self.con.execute("DELETE FROM records WHERE rid = ?", (rid,))

    def _insert(self, records: Iterable[Record]) -> None:
        from .resolve import names_of, normalise

        con = self.con
        for rec in records:
            data = rec.data
            name = data.get("name")
            names = names_of(rec)
            others = "\n".join(names[1:])
            cur = con.execute(
                "INSERT INTO records(key, type, id, path, name, names, data) VALUES (?,?,?,?,?,?,?)",
                (rec.key, rec.type, rec.id, rec.path, name if isinstance(name, str) else "", others, _dumps(data)),
            )
            rid = cur.lastrowid
            norms = {normalise(n) for n in names} | {normalise(rec.key)}
            con.executemany("INSERT INTO names VALUES (?, ?)", [(n, rid) for n in norms if n])
            con.execute("INSERT INTO fts(rowid, ident, names, body) VALUES (?,?,?,?)", (rid, _words(rec.id), _words(others), _body(data)))

    # ---- reading ---------------------------------------------------------------
    def type_name(self, name: str) -> str:
        """The type for a type name or its directory (``benchmarks`` -> ``benchmark``); UsageError when unknown."""
        if name in self.profile.types:
            return name
        spec = self.profile.by_dir().get(name)
        if spec is None:
            raise UsageError(f"unknown type {name!r}; types of this KB: {', '.join(sorted(self.profile.types))}")
        return spec.name

    def rows(self, type_name: str | None = None, needles: Iterable[tuple[str, bool]] = ()) -> Iterator[tuple[str, str, str, Any]]:
        """``(key, type, path, data)`` of every record (of one type), in key order, whose JSON text contains every needle.

        A needle is ``(text, lower)``: ``lower`` compares with the ASCII-lower-cased JSON. Needles only narrow which rows
        are parsed: a condition is then tested exactly on the parsed data (:mod:`inferkb.query_expr`).
        """
        sql = ["SELECT key, type, path, data FROM records WHERE 1"]
        args: list[Any] = []
        if type_name:
            sql.append("AND type = ?")
            args.append(type_name)
        for text, lower in needles:
            sql.append("AND instr(lower(data), ?) > 0" if lower else "AND instr(data, ?) > 0")
            args.append(text)
        sql.append("ORDER BY key")
        for key, rtype, path, data in self.con.execute(" ".join(sql), args):
            yield key, rtype, path, loads(data)

    def get(self, key: str) -> tuple[str, str, str, Any] | None:
        """``(key, type, path, data)`` of one record by key, or ``None``."""
        row = self.con.execute("SELECT key, type, path, data FROM records WHERE key = ?", (key,)).fetchone()
        return None if row is None else (row[0], row[1], row[2], loads(row[3]))

    def count(self, type_name: str | None = None) -> int:
        """How many records (of one type) the catalogue holds."""
        if type_name:
            return self.con.execute("SELECT count(*) FROM records WHERE type = ?", (type_name,)).fetchone()[0]
        return self.con.execute("SELECT count(*) FROM records").fetchone()[0]

    def search(
        self, text: str, *, type_name: str | None = None, limit: int | None = 20, snippets: bool = True, closeness: bool = True
    ) -> list[dict[str, Any]]:
        """Ranked full-text hits for ``text`` in this catalogue: :func:`inferkb.query_search.search` (its tiers,
        :data:`TIERS`, the hit fields and the errors raised are documented there)."""
        return search(self.con, text, type_name=type_name, limit=limit, snippets=snippets, closeness=closeness)

    def snippet(self, key: str, text: str) -> str:
        """The matched words of ``text`` in record ``key``: :func:`inferkb.query_search.record_snippet`."""
        return record_snippet(self.con, key, text)


def _connect(target: str) -> sqlite3.Connection:
    con = sqlite3.connect(target, timeout=30, isolation_level=None)
    con.create_function("kb_words", 1, _words, deterministic=True)
    con.create_function("kb_body", 1, _body_of_json, deterministic=True)
    if target != ":memory:":
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=OFF")  # a cache: a torn write is detected as corruption and rebuilt
    return con


def _meta(con: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(con.execute("SELECT k, v FROM meta"))
    except sqlite3.OperationalError:  # no such table: a new file
        return {}


def _remove(file: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{file}{suffix}")
        except OSError:
            pass


def _disk_state(root: Path, profile: Profile, now_ns: int) -> dict[str, str]:
    """``{"data/<dir>/<name>.json": stamp}`` for every candidate record file: size, inode, mtime and ctime; a file touched
    within :data:`RACY_NS` of ``now_ns`` gets a stamp no later open will equal (so it is read again)."""
    from .store.loader import printable_name

    out: dict[str, str] = {}
    dirs = profile.by_dir()
    with os.scandir(root / "data") as top:
        for dentry in top:
            if dentry.name not in dirs or dentry.is_symlink() or not dentry.is_dir():
                continue  # a symlinked type folder is not followed, as the loader does not follow it (KB009, KB017)
            rel_dir = f"data/{dentry.name}/"
            with os.scandir(dentry.path) as it:
                for entry in it:
                    name = entry.name
                    if not name.endswith(".json") or name.startswith(".") or not printable_name(name):
                        continue  # (an unprintable or undecodable name is no record: the loader reports it, KB011)
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    newest = max(st.st_mtime_ns, st.st_ctime_ns)
                    racy = newest >= now_ns - RACY_NS
                    out[rel_dir + name] = f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}" + (f":racy{now_ns}" if racy else "")
    return out
