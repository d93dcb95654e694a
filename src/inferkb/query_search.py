"""Ranked full-text search over a query catalogue (:class:`inferkb.query_index.Catalog`): the four tiers, BM25 within
a tier, how close a matching name is to the text, and the snippet of one record.

Every function takes the catalogue's open SQLite connection (tables ``records``, ``names``, ``fts`` and the ``kb_body``
function, as :mod:`inferkb.query_index` creates them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from .errors import UsageError
from .query_text import _HAS_WORD, _TOKEN, ZWSP, _token_patterns, fts_query, phrase_query, query_terms, snippet, tokens

__all__ = ["TIERS", "name_fit", "record_snippet", "search"]

# What each search tier means (Catalog.search ranks tier 1 first, BM25 within a tier).
TIERS = {
    1: "the id, name or an alias is the text (any case, spacing, punctuation)",
    2: "the id, name or an alias holds the text as a phrase",
    3: "the record's text holds the text as a phrase",
    4: "the record's text holds every word",
}
# Column weights of bm25(): a hit in the id counts 10x, in a name or alias 5x, in the rest of the record 1x.
_WEIGHTS = "10.0, 5.0, 1.0"


def search(
    con: sqlite3.Connection,
    text: str,
    *,
    type_name: str | None = None,
    limit: int | None = 20,
    snippets: bool = True,
    closeness: bool = True,
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
    ``snippet`` marks matched words with ``\\x02``/``\\x03`` (``None`` with ``snippets=False``: see :func:`record_snippet`);
    ``score`` is BM25 negated (higher is better). ``limit=None`` returns every hit.
    Raises :class:`UsageError` for text without a word.
    """
    from .resolve import normalise

    match = fts_query(text)
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
            found & {rid for (rid,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (phrase_query(text),))} if several else found
        )
    except sqlite3.OperationalError as exc:  # an FTS5 syntax the quoting did not foresee: the user's text, not a crash
        raise UsageError(f"cannot search for {text!r}: {exc}") from None
    fit = name_fit(con, named, text, closeness=closeness)
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
            for row in con.execute(f"SELECT rid, key, type, id, path, name FROM records WHERE rid IN ({','.join('?' * len(batch))})", batch)
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
                "snippet": record_snippet(con, key, text) if snippets else None,
            }
        )
    return out


def name_fit(con: sqlite3.Connection, rids: set[int], text: str, *, closeness: bool = True) -> dict[int, int]:
    """``{rid: extra}`` for the records among ``rids`` whose id, name or an alias holds the tokens of ``text`` in a row
    (the last one a prefix as :func:`_prefix` allows): ``extra`` is how many more words (runs of letters and digits)
    the closest such name has, at least 1 (0: the name is the text, up to case, spacing and punctuation). With
    ``closeness=False`` only the 0s are worked out (every other record holding the phrase gets 1)."""
    exact, inside = _token_patterns(tokens(text))
    words = len(_TOKEN.findall(text))
    out: dict[int, int] = {}
    ordered = sorted(rids)
    for i in range(0, len(ordered), 500):
        for rid, rec_id, names in _name_rows(con, ordered[i : i + 500]):
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


def record_snippet(con: sqlite3.Connection, key: str, text: str) -> str:
    """The matched words of ``text`` in record ``key`` (a window of its text, matches between ``\\x02``/``\\x03``,
    see :func:`snippet`): the whole text as one phrase where the record holds it, else each word; ``""`` for a key
    the catalogue does not hold."""
    # FTS5's snippet() is quadratic in the hits of one record (5 s for a 400 KiB record): one linear pass instead.
    body = next((b for (b,) in con.execute("SELECT kb_body(data) FROM records WHERE key = ?", (key,))), "") or ""
    words = query_terms(text)
    whole = query_terms(" ".join(w for w in text.split() if _HAS_WORD.search(w)).replace(" ", "-"))
    out = snippet(body, whole) if len(words) > 1 else ""
    if "\x02" not in out:
        out = snippet(body, words)
    return out.replace(ZWSP, "").replace("\n", " ")


def _name_rows(con: sqlite3.Connection, rids: list[int]) -> Iterator[tuple[int, str, str]]:
    """``(rid, id, names)`` of the given catalogue rows (``names``: name and aliases, one a line)."""
    return con.execute(f"SELECT rid, id, names FROM records WHERE rid IN ({','.join('?' * len(rids))})", rids)
