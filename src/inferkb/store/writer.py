"""The one way records reach disk: :func:`write_records`, a checked, all-or-nothing batch write.

Every write path (``derive --write``, ``new``, ``intake``) goes through it:

1. every record is checked for a string ``id``/``type``, a safe id and a known
   type, and an existing file is refused unless ``overwrite``;
2. the optional ``check`` runs with the whole batch staged in the index (so
   records of one batch may reference each other); an error finding refuses
   the batch;
3. only then are files written, each atomically (temp file + rename): first
   the extra ``files`` (derivation sidecars), then the records in order;
4. if a write fails, the files already written are put back as they were and
   the error is re-raised; on success the index is updated (and its write
   counter bumped, so every derived cache rebuilds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RecordExists, RecordInvalid, UsageError
from ..findings import Finding
from ..jsonio import atomic_write_bytes, atomic_write_text, dumps_record
from .records import Record, check_id

if TYPE_CHECKING:
    from . import Store

Check = Callable[["Store", list[Record]], list[Finding]]


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


def _inside(store: Store, rel: str) -> Path:
    path = (store.root / rel).resolve()
    if not path.is_relative_to(store.root):
        raise UsageError(f"refused to write {rel!r}: outside the KB {store.root}")
    return path


def write_records(
    store: Store,
    records: Sequence[dict[str, Any]],
    *,
    overwrite: bool = False,
    check: Check | None = None,
    texts: Mapping[str, str] | None = None,
    files: Sequence[tuple[str, str]] = (),
) -> list[Record]:
    """Write ``records`` (dicts with ``id`` and ``type``) as one batch; returns their :class:`Record` objects.

    ``texts`` maps a record key to the exact file text to write (a derivation
    keeps a file's own JSON style); other records are serialised canonically
    (:func:`inferkb.jsonio.dumps_record`). ``files`` are extra
    ``(KB-relative path, text)`` pairs written before the records.
    ``check(store, staged_records)`` returns findings; any of severity
    ``error`` refuses the batch.

    Raises :class:`UsageError` (bundled KB of an installed package, bad id or
    type, a path outside the KB), :class:`RecordExists` (a file exists and not
    ``overwrite``), :class:`RecordInvalid` (with the error findings) — nothing
    is written in those cases — and ``OSError`` when a write fails (files of
    the batch already written are restored first).
    """
    if not records and not files:
        return []
    store.ensure_writable()
    planned: list[tuple[Record, Path]] = []
    seen: set[str] = set()
    for data in records:
        rec, path = plan_record(store, data)
        if rec.key in seen:
            raise UsageError(f"record {rec.key} appears twice in one write")
        seen.add(rec.key)
        if not overwrite and path.exists():
            raise RecordExists(f"{path} exists; refusing to overwrite (use --update to replace it)")
        planned.append((rec, path))
    extra = [(_inside(store, rel), text) for rel, text in files]
    if check is not None and planned:
        with store.index.staged(r for r, _ in planned):
            errors = [f for f in check(store, [r for r, _ in planned]) if f.severity == "error"]
        if errors:
            first = errors[0].record or planned[0][0].key
            detail = "; ".join(f"{f.field or '-'}: {f.message}" for f in errors[:5])
            raise RecordInvalid(f"record {first} is invalid and nothing was written: {detail}", errors)
    texts = texts or {}
    jobs = extra + [(path, texts.get(rec.key) or dumps_record(rec.data)) for rec, path in planned]
    done: list[tuple[Path, bytes | None]] = []
    try:
        for path, text in jobs:
            try:
                old = path.read_bytes()
            except FileNotFoundError:
                old = None
            atomic_write_text(path, text)
            done.append((path, old))
    except BaseException:
        _restore(done)
        raise
    store.index.put(r for r, _ in planned)
    return [r for r, _ in planned]


def _restore(done: list[tuple[Path, bytes | None]]) -> None:
    """Put back files a failed batch had already written (best effort: the first error is the one raised)."""
    for path, old in reversed(done):
        try:
            if old is None:
                os.unlink(path)
            else:
                atomic_write_bytes(path, old)
        except OSError:
            pass
