"""The channel between the two processes of the split validate (:mod:`inferkb.validate_split`): the forked child's
handle, and values pickled through a pipe or through an unnamed memory file whose length goes through a pipe."""

from __future__ import annotations

import os
import signal
from typing import Any

try:  # the C pickler itself: importing pickle.py (its pure-Python pickler classes) is start-up time this never uses
    from _pickle import dumps, loads
except ImportError:  # an interpreter without CPython's accelerator
    from pickle import dumps, loads

PROTOCOL = 5  # pickle.HIGHEST_PROTOCOL since Python 3.8


class Child:
    """The forked child and what passes between it and the parent.

    Child to parent: once its share is loaded, its load tags and the data of its repeat group members (the
    "head"), through an unnamed memory file (``memfd``) whose length it then writes to the pipe: writing them to
    the pipe itself would block the child until the parent, still busy with its own share, reads; then, through the
    pipe up to its end, its per-record findings and the reference findings of its records. Parent to child: the walk
    indices of the records the parent loaded (its own memory file, length through a second pipe), so that the child
    resolves its records' references against every record of the KB."""

    def __init__(self, pid: int, read_fd: int, head_fd: int, send_fd: int, records_fd: int) -> None:
        self.pid, self.read_fd, self.head_fd, self.send_fd, self.records_fd = pid, read_fd, head_fd, send_fd, records_fd
        self.reaped = False
        self.status = -1  # the child's exit code once reaped

    def send_records(self, indices: list[int]) -> None:
        """Tell the child the walk index of each record the parent loaded (never blocks: 8 bytes to the pipe). A child
        that has already ended is not an error here: :meth:`head` or :meth:`checked` then says it failed."""
        try:
            send(self.records_fd, self.send_fd, indices)
        except BrokenPipeError:
            pass

    def head(self) -> tuple[Any, int, dict[int, dict[str, Any]]] | None:
        """``(tags, files seen, {walk index: data} of its repeat group members)`` once the child has loaded its
        share; ``None`` when it failed."""
        got = received(self.read_fd, self.head_fd)
        if type(got) is tuple and len(got) == 3:
            return got
        self.end()
        return None

    def checked(self) -> tuple[Any, ...] | None:
        """``({record key: per-record findings}, reference findings, budgeted dangling references)`` of the child's
        records (it has then exited), and ``{key: (stamp, cross-record data)}`` when it stamped its files;
        ``None`` when it failed."""
        chunks = []
        while chunk := os.read(self.read_fd, 1 << 20):
            chunks.append(chunk)
        self.end(kill=False)
        got = unpickled(b"".join(chunks)) if self.status == 0 else None
        if type(got) is tuple and len(got) in (3, 4) and type(got[0]) is dict and type(got[1]) is list and type(got[2]) is int:
            return got
        return None

    def end(self, *, kill: bool = True) -> None:
        """Close the pipes and the memory files and reap the child (killed first unless ``kill`` is false); once."""
        if self.reaped:
            return
        self.reaped = True
        for fd in (self.read_fd, self.head_fd, self.send_fd, self.records_fd):
            os.close(fd)
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)


def send(mem_fd: int, pipe_fd: int, value: Any) -> None:
    """Pickle ``value`` into the memory file ``mem_fd``, then write its length (8 bytes) to the pipe ``pipe_fd``."""
    payload = dumps(value, protocol=PROTOCOL)
    view = memoryview(payload)
    done = 0
    while done < len(payload):
        done += os.pwrite(mem_fd, view[done:], done)
    os.write(pipe_fd, len(payload).to_bytes(8, "little"))


def received(pipe_fd: int, mem_fd: int) -> Any:
    """What :func:`_send` sent (waits for the length on ``pipe_fd``); ``None`` when the other side ended first."""
    size = read_exactly(pipe_fd, 8)
    if len(size) != 8:
        return None
    return unpickled(pread_exactly(mem_fd, int.from_bytes(size, "little")))


def read_exactly(fd: int, size: int) -> bytes:
    out = b""
    while len(out) < size and (chunk := os.read(fd, size - len(out))):
        out += chunk
    return out


def pread_exactly(fd: int, size: int) -> bytes:
    chunks = []
    done = 0
    while done < size and (chunk := os.pread(fd, size - done, done)):
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


def unpickled(payload: bytes) -> Any:
    if not payload:
        return None
    try:
        return loads(payload)
    except Exception:  # noqa: BLE001 - a truncated payload: the parent does the share itself
        return None
