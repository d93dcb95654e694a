"""Which strings may become links: http(s) URLs and scheme-less relative paths, nothing else.

Shared by validate (rule KB112 ``unsafe-url``) and the site, so a value the
site refuses to link is exactly a value validate reports.
"""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import urlsplit

import orjson

URL_KEYS = re.compile(r"(^|_)(url|urls|href|link|links)$")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
# Browsers drop ASCII whitespace and control characters inside a URL's scheme ("java\tscript:" runs).
_URL_JUNK = re.compile(r"[\x00-\x20\x7f]")
# Schemes that run code or smuggle a whole document when a browser follows them. (A file: URL is not one:
# intake cites local harness files that way; the site shows it as text, as it does every non-http(s) URL.)
DANGEROUS_SCHEMES = frozenset({"javascript", "vbscript", "data"})
# Outside URL fields a string is reported only when it is unmistakably such a URL: prose may well start
# "Data: ...", which no browser would treat as a link anyway.
_DANGEROUS_URL = re.compile(r"(?:javascript|vbscript):|data:(?:[\w.+-]+/[\w.+-]+)?[;,]", re.IGNORECASE)


def is_dangerous_url(value: str) -> bool:
    """True when ``value`` reads (to a browser) as a javascript:, vbscript: or data: URL."""
    return _DANGEROUS_URL.match(_URL_JUNK.sub("", value)) is not None


def scheme_of(value: str) -> str | None:
    """The URL scheme of ``value`` as a browser would read it (lower case), or ``None`` when it has none."""
    m = _SCHEME.match(_URL_JUNK.sub("", value))
    return m.group(1).lower() if m else None


def safe_href(value: Any) -> str | None:
    """``value`` (stripped) if it may be rendered as a link: an http(s) URL with a host, or a relative path; else ``None``.

    A protocol-relative ``//host`` is refused too: its scheme is whatever the page was served over.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    compact = _URL_JUNK.sub("", value)
    scheme = scheme_of(value)
    if scheme is not None:
        if scheme not in ("http", "https"):
            return None
        return value.strip() if urlsplit(compact).netloc else None
    if compact.startswith(("//", "\\", "/\\")):
        return None
    return value.strip()


def is_url_key(name: str) -> bool:
    """True for field names that hold a URL (``url``, ``docs_url``, ``archived_url``, ``links`` ...)."""
    return bool(URL_KEYS.search(name))


def _dotted(parts: tuple) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _scan(data: Any, path: tuple, out: list[tuple[tuple, bool, str]]) -> None:
    """Collect ``(path, under a URL key?, value)`` for strings that could be unsafe; cheap enough to run on every record."""
    if type(data) is dict:
        for key, value in data.items():
            t = type(value)
            if t is str:
                url_key = is_url_key(key) if type(key) is str and key[-1:] in "lsfk" else False
                if url_key or ":" in value[:64]:
                    out.append(((*path, key), url_key, value))
            elif t is list and type(key) is str and key[-1:] in "sk" and is_url_key(key):
                for i, item in enumerate(value):
                    if type(item) is str:
                        out.append(((*path, key, i), True, item))
                    elif type(item) is dict or type(item) is list:
                        _scan(item, (*path, key, i), out)
            elif t is dict or t is list:
                _scan(value, (*path, key), out)
    elif type(data) is list:
        for i, item in enumerate(data):
            t = type(item)
            if t is str:
                if ":" in item[:64]:
                    out.append(((*path, i), False, item))
            elif t is dict or t is list:
                _scan(item, (*path, i), out)


# A cheap necessary condition for :func:`unsafe_urls` to find anything, tested on ``orjson.dumps(data)``:
# some JSON string starts, after junk, with javascript/vbscript/data and junk then a colon. Junk is what
# _URL_JUNK drops as orjson writes it (a space, DEL, \b \t \n \f \r, \u00XX below 0x20). The letters
# are those Python's case-insensitive match accepts for each ASCII letter: ASCII either case, plus
# U+017F (long s) for s and U+0130/U+0131 (dotted/dotless I) for i, in UTF-8 (tests check this table
# against ``re`` over every code point). Keys match too; a false hit only costs the full scan.
_J = rb"(?:[ \x7f]|\\[btnfr]|\\u00[01][0-9a-fA-F])*"
_LETTER = {"s": rb"(?:[sS]|\xc5\xbf)", "i": rb"(?:[iI]|\xc4[\xb0\xb1])"}


def _word(word: str) -> bytes:
    return _J.join(_LETTER.get(ch, f"[{ch}{ch.upper()}]".encode()) for ch in word)


@functools.cache
def _maybe_dangerous() -> re.Pattern[bytes]:
    """The regex of the condition above, compiled on first use: about 3 ms, and only a record with a ``\\u00``
    escape or one of those non-ASCII letters needs it, so most runs never do."""
    return re.compile(rb'"' + _J + rb"(?:" + rb"|".join(_word(w) for w in sorted(DANGEROUS_SCHEMES)) + rb")" + _J + rb":")


_ESCAPES = (b"\\b", b"\\t", b"\\n", b"\\f", b"\\r")
_SCHEME_AFTER_QUOTE = re.compile(rb'"(?:' + rb"|".join(sorted(w.encode() for w in DANGEROUS_SCHEMES)) + rb"):")


def may_hold_unsafe_url(doc: bytes, colons: int | None = None) -> bool:
    """False only when :func:`unsafe_urls` finds nothing in the value ``doc`` serialises.

    ``doc`` is ``orjson.dumps(value)``, compact or with ``OPT_INDENT_2`` (and a
    trailing newline): the two differ only by spaces and newlines between
    tokens, never inside a string, and both tests below look only at colons and
    at what follows a quote (spaces dropped), so they give the same answer.

    A necessary condition for a finding, see :func:`_maybe_dangerous`; True may be a false alarm.

    The common case runs a few C-speed byte passes instead of the regex: drop the
    short escapes, spaces and DEL, lower-case, then look for the three schemes
    right after a quote. Dropping bytes can only join more text, never part a
    real match (its junk is exactly what is dropped); documents with a
    ``\\u00XX`` escape or one of the non-ASCII letters take the regex.
    ``colons``, when known, is ``doc.count(b":")``.
    """
    if (doc.count(b":") if colons is None else colons) == doc.count(b'":'):
        return False  # every colon ends a key (or follows an escaped quote); a scheme's colon follows a letter or junk
    # Long s, dotted and dotless I. Their lead bytes first: a one-byte search runs at memchr speed, a two-byte one
    # about ten times slower (CPython 3.11: 18 us against 0.6 for the three on a 6.7 KB record).
    if (b"\xc5" in doc or b"\xc4" in doc) and (b"\xc5\xbf" in doc or b"\xc4\xb0" in doc or b"\xc4\xb1" in doc):
        return _maybe_dangerous().search(doc) is not None
    if b"\\" in doc:
        if b"\\u00" in doc:
            return _maybe_dangerous().search(doc) is not None
        for esc in _ESCAPES:
            doc = doc.replace(esc, b"")
    # One regex pass (sre scans for its leading quote) instead of three substring searches: 6 us against 8.4.
    return _SCHEME_AFTER_QUOTE.search(doc.translate(None, b" \x7f").lower()) is not None


def unsafe_urls(data: Any, *, prefilter: bool = True) -> list[tuple[str, str]]:
    """``[(dotted field path, value)]`` for every string that must not be a link but sits where one would be.

    That is: a value under a URL-named key (``url``, ``docs_url``, ``links``
    ...) that is not http(s) or relative, and any string anywhere whose scheme
    is one of :data:`DANGEROUS_SCHEMES` (after dropping the whitespace and
    control characters a browser ignores). With ``prefilter`` a byte test
    on ``orjson.dumps(data)`` (:func:`may_hold_unsafe_url`) skips the walk for
    values that cannot hold such a string; the result is the same either way.
    """
    if prefilter:
        try:
            if not may_hold_unsafe_url(orjson.dumps(data)):
                return []
        except TypeError:  # orjson.JSONEncodeError: a non-str key, an int beyond 64 bits: walk it all
            pass
    found: list[tuple[tuple, bool, str]] = []
    _scan(data, (), found)
    out = []
    for parts, url_key, value in found:
        if url_key:
            if scheme_of(value) in DANGEROUS_SCHEMES:
                out.append((_dotted(parts), value))
        elif is_dangerous_url(value):
            out.append((_dotted(parts), value))
    return out
