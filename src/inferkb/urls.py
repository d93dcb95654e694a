"""Which strings may become links: http(s) URLs and scheme-less relative paths, nothing else.

Shared by validate (rule KB112 ``unsafe-url``) and the site, so a value the
site refuses to link is exactly a value validate reports.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

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


def unsafe_urls(data: Any) -> list[tuple[str, str]]:
    """``[(dotted field path, value)]`` for every string that must not be a link but sits where one would be.

    That is: a value under a URL-named key (``url``, ``docs_url``, ``links``
    ...) that is not http(s) or relative, and any string anywhere whose scheme
    is one of :data:`DANGEROUS_SCHEMES` (after dropping the whitespace and
    control characters a browser ignores).
    """
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
