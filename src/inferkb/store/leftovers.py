"""The temp and backup files interrupted writes leave behind, found without importing the writer.

:func:`orphans` is what every full load reports (KB012, :func:`inferkb.store.loader.report_interrupted_writes`);
:func:`inferkb.store.batch.clean` removes them. They live here, apart from :mod:`inferkb.store.batch`, so that
reading a KB does not import the batch writer and its directory-descriptor layer (about 5 ms of start-up).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..jsonio import is_temp_name

__all__ = ["orphans"]


def _open_dir(root: Path, rel: str) -> int | None:
    """A descriptor of ``root/rel`` opened one component at a time with ``O_NOFOLLOW``; ``None`` if a component is
    missing, not a directory or a symlink (a symlinked directory is never looked behind)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(root, flags)
    except OSError:
        return None
    for part in [p for p in rel.split("/") if p]:
        try:
            nxt = os.open(part, flags, dir_fd=fd)
        except OSError:  # ELOOP (a symlink), ENOTDIR, ENOENT
            os.close(fd)
            return None
        os.close(fd)
        fd = nxt
    return fd


def _temp_files(root: Path, dirs: Iterable[str]) -> Iterator[tuple[int, str, Path]]:
    """``(folder descriptor, name, path)`` of each temp or backup file (:func:`inferkb.jsonio.is_temp_name`) in
    ``root/<rel>`` for each KB-relative folder ``rel`` of ``dirs``; symlinked or missing folders are skipped. The
    descriptor stays open while its files are yielded and is closed after."""
    for rel in dirs:
        fd = _open_dir(root, rel)
        if fd is None:
            continue
        try:
            with os.scandir(fd) as it:
                names = sorted(
                    e.name for e in it if e.name.startswith(".") and is_temp_name(e.name) and not e.is_dir(follow_symlinks=False)
                )
            for name in names:
                yield fd, name, root / rel / name
        finally:
            os.close(fd)


def orphans(root: Path, dirs: Iterable[str]) -> list[Path]:
    """Temp and backup files (:func:`inferkb.jsonio.is_temp_name`) left in ``root/<rel>`` for each KB-relative
    folder ``rel`` of ``dirs`` (``""`` is the root itself) by interrupted writes, sorted; symlinked folders are skipped."""
    return sorted(path for _fd, _name, path in _temp_files(root, dirs))
