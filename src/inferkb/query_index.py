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
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .errors import UsageError
from .profile import Profile, load_profile
from .store import Record, locate

if TYPE_CHECKING:
    from .store import Store

__all__ = ["Catalog", "TIERS", "cache_dir", "fts_query", "phrase_query", "split_words", "tokens"]

FORMAT = "1"  # bump when tables, text normalisation or tokenizer change: old catalogues are rebuilt
RACY_NS = 2_000_000_000
ZWSP = "\u200b"
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
_DIGITS = re.compile(r"\d+")
_HAS_DIGIT = re.compile(r"\d")
_HAS_WORD = re.compile(r"[^\W_]")
_TOKEN = re.compile(r"[^\W_]+")
# What each search tier means (Catalog.search ranks tier 1 first, BM25 within a tier).
TIERS = {
    1: "the id, name or an alias is the text (any case, spacing, punctuation)",
    2: "the id, name or an alias holds the text as a phrase",
    3: "the record's text holds the text as a phrase",
    4: "the record's text holds every word",
}
# Column weights of bm25(): a hit in the id counts 10x, in a name or alias 5x, in the rest of the record 1x.
_WEIGHTS = "10.0, 5.0, 1.0"

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


def split_words(text: str) -> str:
    """``text`` with a zero-width space between each letter and digit (``"H100"`` -> ``"H\\u200b100"``): what FTS5 indexes.

    Letters are ``[^\\W\\d_]`` (``str.isalnum()`` and not a decimal digit), digits ``\\d`` (``str.isdecimal()``). Each run
    of digits is matched once and its two neighbours looked at: on the bundled KB's 31 MB of record text this takes
    about half the CPU of a zero-width lookaround tried at every position (:data:`_LETTER_DIGIT`, kept as the
    reference in the tests).
    """
    if not _HAS_DIGIT.search(text):
        return text
    end = len(text)

    def mark(m: re.Match[str]) -> str:
        start, stop = m.span()
        run = m.group()
        if start and (c := text[start - 1]).isalnum() and not c.isdecimal():
            run = ZWSP + run
        if stop < end and (c := text[stop]).isalnum() and not c.isdecimal():
            run += ZWSP
        return run

    return _DIGITS.sub(mark, text)


def _prefix(parts: list[str]) -> bool:
    """Whether the last of a word's tokens also matches as a prefix: letters only, three characters or more.

    A prefix of one or two characters ("b" of "70b") would expand to thousands of index terms for no gain, and a number
    matches as written ("70" must not find "700", "3.1" not "3.10").
    """
    return bool(parts) and len(parts[-1]) >= 3 and not any(c.isdigit() for c in parts[-1])


def _quoted(text: str) -> str:
    """``text`` as one FTS5 phrase (letter/digit split, quotes doubled), its last token a prefix when :func:`_prefix` allows."""
    star = " *" if _prefix(_TOKEN.findall(split_words(text))) else ""
    return '"' + split_words(text).replace('"', '""') + '"' + star


def fts_query(text: str) -> str:
    """The FTS5 MATCH expression for user ``text``: each whitespace-separated word a phrase whose last token is a prefix
    (letters, three or more; see :func:`_prefix`), all required. Raises :class:`UsageError` when no word has a letter or
    digit."""
    words = [w for w in text.split() if _HAS_WORD.search(w)]
    if not words:
        raise UsageError("search text is empty; give at least one word with a letter or digit")
    return " ".join(_quoted(word) for word in words)


def phrase_query(text: str, columns: tuple[str, ...] = ()) -> str:
    """The FTS5 MATCH expression for the whole of ``text`` as one phrase (its words in a row, in order), in ``columns``
    only when given (``("ident", "names")``: the id, name and aliases). Same tokens and prefix rule as :func:`fts_query`;
    call that first to refuse text without a word."""
    words = " ".join(w for w in text.split() if _HAS_WORD.search(w))
    return ("{" + " ".join(columns) + "} : " if columns else "") + _quoted(words)


def tokens(text: str) -> tuple[str, ...]:
    """The case-folded index tokens of ``text`` (``"Llama3.1-70B"`` -> ``("llama", "3", "1", "70", "b")``): two texts
    with the same tokens name the same thing up to case, spaces, punctuation and letter/digit joins."""
    return tuple(t.casefold() for t in _TOKEN.findall(split_words(text)))


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


def _flatten_values(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten_values(v, out)
    elif isinstance(value, list):
        for v in value:
            _flatten_values(v, out)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))


def query_terms(text: str) -> list[list[tuple[str, bool]]]:
    """The phrases of user ``text`` as :func:`fts_query` matches them: per word ``[(token, is_prefix)]``, case-folded,
    the last token of each word a prefix when :func:`_prefix` allows."""
    out = []
    for word in text.split():
        found = _TOKEN.findall(split_words(word))
        if found:
            last = len(found) - 1 if _prefix(found) else -1
            out.append([(t.casefold(), i == last) for i, t in enumerate(found)])
    return out


def snippet(body: str, phrases: list[list[tuple[str, bool]]], width: int = 14) -> str:
    """The ``width``-token window of ``body`` holding the most distinct phrases, each match between ``\\x02``/``\\x03``.

    ``phrases`` come from :func:`query_terms`: a phrase matches consecutive
    tokens equal to its tokens (its last token a prefix), case-folded, and is
    marked as one span (``[gpt-oss-120b]``, as FTS5 marks a phrase). Among
    windows with the most distinct phrases the one with the most matches
    wins, the first on a tie; ``…`` marks a cut. Time linear in the body
    (a sliding window), where FTS5's ``snippet()`` is quadratic in the
    matches of one record.
    """
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(body)]
    if not spans:
        return ""
    folded = [body[a:b].casefold() for a, b in spans]
    match_at: dict[int, tuple[int, int]] = {}  # start token -> (last token, phrase)
    last_end = -1
    for j in range(len(spans)):
        if j <= last_end:
            continue
        for k, phrase in enumerate(phrases):
            n = len(phrase)
            if j + n <= len(spans) and all(
                folded[j + i] == t or (prefix and folded[j + i].startswith(t)) for i, (t, prefix) in enumerate(phrase)
            ):
                match_at[j] = (j + n - 1, k)
                last_end = j + n - 1
                break
    # A match counts for a window once its last token is inside (so a phrase of several words is not cut at the end).
    ends = {last: (first, k) for first, (last, k) in match_at.items()}
    counts = [0] * len(phrases)
    distinct = hits = 0
    best_at, best = 0, (-1, -1)
    for end in range(len(spans)):
        if end in ends:
            k = ends[end][1]
            distinct += counts[k] == 0
            counts[k] += 1
            hits += 1
        start = end - width + 1
        if start > 0 and start - 1 in match_at and match_at[start - 1][0] <= end:
            k = match_at[start - 1][1]
            counts[k] -= 1
            distinct -= counts[k] == 0
            hits -= 1
        if (start >= 0 or end == len(spans) - 1) and (distinct, hits) > best:
            best_at, best = max(start, 0), (distinct, hits)
    stop = min(best_at + width, len(spans))
    parts, pos, i = [], spans[best_at][0], best_at
    while i < stop:
        a, b = spans[i]
        parts.append(body[pos:a])
        if i in match_at:
            last = min(match_at[i][0], stop - 1)
            parts.append("\x02" + body[a : spans[last][1]] + "\x03")
            pos, i = spans[last][1], last + 1
            continue
        parts.append(body[a:b])
        pos, i = b, i + 1
    return ("…" if best_at > 0 else "") + "".join(parts) + ("…" if stop < len(spans) else "")


def _words(text: str | None) -> str:
    """The indexed form of a text: control marks the snippets use blanked, a zero-width space between letter and digit."""
    return split_words((text or "").replace("\x02", " ").replace("\x03", " "))


def _body(data: Any) -> str:
    """Every string and number of a record (values, not keys), one per line, in the indexed form."""
    out: list[str] = []
    _flatten_values(data, out)
    return _words("\n".join(out))


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
        """Ranked full-text hits for ``text``: every record holding every word (:func:`fts_query`), in four tiers
        (:data:`TIERS`), BM25 (id 10x, names 5x, body 1x) within a tier.

        Tier 1: the id, name or an alias has the same tokens as the whole text (:func:`tokens`: ``"Llama3.1-70B"`` is
        ``"llama 3.1 70b"``), or equals it normalised as the resolver does; tier 2: the whole text is a phrase inside the
        id, name or an alias (FTS5 column filter), the records whose closest such name has the fewest other words first
        (``H100``: ``NVIDIA H100 SXM`` before an MLPerf submission named after a system); tier 3: the whole text is a
        phrase anywhere in the record; tier 4: the words occur anywhere. For one-word text tiers 3 and 4 are one.

        ``closeness=False`` skips ordering tier 2 by the closest name (BM25 alone), for a caller that sorts the hits
        itself. Returns ``[{key, type, id, path, name, score, tier, exact, snippet}]``; ``exact`` is ``tier == 1``;
        ``snippet`` marks matched words with ``\x02``/``\x03`` (``None`` with ``snippets=False``: see :meth:`snippet`);
        ``score`` is BM25 negated (higher is better). ``limit=None`` returns every hit.
        Raises :class:`UsageError` for text without a word.
        """
        from .resolve import normalise

        match = fts_query(text)
        con = self.con
        of_type = {rid for (rid,) in con.execute("SELECT rid FROM records WHERE type = ?", (type_name,))} if type_name else None
        several = len(query_terms(text)) > 1
        try:
            # ORDER BY rank lets FTS5 sort inside the index; the tiers then reorder it stably, so BM25 holds within a tier.
            cur = con.execute(f"SELECT rowid, rank FROM fts WHERE fts MATCH ? AND rank MATCH 'bm25({_WEIGHTS})' ORDER BY rank", (match,))
            ranked = [(rid, score) for rid, score in cur if of_type is None or rid in of_type]
            found = {rid for rid, _ in ranked}
            named = found & {
                rid for (rid,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (phrase_query(text, ("ident", "names")),))
            }
            in_text = (
                found & {rid for (rid,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (phrase_query(text),))}
                if several
                else found
            )
        except sqlite3.OperationalError as exc:  # an FTS5 syntax the quoting did not foresee: the user's text, not a crash
            raise UsageError(f"cannot search for {text!r}: {exc}") from None
        fit = self._name_fit(named, text, closeness=closeness)
        exact = found & {rid for (rid,) in con.execute("SELECT rid FROM names WHERE norm = ?", (normalise(text),))}
        exact |= {rid for rid, extra in fit.items() if extra == 0}
        unfit = len(tokens(text)) + 1_000_000  # a name FTS5 tokenised differently (diacritics): last in its tier

        def order(rid: int) -> tuple[int, int]:
            if rid in exact:
                return (1, 0)
            if rid in named:
                return (2, fit.get(rid, unfit))  # the closer the name is to the text, the earlier
            return (3 if rid in in_text else 4, 0)

        hits = sorted(((rid, score, order(rid)) for rid, score in ranked), key=lambda h: h[2])[:limit]
        meta: dict[int, tuple] = {}
        rids = [h[0] for h in hits]
        for i in range(0, len(rids), 500):
            batch = rids[i : i + 500]
            meta.update(
                (row[0], row[1:])
                for row in con.execute(
                    f"SELECT rid, key, type, id, path, name FROM records WHERE rid IN ({','.join('?' * len(batch))})", batch
                )
            )
        out = []
        for rid, score, (level, _) in hits:
            key, rtype, rec_id, path, name = meta[rid]
            out.append(
                {
                    "key": key,
                    "type": rtype,
                    "id": rec_id,
                    "path": path,
                    "name": name or None,
                    "score": round(-score, 3),
                    "tier": level,
                    "exact": level == 1,
                    "snippet": self.snippet(key, text) if snippets else None,
                }
            )
        return out

    def _name_fit(self, rids: set[int], text: str, *, closeness: bool = True) -> dict[int, int]:
        """``{rid: extra}`` for the records among ``rids`` whose id, name or an alias holds the tokens of ``text`` in a row
        (the last one a prefix as :func:`_prefix` allows): ``extra`` is how many more words (runs of letters and digits)
        the closest such name has, at least 1 (0: the name is the text, up to case, spacing and punctuation). With
        ``closeness=False`` only the 0s are worked out (every other record holding the phrase gets 1)."""
        exact, inside = _token_patterns(tokens(text))
        words = len(_TOKEN.findall(text))
        out: dict[int, int] = {}
        ordered = sorted(rids)
        for i in range(0, len(ordered), 500):
            for rid, rec_id, names in _name_rows(self.con, ordered[i : i + 500]):
                for name in [rec_id or "", *(names or "").split("\n")]:
                    if exact.fullmatch(name):
                        out[rid] = 0
                        break
                    if closeness and inside.search(name):
                        # extra counted in words, not tokens: "FP8 E5M2" is fp8 and one word more, not four tokens
                        out[rid] = min(out.get(rid, 1 << 30), max(1, len(_TOKEN.findall(name)) - words))
                    elif not closeness:
                        out.setdefault(rid, 1)
        return out

    def snippet(self, key: str, text: str) -> str:
        """The matched words of ``text`` in record ``key`` (a window of its text, matches between ``\x02``/``\x03``,
        see :func:`snippet`): the whole text as one phrase where the record holds it, else each word; ``""`` for a key
        the catalogue does not hold."""
        # FTS5's snippet() is quadratic in the hits of one record (5 s for a 400 KiB record): one linear pass instead.
        body = next((b for (b,) in self.con.execute("SELECT kb_body(data) FROM records WHERE key = ?", (key,))), "") or ""
        words = query_terms(text)
        whole = query_terms(" ".join(w for w in text.split() if _HAS_WORD.search(w)).replace(" ", "-"))
        out = snippet(body, whole) if len(words) > 1 else ""
        if "\x02" not in out:
            out = snippet(body, words)
        return out.replace(ZWSP, "").replace("\n", " ")


def _token_patterns(wanted: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Two case-insensitive patterns for a text with the index tokens ``wanted`` (:func:`tokens`): one a whole name
    with exactly those tokens (nothing else but punctuation and spaces around), one those tokens in a row inside a name,
    the last one a prefix as :func:`_prefix` allows. Between a letter and a digit token no separator is needed
    (``H100``); between two of one kind one is (``llama 2``); a token never starts or ends inside a run of its kind."""
    if not wanted:
        never = re.compile(r"(?!)")
        return never, never
    letters = [not t[0].isdigit() for t in wanted]
    body = ""
    for i, (tok, is_letters) in enumerate(zip(wanted, letters, strict=True)):
        if i:
            body += r"[\W_]*" if is_letters != letters[i - 1] else r"[\W_]+"
        body += re.escape(tok)
    tail_kind = r"[^\W\d_]" if letters[-1] else r"\d"
    head_kind = r"[^\W\d_]" if letters[0] else r"\d"
    exact = re.compile(r"[\W_]*" + body + r"[\W_]*", re.IGNORECASE)
    more = tail_kind + "*" if _prefix(list(wanted)) else ""
    inside = re.compile(f"(?<!{head_kind}){body}{more}(?!{tail_kind})", re.IGNORECASE)
    return exact, inside


def _name_rows(con: sqlite3.Connection, rids: list[int]) -> Iterator[tuple[int, str, str]]:
    """``(rid, id, names)`` of the given catalogue rows (``names``: name and aliases, one a line)."""
    return con.execute(f"SELECT rid, id, names FROM records WHERE rid IN ({','.join('?' * len(rids))})", rids)


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
