"""Writes never leave the KB and never lose an edit (issue 12): profile paths, symlinks, compare-and-swap,
create-exclusive, all-or-nothing batches on a full disk and under kill -9, orphan temp files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS, rec, write_kb
from inferkb.errors import KBError, RecordExists, UsageError, WriteConflict

RESEARCH = CORPUS / "inference-research"
TOML = '[kb]\nname = "t"\n[types.engine]\ndir = "{engine_dir}"\n[types.source]\ndir = "sources"\n'


def run(*args, env=None, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---- the KB's own profile cannot point outside it ------------------------------------------------


@pytest.mark.parametrize("engine_dir", ["../outside", "/tmp/inferkb-hostile-abs-{pid}", "a/b", ".hidden", ""])
def test_a_kb_toml_type_dir_outside_data_is_refused_at_load(tmp_path, engine_dir):
    engine_dir = engine_dir.format(pid=os.getpid())
    write_kb(tmp_path / "kb", {}, schemas=False, toml=TOML.format(engine_dir=engine_dir))
    with pytest.raises(KBError, match="types.engine.dir"):
        inferkb.open(tmp_path / "kb")


def test_new_with_a_dotdot_type_dir_exits_2_and_writes_nothing_outside(tmp_path):
    kb = write_kb(tmp_path / "kb", {}, schemas=False, toml=TOML.format(engine_dir="../../escaped"))
    proc = run("new", "engine", "--name", "Escapee", "--kb", kb)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "types.engine.dir" in proc.stderr
    assert not (tmp_path / "escaped").exists() and not (tmp_path.parent / "escaped").exists()


def test_new_with_an_absolute_type_dir_exits_2_and_writes_nothing_there(tmp_path):
    outside = tmp_path / "abs-target"
    kb = write_kb(tmp_path / "kb", {}, schemas=False, toml=TOML.format(engine_dir=str(outside)))
    proc = run("new", "engine", "--name", "Escapee", "--kb", kb)
    assert proc.returncode == 2 and not outside.exists()


# ---- symlinks out of the KB are never written through ----------------------------------------------


def test_a_record_is_not_written_through_a_symlinked_type_dir(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "data" / "engines").symlink_to(outside, target_is_directory=True)
    kb = inferkb.open(kb_root)
    with pytest.raises(UsageError, match="outside the KB"):
        kb.write_record(rec("engine", "eng"))
    assert list(outside.iterdir()) == []


def test_new_through_a_symlinked_type_dir_exits_2(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "data" / "engines").symlink_to(outside, target_is_directory=True)
    proc = run("new", "engine", "--name", "Through Link", "--kb", kb_root)
    assert proc.returncode == 2 and "outside the KB" in proc.stderr
    assert list(outside.iterdir()) == []


def test_a_sidecar_is_not_written_through_a_symlinked_provenance_dir(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng")})
    (kb_root / "provenance").symlink_to(outside, target_is_directory=True)
    kb = inferkb.open(kb_root)
    with pytest.raises(UsageError, match="outside the KB"):
        kb.write_records([rec("engine", "eng2")], files=[("provenance/engines/eng2.json", "{}\n")])
    assert list(outside.iterdir()) == [] and not (kb_root / "data/engines/eng2.json").exists()


def test_a_record_file_that_is_a_symlink_is_not_replaced(tmp_path):
    outside = tmp_path / "victim.json"
    outside.write_text('{"keep": true}\n')
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "data" / "engines").mkdir()
    (kb_root / "data" / "engines" / "eng.json").symlink_to(outside)
    kb = inferkb.open(kb_root)
    with pytest.raises(KBError):
        kb.write_record(rec("engine", "eng"), overwrite=True)
    assert outside.read_text() == '{"keep": true}\n'


# ---- compare-and-swap: a concurrent edit is never overwritten ------------------------------------------


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    dest = tmp_path / "kb"
    shutil.copytree(RESEARCH, dest)
    return dest


def test_derive_write_refuses_when_a_record_was_edited_after_the_kb_was_read(corpus):
    from inferkb import derive

    kb = inferkb.open(corpus)
    planned = derive.run(kb, "format-id")
    target = next(f for f in planned.files if f.startswith("data/"))
    path = corpus / target
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["value"] = 12345.0  # another process records a new measurement meanwhile
    path.write_text(json.dumps(edited, indent=2) + "\n", encoding="utf-8")
    before = tree(corpus)
    with pytest.raises(WriteConflict, match="changed on disk"):
        derive.run(kb, "format-id", write=True)
    assert json.loads(path.read_text(encoding="utf-8"))["value"] == 12345.0
    assert tree(corpus) == before  # no sidecar either: the batch is refused whole


def _holds_open(pid: int, path: Path) -> bool:
    """True when process ``pid`` has ``path`` open (Linux /proc)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return True
        except OSError:
            continue
    return False


def test_derive_write_via_the_cli_reports_the_conflict_with_exit_2(corpus):
    """The CLI reads the KB itself, so the edit must land between its read and its write: this test holds the
    write lock, waits until the child has opened the KB root to take it (it has read every file by then),
    edits a record the derivation will rewrite, then lets the child go on."""
    from inferkb import derive

    if not Path(f"/proc/{os.getpid()}/fd").is_dir():
        pytest.skip("needs /proc to see when the child waits for the lock")
    planned = derive.run(inferkb.open(corpus), "format-id")
    target = corpus / next(f for f in planned.files if f.startswith("data/"))
    kb = inferkb.open(corpus)
    with kb.write_lock():
        child = subprocess.Popen(
            [sys.executable, "-m", "inferkb", "derive", "format-id", "--kb", str(corpus), "--write"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while child.poll() is None and not _holds_open(child.pid, kb.root):
            time.sleep(0.01)
        edited = json.loads(target.read_text(encoding="utf-8"))
        edited["value"] = 12345.0
        target.write_text(json.dumps(edited, indent=2) + "\n", encoding="utf-8")
    out, err = child.communicate(timeout=120)
    assert child.returncode == 2, out + err
    assert "changed on disk" in err and "Traceback" not in err
    assert json.loads(target.read_text(encoding="utf-8"))["value"] == 12345.0


def test_an_extra_file_is_not_replaced_when_it_changed_since_it_was_read(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng")})
    kb = inferkb.open(kb_root)
    side = kb_root / "provenance" / "engines" / "eng.json"
    side.parent.mkdir(parents=True)
    side.write_text('{"written": "by someone else"}\n')
    with pytest.raises(WriteConflict):
        kb.write_records([], files=[("provenance/engines/eng.json", "{}\n")], basis={"provenance/engines/eng.json": None})
    assert side.read_text() == '{"written": "by someone else"}\n'


def test_a_record_deleted_since_loading_is_not_silently_recreated(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng")})
    kb = inferkb.open(kb_root)
    (kb_root / "data/engines/eng.json").unlink()
    with pytest.raises(WriteConflict, match="deleted"):
        kb.write_record(rec("engine", "eng", notes="update"), overwrite=True)
    assert not (kb_root / "data/engines/eng.json").exists()


def test_an_unchanged_file_is_overwritten_as_asked(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng")})
    kb = inferkb.open(kb_root)
    kb.write_record(rec("engine", "eng", notes="second"), overwrite=True)
    kb.write_record(rec("engine", "eng", notes="third"), overwrite=True)  # the index now holds "second"
    assert json.loads((kb_root / "data/engines/eng.json").read_text())["notes"] == "third"


# ---- create-exclusive: two writers of one new id, one wins ----------------------------------------------


def test_concurrent_writers_of_one_new_id_let_exactly_one_succeed(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {})
    for round_no in range(25):
        kbs = [inferkb.open(kb_root) for _ in range(4)]
        barrier = threading.Barrier(len(kbs))
        outcomes: list[str] = []

        def write(kb, round_no=round_no, barrier=barrier, outcomes=outcomes):
            barrier.wait()
            try:
                kb.write_record(rec("engine", f"same-{round_no}", notes=f"writer {id(kb)}"))
                outcomes.append("ok")
            except RecordExists:
                outcomes.append("exists")

        threads = [threading.Thread(target=write, args=(kb,)) for kb in kbs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["exists", "exists", "exists", "ok"], (round_no, outcomes)


def test_concurrent_new_processes_with_one_id_let_exactly_one_succeed(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {})
    pairs = []
    for i in range(5):
        cmd = [sys.executable, "-m", "inferkb", "new", "engine", "--name", f"Race {i}", "--kb", str(kb_root)]
        pairs.append([subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)])
    for i, pair in enumerate(pairs):
        codes = sorted(p.wait(timeout=120) for p in pair)
        errs = [p.stderr.read() for p in pair]
        assert codes == [0, 2], (i, codes, errs)
        assert any("exists" in e for e in errs)
        for p in pair:
            p.stdout.close()
            p.stderr.close()


def test_new_losing_the_race_after_its_own_check_says_already_exists_without_an_update_hint(tmp_path, monkeypatch):
    """Found by benchmarks/hostile_campaign.py (race): the other process creates the file between `new`'s own
    check and the write; the store's refusal suggested --update, an option `inferkb new` does not have."""
    from inferkb import skeleton

    kb_root = write_kb(tmp_path / "kb", {})
    target = kb_root / "data" / "engines" / "raced.json"
    kb = inferkb.open(kb_root)
    original = kb.write_records

    def other_writer_first(*args, **kwargs):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(rec("engine", "raced", notes="theirs")) + "\n")
        return original(*args, **kwargs)

    monkeypatch.setattr(kb, "write_records", other_writer_first)
    with pytest.raises(RecordExists) as info:
        skeleton.write_new(kb, "engine", "Raced", record_id="raced")
    assert str(info.value) == f"{target} already exists; refusing to overwrite it"
    assert json.loads(target.read_text())["notes"] == "theirs"


# ---- all or nothing: a full disk, a duplicated row ---------------------------------------------------

FULL_DISK = textwrap.dedent(
    """
    import json, resource, signal, sys
    import inferkb
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, like ENOSPC
    kb = inferkb.open(sys.argv[1])
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    small = {"id": "big-old", "type": "engine", "name": "x", "sources": []}
    big_new = {"id": "fresh", "type": "engine", "name": "y", "notes": "n" * (2 * limit), "sources": []}
    try:
        kb.write_records([small, big_new], overwrite=True, validate=False)
    except OSError as exc:
        print("refused:", exc)
        sys.exit(2)
    """
)


def test_a_batch_that_hits_a_full_disk_leaves_the_kb_as_it_was(tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: the second file cannot be written, and putting the first back
    (its old content is large) would fail too, as it does when the disk is full."""
    limit = 20_000
    kb_root = write_kb(tmp_path / "kb", {"data/engines/big-old.json": rec("engine", "big-old", notes="o" * (3 * limit))})
    before = tree(kb_root)
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, str(kb_root), str(limit)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert tree(kb_root) == before
    assert "nothing of the batch was written" in proc.stdout


def test_an_inferencex_file_with_a_duplicated_row_writes_nothing(tmp_path):
    src = CORPUS / "harness" / "inferencex" / "powerx.json"
    if not src.is_file():
        pytest.skip(f"shared corpus not found at {src}")
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc["rows"].append(doc["rows"][5])
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(doc), encoding="utf-8")
    kb_root = tmp_path / "kb"
    assert run("init", kb_root, "--with-data").returncode == 0
    before = sorted(p.name for p in (kb_root / "data" / "benchmarks").iterdir())
    proc = run("intake", "inferencex", dup, "--kb", kb_root)
    assert proc.returncode == 2 and "appears twice" in proc.stderr
    assert sorted(p.name for p in (kb_root / "data" / "benchmarks").iterdir()) == before


# ---- kill -9 in the middle of a batch: the next write rolls it back ------------------------------------

KILLED_WRITER = textwrap.dedent(
    """
    import sys
    import inferkb
    kb = inferkb.open(sys.argv[1])
    n = int(sys.argv[2])
    kb.write_records(
        [{"id": f"r-{i:05d}", "type": "engine", "name": f"r {i}", "sources": []} for i in range(n)]
        + [{"id": "keep", "type": "engine", "name": "rewritten", "sources": []}],
        overwrite=True,
        validate=False,
    )
    """
)


def _kill_mid_batch(kb_root: Path, n: int) -> None:
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(kb_root), str(n)])
    engines = kb_root / "data" / "engines"
    journal = kb_root / ".inferkb-journal.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if journal.exists() or any(e.name.startswith("r-") for e in os.scandir(engines)):
            break
        time.sleep(0.0005)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)


def test_a_batch_killed_mid_write_is_all_or_nothing_after_the_next_write(tmp_path):
    n = 400
    kb_root = write_kb(tmp_path / "kb", {"data/engines/keep.json": rec("engine", "keep")})
    keep_before = (kb_root / "data/engines/keep.json").read_bytes()
    _kill_mid_batch(kb_root, n)
    try:
        inferkb.open(kb_root).write_record(rec("engine", "after"))  # any write recovers what the kill left...
    except WriteConflict:
        pass  # ...and refuses its own batch when this KB object had read files the rollback then put back
    names = {p.name for p in (kb_root / "data/engines").iterdir()}
    written = {n for n in names if n.startswith("r-")}
    assert len(written) in (0, n), f"{len(written)} of {n} records of one batch on disk"
    keep_now = (kb_root / "data/engines/keep.json").read_bytes()
    assert (keep_now == keep_before) == (len(written) == 0)
    assert not [n for n in names if n.startswith(".")], "temp files left after the next write"
    assert not (kb_root / ".inferkb-journal.json").exists()
    report = inferkb.open(kb_root).validate()
    assert not [f for f in report.findings if f.code in ("KB012", "KB013")]


def test_validate_reports_an_interrupted_batch_until_the_next_write(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/keep.json": rec("engine", "keep")})
    (kb_root / ".inferkb-journal.json").write_text('{"pid": 1, "jobs": []}')
    report = inferkb.open(kb_root).validate()
    assert [f.code for f in report.findings if f.code == "KB013"] == ["KB013"]
    inferkb.open(kb_root).write_record(rec("engine", "after"))
    assert not (kb_root / ".inferkb-journal.json").exists()


def test_recovery_puts_back_a_replaced_file_and_removes_a_created_one(tmp_path):
    """The state a kill leaves between two renames, built with the batch's own staging: file a replaced
    (its backup kept), file b created; file c not reached."""
    from inferkb.store import batch

    root = tmp_path.resolve()
    (root / "data/d").mkdir(parents=True)
    a, b, c = root / "data/d/a.json", root / "data/d/b.json", root / "data/d/c.json"
    a.write_text("old a\n")
    c.write_text("old c\n")
    jobs = [
        batch.Job(a, "data/d/a.json", b"new a\n", False),
        batch.Job(b, "data/d/b.json", b"new b\n", True),
        batch.Job(c, "data/d/c.json", b"new c\n", False),
    ]
    staged = [batch._stage(j) for j in jobs]
    batch._write_journal(root, staged)
    batch._apply(staged[0])
    batch._apply(staged[1])  # killed here, before c
    assert a.read_text() == "new a\n" and b.read_text() == "new b\n"
    outcome = batch.recover(root)
    assert outcome.restored == ["data/d/a.json"] and outcome.removed == ["data/d/b.json"]
    assert a.read_text() == "old a\n" and not b.exists() and c.read_text() == "old c\n"
    assert sorted(p.name for p in (root / "data/d").iterdir()) == ["a.json", "c.json"]


def test_recovery_never_undoes_an_edit_made_after_the_kill(tmp_path):
    from inferkb.store import batch

    root = tmp_path.resolve()
    (root / "data/d").mkdir(parents=True)
    a = root / "data/d/a.json"
    a.write_text("old a\n")
    staged = [batch._stage(batch.Job(a, "data/d/a.json", b"new a\n", False))]
    batch._write_journal(root, staged)
    batch._apply(staged[0])
    a.unlink()
    a.write_text("edited by hand after the crash\n")  # a different file now
    batch.recover(root)
    assert a.read_text() == "edited by hand after the crash\n"


def _half_applied(kb_root: Path, new_texts: dict[str, str], applied: int) -> None:
    """The state a writer killed after ``applied`` renames of its batch leaves: journal, backups, temp files."""
    from inferkb.store import batch

    root = kb_root.resolve()
    staged = [batch._stage(batch.Job(root / rel, rel, text.encode(), not (root / rel).exists())) for rel, text in new_texts.items()]
    batch._write_journal(root, staged)
    for st in staged[:applied]:
        batch._apply(st)


def _notes(kb_root: Path, ids: str) -> dict[str, str]:
    return {x: json.loads((kb_root / f"data/engines/{x}.json").read_text())["notes"] for x in ids}


@pytest.fixture()
def killed_kb(tmp_path) -> Path:
    """Engines a, b, c at notes v1; a killed batch to v2 got as far as a and b (campaign `kill`, mode journal)."""
    from inferkb.jsonio import dumps_record

    kb_root = write_kb(tmp_path / "kb", {f"data/engines/{x}.json": rec("engine", x, notes="v1") for x in "abc"})
    _half_applied(kb_root, {f"data/engines/{x}.json": dumps_record(rec("engine", x, notes="v2")) for x in "abc"}, applied=2)
    assert _notes(kb_root, "abc") == {"a": "v2", "b": "v2", "c": "v1"}
    return kb_root


def test_a_write_planned_from_files_a_killed_batch_left_is_refused_once_that_batch_is_rolled_back(killed_kb):
    """An intake re-run reads a and b as the killed run left them, finds them unchanged and sends only c; the
    rollback then puts a and b back to v1. Writing c would leave a mix nobody asked for, reported as a success."""
    kb = inferkb.open(killed_kb)
    with pytest.raises(WriteConflict, match=r"data/engines/a\.json and 1 other file.*re-run") as info:
        kb.write_records([rec("engine", "c", notes="v2")], overwrite=True, validate=False)
    assert info.value.exit_code == 2
    assert _notes(killed_kb, "abc") == {"a": "v1", "b": "v1", "c": "v1"}  # the killed batch rolled back, nothing else
    assert not (killed_kb / ".inferkb-journal.json").exists()
    assert not [p for p in (killed_kb / "data/engines").iterdir() if p.name.startswith(".")]


def test_a_write_from_a_kb_read_before_the_killed_batch_goes_ahead_after_the_rollback(tmp_path):
    from inferkb.jsonio import dumps_record

    kb_root = write_kb(tmp_path / "kb", {f"data/engines/{x}.json": rec("engine", x, notes="v1") for x in "abc"})
    kb = inferkb.open(kb_root)  # holds v1 everywhere, which is what the rollback restores
    _half_applied(kb_root, {f"data/engines/{x}.json": dumps_record(rec("engine", x, notes="v2")) for x in "abc"}, applied=2)
    kb.write_records([rec("engine", "d", notes="new")], validate=False)
    assert _notes(kb_root, "abcd") == {"a": "v1", "b": "v1", "c": "v1", "d": "new"}


def test_a_writing_command_rolls_back_a_killed_batch_before_it_reads_the_kb(killed_kb):
    from inferkb.cli.common import open_kb

    kb = open_kb(str(killed_kb), write=True)
    assert {x: kb.get(x).data["notes"] for x in "abc"} == {"a": "v1", "b": "v1", "c": "v1"}
    assert not (killed_kb / ".inferkb-journal.json").exists()
    assert not [p for p in (killed_kb / "data/engines").iterdir() if p.name.startswith(".")]
    kb.write_records([rec("engine", x, notes="v2") for x in "abc"], overwrite=True, validate=False)
    assert _notes(killed_kb, "abc") == {"a": "v2", "b": "v2", "c": "v2"}


@pytest.mark.parametrize("validate", [True, False])
def test_a_record_that_would_not_read_back_is_not_written(tmp_path, validate):
    """Found by benchmarks/hostile_campaign.py (mutate): sglang-serving kept a 401-digit total_input_tokens in the
    record's submission block; the write took it and the next validate reported KB015 (no float holds it)."""
    from inferkb.errors import RecordInvalid

    kb_root = write_kb(tmp_path / "kb", {"data/engines/a.json": rec("engine", "a")})
    before = tree(kb_root)
    with pytest.raises(RecordInvalid, match=r"record engines/big .*submission\.total_input_tokens: an integer of 401 digits"):
        inferkb.open(kb_root).write_records(
            [rec("engine", "fine"), rec("engine", "big", submission={"total_input_tokens": 10**400})], validate=validate
        )
    assert tree(kb_root) == before


def test_a_writing_command_removes_orphan_temp_files_even_when_it_has_nothing_to_write(tmp_path):
    """Found by benchmarks/hostile_campaign.py (kill): a writer killed after its commit point (journal removed,
    backups not yet) leaves temp and backup files; the next intake of the same input found every record
    unchanged, called no write and so never removed them."""
    from inferkb.cli.common import open_kb

    kb_root = write_kb(tmp_path / "kb", {"data/engines/a.json": rec("engine", "a")})
    orphans = [kb_root / "data/engines/.a.json.inferkb-4711-0a1b2c3d.bak", kb_root / "data/engines/.a.json.inferkb-4711-1a1b2c3d.tmp"]
    for path in orphans:
        path.write_text("old a\n")
    before = (kb_root / "data/engines/a.json").read_bytes()
    open_kb(str(kb_root))
    assert all(p.exists() for p in orphans)  # reading never removes anything
    open_kb(str(kb_root), write=True)
    assert not any(p.exists() for p in orphans)
    assert (kb_root / "data/engines/a.json").read_bytes() == before


def test_a_dry_run_open_leaves_the_killed_batch_for_a_write_to_roll_back(killed_kb):
    from inferkb.cli.common import open_kb

    open_kb(str(killed_kb))
    assert (killed_kb / ".inferkb-journal.json").exists()


# ---- orphan temp files: recognisable, reported, cleaned -------------------------------------------------


@pytest.mark.parametrize("name", [".eng.json.inferkb-4711-0a1b2c3d.tmp", ".eng.json.k2x_9qzm.tmp"])
def test_orphan_temp_files_are_reported_and_cleaned_by_the_next_write(tmp_path, name):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng"), f"data/engines/{name}": "{half a rec"})
    report = inferkb.open(kb_root).validate()
    orphan = [f for f in report.findings if f.code == "KB012"]
    assert [f.path for f in orphan] == [f"data/engines/{name}"]
    inferkb.open(kb_root).write_record(rec("engine", "other"))
    assert not (kb_root / "data/engines" / name).exists()


def test_an_editor_swap_file_is_neither_reported_nor_removed(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": rec("engine", "eng"), "data/engines/.eng.json.swp": "vim"})
    assert not [f for f in inferkb.open(kb_root).validate().findings if f.code == "KB012"]
    inferkb.open(kb_root).write_record(rec("engine", "other"))
    assert (kb_root / "data/engines/.eng.json.swp").exists()


def test_temp_files_of_a_write_are_named_recognisably(tmp_path):
    from inferkb.jsonio import TEMP_NAME, temp_path

    name = temp_path(tmp_path / "x.json").name
    assert TEMP_NAME.match(name) and name.startswith(".x.json.inferkb-")


def test_a_record_file_that_did_not_load_is_not_overwritten_blindly(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/eng.json": '{"id": "eng", "broken'})
    kb = inferkb.open(kb_root)
    with pytest.raises(WriteConflict, match="was not loaded"):
        kb.write_record(rec("engine", "eng"), overwrite=True)
    assert (kb_root / "data/engines/eng.json").read_text() == '{"id": "eng", "broken'
