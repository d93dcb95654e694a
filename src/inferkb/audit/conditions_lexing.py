"""Text machinery of the load-conditions extractor: number parsing, clause splitting, keyword pre-filters.

:func:`split_clauses` cuts prose into clauses at sentence ends, semicolons and
newlines (outside parentheses). :func:`_k` registers a compiled pattern with
the lower-case literals any of its matches must contain (:data:`KEYS`), so
:func:`may_match` / :func:`keyed` can skip a regex search on text that holds
none of them; :func:`folded` gives the lower-cased text those tests use
(``None`` for non-ASCII text, where no pre-filter is applied).
"""

from __future__ import annotations

import re

IC = re.IGNORECASE

# A token count as written: "512", "1,024", "128K", "1k", "23k", "2.5K".
NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[kK]\b|\d+)"


# "1k/1k": both sides carry the k, so "2.1/3" or a date never reads as lengths.
KNUM = r"(\d+(?:\.\d+)?[kK])"


def parse_count(text: str) -> int:
    """Parse a written count: ``"1,024"`` -> 1024, ``"128K"``/``"128k"`` -> 128000.

    ``K`` is read as 1000 (the prose uses "128K" for both 128,000 and 131,072;
    callers comparing lengths should allow a few percent). Raises ``ValueError``
    on text with no number.
    """
    t = text.strip().replace(",", "").replace(" ", "")
    if t[-1:] in ("k", "K"):
        return int(round(float(t[:-1]) * 1000))
    return int(float(t))


# Sentence/clause boundaries. Semicolons split too: records write "Prompt
# length 2000 tokens; output length NOT stated" in one sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`-])|;\s+|\n+")
# A boundary can only start right after ".", "!" or "?", or at ";" or a newline.
_BOUNDARY_AT = re.compile(r"[.!?;\n]")
OMITTED_LEAD = re.compile(r"^\W*omitted\s+by\s+(?:the\s+)?source\s*:", IC)
_PAREN = re.compile(r"[()]")


def _boundaries(text: str):
    """The matches of ``_BOUNDARY.finditer(text)``, trying the pattern only where one can start.

    Every match starts either just after ".", "!" or "?" (the lookbehind) or
    at ";" or a newline, so matching at those positions alone, left to right
    and never inside the previous match, yields the same matches.
    """
    last = 0
    for c in _BOUNDARY_AT.finditer(text):
        at = c.start() if c.group() in ";\n" else c.end()
        if at >= last:
            m = _BOUNDARY.match(text, at)
            if m:
                last = m.end()
                yield m


def split_clauses(text: str) -> list[tuple[str, bool]]:
    """Split prose into clauses, each an exact substring of ``text``.

    Returns ``[(clause, inherited_negation)]``. Boundaries inside parentheses
    are ignored ("TP size (never stated; the model ...)" stays one clause). A
    sentence opened by "OMITTED BY SOURCE:" lists its items separated by
    semicolons, so every later clause of that sentence inherits the negation.

    Only the boundary matches are visited; the parenthesis depth at each is
    counted from the parentheses since the previous one (a ``)`` never takes
    it below zero, and a boundary holding a newline always splits and resets
    it).
    """
    out: list[tuple[str, bool]] = []
    start = pos = depth = 0
    omitted = False
    parens = "(" in text
    # OMITTED_LEAD needs "omitted" (any case; outside ASCII, case rules differ).
    lead = OMITTED_LEAD.match if not text.isascii() or "omitted" in text.lower() else None
    for m in _boundaries(text):
        at, end = m.span()
        if parens:
            for ch in _PAREN.findall(text, pos, at):
                depth = depth + 1 if ch == "(" else max(0, depth - 1)
            pos = end
        sep = m.group(0)
        newline = "\n" in sep
        if depth and not newline:
            continue
        piece = text[start:at]
        omitted = omitted or bool(lead and lead(piece))
        if piece.strip():
            out.append((piece, omitted))
        if ";" not in sep:
            omitted = False
        if newline:
            depth = 0
        start = end
    piece = text[start:]
    if piece.strip():
        out.append((piece, omitted or bool(lead and lead(piece))))
    return out


# --- keyword pre-filters ----------------------------------------------------
# A regex search costs microseconds; a substring test costs tens of
# nanoseconds. Each pattern wrapped in _k names literals (lower case) one of
# which every match of it contains, so a text whose lower-case form holds none
# of them cannot match and its search is skipped. The literals must hold for
# every alternative of the pattern; tests/test_conditions_speed_equivalence.py
# checks them against the patterns on generated text. Keyed by id(): hashing a
# compiled pattern hashes its whole program on every lookup.
KEYS: dict[int, tuple[str, ...]] = {}
_KEYED: list[re.Pattern[str]] = []  # keeps every registered pattern (and so its id) alive
_ANY_TEXT = ("",)  # the keys of a pattern without a pre-filter: every text holds ""
_WS = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "  # the ASCII characters \s matches
_DIGITS = "0123456789"


def _then(prefixes: str, chars: str) -> str:
    """Keys for "one of ``prefixes`` (``|``-separated) right before one of ``chars``"."""
    return "|".join(p + c for p in prefixes.split("|") for c in chars)


def minimal_keys(keys) -> tuple[str, ...]:
    """``keys`` without duplicates and without any key that contains another (first occurrence order).

    A text holds one of ``keys`` exactly when it holds one of the result: a
    text holding "not" holds "no", so "no" alone answers for both.
    """
    unique = list(dict.fromkeys(keys))
    return tuple(k for k in unique if not any(o != k and o in k for o in unique))


def _k(pattern: re.Pattern[str], *keys: str) -> re.Pattern[str]:
    """Register ``keys`` (each may list several, separated by ``|``) as the pre-filter literals of ``pattern``."""
    KEYS[id(pattern)] = minimal_keys(k for key in keys for k in key.split("|"))
    _KEYED.append(pattern)
    return pattern


def folded(text: str) -> str | None:
    """The text :func:`may_match` tests: ``text.lower()``, or ``None`` when ``text`` is not ASCII.

    Outside ASCII, case-insensitive matching and ``str.lower`` disagree
    ("\u212a" Kelvin sign matches ``k``; "\u017f" long s matches ``s``), so
    a non-ASCII text is never pre-filtered.
    """
    return text.lower() if text.isascii() else None


def may_match(pattern: re.Pattern[str], low: str | None) -> bool:
    """False only when ``pattern`` cannot match the text whose :func:`folded` form is ``low``."""
    return low is None or any(map(low.__contains__, KEYS.get(id(pattern), _ANY_TEXT)))


def keyed(patterns, low: str | None) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """``[(pattern, keys)]`` for those of ``patterns`` that may match ``low``.

    A pattern without keys gets ``("",)``, which every text holds, so a caller
    can test ``low is None or any(map(low.__contains__, keys))`` inline.
    """
    out = []
    for p in patterns:
        keys = KEYS.get(id(p), _ANY_TEXT)
        if low is None or any(map(low.__contains__, keys)):
            out.append((p, keys))
    return out
