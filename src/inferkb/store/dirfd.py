"""The directories a write goes through, opened one component at a time and never through a symlink.

A path check (:func:`inferkb.store.writer.inside`) is only true when it is
made: between it and the write, anyone who can write to the KB can swap
``data/<type>`` or ``provenance/`` for a symlink to somewhere else, and a write
by path would follow it. So on POSIX every write of a batch is made relative
to directory descriptors: :class:`Tree` opens the KB root once
(``O_DIRECTORY``), then each component below it with
``os.open(name, O_DIRECTORY | O_NOFOLLOW, dir_fd=parent)`` (``mkdir`` with
``dir_fd`` where one is missing). A component that is a symlink, wherever it
points (even inside the KB), or that is not a directory raises
:class:`~inferkb.errors.UnsafePath` naming it, and nothing is written. A
directory swapped after it was opened is not followed either: the descriptor
still names the directory that was checked, so the file lands in it.

Every file operation of :mod:`.batch` and of the writer's compare-and-swap
goes through a :class:`Dir`: ``open``/``stat``/``link``/``rename``/``unlink``
take the descriptor and a bare file name.

Where the platform lacks ``dir_fd`` support (Windows, :data:`SUPPORTED` is
False) a :class:`Dir` has no descriptor and the same operations go by
absolute path, as inferkb always did there: the resolved-path check before the
lock is then the only protection, and a swap in between is not caught.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UnsafePath

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows; 0 elsewhere

SUPPORTED = (
    bool(_O_NOFOLLOW and _O_DIRECTORY)
    and {os.open, os.stat, os.mkdir, os.rmdir, os.unlink, os.rename, os.link} <= os.supports_dir_fd
    and os.stat in os.supports_follow_symlinks
)
"""True where writes are made relative to directory descriptors (POSIX); False: by path (Windows)."""

_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW
# Errors of renameat2(RENAME_EXCHANGE) where the kernel or file system lacks it: the caller falls back to rename.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM}
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _load_renameat2():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, not at the top: a read-only command (validate) never swaps names and skips the import

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a libc older than glibc 2.28
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_NOT_LOADED = object()
_RENAMEAT2: Any = _NOT_LOADED
"""libc's ``renameat2`` (through ctypes) once :func:`_renameat2` has looked for it; ``None`` where it is missing."""


def _renameat2() -> Any:
    """libc's ``renameat2`` through ctypes, looked up on first use; ``None`` where unavailable (not Linux, old glibc)."""
    global _RENAMEAT2
    if _RENAMEAT2 is _NOT_LOADED:
        _RENAMEAT2 = _load_renameat2()
    return _RENAMEAT2


@dataclass(frozen=True, slots=True)
class Dir:
    """One directory of the KB: its absolute ``path`` (for messages) and, on POSIX, an open descriptor ``fd``.

    Every method takes a bare file ``name`` inside the directory (no ``/``);
    with ``fd`` the call is made relative to it and never follows a symlink
    in place of the directory; with ``fd=None`` (no ``dir_fd`` support) it
    goes by ``path / name``. Methods raise ``OSError`` as the system call does.
    """

    path: Path
    fd: int | None

    def _p(self, name: str) -> str | Path:
        return name if self.fd is not None else self.path / name

    def open(self, name: str, flags: int, mode: int = 0o777) -> int:
        """``os.open`` of ``name`` (the caller adds ``O_NOFOLLOW`` to refuse a symlinked file)."""
        return os.open(self._p(name), flags | _O_BINARY, mode, dir_fd=self.fd)

    def lstat(self, name: str) -> os.stat_result | None:
        """``lstat`` of ``name`` (a symlink is not followed); ``None`` when there is no such name."""
        try:
            return os.stat(self._p(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def read(self, name: str) -> tuple[bytes, os.stat_result] | None:
        """The bytes of the regular file ``name`` and its ``fstat`` (taken before reading, so an edit during the
        read shows as a changed fingerprint later); ``None`` when there is no such file. A symlinked ``name``
        raises ``OSError`` (``ELOOP``)."""
        try:
            fd = self.open(name, os.O_RDONLY | _O_NOFOLLOW)
        except FileNotFoundError:
            return None
        try:
            info = os.fstat(fd)
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read(), info
        finally:
            os.close(fd)

    def unlink(self, name: str | None) -> None:
        """Remove ``name`` when it exists (``None``: nothing to do)."""
        if name is None:
            return
        try:
            os.unlink(self._p(name), dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def link(self, src: str, dst: str) -> None:
        """Hard-link ``src`` as ``dst`` (both in this directory; ``FileExistsError`` when ``dst`` exists), never
        dereferencing ``src``."""
        os.link(self._p(src), self._p(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)

    def replace(self, src: str, dst: str) -> None:
        """Rename ``src`` over ``dst`` atomically (``rename(2)`` with both descriptors; ``os.replace`` by path)."""
        if self.fd is None:
            os.replace(self._p(src), self._p(dst))
        else:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def exchange(self, a: str, b: str) -> bool:
        """Swap the names ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
        renameat2 = _renameat2()
        if renameat2 is None:
            return False
        at = _AT_FDCWD if self.fd is None else self.fd
        if renameat2(at, os.fsencode(self._p(a)), at, os.fsencode(self._p(b)), _RENAME_EXCHANGE) == 0:
            return True
        import ctypes

        err = ctypes.get_errno()
        if err in _NO_EXCHANGE:
            return False
        raise OSError(err, os.strerror(err), str(self.path / b))

    def rmdir(self, name: str) -> None:
        """Remove the empty directory ``name`` (best effort: an error is ignored)."""
        try:
            os.rmdir(self._p(name), dir_fd=self.fd)
        except OSError:
            pass

    def fsync(self) -> None:
        """Flush the directory's entries (best effort: some file systems cannot fsync a directory)."""
        fd = self.fd
        if fd is None:
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            if self.fd is None:
                os.close(fd)


class Tree:
    """The open directories of one KB root, for one batch (a context manager that closes them).

    ``root`` is the resolved KB root. :meth:`dir` returns the :class:`Dir` of a
    KB-relative folder, opened once and kept: every file of a batch in that
    folder is written through the same descriptor. Raises ``OSError`` when the
    root cannot be opened.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY) if SUPPORTED else None
        self._dirs: dict[str, Dir] = {"": Dir(root, fd)}

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every descriptor (the tree is unusable afterwards)."""
        for d in self._dirs.values():
            if d.fd is not None:
                os.close(d.fd)
        self._dirs.clear()

    @property
    def top(self) -> Dir:
        """The KB root itself."""
        return self._dirs[""]

    def dir(self, rel: str, *, target: str, create: bool = False, created: list[tuple[Dir, str]] | None = None) -> Dir | None:
        """The :class:`Dir` of the KB-relative folder ``rel`` (``""`` is the root), walked from the root.

        With ``create``, missing folders are made (each appended to ``created``
        as ``(parent, name)`` so a failed batch can remove them); without it a
        missing folder returns ``None``. ``target`` (the KB-relative file to be
        written) names what was refused. Raises :class:`~inferkb.errors.UnsafePath`
        when a component is a symlink or not a directory, ``OSError`` when the
        file system fails.
        """
        if rel in self._dirs:
            return self._dirs[rel]
        parts = [p for p in rel.split("/") if p]
        depth = len(parts)
        while depth and "/".join(parts[:depth]) not in self._dirs:
            depth -= 1
        here = self._dirs["/".join(parts[:depth])]
        for i in range(depth, len(parts)):
            name, sub = parts[i], "/".join(parts[: i + 1])
            nxt = self._open(here, name, sub, target, create, created)
            if nxt is None:
                return None
            self._dirs[sub] = nxt
            here = nxt
        return here

    def _open(self, parent: Dir, name: str, sub: str, target: str, create: bool, created: list | None) -> Dir | None:
        path = parent.path / name
        if parent.fd is None:  # no dir_fd support: by path, as before (the resolved-path check is the protection)
            if not path.exists():
                if not create:
                    return None
                os.mkdir(path)
                if created is not None:
                    created.append((parent, name))
            return Dir(path, None)
        for _ in range(2):
            try:
                return Dir(path, os.open(name, _DIR_FLAGS, dir_fd=parent.fd))
            except FileNotFoundError:
                if not create:
                    return None
                try:
                    os.mkdir(name, 0o777, dir_fd=parent.fd)
                except FileExistsError:
                    continue  # made by someone else meanwhile: open (and check) what is there now
                if created is not None:
                    created.append((parent, name))
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise self._refused(parent, name, sub, target) from None
        return Dir(path, os.open(name, _DIR_FLAGS, dir_fd=parent.fd))

    def _refused(self, parent: Dir, name: str, sub: str, target: str) -> UnsafePath:
        info = parent.lstat(name)
        if info is not None and stat.S_ISLNK(info.st_mode):
            try:
                where = f" (to {os.readlink(name, dir_fd=parent.fd)})"
            except OSError:
                where = ""
            what = f"{sub} is a symlink{where}; inferkb writes only through real directories inside the KB, not through a symlink wherever it points"
        else:
            what = f"{sub} is not a directory"
        return UnsafePath(f"refused to write {target}: {what}; nothing was written")
