"""The one way records reach disk: :func:`write_records`, a checked, all-or-nothing batch write.

Every write path (``derive --write``, ``new``, ``intake``, ``import-community``)
goes through it:

1. every record is checked for a string ``id``/``type``, a safe id and a known
   type, and every target (record or extra file) must resolve inside the KB
   root: a symlinked ``data/<dir>`` or ``provenance/`` leading elsewhere is
   refused, and so is a target that is itself a symlink. This check goes by
   resolved path and is only true when made; on POSIX the guarantee comes
   from step 3, where every folder is opened from the root without following
   a symlink (:mod:`.dirfd`): a folder that is a symlink, wherever it points,
   is refused with :class:`~inferkb.errors.UnsafePath`, even one swapped in
   after this check. Where ``dir_fd`` is unsupported (Windows) this check is
   the only one, as before;
2. the optional ``check`` runs with the whole batch staged in the index (so
   records of one batch may reference each other); an error finding refuses
   the batch;
3. under the KB-wide write lock (:mod:`.lock`): a batch a killed writer left
   half applied is rolled back and orphan temp files are removed; when that
   rollback changed a file the caller had read as the killed writer left it,
   the caller's plan rests on content that is gone (an intake skips records it
   saw as unchanged), so :class:`WriteConflict` and nothing more is written
   (:func:`recover_interrupted` does the rollback before a KB is read); then
   **compare-and-swap**: a record file that exists must still hold what the
   index holds for it (the data every caller built its change from), an
   extra file must still hold the ``basis`` text the caller read, and a file
   to create must still be absent (each read through the batch's folder
   descriptors); otherwise :class:`WriteConflict` (or
   :class:`RecordExists`) and nothing is written. The fingerprint (inode, size,
   mtime) of each file so checked goes with the batch: an editor takes no lock,
   so :func:`inferkb.store.batch.commit` re-checks it right before it replaces
   that file, after the whole batch is staged;
4. the batch is put in place by :func:`inferkb.store.batch.commit` (staged in
   full first, then renamed, rolled back on failure): first the extra
   ``files`` (derivation sidecars), then the records in order. On success the
   index is updated (and its write counter bumped, so every derived cache
   rebuilds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RecordExists, RecordInvalid, UnsafePath, UsageError, WriteConflict, WriteFailed
from ..findings import Finding
from ..jsonio import dumps_record, parse_bytes
from . import batch
from .dirfd import Tree
from .lock import kb_lock
from .records import Record, check_id

if TYPE_CHECKING:
    from . import Store

Check = Callable[["Store", list[Record]], list[Finding]]
_ABSENT = object()


def plan_record(store: Store, data: dict[str, Any]) -> tuple[Record, Path]:
    """The :class:`Record` ``data`` would become and its absolute path; :class:`UsageError` for a bad id or type."""
    type_name, record_id = data.get("type"), data.get("id")
    if not isinstance(type_name, str) or not isinstance(record_id, str):
        raise UsageError("a record needs string 'id' and 'type' fields")
    spec = store.profile.types.get(type_name)
    if spec is None:
        raise UsageError(f"record {record_id!r}: unknown type {type_name!r}; types of this KB: {', '.join(sorted(store.profile.types))}")
    check_id(record_id)
    rel = f"data/{spec.dir}/{record_id}.json"
    return Record(f"{spec.dir}/{record_id}", record_id, spec.name, spec.dir, rel, data), store.root / rel


def inside(root: Path, rel: str) -> Path:
    """``root / rel`` when it is a regular path inside ``root`` once every symlink on the way is resolved.

    ``root`` is the resolved KB root. Raises :class:`UsageError` for a path that
    leaves the KB (``..``, an absolute path, a symlinked directory pointing
    elsewhere) or whose last component is a symlink. The resolve is
    non-strict and made before the write lock is taken: a first, cheap
    refusal with the clearest message. On POSIX the write itself is made
    through directory descriptors (:mod:`.dirfd`), which refuse any symlinked
    folder at the moment of writing; on Windows this is the only check.
    """
    path = root / rel
    try:
        parent = path.parent.resolve()
    except OSError as exc:  # Python 3.11's non-strict resolve raises when a link turns into a folder mid-way (EINVAL)
        raise UnsafePath(
            f"refused to write {rel!r}: a folder on the way changed while it was being checked "
            f"(a symlink swapped in or out: {exc.strerror or exc}); nothing was written"
        ) from None
    if not parent.is_relative_to(root) or path.name in ("", ".", ".."):
        raise UsageError(f"refused to write {rel!r}: it resolves to {parent / path.name}, outside the KB {root}")
    if path.is_symlink():
        raise UsageError(f"refused to write {rel!r}: it is a symlink; a record is a regular file inside the KB")
    return parent / path.name


def _read_now(tree: Tree, rel: str) -> tuple[bytes | object, batch.Fingerprint | None]:
    """The bytes of the KB-relative file ``rel`` and the fingerprint of the file they came from (stat taken before
    reading, so an edit during the read shows as a changed fingerprint later); ``(_ABSENT, None)`` when there is
    no file. Read through ``tree``: :class:`~inferkb.errors.UnsafePath` when a folder on the way is a symlink."""
    folder, _, name = rel.rpartition("/")
    d = tree.dir(folder, target=rel)
    got = None if d is None else d.read(name)
    if got is None:
        return _ABSENT, None
    return got[0], batch.fingerprint(got[1])


def _check_unchanged(store: Store, tree: Tree, planned: list[tuple[Record, Path]], overwrite: bool) -> list[batch.Fingerprint | None]:
    """Compare-and-swap for records: the fingerprint of each existing target (``None``: to create), raising when
    one differs from what the index holds."""
    creates: list[batch.Fingerprint | None] = []
    for rec, path in planned:
        now, seen = _read_now(tree, rec.path)
        basis = store.index.records.get(rec.key)
        if now is _ABSENT:
            if basis is not None:
                raise WriteConflict(
                    f"{rec.path} was deleted since the KB was read; nothing was written (re-run to start from the KB as it is)"
                )
            creates.append(None)
            continue
        if not overwrite:
            raise RecordExists(f"{path} exists; refusing to overwrite (use --update to replace it)")
        if basis is None:
            if any(f.path == rec.path for f in store.load_findings):
                raise WriteConflict(
                    f"{rec.path} exists but was not loaded (`inferkb validate` says why); nothing was written: "
                    "fix or remove the file, then re-run"
                )
            raise WriteConflict(f"{rec.path} was created by another writer since the KB was read; nothing was written")
        data, problem = parse_bytes(now)  # type: ignore[arg-type]
        if problem is not None or data != basis.data:
            raise WriteConflict(
                f"{rec.path} changed on disk since the KB was read (another process edited it); nothing was written. "
                "Re-run to work from its current content."
            )
        creates.append(seen)
    return creates


def _check_basis(tree: Tree, extra: list[tuple[str, Path, str]], basis: Mapping[str, str | None]) -> list[batch.Fingerprint | None]:
    """Compare-and-swap for extra files: the file must still hold ``basis[rel]`` (``None`` = absent) when given;
    returns each file's fingerprint (``None``: it does not exist)."""
    creates: list[batch.Fingerprint | None] = []
    for rel, _path, _ in extra:
        now, seen = _read_now(tree, rel)
        if rel in basis:
            want = basis[rel]
            same = now is _ABSENT if want is None else (now is not _ABSENT and now == want.encode("utf-8"))
            if not same:
                raise WriteConflict(f"{rel} changed on disk since it was read (another process wrote it); nothing was written")
        creates.append(seen)
    return creates


def _check_reads_back(rec: Record, body: bytes) -> None:
    """:class:`RecordInvalid` when the loader would not read ``body`` back as a record (an int no float holds, a
    lone surrogate, ...): a batch never writes a file the next validate reports as unreadable."""
    _, problem = parse_bytes(body)
    if problem is not None:
        field = f"{problem.field}: " if problem.field else ""
        raise RecordInvalid(f"record {rec.key} would not read back and nothing was written: {field}{problem.message}")


def _check_not_stale(store: Store, tree: Tree, outcome: batch.Outcome | None) -> None:
    """After a rollback: :class:`WriteConflict` when a file it put back or removed had been read by ``store`` as the
    killed writer left it (the index holds other content than the file now does)."""
    touched = set(outcome.restored) | set(outcome.removed) if outcome is not None else set()
    if not touched:
        return
    stale = []
    for rec in store.index.records.values():
        if rec.path in touched:
            now, _ = _read_now(tree, rec.path)
            if now is _ABSENT or parse_bytes(now)[0] != rec.data:  # type: ignore[arg-type]
                stale.append(rec.path)
    if stale:
        stale.sort()
        others = f" and {len(stale) - 1} other file{'s' if len(stale) > 2 else ''}" if len(stale) > 1 else ""
        raise WriteConflict(
            f"{stale[0]}{others} held what an inferkb write that was killed had half written when this KB was read; "
            "that write is now rolled back, so nothing of this batch was written: re-run to work from the KB as it is"
        )


def recover_interrupted(store: Store) -> batch.Outcome | None:
    """Roll back a batch a killed writer left half applied and remove orphan temp files, under the write lock.

    Call it before reading a KB that is about to be written (``inferkb intake``, ``derive --write``, ...): the
    records are then read as they are after the rollback, and temp files are removed even when the command ends
    up writing nothing (a writer killed after its commit point leaves its backups but no journal). Returns what
    :func:`inferkb.store.batch.recover` did, ``None`` when no journal was there (records are untouched then;
    without orphan temp files either, nothing is touched and no lock is taken). Raises :class:`UsageError` for the bundled KB
    of an installed package, :class:`~inferkb.errors.JournalRefused` for a journal inferkb would not have written,
    :class:`WriteConflict` when another writer keeps the lock busy.
    """
    from ..jsonio import JOURNAL_NAME

    if not os.path.lexists(store.root / JOURNAL_NAME) and not batch.orphans(store.root, type_dirs(store)):
        return None
    store.ensure_writable()
    with kb_lock(store.root), Tree(store.root) as tree:
        outcome = batch.recover(store.root, tree)
        batch.clean(store.root, type_dirs(store))
    return outcome


def type_dirs(store: Store) -> list[str]:
    """Every folder (KB-relative) a write may leave temp files in: the root (the journal's temp file),
    ``data/<dir>`` and ``provenance/<dir>`` of every type."""
    dirs = [f"data/{t.dir}" for t in store.profile.types.values()]
    return ["", *dirs, *(f"provenance/{t.dir}" for t in store.profile.types.values())]


def write_records(
    store: Store,
    records: Sequence[dict[str, Any]],
    *,
    overwrite: bool = False,
    check: Check | None = None,
    texts: Mapping[str, str] | None = None,
    files: Sequence[tuple[str, str]] = (),
    basis: Mapping[str, str | None] | None = None,
) -> list[Record]:
    """Write ``records`` (dicts with ``id`` and ``type``) as one batch; returns their :class:`Record` objects.

    ``texts`` maps a record key to the exact file text to write (a derivation
    keeps a file's own JSON style); other records are serialised canonically
    (:func:`inferkb.jsonio.dumps_record`). ``files`` are extra
    ``(KB-relative path, text)`` pairs written before the records; ``basis``
    maps such a path to the text the caller read from it (``None``: it did not
    exist), checked under the lock. ``check(store, staged_records)`` returns
    findings; any of severity ``error`` refuses the batch.

    Raises :class:`UsageError` (bundled KB of an installed package, bad id or
    type, a target outside the KB; :class:`~inferkb.errors.UnsafePath` when a
    folder on the way to a target is a symlink), :class:`RecordExists` (a file exists and
    not ``overwrite``), :class:`WriteConflict` (a file changed since it was
    read, or the lock stayed busy), :class:`RecordInvalid` (with the error
    findings), ``OSError`` when the file system fails (a full disk). In every
    case nothing of the batch is written.
    """
    if not records and not files:
        return []
    store.ensure_writable()
    planned: list[tuple[Record, Path]] = []
    seen: set[str] = set()
    for data in records:
        rec, _ = plan_record(store, data)
        if rec.key in seen:
            raise UsageError(f"record {rec.key} appears twice in one write")
        seen.add(rec.key)
        path = inside(store.root, rec.path)
        if not overwrite and path.exists():
            raise RecordExists(f"{path} exists; refusing to overwrite (use --update to replace it)")
        planned.append((rec, path))
    texts = texts or {}
    extra = [(rel, inside(store.root, rel), text) for rel, text in files]
    if check is not None and planned:
        with store.index.staged(r for r, _ in planned):
            errors = [f for f in check(store, [r for r, _ in planned]) if f.severity == "error"]
        if errors:
            first = errors[0].record or planned[0][0].key
            detail = "; ".join(f"{f.field or '-'}: {f.message}" for f in errors[:5])
            raise RecordInvalid(f"record {first} is invalid and nothing was written: {detail}", errors)
    bodies = [(texts.get(rec.key) or dumps_record(rec.data)).encode("utf-8") for rec, _ in planned]
    for (rec, _), body in zip(planned, bodies, strict=True):
        _check_reads_back(rec, body)
    try:
        with kb_lock(store.root), Tree(store.root) as tree:
            recovered = batch.recover(store.root, tree)
            batch.clean(store.root, type_dirs(store))
            _check_not_stale(store, tree, recovered)
            extra_seen = _check_basis(tree, extra, basis or {})
            record_seen = _check_unchanged(store, tree, planned, overwrite)
            jobs = [
                batch.Job(path, rel, text.encode("utf-8"), seen is None, seen)
                for (rel, path, text), seen in zip(extra, extra_seen, strict=True)
            ]
            jobs += [
                batch.Job(path, rec.path, body, seen is None, seen)
                for (rec, path), body, seen in zip(planned, bodies, record_seen, strict=True)
            ]
            batch.commit(store.root, jobs, tree)
    except OSError as exc:
        if isinstance(exc, WriteFailed):
            raise
        where = exc.filename or store.root
        failed = WriteFailed(exc.errno, f"could not write {where}: {exc.strerror or exc}; nothing of the batch was written", exc.filename)
        raise failed from exc
    store.index.put(r for r, _ in planned)
    return [r for r, _ in planned]
