"""Cold ``validate`` of a large KB in two processes: each reads, parses and checks one half of the record files.

Reading, parsing and the checks that need only the one record (schema, the
rules of :func:`inferkb.validate.record_rules`: ids, dates, statistics, the
KB112 URL rule) are most of a cold validate, and they are independent per
file. :func:`validate_path` lists the KB's record files (:func:`inferkb.store.loader.walk`),
compiles the schemas, then forks: the child loads and checks the second half
of the sorted list, the parent the first. The child sends back (pickled) first,
as soon as its share is loaded, its load findings (KB0xx) and, for each record,
only what the cross-record rules read: key, id, type, path, and its ``sources``
and reference fields; then its per-record findings. With the first, the parent
resolves references and KB205 over every record
(:func:`inferkb.validate.cross_record_findings`) while the child is still
checking; with the second it assembles the report as
:func:`inferkb.validate.validate` does in one process, so the report is the
serial one, finding for finding and in the same order.

It applies only when the load cache is off (warm, the cache already skips the
reading and parsing), ``fork`` is safe (Linux), :func:`inferkb.parallel.default_jobs`
says at least 2 (two CPUs idle by the 1-minute load average, or ``INFERKB_JOBS`` >= 2; ``INFERKB_JOBS=1`` forces one
process; the CLI asks it, the caller of :func:`validate_path` decides) and the KB has at
least :data:`SPLIT_MIN_FILES` record files. A child that dies, fails or sends
something unreadable costs only time: the parent loads and checks that half
itself.
"""

from __future__ import annotations

import datetime as _dt
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from .findings import Finding
from .kb import KB
from .parallel import can_fork
from .profile import load_profile
from .report import Report
from .schemas import schema_set
from .store import Record, gc_paused, locate
from .store import cache as load_cache
from .store.loader import Item, Loaded, load_indexed, load_items, report_interrupted_writes, walk
from .validate import BASIS_FIELD, cross_record_findings, record_checks, validate
from .validate_repeats import FIELD as REPEAT_FIELD

try:  # the C pickler itself: importing pickle.py (its pure-Python pickler classes) is start-up time this never uses
    from _pickle import dumps as _dumps
    from _pickle import loads as _loads
except ImportError:  # an interpreter without CPython's accelerator
    from pickle import dumps as _dumps
    from pickle import loads as _loads

_PROTOCOL = 5  # pickle.HIGHEST_PROTOCOL since Python 3.8

__all__ = ["SPLIT_MIN_FILES", "validate_path"]

SPLIT_MIN_FILES = 2000
"""Record files below which one process validates: forking and the pipe cost about 20 ms (measured in
benchmarks/README.md, "Fourth speed pass"), more than the second core saves on a small KB."""

CHILD_SHARE = 0.5
"""Share of the record files the child takes; the parent also lists the files and, after, runs the cross-record rules."""

_CHILD_FAILED = "INFERKB_TEST_SPLIT_CHILD_FAILS"  # tests: the child exits without sending anything


def validate_path(
    path: str | os.PathLike | None,
    jobs: int,
    *,
    types: list[str] | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_dangling_refs: int | None = None,
    today: _dt.date | None = None,
    keep: Callable[[KB], object] | None = None,
) -> Report | None:
    """Open the KB at ``path`` and validate it in two processes; ``None`` when that does not apply (then load it
    with :func:`inferkb.open` and call :meth:`~inferkb.KB.validate` as usual).

    The options are those of :func:`inferkb.validate.validate`; the report is the one it gives. ``None`` when the
    load cache is on, fork is unavailable, or ``jobs`` is below 2 (the CLI passes :func:`inferkb.parallel.default_jobs`;
    a program that runs threads, such as a notebook kernel, should not fork and passes 1 or calls ``KB.validate``).
    A KB with fewer than :data:`SPLIT_MIN_FILES` record files is loaded and validated in this process (still a
    report). Raises what :func:`inferkb.open` and :func:`inferkb.validate.validate` raise (``KBNotFound``,
    ``KBError`` for a bad ``kb.toml``, ``UsageError`` for an unknown type). ``keep`` is called with the KB it
    opened (the CLI keeps it to the process's end: :func:`inferkb.cli.common.keep_to_exit`).
    """
    if jobs < 2 or load_cache.enabled() or not can_fork():
        return None
    root, bundled = locate(path)
    kb = KB(root, load_profile(root), bundled=bundled)
    kb.use_cache = False
    if keep is not None:
        keep(kb)
    today = today or _dt.date.today()
    wanted = {kb.type_spec(t).name for t in types} if types else None
    options = {"types": types, "select": select, "ignore": ignore, "max_dangling_refs": max_dangling_refs, "today": today}
    cross = None
    with gc_paused():
        items = walk(root, kb.profile)
        files = [i for i, item in enumerate(items) if type(item) is tuple]
        checked: dict[str, list[Finding]] = {}
        if len(files) < SPLIT_MIN_FILES:
            loaded = Loaded()
            load_items(loaded, items, root, kb.profile)
        else:
            schemas = schema_set(kb)  # compiled once, before the fork: both processes use it
            kb.metrics  # noqa: B018 - read the metric registry before the fork too
            # Every other file goes to the child: the sorted list runs type by type, and types differ in cost
            # (a benchmark has the statistics rules), so contiguous halves would not be equal work.
            theirs = set(_child_share(files, CHILD_SHARE))
            mine = [i for i in range(len(items)) if i not in theirs]
            child = _fork(kb, items, sorted(theirs), wanted, today)
            head = child_checked = None
            try:
                own, own_tags = _load_some(items, mine, root, kb.profile)
                kb.install(own)  # the parent's share, so the record rules see its records as loaded
                for rec in own.records.values():
                    if wanted is None or rec.type in wanted:
                        checked[rec.key] = record_checks(kb, rec, schemas, today)
                head = _receive(child)
                if head is not None:  # the child's records are known: the cross-record rules run while it checks
                    tags, stubs, files_seen = head
                    records = {
                        key: Record(key=key, id=rid, type=rtype, dir=rdir, path=rel, data=data)
                        for key, rid, rtype, rdir, rel, data in stubs
                    }
                    loaded = _merge(own, own_tags, records, tags)
                    loaded.files_seen += files_seen
                    report_interrupted_writes(loaded, root, kb.profile)
                    kb.install(loaded)
                    cross = cross_record_findings(kb, sorted(wanted) if wanted else None)
                    child_checked = child.checked()
            except BaseException:  # an internal error or ^C here: no child is left behind
                child.end()
                raise
            if head is None or child_checked is None:  # the child failed: its share is loaded and checked here
                cross = None
                extra, tags = _load_some(items, sorted(theirs), root, kb.profile)
                own.url_clear |= extra.url_clear
                loaded = _merge(own, own_tags, extra.records, tags)
                loaded.files_seen += extra.files_seen
            else:
                checked.update(child_checked)
                return validate(kb, **options, checked=checked, cross=cross)
        report_interrupted_writes(loaded, root, kb.profile)
        kb.install(loaded)
        return validate(kb, **options, checked=checked, cross=cross)


def _child_share(files: list[int], share: float) -> list[int]:
    """About ``share`` of ``files``, spread evenly over the list (every other one at 0.5)."""
    return [f for k, f in enumerate(files) if int((k + 1) * share) > int(k * share)]


Tags = tuple[list[int], list[tuple[int, list[Finding]]]]
"""Where a share's results came from (:func:`inferkb.store.loader.load_indexed`): the walk index of each record
loaded, in order, and ``(walk index, its load findings)`` of each item that gave findings."""


def _load_some(items: list[Item], indices: list[int], root: Any, profile: Any) -> tuple[Loaded, Tags]:
    """:func:`inferkb.store.loader.load_items` over ``items[i]`` for each ``i`` of ``indices``, noting where each
    result came from."""
    out = Loaded()
    tags = load_indexed(out, items, indices, root, profile)
    return out, tags


def _merge(own: Loaded, own_tags: Tags, records: dict[str, Record], tags: Tags) -> Loaded:
    """One :class:`Loaded` in walk order from the parent's share (``own``) and the child's (``records``, ``tags``);
    ``files_seen`` counts the parent's share only."""
    out = Loaded(url_clear=own.url_clear)
    out.files_seen = own.files_seen
    placed = sorted([*zip(own_tags[0], own.records.values(), strict=True), *zip(tags[0], records.values(), strict=True)], key=_walk_index)
    out.records = {rec.key: rec for _, rec in placed}
    for _, found in sorted([*own_tags[1], *tags[1]], key=_walk_index):
        out.findings.extend(found)
    return out


def _walk_index(pair: tuple[int, Any]) -> int:
    return pair[0]


class _Child:
    """The forked child and its two results: the record stubs it loaded, then its per-record findings.

    The stubs travel through an unnamed memory file (``memfd``), whose length the child then writes to the pipe:
    writing them to the pipe itself would block the child until the parent, still busy with its own share, reads.
    The findings come through the pipe after that, up to its end."""

    def __init__(self, pid: int, read_fd: int, head_fd: int) -> None:
        self.pid, self.read_fd, self.head_fd = pid, read_fd, head_fd
        self.reaped = False
        self.status = -1  # the child's exit code once reaped

    def head(self) -> tuple[Tags, list, int] | None:
        """``(tags, stubs, files seen)`` once the child has loaded its share; ``None`` when it failed."""
        size = _read_exactly(self.read_fd, 8)
        if len(size) == 8:
            payload = _pread_exactly(self.head_fd, int.from_bytes(size, "little"))
            got = _unpickled(payload)
            if type(got) is tuple and len(got) == 3:
                return got
        self.end()
        return None

    def checked(self) -> dict[str, list[Finding]] | None:
        """The child's ``{record key: findings}`` (it has then exited); ``None`` when it failed."""
        chunks = []
        while chunk := os.read(self.read_fd, 1 << 20):
            chunks.append(chunk)
        self.end(kill=False)
        got = _unpickled(b"".join(chunks)) if self.status == 0 else None
        return got if type(got) is dict else None

    def end(self, *, kill: bool = True) -> None:
        """Close the pipe and the memory file and reap the child (killed first unless ``kill`` is false); once."""
        if self.reaped:
            return
        self.reaped = True
        os.close(self.read_fd)
        os.close(self.head_fd)
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)


def _read_exactly(fd: int, size: int) -> bytes:
    out = b""
    while len(out) < size and (chunk := os.read(fd, size - len(out))):
        out += chunk
    return out


def _pread_exactly(fd: int, size: int) -> bytes:
    chunks = []
    done = 0
    while done < size and (chunk := os.pread(fd, size - done, done)):
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


def _unpickled(payload: bytes) -> Any:
    if not payload:
        return None
    try:
        return _loads(payload)
    except Exception:  # noqa: BLE001 - a truncated payload: the parent does the share itself
        return None


def _fork(kb: KB, items: list[Item], indices: list[int], wanted: set[str] | None, today: _dt.date) -> _Child:
    """Fork a child that loads and checks ``items[i]`` for ``i`` in ``indices`` and sends its results (:class:`_Child`)."""
    read_fd, write_fd = os.pipe()
    head_fd = os.memfd_create("inferkb-validate-split")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid != 0:
        os.close(write_fd)
        return _Child(pid, read_fd, head_fd)
    code = 1
    try:  # the child: never returns into the caller
        os.close(read_fd)

        def send_head(head: tuple[Any, ...]) -> None:
            payload = _dumps(head, protocol=_PROTOCOL)
            view = memoryview(payload)
            done = 0
            while done < len(payload):
                done += os.pwrite(head_fd, view[done:], done)
            os.write(write_fd, len(payload).to_bytes(8, "little"))

        if not os.environ.get(_CHILD_FAILED):
            payload = _dumps(_child_work(kb, items, indices, wanted, today, send_head), protocol=_PROTOCOL)
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
            code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent sees no result and does this share itself
        pass
    finally:
        os._exit(code)


def _child_work(
    kb: KB, items: list[Item], indices: list[int], wanted: set[str] | None, today: _dt.date, send_head: Callable[[tuple], None]
) -> dict[str, list[Finding]]:
    """Load the child's share and ``send_head((tags, record stubs, files seen))``, then check it: returns
    ``{key: per-record findings}``.

    A stub is ``(key, id, type, dir, path, data)`` where ``data`` keeps only ``sources``, ``runtime_devices_basis``
    (KB207) and the type's reference fields: all that :func:`inferkb.validate.cross_record_findings` reads of a record. A member of a repeat group
    (``repeat_group`` set) keeps its whole data: :func:`inferkb.validate_repeats.repeat_group_findings` compares the
    members' conditions in the parent, and a stub without the field reads as a record outside any group."""
    half, tags = _load_some(items, indices, kb.root, kb.profile)
    types = kb.profile.types
    stubs = []
    for rec in half.records.values():
        if rec.data.get(REPEAT_FIELD) is not None:
            data = rec.data
        else:
            fields = ("sources", BASIS_FIELD, *types[rec.type].refs)
            data = {f: rec.data[f] for f in fields if f in rec.data}
        stubs.append((rec.key, rec.id, rec.type, rec.dir, rec.path, data))
    send_head((tags, stubs, half.files_seen))
    kb.install(half)
    schemas = schema_set(kb)
    return {rec.key: record_checks(kb, rec, schemas, today) for rec in half.records.values() if wanted is None or rec.type in wanted}


def _receive(child: _Child) -> tuple[Tags, list, int] | None:
    """The child's record stubs (:meth:`_Child.head`), ``None`` when it failed; a function of its own so that tests
    can see whether they came."""
    return child.head()
