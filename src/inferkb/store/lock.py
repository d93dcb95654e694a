"""The KB-wide write lock: one writer at a time per KB directory (an advisory ``fcntl.flock``).

The lock is taken on the KB root directory itself (no lock file to leave
behind or to clean). It is advisory: every inferkb writer takes it through
:func:`kb_lock`, and a process that does not (an editor) is caught by the
writer's compare-and-swap instead. It is re-entrant within a thread, so a
caller may hold it across a read-modify-write and still call the writer;
two threads exclude each other as two processes do (each opens the root).
Where ``fcntl`` is unavailable (Windows) the lock is a no-op and only the
compare-and-swap protects concurrent edits.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import WriteConflict

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# How long a writer waits for another one to finish before giving up (seconds); INFERKB_LOCK_TIMEOUT overrides.
DEFAULT_TIMEOUT = 60.0

_held: dict[tuple[str, int], tuple[int, int]] = {}  # (resolved root, thread id) -> (fd, depth)
_guard = threading.Lock()


def _timeout() -> float:
    try:
        return float(os.environ.get("INFERKB_LOCK_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


@contextmanager
def kb_lock(root: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive write lock of the KB at ``root`` for the block.

    Waits up to ``timeout`` seconds (default :data:`DEFAULT_TIMEOUT`, or the
    ``INFERKB_LOCK_TIMEOUT`` environment variable) for another writer, then
    raises :class:`~inferkb.errors.WriteConflict`. Raises ``OSError`` when the
    root cannot be opened.
    """
    key = (str(root), threading.get_ident())  # re-entrant per thread; two threads exclude each other like two processes
    with _guard:
        if key in _held:
            fd, depth = _held[key]
            _held[key] = (fd, depth + 1)
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _guard:
                fd, depth = _held[key]
                _held[key] = (fd, depth - 1)
        return
    fd = os.open(key[0], os.O_RDONLY)
    try:
        if fcntl is not None:
            _acquire(fd, key[0], _timeout() if timeout is None else timeout)
        with _guard:
            _held[key] = (fd, 1)
        try:
            yield
        finally:
            with _guard:
                del _held[key]
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _acquire(fd: int, key: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise WriteConflict(
                    f"another inferkb process has held the write lock of {key} for over {timeout:g} s; "
                    "nothing was written (retry when it has finished, or raise INFERKB_LOCK_TIMEOUT)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def holds_lock(root: Path) -> bool:
    """True when this process holds the write lock of the KB at ``root``."""
    with _guard:
        return (str(root), threading.get_ident()) in _held
