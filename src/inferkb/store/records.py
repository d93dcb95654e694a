"""The record value, id rules and the path of the bundled KB: the bottom of the package."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError

KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# 255 bytes is the usual file-name limit; leave room for ".json" and the temp-file prefix/suffix.
MAX_ID_LENGTH = 200


@dataclass(slots=True)
class Record:
    """One record file. ``key`` is ``"<dir>/<id>"``; ``path`` is relative to the KB root; ``data`` is the parsed object."""

    key: str
    id: str
    type: str
    dir: str
    path: str
    data: dict[str, Any]


def check_id(record_id: str) -> str:
    """Refuse an id that could escape the KB or is not a kebab-case slug.

    Raises :class:`UsageError` for ``/``, ``\\``, ``..``, NUL, empty or non-kebab ids.
    """
    if not record_id or "\x00" in record_id or "/" in record_id or "\\" in record_id or ".." in record_id:
        raise UsageError(f"refused id {record_id!r}: ids may not be empty or contain '/', '\\', '..' or NUL")
    if len(record_id) > MAX_ID_LENGTH:
        raise UsageError(
            f"refused id of {len(record_id)} characters: ids are at most {MAX_ID_LENGTH} (file names must fit the file system)"
        )
    if not KEBAB.match(record_id):
        raise UsageError(f"refused id {record_id!r}: expected a kebab-case slug (a-z, 0-9, single hyphens)")
    return record_id


def bundled_root() -> Path:
    """Path of the KB shipped inside the package (works editable and from a wheel)."""
    # Package data sits beside the package's modules both in a source checkout and in an installed wheel.
    return Path(__file__).resolve().parent.parent / "kb"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk pass, restoring its previous state after.

    Loading a KB allocates millions of small dicts and lists that live on, so
    the collector keeps triggering and re-traversing all of them (at 100,000
    records this cost about a third of load and validate time). Records hold
    no reference cycles, so nothing is left uncollected by pausing; any cycle
    made meanwhile is collected after the collector is re-enabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
