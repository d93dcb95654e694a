"""inferkb: a provenance-first knowledge base of LLM-inference facts, and the tools that keep it honest.

Python API (the CLI is a thin layer over it)::

    import inferkb
    kb = inferkb.open()                 # the bundled KB; or inferkb.open("path/to/kb")
    report = kb.validate()              # Report: findings + figures
    report = kb.audit("load-conditions")
    kb.get("nvidia-h100-sxm").data      # a record as a dict
"""

from __future__ import annotations

import os

from .errors import InputError, KBError, KBNotFound, RecordExists, RecordInvalid, UsageError, WriteConflict
from .findings import Finding
from .kb import KB
from .report import Report
from .store import Record, Store

__version__ = "0.1.0"

__all__ = [
    "KB",
    "Store",
    "Record",
    "Report",
    "Finding",
    "open",
    "KBError",
    "KBNotFound",
    "UsageError",
    "InputError",
    "RecordExists",
    "RecordInvalid",
    "WriteConflict",
]


def open(path: str | os.PathLike | None = None, *, cache: bool | None = None) -> KB:  # noqa: A001 - mirrors sqlite3.connect-style entry points
    """Load the KB at ``path``; ``None`` loads the bundled KB shipped with inferkb.

    ``cache``: use the on-disk load cache (:mod:`inferkb.store.cache`); ``None`` (default) means yes unless
    ``INFERKB_NO_CACHE`` is set or ``INFERKB_CACHE_DIR`` is set empty. Results are the same either way.
    Raises :class:`KBNotFound` when the path does not exist or has no ``data/``.
    """
    return KB.load(path, cache=cache)
