"""Search for the site: the words of each record, and the Pagefind index built over small per-record documents.

Pagefind (the ``pagefind`` binary from PyPI, ``pagefind[bin]``) indexes HTML
files; its cost grows with the HTML it parses, so it is run over one small
document per record (title, facets, field values) in a staging folder that
mirrors the site's paths, and writes its index into the site.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..errors import KBError


class SearchIndexError(KBError):
    """Pagefind failed to index the built pages (exit code 2)."""


# Fields left out of the search text: long machine-made structure that would drown the words a reader types.
SEARCH_SKIP = frozenset({"provenance", "condition_gaps", "arms"})
SEARCH_TEXT_LIMIT = 6000


def search_text(data: dict[str, Any]) -> str:
    """The words of a record a reader may search for: every scalar value (field names for booleans), at most 6,000 characters."""
    parts: list[str] = []

    def walk(value: Any, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, bool):
            if value:
                parts.append(key.replace("_", " "))
        elif value is not None and value != "":
            parts.append(str(value))

    for k, v in data.items():
        if k not in SEARCH_SKIP:
            walk(v, k)
    return " · ".join(parts)[:SEARCH_TEXT_LIMIT]


def run_pagefind(pages_dir: Path, site_dir: Path) -> int:
    """Index the pages under ``pages_dir`` with Pagefind into ``site_dir/pagefind/``; returns the number of pages indexed.

    ``pages_dir`` mirrors the site's paths (``<dir>/<id>.html``) so result URLs
    point at the real pages; it holds one small search document per record
    (title, facets, field values) rather than the full page, which keeps
    indexing fast (Pagefind's cost grows with the HTML it parses).
    Raises :class:`SearchIndexError` when the binary is missing or fails.
    """
    cmd = [
        sys.executable,
        "-m",
        "pagefind",
        "--site",
        str(pages_dir),
        "--output-path",
        str(site_dir / "pagefind"),
        "--force-language",
        "en",
        "--quiet",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SearchIndexError(f"pagefind could not run: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise SearchIndexError(
            f"pagefind failed (exit {proc.returncode}): {' | '.join(tail)}; install it with pip install 'pagefind[bin]' or build with --no-search"
        )
    if not (site_dir / "pagefind" / "pagefind-ui.js").is_file():
        raise SearchIndexError("pagefind ran but wrote no pagefind/pagefind-ui.js")
    entry = site_dir / "pagefind" / "pagefind-entry.json"
    try:
        doc = json.loads(entry.read_text(encoding="utf-8"))
        return sum(int(lang.get("page_count", 0)) for lang in doc.get("languages", {}).values())
    except (OSError, ValueError, AttributeError):
        return 0
