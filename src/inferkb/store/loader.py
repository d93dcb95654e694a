"""Read every record file of a KB in one pass, keeping each problem met as a finding (KB0xx).

Nothing malformed is silently dropped: a file that cannot be read, parsed or
named becomes a finding, a good file becomes a :class:`~inferkb.store.records.Record`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import validate_rules as R
from ..errors import PROCESSING
from ..findings import Finding
from ..jsonio import JOURNAL_NAME, is_temp_name, parse_bytes_compact
from ..profile import Profile, TypeSpec
from ..urls import may_hold_unsafe_url
from .cache import CacheFile, StampsOnly, file_stamp, now_ns
from .leftovers import orphans
from .records import KEBAB, Record


@dataclass
class Loaded:
    """What :func:`load_records` read: ``records`` (``{key: Record}`` in load order), ``findings``
    (KB0xx problems), ``files_seen`` (``.json`` files considered), ``url_clear`` (keys of the records whose
    serialised form shows no string rule KB112 could report: :func:`inferkb.urls.may_hold_unsafe_url`),
    ``duration_clear`` (keys of the benchmark records in whose serialised form ``"duration`` occurs nowhere, so
    that no key of :data:`inferkb.validate_stats.DURATION_KEYS` is there for rule KB122 to read) and
    ``stamps`` (``{key: file stamp}`` of the records a load cache may keep: :func:`inferkb.store.cache.file_stamp`)."""

    records: dict[str, Record] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    files_seen: int = 0
    url_clear: set[str] = field(default_factory=set)
    duration_clear: set[str] = field(default_factory=set)
    stamps: dict[str, str] = field(default_factory=dict)


def load_records(root: Path, profile: Profile, *, only: set[str] | None = None, cache: CacheFile | None = None) -> Loaded:
    """Walk ``root/data/<dir>/*.json`` once (sorted), parse each file strictly and return :class:`Loaded`.

    ``root`` must be resolved. A symlinked record file is followed when it
    stays inside the KB; a symlinked folder (``data/<dir>``, ``provenance/``,
    ``provenance/<dir>``) is never followed, wherever it points: KB009 when it
    leaves the KB, KB017 when it stays inside. Writes refuse such a folder and
    the cleaner of orphan temp files does not look behind it, so what the loader
    reports (KB012: "the next write removes it") is what the cleaner removes.
    ``only`` (paths relative to ``root``, ``data/<dir>/<name>.json``) reads just
    those files, by the same rules (the query catalogue refreshes changed files so).
    ``cache`` (:class:`~inferkb.store.cache.CacheFile`, ``"load"``) supplies the parsed object of a file whose stamp
    is unchanged, so it is neither read nor parsed, and receives every file parsed afresh that it may keep.
    The same as :func:`walk`, then :func:`load_items` over all of it, then :func:`report_interrupted_writes`.
    Never raises for a bad record file; ``OSError`` only if ``data/`` itself cannot be listed.
    """
    out = Loaded()
    started = now_ns() if cache is not None else 0
    items = walk(root, profile, only=only)
    load_items(out, items, root, profile, cache=cache, started=started)
    if only is None:
        report_interrupted_writes(out, root, profile)
    return out


Item = tuple[os.DirEntry, TypeSpec] | Finding
"""One step of the directory walk: a record file entry with its type, to load, or a finding met while listing."""


def walk(root: Path, profile: Profile, *, only: set[str] | None = None) -> list[Item]:
    """List ``root/data/<dir>/`` (sorted) without reading any record file: each type directory's entries with their
    :class:`TypeSpec`, and in their place the findings about the folders met (KB009, KB010, KB017).

    :func:`load_items` over the whole list, or over consecutive slices of it in turn, gives the findings and records
    of :func:`load_records` in its order. ``only`` as there. Raises ``OSError`` only if ``data/`` cannot be listed.
    """
    items: list[Item] = []
    sink = Loaded(findings=items)  # the folder checks append their findings to the walk, in their place
    root_real = str(root)
    by_dir = profile.by_dir()
    with os.scandir(root / "data") as top:
        dir_entries = sorted(top, key=lambda e: e.name)
    for dentry in dir_entries:
        rel_dir = f"data/{dentry.name}"
        if not _inside(sink, dentry, root_real, rel_dir):
            continue
        if dentry.is_symlink() and dentry.is_dir():
            _symlinked_dir(sink, dentry.path, rel_dir)
            continue
        if not dentry.is_dir():
            items.append(R.KB010.finding(f"file {rel_dir} is directly under data/; records live in data/<type-dir>/", path=rel_dir))
            continue
        spec = by_dir.get(dentry.name)
        if spec is None:
            known = ", ".join(sorted(by_dir))
            items.append(R.KB010.finding(f"directory {rel_dir}/ is not a record type directory of this KB (known: {known})", path=rel_dir))
            continue
        with os.scandir(dentry.path) as it:
            entries = sorted(it, key=lambda e: e.name)
        if only is None:
            items.extend((entry, spec) for entry in entries)
        else:
            items.extend((entry, spec) for entry in entries if f"{rel_dir}/{entry.name}" in only)
    return items


def load_items(
    out: Loaded, items: Iterable[Item], root: Path, profile: Profile, *, cache: CacheFile | None = None, started: int = 0
) -> None:
    """Load the record file entries of ``items`` (from :func:`walk`) into ``out`` in order, and add its findings there.

    ``cache`` and ``started`` (:func:`inferkb.store.cache.now_ns` taken before the walk) as in :func:`load_records`.
    Never raises for a bad record file.
    """
    root_real = str(root)
    limit = profile.max_record_bytes
    stored = cache.entries if cache is not None else None
    for item in items:
        if type(item) is not tuple:
            out.findings.append(item)
            continue
        entry, spec = item
        rel = f"data/{spec.dir}/{entry.name}"
        PROCESSING.what = rel
        # an unchanged file the cache holds (so one that loaded cleanly under this name) is neither read nor parsed
        if stored and rel in stored and _from_cache(out, entry, cache, spec, rel, started):
            continue
        _load_entry(out, entry, spec, root_real, limit, cache, started)
    PROCESSING.what = None


def load_indexed(
    out: Loaded,
    items: list[Item],
    indices: Iterable[int],
    root: Path,
    profile: Profile,
    *,
    stamps: StampsOnly | None = None,
    started: int = 0,
) -> tuple[list[int], list[tuple[int, list[Finding]]]]:
    """:func:`load_items` (no cache) over ``items[i]`` for each ``i`` of ``indices`` in turn, noting where each
    result came from: returns ``(the walk index of each record added to out.records, in order; (walk index, its
    findings) for each item that gave findings)``.

    What the two-process validate and the warm validate need to put shares back in walk order
    (:mod:`inferkb.validate_split`, :mod:`inferkb.validate_warm`), at a cost per file of two length tests instead
    of a call per file. ``stamps`` (with ``started`` as in :func:`load_records`): fill ``out.stamps`` for the files
    a cache may keep. Never raises for a bad record file.
    """
    root_real = str(root)
    limit = profile.max_record_bytes
    records, findings = out.records, out.findings
    record_items: list[int] = []
    finding_items: list[tuple[int, list[Finding]]] = []
    for i in indices:
        item = items[i]
        if type(item) is not tuple:
            findings.append(item)
            finding_items.append((i, [item]))
            continue
        entry, spec = item
        PROCESSING.what = f"data/{spec.dir}/{entry.name}"
        n_records, n_findings = len(records), len(findings)
        _load_entry(out, entry, spec, root_real, limit, stamps, started)
        if len(records) != n_records:
            record_items.append(i)
        if len(findings) != n_findings:
            finding_items.append((i, findings[n_findings:]))
    PROCESSING.what = None
    return record_items, finding_items


def printable_name(name: str) -> bool:
    """True for a file name that can be an id's file: printable text, no undecodable bytes (surrogate escapes)."""
    # an ASCII name (nearly every one) holds no surrogate: the per-character test only runs for the others
    return name.isprintable() and (name.isascii() or not any("\ud800" <= c <= "\udfff" for c in name))


def report_interrupted_writes(out: Loaded, root: Path, profile: Profile) -> None:
    """Add to ``out`` KB013 for a batch journal left in the root, KB012 for temp files left in the root (a journal's)
    and in provenance/ sidecar folders; KB009 for a provenance folder that is a symlink out of the KB (not looked behind).

    The last step of :func:`load_records` (not of one reading only some files)."""
    if os.path.lexists(root / JOURNAL_NAME):
        from .batch import journal_problem  # the batch writer only when a journal is there

        problem = journal_problem(root)
        if problem is None:
            message = f"{JOURNAL_NAME} remains: a batch write was interrupted while putting its files in place; the next inferkb write to this KB rolls it back"
        else:
            message = f"{problem} (the next inferkb write refuses it too: remove it by hand)"
        out.findings.append(R.KB013.finding(message, path=JOURNAL_NAME))
    rels = [""]
    prov = root / "provenance"
    if _real_dir(out, prov, str(root), "provenance"):
        for spec in sorted(profile.types.values(), key=lambda t: t.dir):
            rel = f"provenance/{spec.dir}"
            if _real_dir(out, prov / spec.dir, str(root), rel):
                rels.append(rel)
    for path in orphans(root, rels):
        rel = str(path.relative_to(root))
        out.findings.append(R.KB012.finding(f"{rel} was left by an interrupted write; the next inferkb write removes it", path=rel))


def _real_dir(out: Loaded, path: Path, root_real: str, rel: str) -> bool:
    """True when ``path`` is a folder that is not a symlink; a symlinked one is reported (KB009 leaving the KB,
    KB017 inside it) and False."""
    if not _inside_path(out, path, root_real, rel):
        return False
    if path.is_symlink():
        if path.is_dir():
            _symlinked_dir(out, path, rel)
        return False
    return path.is_dir()


def _symlinked_dir(out: Loaded, path: str | Path, rel: str) -> None:
    """KB017 for a folder that is a symlink to a place inside the KB (the caller checked it stays inside)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    out.findings.append(
        R.KB017.finding(
            f"{rel} is a symlink (to {target}); inferkb does not follow a symlinked folder: its files are not loaded, "
            "cleaned or written through (replace the link by the folder itself)",
            path=rel,
        )
    )


def _realpath(out: Loaded, path: str | Path, rel: str) -> str | None:
    """Where the symlink ``path`` leads, or ``None`` (with a KB009 finding) when it changed or vanished while
    being read: ``os.path.realpath`` raises when a link is removed between its lstat and readlink."""
    try:
        return os.path.realpath(path)
    except OSError as exc:
        out.findings.append(R.KB009.finding(f"{rel} is a symlink that changed while being read ({exc.strerror}); not followed", path=rel))
        return None


def _link_inside(out: Loaded, path: str | Path, root_real: str, rel: str) -> bool:
    """True when the symlink ``path`` leads inside the KB; else False with a KB009 finding naming where it leads."""
    target = _realpath(out, path, rel)
    if target is None:
        return False
    if not (target == root_real or target.startswith(root_real + os.sep)):
        out.findings.append(R.KB009.finding(f"{rel} is a symlink to {target}, outside the KB; not followed", path=rel))
        return False
    return True


def _inside_path(out: Loaded, path: Path, root_real: str, rel: str) -> bool:
    """:func:`_inside` for a path not met in a directory listing."""
    return not path.is_symlink() or _link_inside(out, path, root_real, rel)


def _inside(out: Loaded, entry: os.DirEntry, root_real: str, rel: str) -> bool:
    return not entry.is_symlink() or _link_inside(out, entry.path, root_real, rel)


def _load_entry(
    out: Loaded, entry: os.DirEntry, spec: TypeSpec, root_real: str, limit: int, cache: CacheFile | StampsOnly | None, started: int
) -> None:
    rel = f"data/{spec.dir}/{entry.name}"
    if not _inside(out, entry, root_real, rel):
        return
    if entry.is_dir():
        out.findings.append(R.KB010.finding(f"directory {rel}/ is nested inside a type directory; records are flat files", path=rel))
        return
    name = entry.name
    if not printable_name(name):
        if name.endswith(".json"):
            out.files_seen += 1
            out.findings.append(
                R.KB011.finding(f"file name {name!r} is not printable UTF-8 text; it cannot be an id and was not loaded", path=rel)
            )
        return
    if name.startswith("."):
        if is_temp_name(name):
            out.findings.append(R.KB012.finding(f"{rel} was left by an interrupted write; the next inferkb write removes it", path=rel))
        return  # other dot files (editor swap files) are not records
    if not name.endswith(".json"):
        out.findings.append(R.KB010.finding(f"{rel} is not a .json record file", path=rel))
        return
    out.files_seen += 1
    stem = name[:-5]
    try:
        if not entry.is_file():  # d_type from the directory listing: no extra system call for a regular file
            out.findings.append(R.KB014.finding(f"{rel} is not a regular file (a FIFO, socket or device); not read", path=rel))
            return
        stamp = entry_stamp(entry, started) if cache is not None else None  # taken before the read: a later change is seen
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
    data, problem, compact, colons = parse_bytes_compact(raw)
    if problem is not None:
        where = f" (line {problem.line}, column {problem.col})" if problem.line else ""
        out.findings.append(_PARSE_RULES[problem.code].finding(f"{problem.message}{where}", path=rel, field=problem.field))
        return
    key = f"{spec.dir}/{stem}"
    if not KEBAB.match(stem):
        out.findings.append(
            R.KB011.finding(
                f"file name {name!r} is not a kebab-case slug (lower-case a-z, 0-9, single hyphens, no spaces)", path=rel, record=key
            )
        )
    out.records[key] = Record(key=key, id=stem, type=spec.name, dir=spec.dir, path=rel, data=data)
    # The fast parser serialised the record anyway: test it for URL-rule candidates while the bytes are at hand.
    clear = compact is not None and not may_hold_unsafe_url(compact, colons)
    if clear:
        out.url_clear.add(key)
    if spec.name == "benchmark" and compact is not None and b'"duration' not in compact:
        out.duration_clear.add(key)
    # Only what orjson parsed (so orjson writes it back exactly) under a kebab-case name is cached.
    if stamp is not None and compact is not None and KEBAB.match(stem):
        cache.put(rel, [stamp, data, clear])
        out.stamps[key] = stamp


def entry_stamp(entry: os.DirEntry, started: int) -> str | None:
    """The cache stamp of a regular file that is not a symlink, else ``None`` (a symlink's target is not stamped)."""
    try:
        if entry.is_symlink():
            return None
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return file_stamp(st, started) if stat.S_ISREG(st.st_mode) else None


def _from_cache(out: Loaded, entry: os.DirEntry, cache: CacheFile, spec: TypeSpec, rel: str, started: int) -> bool:
    """Take the cached ``[stamp, data, url_clear]`` of ``entry`` as its record when the file is a regular file, not a
    symlink, with the stamp stored; False (read the file the usual way) otherwise or for an entry of another shape."""
    stamp = entry_stamp(entry, started)
    hit = cache.get(rel, stamp)
    stem = entry.name[:-5]
    if hit is None or len(hit) != 3 or type(hit[1]) is not dict or type(hit[2]) is not bool:
        return False
    if not (entry.name.endswith(".json") and KEBAB.match(stem)):
        return False
    out.files_seen += 1
    key = f"{spec.dir}/{stem}"
    out.records[key] = Record(key=key, id=stem, type=spec.name, dir=spec.dir, path=rel, data=hit[1])
    if hit[2]:
        out.url_clear.add(key)
    out.stamps[key] = stamp
    return True


_READ_CHUNK = 1 << 16
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows; 0 elsewhere
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def read_capped(path: str, limit: int) -> bytes:
    """The file's bytes, but never more than ``limit + 1`` of them (so "too large" is known without loading it).

    Plain ``os.open``/``os.read`` rather than ``open()``: a record under 64 KiB is
    read in one system call (a short read is the end of the file), without the
    buffered-file object, the fstat that ``open()`` makes, or a ``limit``-sized
    buffer per file. Raises ``OSError``.
    """
    # O_NONBLOCK: a FIFO swapped in after the directory listing opens at once and reads as empty, never hangs.
    fd = os.open(path, os.O_RDONLY | _O_BINARY | _O_NONBLOCK)
    try:
        raw = os.read(fd, _READ_CHUNK)
        if len(raw) < _READ_CHUNK and len(raw) <= limit:
            # A read of a regular file that returns less than asked for has reached the end of the file: asking
            # again only to be told so is one system call per record more (about 2 us; 20,000 records: 30-45 ms CPU).
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
    "out-of-range": R.KB015,
    "surrogate": R.KB016,
}
