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

With the load cache on, it applies when the findings cache holds nothing for
this KB and day (a first run, a new day, new code: otherwise the warm validate,
:mod:`inferkb.validate_warm`, skips the reading and parsing) and no type filter is
given; both processes then stamp their files, the child sends its records'
stamps and cross-record data with its findings, and the parent writes the
findings cache shards the one-process validate would write, byte for byte (the
loader's own cache, which ``validate`` does not read, is left to the next command
that loads the whole KB). It applies when ``fork`` is safe (Linux), :func:`inferkb.parallel.default_jobs`
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
import sys
from collections.abc import Callable
from typing import Any

from .findings import Finding
from .kb import KB
from .parallel import can_fork
from .profile import load_profile
from .report import Report
from .schemas import schema_set
from .split_channel import PROTOCOL, Child, dumps, received, send
from .store import Record, gc_paused, locate
from .store import cache as load_cache
from .store.cache import CacheFile, StampsOnly, now_ns
from .store.loader import Item, Loaded, load_indexed, load_items, report_interrupted_writes, walk
from .validate import cross_record_data, finding_row, findings_cache, record_checks, reference_findings, shared_id_findings, validate
from .validate_repeats import FIELD as REPEAT_FIELD

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
    load cache is on and its findings cache holds entries for this KB and day (the warm validate applies), when it
    is on and ``types`` is given, when fork is unavailable, or when ``jobs`` is below 2 (the CLI passes
    :func:`inferkb.parallel.default_jobs`; a program that runs threads, such as a notebook kernel, should not fork
    and passes 1 or calls ``KB.validate``). A KB with fewer than :data:`SPLIT_MIN_FILES` record files is loaded and
    validated in this process (still a report; ``None`` with the load cache on, whose one-process path fills it). Raises what :func:`inferkb.open` and :func:`inferkb.validate.validate` raise (``KBNotFound``,
    ``KBError`` for a bad ``kb.toml``, ``UsageError`` for an unknown type). ``keep`` is called with the KB it
    opened and with a list that holds, at the return, this function's working tables (the walk, the findings by
    record, both shares' results): the CLI keeps both to the process's end (:func:`inferkb.cli.common.keep_to_exit`),
    so that neither the records nor the tables are freed one object at a time (about 10 ms for the tables at
    20,000 records).
    """
    caching = load_cache.enabled()
    if jobs < 2 or not can_fork() or (caching and types):
        return None
    root, bundled = locate(path)
    kb = KB(root, load_profile(root), bundled=bundled)
    today = today or _dt.date.today()
    cache = started = None
    if caching:  # the findings cache of this KB and day is empty (else the warm validate applies): fill it
        cache = _empty_findings_cache(kb, today)
        if cache is None:
            return None
        started = now_ns()  # before the walk, as the loader takes it
    kb.use_cache = False
    tables: list[object] = []
    if keep is not None:
        keep(kb)
        keep(tables)
    wanted = {kb.type_spec(t).name for t in types} if types else None
    options = {"types": types, "select": select, "ignore": ignore, "max_dangling_refs": max_dangling_refs, "today": today}
    cross = None
    with gc_paused():
        items = walk(root, kb.profile)
        files = [i for i, item in enumerate(items) if type(item) is tuple]
        checked: dict[str, list[Finding]] = {}
        if len(files) < SPLIT_MIN_FILES:
            if cache is not None:  # one process, which fills the cache as it validates
                return None
            loaded = Loaded()
            load_items(loaded, items, root, kb.profile)
        else:
            schemas = schema_set(kb)  # compiled once, before the fork: both processes use it
            kb.metrics  # noqa: B018 - read the metric registry before the fork too
            # Every other file goes to the child: the sorted list runs type by type, and types differ in cost
            # (a benchmark has the statistics rules), so contiguous halves would not be equal work.
            theirs = set(_child_share(files, CHILD_SHARE))
            mine = [i for i in range(len(items)) if i not in theirs]
            child = _fork(kb, items, sorted(theirs), wanted, today, started)
            head = child_result = own_entries = None
            try:
                own, own_tags = _load_some(items, mine, root, kb.profile, started)
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
                    own_entries = _entries(kb, own, checked) if cache is not None else None  # while the child checks
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
                child_checked, child_refs, child_dangling = child_result[:3]
                checked.update(child_checked)
                # Each process resolved its own records; the serial order is record by record in walk order
                # (each list is in that order already, so only findings from both need sorting).
                position = {key: n for n, key in enumerate(kb.records)} if own_refs and child_refs else {}
                refs = sorted([*own_refs, *child_refs], key=lambda f: position[f.record]) if position else own_refs or child_refs
                cross = (refs, own_dangling + child_dangling, shared)
                if own_entries is not None and len(child_result) == 4:
                    _fill(cache, kb, own_entries, child_result[3], checked)
                if keep is not None:
                    tables.extend((items, files, theirs, mine, own, own_tags, loaded, head, child_result, checked, position, cache))
                return validate(kb, **options, checked=checked, cross=cross)
        report_interrupted_writes(loaded, root, kb.profile)
        kb.install(loaded)
        return validate(kb, **options, checked=checked, cross=cross)


def _empty_findings_cache(kb: KB, today: _dt.date) -> CacheFile | None:
    """The findings cache of ``kb`` for ``today`` (:func:`inferkb.validate.findings_cache`) when it holds no entry,
    else ``None``."""
    kb.use_cache = True
    try:
        cache = findings_cache(kb, schema_set(kb), today)
    finally:
        kb.use_cache = False
    return cache if cache is not None and not cache.entries else None


def _entries(kb: KB, own: Loaded, checked: dict[str, list[Finding]]) -> dict[str, list]:
    """``{key: [stamp, finding rows, cross-record data]}``: the findings cache entry of each stamped record of the
    parent's share ``own``, as the one-process validate puts it."""
    stamps = own.stamps
    return {
        rec.key: [stamps[rec.key], [finding_row(f) for f in checked[rec.key]], cross_record_data(kb, rec)]
        for rec in own.records.values()
        if rec.key in stamps and rec.key in checked
    }


def _fill(cache: CacheFile, kb: KB, own: dict[str, list], theirs: Any, checked: dict[str, list[Finding]]) -> None:
    """Put the entries of both shares in walk order (as the one-process validate puts them) and save the cache:
    ``own`` from :func:`_entries`, ``theirs`` the child's ``{key: (stamp, cross-record data)}`` with its findings in
    ``checked``. An unstamped file gets no entry; nothing is put when ``theirs`` is not a dict."""
    if type(theirs) is not dict:
        return
    for rec in kb.records.values():
        entry = own.get(rec.key)
        if entry is None:
            sent = theirs.get(rec.key)
            found = checked.get(rec.key)
            if sent is None or found is None:
                continue
            entry = [sent[0], [finding_row(f) for f in found], sent[1]]
        cache.put(rec.path, entry)
    cache.save()


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


def _load_some(items: list[Item], indices: list[int], root: Any, profile: Any, started: int | None = None) -> tuple[Loaded, Tags]:
    """:func:`inferkb.store.loader.load_items` over ``items[i]`` for each ``i`` of ``indices``, noting where each
    result came from; with ``started`` (taken before the walk), each file a cache may keep is stamped (``stamps``)."""
    out = Loaded()
    if started is None:
        tags = load_indexed(out, items, indices, root, profile)
    else:
        tags = load_indexed(out, items, indices, root, profile, stamps=StampsOnly(), started=started)
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


def _fork(kb: KB, items: list[Item], indices: list[int], wanted: set[str] | None, today: _dt.date, started: int | None = None) -> Child:
    """Fork a child that loads and checks ``items[i]`` for ``i`` in ``indices`` and sends its results (:class:`~inferkb.split_channel.Child`);
    with ``started``, it stamps its files and sends their findings cache data too."""
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
        return Child(pid, read_fd, head_fd, send_fd, records_fd)
    code = 1
    try:  # the child: never returns into the caller
        os.close(read_fd)
        os.close(send_fd)

        def send_head(head: tuple[Any, ...]) -> None:
            send(head_fd, write_fd, head)

        def parent_records() -> Any:
            return received(records_read_fd, records_fd)

        if not os.environ.get(_CHILD_FAILED):
            more = {} if started is None else {"started": started}
            payload = dumps(_child_work(kb, items, indices, wanted, today, send_head, parent_records, **more), protocol=PROTOCOL)
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
    started: int | None = None,
) -> tuple[Any, ...]:
    """Load the child's share and ``send_head((tags, files seen, {walk index: data} of its repeat group members))``,
    check it, then resolve its records' references against every record of the KB (the parent's named by
    ``parent_records()``, their walk indices): returns ``({key: per-record findings}, reference findings, budgeted
    dangling references)``, and with ``started`` (the parent's, before the walk) ``{key: (stamp, cross-record data)}``
    of each file it stamped. Raises ``RuntimeError`` when the parent sent no record list."""
    half, tags = _load_some(items, indices, kb.root, kb.profile, started)
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
    if started is None:
        return checked, refs, dangling
    stamps = half.stamps
    return (
        checked,
        refs,
        dangling,
        {rec.key: (stamps[rec.key], cross_record_data(kb, rec)) for rec in half.records.values() if rec.key in stamps},
    )


def _receive(child: Child) -> tuple[Tags, int, dict[int, dict[str, Any]]] | None:
    """The child's head (:meth:`~inferkb.split_channel.Child.head`), ``None`` when it failed; a function of its own so that tests can see
    whether it came."""
    return child.head()
