"""Read a KB in one pass, index its ids and references, write records atomically.

``KB.load(path)`` walks ``data/<dir>/*.json`` once, parses each file strictly
(:mod:`inferkb.jsonio`) and keeps the problems it met while loading as
findings, so nothing malformed is silently dropped. Records stay plain dicts
(``Record.data``) for speed; the KB indexes them by ``dir/id`` and by bare id.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from . import rules as _rules
from .errors import KBNotFound, RecordExists, RecordInvalid, UsageError
from .findings import Finding
from .jsonio import atomic_write_text, dumps_record, parse_bytes
from .profile import Profile, TypeSpec, load_profile

KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# 255 bytes is the usual file-name limit; leave room for ".json" and the temp-file prefix/suffix.
MAX_ID_LENGTH = 200


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


def bundled_root() -> Path:
    """Path of the KB shipped inside the package (works editable and from a wheel)."""
    # Package data sits beside this module both in a source checkout and in an installed wheel.
    return Path(__file__).resolve().parent / "kb"


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


class KB:
    """A loaded knowledge base.

    Attributes: ``root`` (Path), ``profile`` (:class:`Profile`), ``bundled``
    (True for the KB shipped with inferkb), ``records`` (``{key: Record}`` in
    load order), ``load_findings`` (problems met while reading files).
    """

    def __init__(self, root: Path, profile: Profile, *, bundled: bool = False) -> None:
        self.root = root
        self.profile = profile
        self.bundled = bundled
        self.records: dict[str, Record] = {}
        self.load_findings: list[Finding] = []
        self.files_seen = 0

    # ---- loading -------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> KB:
        """Open the KB at ``path`` (``None`` = the bundled KB).

        Raises :class:`KBNotFound` if the path does not exist, is not a
        directory or has no ``data/`` directory; :class:`KBError` if its
        ``kb.toml`` is malformed.
        """
        bundled = path is None
        root = bundled_root() if bundled else Path(path)
        if not root.exists():
            raise KBNotFound(f"KB path {str(root)!r} does not exist")
        if not root.is_dir():
            raise KBNotFound(f"KB path {str(root)!r} is not a directory")
        if not (root / "data").is_dir():
            raise KBNotFound(f"KB path {str(root)!r} has no data/ directory; a KB keeps records in data/<type-dir>/<id>.json")
        kb = cls(root.resolve(), load_profile(root), bundled=bundled)
        with gc_paused():
            kb._load_records()
        return kb

    def _finding(self, code: str, message: str, **kw: Any) -> None:
        self.load_findings.append(_rules.RULES[code].finding(message, **kw))

    def _load_records(self) -> None:
        from . import validate_rules  # noqa: F401  (registers the KB0xx rules)

        root_real = str(self.root)
        by_dir = self.profile.by_dir()
        limit = self.profile.max_record_bytes
        data_dir = self.root / "data"
        with os.scandir(data_dir) as top:
            dir_entries = sorted(top, key=lambda e: e.name)
        for dentry in dir_entries:
            rel_dir = f"data/{dentry.name}"
            if not self._inside(dentry, root_real, rel_dir):
                continue
            if not dentry.is_dir():
                self._finding("KB010", f"file {rel_dir} is directly under data/; records live in data/<type-dir>/", path=rel_dir)
                continue
            spec = by_dir.get(dentry.name)
            if spec is None:
                known = ", ".join(sorted(by_dir))
                self._finding("KB010", f"directory {rel_dir}/ is not a record type directory of this KB (known: {known})", path=rel_dir)
                continue
            with os.scandir(dentry.path) as it:
                entries = sorted(it, key=lambda e: e.name)
            for entry in entries:
                self._load_entry(entry, spec, root_real, limit)

    def _inside(self, entry: os.DirEntry, root_real: str, rel: str) -> bool:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if not (target == root_real or target.startswith(root_real + os.sep)):
                self._finding("KB009", f"{rel} is a symlink to {target}, outside the KB; not followed", path=rel)
                return False
        return True

    def _load_entry(self, entry: os.DirEntry, spec: TypeSpec, root_real: str, limit: int) -> None:
        rel = f"data/{spec.dir}/{entry.name}"
        if not self._inside(entry, root_real, rel):
            return
        if entry.is_dir():
            self._finding("KB010", f"directory {rel}/ is nested inside a type directory; records are flat files", path=rel)
            return
        name = entry.name
        if name.startswith("."):
            return  # editor/temp files (including our own .tmp files) are not records
        if not name.endswith(".json"):
            self._finding("KB010", f"{rel} is not a .json record file", path=rel)
            return
        self.files_seen += 1
        stem = name[:-5]
        try:
            raw = _read_capped(entry.path, limit)
            size = os.stat(entry.path).st_size if len(raw) > limit else len(raw)
        except OSError as exc:
            self._finding("KB001", f"{rel} cannot be read: {exc.strerror}", path=rel)
            return
        if size > limit:
            self._finding(
                "KB008", f"{rel} is {size / 1048576:.1f} MiB, over the {limit / 1048576:.0f} MiB record limit; not loaded", path=rel
            )
            return
        data, problem = parse_bytes(raw)
        if problem is not None:
            where = f" (line {problem.line}, column {problem.col})" if problem.line else ""
            code = _PARSE_CODES[problem.code]
            self._finding(code, f"{problem.message}{where}", path=rel)
            return
        if not KEBAB.match(stem):
            self._finding(
                "KB011",
                f"file name {name!r} is not a kebab-case slug (lower-case a-z, 0-9, single hyphens, no spaces)",
                path=rel,
                record=f"{spec.dir}/{stem}",
            )
        key = f"{spec.dir}/{stem}"
        self.records[key] = Record(key=key, id=stem, type=spec.name, dir=spec.dir, path=rel, data=data)

    # ---- lookups -------------------------------------------------------
    @cached_property
    def by_id(self) -> dict[str, list[Record]]:
        """Bare id -> records with that file stem (more than one = ambiguous across types)."""
        index: dict[str, list[Record]] = {}
        for rec in self.records.values():
            index.setdefault(rec.id, []).append(rec)
        return index

    def ids_of_type(self, type_name: str) -> set[str]:
        """Set of record ids of one type."""
        return self._ids_by_type.get(type_name, set())

    @cached_property
    def _ids_by_type(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for rec in self.records.values():
            out.setdefault(rec.type, set()).add(rec.id)
        return out

    def by_type(self, type_name: str) -> Iterator[Record]:
        """Records of one type (name or directory, e.g. ``accelerator`` or ``accelerators``), in load order.

        Raises :class:`UsageError` for an unknown type.
        """
        name = self.type_spec(type_name).name
        return (r for r in self.records.values() if r.type == name)

    def type_spec(self, type_name: str) -> TypeSpec:
        """The :class:`TypeSpec` for a type name or its directory name; :class:`UsageError` when unknown."""
        spec = self.profile.types.get(type_name)
        if spec is None:
            spec = self.profile.by_dir().get(type_name)
        if spec is None:
            raise UsageError(f"unknown type {type_name!r}; types of this KB: {', '.join(sorted(self.profile.types))}")
        return spec

    def resolve(self, ref: str, type_name: str | None = None) -> Record | None:
        """Find a record by ``dir/id`` or bare id (optionally of one type); ``None`` if absent or ambiguous."""
        if "/" in ref:
            return self.records.get(ref)
        hits = self.by_id.get(ref, [])
        if type_name is not None:
            hits = [r for r in hits if r.type == type_name]
        return hits[0] if len(hits) == 1 else None

    def get(self, ref: str) -> Record:
        """Return the record for ``ref`` (bare id or ``dir/id``).

        Raises :class:`UsageError` for an unsafe id, an ambiguous bare id, or
        no such record (the message suggests near matches).
        """
        if "\x00" in ref or ".." in ref or ref.count("/") > 1 or "\\" in ref:
            raise UsageError(f"refused id {ref!r}: ids may not contain '..', '\\', NUL or more than one '/'")
        if "/" in ref:
            rec = self.records.get(ref)
        else:
            hits = self.by_id.get(ref, [])
            if len(hits) > 1:
                raise UsageError(f"id {ref!r} is ambiguous: {', '.join(h.key for h in hits)}; use dir/id")
            rec = hits[0] if hits else None
        if rec is None:
            near = self.suggest(ref)
            hint = f"; did you mean: {', '.join(near)}" if near else ""
            raise UsageError(f"no record {ref!r} in {self.root}{hint}")
        return rec

    def suggest(self, ref: str, limit: int = 5) -> list[str]:
        """Near matches for a missing id (rapid fuzzy ratio over keys and ids)."""
        from rapidfuzz import fuzz, process, utils

        choices = list(self.records)
        bare = ref.split("/")[-1]
        hits = process.extract(
            bare,
            {k: k.split("/", 1)[1] for k in choices},
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit,
            score_cutoff=60,
        )
        return [key for _, _, key in hits]

    # ---- validation, audits -------------------------------------------
    def validate(self, **options: Any):
        """Run every validation rule; returns a :class:`inferkb.report.Report`. See :func:`inferkb.validate.validate`."""
        from .validate import validate

        with gc_paused():
            return validate(self, **options)

    def audit(self, *names: str, **options: Any):
        """Run the named audits (all when none); returns a :class:`inferkb.report.Report`."""
        from .audit import run_audits

        with gc_paused():
            return run_audits(self, list(names) or None, **options)

    def check(self, **options: Any):
        """Validate, then run every audit; one combined :class:`inferkb.report.Report`."""
        from .check import check

        with gc_paused():
            return check(self, **options)

    @cached_property
    def metrics(self) -> dict[str, dict[str, Any]]:
        """The metric registry ``{name: {dimension, unit, direction, ...}}``; empty when the KB has none."""
        from .metrics import load_metrics

        return load_metrics(self)

    # ---- writing -------------------------------------------------------
    def ensure_writable(self) -> None:
        """Refuse to write into the bundled KB of an installed package.

        The bundled KB may be edited from a source checkout (its maintainers grow
        it there); inside an installed wheel it is package data, and a write would
        silently change every user's KB. Raises :class:`UsageError` then.
        """
        if self.bundled and not (self.root.parents[2] / "pyproject.toml").is_file():
            raise UsageError(
                "refusing to write into the bundled KB of an installed inferkb; "
                "make a writable copy with `inferkb init ./my-kb --with-data` and pass --kb ./my-kb"
            )

    def record_path(self, type_name: str, record_id: str) -> Path:
        """``data/<dir>/<id>.json`` under the KB root; raises UsageError for an unknown type or an unsafe id."""
        spec = self.type_spec(type_name)
        check_id(record_id)
        return self.root / "data" / spec.dir / f"{record_id}.json"

    def write_record(self, data: dict[str, Any], *, overwrite: bool = False, validate: bool = True) -> Record:
        """Validate ``data`` and write it atomically to ``data/<dir>/<id>.json``.

        ``data`` must carry ``id`` and ``type``. Raises :class:`UsageError` for a
        bad id or type, :class:`RecordExists` if the file exists and not
        ``overwrite``, :class:`RecordInvalid` (with findings) if validation
        fails — nothing is written in either case.
        """
        self.ensure_writable()
        type_name, record_id = data.get("type"), data.get("id")
        if not isinstance(type_name, str) or not isinstance(record_id, str):
            raise UsageError("a record needs string 'id' and 'type' fields")
        path = self.record_path(type_name, record_id)
        if path.exists() and not overwrite:
            raise RecordExists(f"{path} exists; refusing to overwrite (use --update to replace it)")
        spec = self.profile.types[type_name]
        rec = Record(f"{spec.dir}/{record_id}", record_id, type_name, spec.dir, f"data/{spec.dir}/{record_id}.json", data)
        if validate:
            from .validate import validate_record

            problems = [f for f in validate_record(self, rec) if f.severity == "error"]
            if problems:
                detail = "; ".join(f"{f.field or '-'}: {f.message}" for f in problems[:5])
                raise RecordInvalid(f"record {rec.key} is invalid and was not written: {detail}", problems)
        atomic_write_text(path, dumps_record(data))
        self.records[rec.key] = rec
        for attr in ("by_id", "_ids_by_type"):
            self.__dict__.pop(attr, None)
        return rec


_READ_CHUNK = 1 << 16
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows; 0 elsewhere


def _read_capped(path: str, limit: int) -> bytes:
    """The file's bytes, but never more than ``limit + 1`` of them (so "too large" is known without loading it).

    Plain ``os.open``/``os.read`` rather than ``open()``: a record is read in
    one or two system calls, without the buffered-file object, the fstat that
    ``open()`` makes, or a ``limit``-sized buffer per file. Raises ``OSError``.
    """
    fd = os.open(path, os.O_RDONLY | _O_BINARY)
    try:
        raw = os.read(fd, _READ_CHUNK)
        if not raw:
            return raw
        parts = [raw]
        total = len(raw)
        while total <= limit:  # read to EOF, or one byte past the limit
            chunk = os.read(fd, min(max(total, _READ_CHUNK), limit + 1 - total))
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


_PARSE_CODES = {
    "invalid-json": "KB001",
    "duplicate-key": "KB002",
    "non-finite": "KB003",
    "bom": "KB004",
    "not-utf8": "KB005",
    "empty": "KB006",
    "not-object": "KB007",
}
