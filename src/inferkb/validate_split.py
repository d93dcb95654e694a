"""Cold ``validate`` of a large KB in two processes: each reads, parses and checks one half of the record files.

Reading, parsing and the checks that need only the one record (schema, the
rules of :func:`inferkb.validate.record_rules`: ids, dates, statistics, the
KB112 URL rule) are most of a cold validate, and they are independent per
file. :func:`validate_path` lists the KB's record files (:func:`inferkb.store.loader.walk`),
compiles the schemas, then forks: the child loads and checks every other file of the
sorted list, the parent the rest. As soon as its share is loaded the child sends
(pickled, through a memory file) its load findings (KB0xx), where each came from in
the walk, and the whole data of its repeat group members; the parent, once its own
share is loaded, sends the child the walk index of each record it loaded. Each
process then resolves its own records' references against every record of the
KB (the other process's records stand in by their names, which the walk gives:
:func:`_stand_ins`), and the parent finds the ids used by more than one type
(KB205) while the child is still checking. The child sends its per-record and
reference findings; the parent puts both processes' findings in walk order and
assembles the report as :func:`inferkb.validate.validate` does in one process,
so the report is the serial one, finding for finding and in the same order.

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
import math
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
from .validate import record_checks, reference_findings, shared_id_findings, validate
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
    keep: Callable[[object], object] | None = None,
) -> Report | None:
    """Open the KB at ``path`` and validate it in two processes; ``None`` when that does not apply (then load it
    with :func:`inferkb.open` and call :meth:`~inferkb.KB.validate` as usual).

    The options are those of :func:`inferkb.validate.validate`; the report is the one it gives. ``None`` when the
    load cache is on, fork is unavailable, or ``jobs`` is below 2 (the CLI passes :func:`inferkb.parallel.default_jobs`;
    a program that runs threads, such as a notebook kernel, should not fork and passes 1 or calls ``KB.validate``).
    A KB with fewer than :data:`SPLIT_MIN_FILES` record files is loaded and validated in this process (still a
    report). Raises what :func:`inferkb.open` and :func:`inferkb.validate.validate` raise (``KBNotFound``,
    ``KBError`` for a bad ``kb.toml``, ``UsageError`` for an unknown type). ``keep`` is called with the KB it
    opened and with a list that holds, at the return, this function's working tables (the walk, the findings by
    record, both shares' results): the CLI keeps both to the process's end (:func:`inferkb.cli.common.keep_to_exit`),
    so that neither the records nor the tables are freed one object at a time (about 10 ms for the tables at
    20,000 records).
    """
    if jobs < 2 or load_cache.enabled() or not can_fork():
        return None
    root, bundled = locate(path)
    kb = KB(root, load_profile(root), bundled=bundled)
    kb.use_cache = False
    tables: list[object] = []
    if keep is not None:
        keep(kb)
        keep(tables)
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
            head = child_result = None
            try:
                own, own_tags = _load_some(items, mine, root, kb.profile)
                child.send_records(own_tags[0])  # the child resolves its records' references against these too
                kb.install(own)  # the parent's share, so the record rules see its records as loaded
                for rec in own.records.values():
                    if wanted is None or rec.type in wanted:
                        checked[rec.key] = record_checks(kb, rec, schemas, today)
                head = _receive(child)
                if head is not None:  # the child's share is loaded: the rest of the cross-record rules run while it checks
                    tags, files_seen, members = head
                    loaded = _merge(own, own_tags, _stand_ins(items, tags[0], members), tags)
                    loaded.files_seen += files_seen
                    report_interrupted_writes(loaded, root, kb.profile)
                    kb.install(loaded)
                    own_refs, own_dangling = _references(kb, own.records.values(), wanted)
                    shared = shared_id_findings(kb, sorted(wanted) if wanted else None)
                    child_result = child.checked()
            except BaseException:  # an internal error or ^C here: no child is left behind
                child.end()
                raise
            if head is None or child_result is None:  # the child failed: its share is loaded and checked here
                cross = None
                extra, tags = _load_some(items, sorted(theirs), root, kb.profile)
                own.url_clear |= extra.url_clear
                own.duration_clear |= extra.duration_clear
                loaded = _merge(own, own_tags, extra.records, tags)
                loaded.files_seen += extra.files_seen
            else:
                child_checked, child_refs, child_dangling = child_result
                checked.update(child_checked)
                # Each process resolved its own records; the serial order is record by record in walk order
                # (each list is in that order already, so only findings from both need sorting).
                position = {key: n for n, key in enumerate(kb.records)} if own_refs and child_refs else {}
                refs = sorted([*own_refs, *child_refs], key=lambda f: position[f.record]) if position else own_refs or child_refs
                cross = (refs, own_dangling + child_dangling, shared)
                if keep is not None:
                    tables.extend((items, files, theirs, mine, own, own_tags, loaded, head, child_result, checked, position))
                return validate(kb, **options, checked=checked, cross=cross)
        report_interrupted_writes(loaded, root, kb.profile)
        kb.install(loaded)
        return validate(kb, **options, checked=checked, cross=cross)


def _child_share(files: list[int], share: float) -> list[int]:
    """About ``share`` of ``files``, spread evenly over the list (every other one at 0.5): the ``k``-th file (from 0)
    when ``floor((k + 1) * share) > floor(k * share)``, i.e. for each ``j`` = 1 .. ``floor(n * share)`` the file at
    ``ceil(j / share) - 1``; a slice when ``1 / share`` is a whole number. (A test of that condition on each of
    20,000 files took 10-12 ms before the fork; the slice takes 0.05.)"""
    step = 1 / share
    if step == int(step):
        return files[int(step) - 1 :: int(step)]
    return [files[math.ceil(j / share) - 1] for j in range(1, int(len(files) * share) + 1)]


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
    out = Loaded(url_clear=own.url_clear, duration_clear=own.duration_clear)
    out.files_seen = own.files_seen
    placed = sorted([*zip(own_tags[0], own.records.values(), strict=True), *zip(tags[0], records.values(), strict=True)], key=_walk_index)
    out.records = {rec.key: rec for _, rec in placed}
    for _, found in sorted([*own_tags[1], *tags[1]], key=_walk_index):
        out.findings.extend(found)
    return out


def _walk_index(pair: tuple[int, Any]) -> int:
    return pair[0]


def _stand_ins(items: list[Item], indices: list[int], members: dict[int, dict[str, Any]] | None = None) -> dict[str, Record]:
    """``{key: Record}`` for the records the other process loaded from ``items[i]`` for ``i`` of ``indices`` (its
    record walk indices), named as the loader names them (key ``dir/stem``, id the file stem, path ``data/dir/name``)
    and holding no data but ``members[i]``: the whole data of a repeat group member, which the repeat group rules
    compare. Enough for the id tables, the references of this process's records, KB205 and the report."""
    out = {}
    members = members or {}
    for i in indices:
        entry, spec = items[i]
        stem = entry.name[:-5]
        key = f"{spec.dir}/{stem}"
        out[key] = Record(key=key, id=stem, type=spec.name, dir=spec.dir, path=f"data/{spec.dir}/{entry.name}", data=members.get(i, {}))
    return out


def _references(kb: KB, recs: Any, wanted: set[str] | None) -> tuple[list[Finding], int]:
    """:func:`inferkb.validate.reference_findings` of the records of ``recs`` whose type is in ``wanted`` (all when
    ``None``), against the id tables of ``kb`` (every record of the KB, the other process's as stand-ins)."""
    return reference_findings(kb, [r for r in recs if wanted is None or r.type in wanted])


class _Child:
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
            _send(self.records_fd, self.send_fd, indices)
        except BrokenPipeError:
            pass

    def head(self) -> tuple[Tags, int, dict[int, dict[str, Any]]] | None:
        """``(tags, files seen, {walk index: data} of its repeat group members)`` once the child has loaded its
        share; ``None`` when it failed."""
        got = _received(self.read_fd, self.head_fd)
        if type(got) is tuple and len(got) == 3:
            return got
        self.end()
        return None

    def checked(self) -> tuple[dict[str, list[Finding]], list[Finding], int] | None:
        """``({record key: per-record findings}, reference findings, budgeted dangling references)`` of the child's
        records (it has then exited); ``None`` when it failed."""
        chunks = []
        while chunk := os.read(self.read_fd, 1 << 20):
            chunks.append(chunk)
        self.end(kill=False)
        got = _unpickled(b"".join(chunks)) if self.status == 0 else None
        if type(got) is tuple and len(got) == 3 and type(got[0]) is dict and type(got[1]) is list and type(got[2]) is int:
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


def _send(mem_fd: int, pipe_fd: int, value: Any) -> None:
    """Pickle ``value`` into the memory file ``mem_fd``, then write its length (8 bytes) to the pipe ``pipe_fd``."""
    payload = _dumps(value, protocol=_PROTOCOL)
    view = memoryview(payload)
    done = 0
    while done < len(payload):
        done += os.pwrite(mem_fd, view[done:], done)
    os.write(pipe_fd, len(payload).to_bytes(8, "little"))


def _received(pipe_fd: int, mem_fd: int) -> Any:
    """What :func:`_send` sent (waits for the length on ``pipe_fd``); ``None`` when the other side ended first."""
    size = _read_exactly(pipe_fd, 8)
    if len(size) != 8:
        return None
    return _unpickled(_pread_exactly(mem_fd, int.from_bytes(size, "little")))


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
    records_read_fd, send_fd = os.pipe()
    head_fd = os.memfd_create("inferkb-validate-split")
    records_fd = os.memfd_create("inferkb-validate-split-parent")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid != 0:
        os.close(write_fd)
        os.close(records_read_fd)
        return _Child(pid, read_fd, head_fd, send_fd, records_fd)
    code = 1
    try:  # the child: never returns into the caller
        os.close(read_fd)
        os.close(send_fd)

        def send_head(head: tuple[Any, ...]) -> None:
            _send(head_fd, write_fd, head)

        def parent_records() -> Any:
            return _received(records_read_fd, records_fd)

        if not os.environ.get(_CHILD_FAILED):
            payload = _dumps(_child_work(kb, items, indices, wanted, today, send_head, parent_records), protocol=_PROTOCOL)
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
            code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent sees no result and does this share itself
        pass
    finally:
        os._exit(code)


def _child_work(
    kb: KB,
    items: list[Item],
    indices: list[int],
    wanted: set[str] | None,
    today: _dt.date,
    send_head: Callable[[tuple], None],
    parent_records: Callable[[], Any],
) -> tuple[dict[str, list[Finding]], list[Finding], int]:
    """Load the child's share and ``send_head((tags, files seen, {walk index: data} of its repeat group members))``,
    check it, then resolve its records' references against every record of the KB (the parent's named by
    ``parent_records()``, their walk indices): returns ``({key: per-record findings}, reference findings, budgeted
    dangling references)``. Raises ``RuntimeError`` when the parent sent no record list."""
    half, tags = _load_some(items, indices, kb.root, kb.profile)
    members = {i: rec.data for i, rec in zip(tags[0], half.records.values(), strict=True) if rec.data.get(REPEAT_FIELD) is not None}
    send_head((tags, half.files_seen, members))
    kb.install(half)
    schemas = schema_set(kb)
    checked = {rec.key: record_checks(kb, rec, schemas, today) for rec in half.records.values() if wanted is None or rec.type in wanted}
    theirs = parent_records()
    if type(theirs) is not list:
        raise RuntimeError("the parent sent no record list")
    everything = Loaded(records={**_stand_ins(items, theirs), **half.records})
    kb.install(everything)
    refs, dangling = _references(kb, half.records.values(), wanted)
    return checked, refs, dangling


def _receive(child: _Child) -> tuple[Tags, int, dict[int, dict[str, Any]]] | None:
    """The child's head (:meth:`_Child.head`), ``None`` when it failed; a function of its own so that tests can see
    whether it came."""
    return child.head()
