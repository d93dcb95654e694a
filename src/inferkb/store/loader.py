"""Read every record file of a KB in one pass, keeping each problem met as a finding (KB0xx).

Nothing malformed is silently dropped: a file that cannot be read, parsed or
named becomes a finding, a good file becomes a :class:`~inferkb.store.records.Record`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import validate_rules as R
from ..findings import Finding
from ..jsonio import parse_bytes
from ..profile import Profile, TypeSpec
from .records import KEBAB, Record


@dataclass
class Loaded:
    """What :func:`load_records` read: ``records`` (``{key: Record}`` in load order), ``findings``
    (KB0xx problems) and ``files_seen`` (``.json`` files considered)."""

    records: dict[str, Record] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    files_seen: int = 0


def load_records(root: Path, profile: Profile) -> Loaded:
    """Walk ``root/data/<dir>/*.json`` once (sorted), parse each file strictly and return :class:`Loaded`.

    ``root`` must be resolved (symlinks leaving it are reported, not followed).
    Never raises for a bad record file; ``OSError`` only if ``data/`` itself cannot be listed.
    """
    out = Loaded()
    root_real = str(root)
    by_dir = profile.by_dir()
    limit = profile.max_record_bytes
    with os.scandir(root / "data") as top:
        dir_entries = sorted(top, key=lambda e: e.name)
    for dentry in dir_entries:
        rel_dir = f"data/{dentry.name}"
        if not _inside(out, dentry, root_real, rel_dir):
            continue
        if not dentry.is_dir():
            out.findings.append(R.KB010.finding(f"file {rel_dir} is directly under data/; records live in data/<type-dir>/", path=rel_dir))
            continue
        spec = by_dir.get(dentry.name)
        if spec is None:
            known = ", ".join(sorted(by_dir))
            out.findings.append(
                R.KB010.finding(f"directory {rel_dir}/ is not a record type directory of this KB (known: {known})", path=rel_dir)
            )
            continue
        with os.scandir(dentry.path) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            _load_entry(out, entry, spec, root_real, limit)
    return out


def _inside(out: Loaded, entry: os.DirEntry, root_real: str, rel: str) -> bool:
    if entry.is_symlink():
        target = os.path.realpath(entry.path)
        if not (target == root_real or target.startswith(root_real + os.sep)):
            out.findings.append(R.KB009.finding(f"{rel} is a symlink to {target}, outside the KB; not followed", path=rel))
            return False
    return True


def _load_entry(out: Loaded, entry: os.DirEntry, spec: TypeSpec, root_real: str, limit: int) -> None:
    rel = f"data/{spec.dir}/{entry.name}"
    if not _inside(out, entry, root_real, rel):
        return
    if entry.is_dir():
        out.findings.append(R.KB010.finding(f"directory {rel}/ is nested inside a type directory; records are flat files", path=rel))
        return
    name = entry.name
    if name.startswith("."):
        return  # editor/temp files (including our own .tmp files) are not records
    if not name.endswith(".json"):
        out.findings.append(R.KB010.finding(f"{rel} is not a .json record file", path=rel))
        return
    out.files_seen += 1
    stem = name[:-5]
    try:
        raw = read_capped(entry.path, limit)
        size = os.stat(entry.path).st_size if len(raw) > limit else len(raw)
    except OSError as exc:
        out.findings.append(R.KB001.finding(f"{rel} cannot be read: {exc.strerror}", path=rel))
        return
    if size > limit:
        out.findings.append(
            R.KB008.finding(f"{rel} is {size / 1048576:.1f} MiB, over the {limit / 1048576:.0f} MiB record limit; not loaded", path=rel)
        )
        return
    data, problem = parse_bytes(raw)
    if problem is not None:
        where = f" (line {problem.line}, column {problem.col})" if problem.line else ""
        out.findings.append(_PARSE_RULES[problem.code].finding(f"{problem.message}{where}", path=rel))
        return
    key = f"{spec.dir}/{stem}"
    if not KEBAB.match(stem):
        out.findings.append(
            R.KB011.finding(
                f"file name {name!r} is not a kebab-case slug (lower-case a-z, 0-9, single hyphens, no spaces)", path=rel, record=key
            )
        )
    out.records[key] = Record(key=key, id=stem, type=spec.name, dir=spec.dir, path=rel, data=data)


_READ_CHUNK = 1 << 16
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows; 0 elsewhere


def read_capped(path: str, limit: int) -> bytes:
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


_PARSE_RULES = {
    "invalid-json": R.KB001,
    "duplicate-key": R.KB002,
    "non-finite": R.KB003,
    "bom": R.KB004,
    "not-utf8": R.KB005,
    "empty": R.KB006,
    "not-object": R.KB007,
}
