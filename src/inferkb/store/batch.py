"""Put a batch of files in place all or nothing: stage, journal, apply, and roll back what a crash left.

:func:`commit` is called by the writer with the KB's write lock held
(:mod:`.lock`). It never leaves half a batch behind:

1. **stage**: every new file is written in full to a temp file beside its
   target (same directory, so same file system) and fsynced. A failure here
   (a full disk) removes the temp files: the KB is as it was.
2. **journal**: ``<root>/.inferkb-journal.json`` lists every target, its
   temp file, its backup and the staged file's identity (inode, size, mtime).
3. **apply**: an existing target is first checked against the fingerprint
   (inode, size, mtime) the caller's compare-and-swap read, hard-linked to a
   backup name, then swapped with its temp file (``renameat2`` with
   ``RENAME_EXCHANGE`` where the file system has it, so the file displaced is
   known and checked once more; else ``rename``); a target another process
   changed meanwhile (an editor takes no lock) stops the batch with
   :class:`~inferkb.errors.WriteConflict`. A new target is created with
   ``link(temp, target)``, which fails if the name exists (create-exclusive
   semantics: two writers cannot both create one record). A failure here
   undoes the files already applied, from their backups.
4. **finish**: directories are fsynced, the journal is removed (the commit
   point), then the temp and backup names.

On POSIX every file operation above is made relative to directory descriptors
(:mod:`.dirfd`): each target's folder is opened once per batch, component by
component with ``O_NOFOLLOW`` from the KB root, temp files are created with
``O_EXCL | O_NOFOLLOW`` in it, and links and renames name both ends by that
descriptor. A folder that is (or is swapped for) a symlink is refused with
:class:`~inferkb.errors.UnsafePath` before anything is written, and a swap made
after the folder was opened is not followed. Where ``dir_fd`` is unsupported
(Windows) the same steps go by absolute path, as before; only the writer's
resolved-path check protects them there.

A process killed during 3 or 4 leaves the journal; the next write (or
:func:`recover`) rolls the batch back: a target that is still the staged file
goes back to its backup, or is removed if it was new. A process killed
during 1 leaves temp files only. Every temp and backup name follows
:data:`inferkb.jsonio.TEMP_NAME`, so :func:`orphans` can report leftovers and
:func:`clean` removes them (the loader reports them as KB012, a journal as
KB013).

:func:`recover` trusts no journal blindly: every path in it must be relative,
under ``data/`` or ``provenance/``, reached through real directories (no
symlink) and, for temp and backup names, be a :data:`~inferkb.jsonio.TEMP_NAME`
sibling of its target; otherwise it raises :class:`~inferkb.errors.JournalRefused`
and touches nothing. :func:`clean` and :func:`orphans` open each directory
component with ``O_NOFOLLOW`` and never look behind a symlinked directory.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import JournalRefused, RecordExists, UnsafePath, WriteConflict
from ..jsonio import JOURNAL_NAME, TEMP_NAME, default_mode, temp_path
from .dirfd import Dir, Tree
from .leftovers import _open_dir, _temp_files, orphans  # noqa: F401 - orphans: re-exported, the name it had here

# Errors of file systems that cannot hard-link (FAT, some network mounts): fall back to plain renames.
_NO_LINK = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}

Fingerprint = tuple[int, int, int]
"""A file as it was read: ``(inode, size in bytes, mtime in ns)``; a rename over it or an in-place rewrite changes it."""


def fingerprint(info: os.stat_result) -> Fingerprint:
    """The :data:`Fingerprint` of a ``stat`` result."""
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _exchange(d: Dir, a: str, b: str) -> bool:
    """Swap the names ``a`` and ``b`` of folder ``d`` atomically; False where unsupported (see :meth:`Dir.exchange`)."""
    return d.exchange(a, b)


@dataclass(slots=True)
class Job:
    """One file of a batch: absolute ``path``, KB-relative ``rel``, the bytes to write, and whether it must be new."""

    path: Path
    rel: str
    data: bytes
    create: bool  # True: the target must not exist (created exclusively); False: it exists and is replaced
    expect: Fingerprint | None = None  # the target as the caller checked it; it must still be that file when replaced


@dataclass(slots=True)
class _Staged:
    job: Job
    dir: Dir  # the target's folder, as opened for this batch
    tmp: Path
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    bak: Path | None = None
    old: bytes | None = None  # old bytes, kept only where no backup link could be made
    applied: bool = False


@dataclass
class Outcome:
    """What :func:`recover` did: ``restored`` (targets put back), ``removed`` (new targets taken away), ``unrecoverable``."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unrecoverable: list[str] = field(default_factory=list)


def _name(path: Path | None) -> str | None:
    return None if path is None else path.name


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _mode(d: Dir, name: str) -> int:
    """The permission bits a rewrite of ``name`` gets: the existing file's, else those of a new file (umask)."""
    info = d.lstat(name)
    return default_mode() if info is None else info.st_mode & 0o7777


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _stage(job: Job, d: Dir | None = None) -> _Staged:
    """Write ``job``'s bytes to a fresh temp file in its folder ``d`` (by default ``job.path.parent`` by path) and
    fsync it; raises ``OSError`` (the temp file removed)."""
    d = d or Dir(job.path.parent, None)
    tmp = temp_path(job.path, "tmp")
    mode = _mode(d, job.path.name)
    fd = d.open(tmp.name, _CREATE, mode)
    # The backup name is chosen now so the journal (written before anything is applied) can name it.
    st = _Staged(job, d, tmp, bak=None if job.create else temp_path(job.path, "bak"))
    try:
        os.fchmod(fd, mode)  # O_CREAT applies the umask; an existing file's mode is kept exactly
        _write_all(fd, job.data)
        os.fsync(fd)
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        d.unlink(tmp.name)
        raise
    os.close(fd)
    st.ino, st.size, st.mtime_ns = info.st_ino, info.st_size, info.st_mtime_ns
    return st


def _rel(root: Path, path: Path | None) -> str | None:
    return None if path is None else str(path.relative_to(root))


def _write_journal(root: Path, staged: Sequence[_Staged], top: Dir | None = None) -> Path:
    doc = {
        "pid": os.getpid(),
        "jobs": [
            {
                "target": s.job.rel,
                "tmp": _rel(root, s.tmp),
                "bak": _rel(root, s.bak),
                "create": s.job.create,
                "ino": s.ino,
                "size": s.size,
                "mtime_ns": s.mtime_ns,
            }
            for s in staged
        ],
    }
    top = top or Dir(root, None)
    path = root / JOURNAL_NAME
    tmp = temp_path(path, "tmp").name
    fd = top.open(tmp, _CREATE, 0o644)
    try:
        _write_all(fd, json.dumps(doc).encode())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        top.unlink(tmp)  # a full disk: no half journal is left in the KB root
        raise
    os.close(fd)
    try:
        top.replace(tmp, JOURNAL_NAME)
    except BaseException:
        top.unlink(tmp)
        raise
    top.fsync()
    return path


def _changed(st: _Staged) -> WriteConflict:
    return WriteConflict(
        f"{st.job.rel} changed on disk while this batch was being written (another process edited it); "
        "nothing of the batch was written. Re-run to work from its current content."
    )


def _still_expected(st: _Staged, info: os.stat_result | None) -> None:
    """Raise :class:`WriteConflict` unless ``info`` (a stat of the file about to be displaced) is the checked file."""
    if st.job.expect is not None and (info is None or fingerprint(info) != st.job.expect):
        raise _changed(st)


def _apply(st: _Staged) -> None:
    target, d, name, tmp = st.job.path, st.dir, st.job.path.name, st.tmp.name
    if st.job.create:
        try:
            d.link(tmp, name)
        except FileExistsError:
            raise RecordExists(f"{target} was created by another writer meanwhile; nothing of this batch was written") from None
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            if d.lstat(name) is not None:
                raise RecordExists(f"{target} was created by another writer meanwhile; nothing of this batch was written") from None
            d.replace(tmp, name)
    else:
        _still_expected(st, d.lstat(name))
        try:
            d.link(name, _name(st.bak))
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            st.bak = None
            fd = d.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                _still_expected(st, os.fstat(fd))
                with os.fdopen(os.dup(fd), "rb") as fh:
                    st.old = fh.read()
            finally:
                os.close(fd)
        else:
            _still_expected(st, d.lstat(_name(st.bak)))  # the file the backup name holds is the checked one
        if _exchange(d, tmp, name):
            st.applied = True
            displaced = d.lstat(tmp)  # what the target name held at the very moment of the swap
            if st.job.expect is not None and (displaced is None or fingerprint(displaced) != st.job.expect):
                if _exchange(d, tmp, name):  # put the other process's file back; ours returns to the temp name
                    st.applied = False
                raise _changed(st)
        else:
            d.replace(tmp, name)
    st.applied = True


def _undo(st: _Staged) -> None:
    """Put one applied target back (best effort; the first error is the one the caller raises)."""
    d, name = st.dir, st.job.path.name
    try:
        if st.job.create:
            if _is_staged(d, name, st.ino, st.size, st.mtime_ns):
                d.unlink(name)
        elif st.bak is not None:
            d.replace(st.bak.name, name)
            st.bak = None
        elif st.old is not None:
            tmp = temp_path(st.job.path, "tmp").name
            fd = d.open(tmp, _CREATE, _mode(d, name))
            try:
                _write_all(fd, st.old)
            finally:
                os.close(fd)
            d.replace(tmp, name)
    except OSError:
        pass


def _is_staged(d: Dir, name: str, ino: int, size: int, mtime_ns: int) -> bool:
    try:
        info = d.lstat(name)
    except OSError:
        return False
    return info is not None and (info.st_ino, info.st_size, info.st_mtime_ns) == (ino, size, mtime_ns)


def commit(root: Path, jobs: Sequence[Job], tree: Tree | None = None) -> None:
    """Write ``jobs`` all or nothing (see the module docstring); the caller holds the KB's write lock.

    ``tree`` holds the folders the caller already opened (its compare-and-swap
    read the targets through them); without it one is opened for the call.
    Raises :class:`~inferkb.errors.UnsafePath` when a folder on the way to a
    target is a symlink, ``OSError`` when staging or applying fails and
    :class:`RecordExists` when a file to create appeared meanwhile; in each
    case every file of the batch is as it was before the call.
    """
    if not jobs:
        return
    if tree is None:
        with Tree(root) as own:
            return commit(root, jobs, own)
    created_dirs: list[tuple[Dir, str]] = []
    staged: list[_Staged] = []
    journal: Path | None = None
    try:
        for job in jobs:
            folder = job.rel.rpartition("/")[0]
            d = tree.dir(folder, target=job.rel, create=True, created=created_dirs)
            assert d is not None  # create=True makes every missing folder
            staged.append(_stage(job, d))
        journal = _write_journal(root, staged, tree.top)
        for st in staged:
            _apply(st)
    except BaseException:
        for st in reversed(staged):
            if st.applied:
                _undo(st)
        for st in staged:
            st.dir.unlink(st.tmp.name)
            st.dir.unlink(_name(st.bak))
        for parent, name in reversed(created_dirs):
            parent.rmdir(name)
        if journal is not None:
            tree.top.unlink(JOURNAL_NAME)
        raise
    for d in {id(st.dir): st.dir for st in staged}.values():
        d.fsync()
    tree.top.unlink(JOURNAL_NAME)  # the commit point: from here on the batch stands
    tree.top.fsync()
    for st in staged:
        st.dir.unlink(st.tmp.name)  # a created file's second name (the first is the target)
        st.dir.unlink(_name(st.bak))


def _refuse(root: Path, detail: str) -> JournalRefused:
    return JournalRefused(
        f"{root / JOURNAL_NAME} was not written by inferkb as it stands ({detail}); recovery refused, no file was touched "
        "and nothing is written to this KB until it is gone. Look at it, put back by hand any file it names, then remove it."
    )


def _journal_path(root: Path, value: object, where: str) -> str:
    """``value`` as a KB-relative path under ``data/`` or ``provenance/`` reached through real directories only."""
    if not isinstance(value, str) or not value:
        raise _refuse(root, f"{where} is not a path")
    parts = value.split("/")
    if value.startswith("/") or "\\" in value or "\x00" in value or any(p in ("", ".", "..") for p in parts):
        raise _refuse(root, f"{where} {value!r} is not a plain relative path")
    if parts[0] not in ("data", "provenance") or len(parts) < 2:
        raise _refuse(root, f"{where} {value!r} is not under data/ or provenance/")
    here = root
    for part in parts[:-1]:
        here = here / part
        if os.path.islink(here):
            raise _refuse(root, f"{where} {value!r} goes through the symlink {here}")
    return value


def _journal_sibling(root: Path, target: str, value: object, kind: str, where: str) -> str | None:
    """``value`` as the ``kind`` (tmp or bak) name of ``target``, beside it; ``None`` stays ``None``."""
    if value is None:
        return None
    folder, _, name = target.rpartition("/")
    if not isinstance(value, str) or value.rpartition("/")[0] != folder:
        raise _refuse(root, f"{where} {value!r} is not beside its target {target!r}")
    m = TEMP_NAME.match(value.rpartition("/")[2])
    if m is None or m["target"] != name or m["kind"] != kind:
        raise _refuse(root, f"{where} {value!r} is not a .{kind} name of {target!r}")
    return value


def _read_journal(root: Path) -> list[dict] | None:
    """The journal's jobs, every path checked (see the module docstring); ``None`` when there is no journal.

    Raises :class:`JournalRefused` for a journal inferkb would not have written, ``OSError`` if it cannot be read.
    """
    path = root / JOURNAL_NAME
    if os.path.islink(path):
        raise _refuse(root, "it is a symlink")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        raise _refuse(root, "it is not JSON") from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list):
        raise _refuse(root, "it has no list of jobs")
    out = []
    for i, j in enumerate(jobs):
        where = f"jobs[{i}]"
        if not isinstance(j, dict):
            raise _refuse(root, f"{where} is not an object")
        target = _journal_path(root, j.get("target"), f"{where}.target")
        ident = [j.get(k) for k in ("ino", "size", "mtime_ns")]
        if not all(type(v) is int for v in ident) or type(j.get("create")) is not bool:
            raise _refuse(root, f"{where} lacks integer ino/size/mtime_ns or a true/false create")
        out.append(
            {
                "target": target,
                "tmp": _journal_sibling(root, target, j.get("tmp"), "tmp", f"{where}.tmp"),
                "bak": _journal_sibling(root, target, j.get("bak"), "bak", f"{where}.bak"),
                "create": j["create"],
                "ident": tuple(ident),
            }
        )
    return out


def journal_problem(root: Path) -> str | None:
    """Why :func:`recover` would refuse the journal in ``root`` (the message), or ``None`` (no journal, or a sound one)."""
    try:
        _read_journal(root)
    except JournalRefused as exc:
        return str(exc)
    except OSError as exc:
        return f"{root / JOURNAL_NAME} cannot be read: {exc.strerror or exc}"
    return None


def recover(root: Path, tree: Tree | None = None) -> Outcome | None:
    """Roll back a batch a killed writer left half applied (its journal exists); ``None`` when there is none.

    A target is touched only while it is still the very file that batch staged
    (same inode, size and mtime): a later edit is never undone. The caller
    holds the KB's write lock. Raises :class:`JournalRefused` (nothing touched)
    for a journal whose paths leave the KB or are not inferkb's own names. On
    POSIX each target's folder is opened through ``tree`` (one is opened when
    not given), so a folder swapped for a symlink after the journal was checked
    is refused, not followed.
    """
    if tree is None:
        with Tree(root) as own:
            return recover(root, own)
    jobs = _read_journal(root)
    if jobs is None:
        return None
    out = Outcome()
    for j in jobs:
        folder, _, name = j["target"].rpartition("/")
        try:
            d = tree.dir(folder, target=j["target"])
        except UnsafePath as exc:
            raise _refuse(root, f"the folder of {j['target']!r} is a symlink or not a directory ({exc})") from None
        if d is None:
            continue  # its folder is gone: nothing of that batch is left there
        tmp = j["tmp"].rpartition("/")[2] if j["tmp"] else None
        bak = j["bak"].rpartition("/")[2] if j["bak"] else None
        ours = _is_staged(d, name, *j["ident"])
        bak_info = d.lstat(bak) if bak else None
        if ours and j["create"]:
            d.unlink(name)
            out.removed.append(j["target"])
        elif ours and bak_info is not None and stat.S_ISREG(bak_info.st_mode):
            d.replace(bak, name)
            out.restored.append(j["target"])
        elif ours:
            out.unrecoverable.append(j["target"])
        d.unlink(tmp)
        d.unlink(bak)
    tree.top.unlink(JOURNAL_NAME)
    tree.top.fsync()
    return out


def clean(root: Path, dirs: Iterable[str]) -> list[Path]:
    """Remove the :func:`orphans` of ``dirs`` (the caller holds the KB's write lock, so no writer owns them); returns them.

    Each name is unlinked relative to the folder's descriptor, so a directory swapped for a symlink meanwhile is not followed.
    """
    gone: list[Path] = []
    for fd, name, path in _temp_files(root, dirs):
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        gone.append(path)
    return sorted(gone)
