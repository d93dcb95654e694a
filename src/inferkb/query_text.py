"""How record text and query text become FTS5 tokens: the letter/digit split, the MATCH expressions, the query's
phrases and the snippet window (the text side of :mod:`inferkb.query_index`; no SQLite here).

A zero-width space is put between a letter and a digit, so ``llama2-70b``, ``Llama-2-70B`` and ``llama2-70b-99`` all
read as ``llama 2 70 b`` and ``H100`` as ``h 100``; each query word becomes a phrase, its last token a prefix (letters,
three or more). A change here that alters the indexed text needs :data:`inferkb.query_index.FORMAT` bumped, so old
catalogues are rebuilt.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import UsageError

__all__ = ["ZWSP", "fts_query", "phrase_query", "query_terms", "snippet", "split_words", "tokens"]

ZWSP = "\u200b"
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
_DIGITS = re.compile(r"\d+")
_HAS_DIGIT = re.compile(r"\d")
_HAS_WORD = re.compile(r"[^\W_]")
_TOKEN = re.compile(r"[^\W_]+")


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
