"""The write path under a second writer and a hostile KB (QA re-run of issue 12): an edit made while a batch is
being staged is never lost, a journal cannot make recovery touch files outside the KB, temp-file cleaning never
follows a symlinked directory, and a failed journal write leaves nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, CORPUS, RESEARCH, rec, write_kb
from inferkb.errors import KBError, WriteConflict
from inferkb.store import batch, dirfd


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def replace_atomically(path: Path, text: str) -> None:
    """What an editor or a second tool does: write a new file and rename it over the old one (no inferkb lock)."""
    tmp = path.with_name(path.name + ".ed~")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def edited(path: Path) -> str:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["value"] = 12345.0
    return json.dumps(doc, indent=2) + "\n"


# ---- D1/D2: an edit made after the compare-and-swap check, while the batch is staged --------------------


@pytest.fixture()
def research(tmp_path: Path) -> Path:
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    dest = tmp_path / "kb"
    shutil.copytree(RESEARCH, dest)
    return dest


def _edit_once_staged(monkeypatch, edit) -> None:
    """Run ``edit()`` once, after every file of the batch is staged and before the first one is put in place."""
    original = batch._write_journal

    def hooked(root, staged, *rest):
        edit()
        return original(root, staged, *rest)

    monkeypatch.setattr(batch, "_write_journal", hooked)


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "rename"])
@pytest.mark.parametrize("how", ["rename", "in-place"])
def test_derive_write_refuses_an_edit_made_while_the_batch_was_staged(research, monkeypatch, how, exchange):
    from inferkb import derive

    if not exchange:  # a file system or libc without RENAME_EXCHANGE: the fingerprint checks before the rename
        monkeypatch.setattr(dirfd, "_RENAMEAT2", None)
    kb = inferkb.open(research)
    targets = [f for f in derive.run(kb, "format-id").files if f.startswith("data/")]
    path = research / targets[len(targets) // 2]
    text = edited(path)

    def edit():
        if how == "rename":
            replace_atomically(path, text)
        else:  # same inode, new bytes (an editor that truncates and rewrites)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)

    _edit_once_staged(monkeypatch, edit)
    before = tree(research)
    with pytest.raises(WriteConflict, match=targets[len(targets) // 2]):
        derive.run(kb, "format-id", write=True)
    assert json.loads(path.read_text(encoding="utf-8"))["value"] == 12345.0
    before[targets[len(targets) // 2]] = text.encode()
    assert tree(research) == before  # the whole batch rolled back, no temp or backup file left


def test_an_edit_between_the_last_check_and_the_swap_is_put_back(tmp_path, monkeypatch):
    """The narrowest window: another process renames a file over the target after the fingerprint check and the
    backup link, just before the swap. RENAME_EXCHANGE hands back the displaced file; it is not the checked one,
    so it returns to its name and the batch is refused."""
    if dirfd._renameat2() is None:
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    kb_root = write_kb(tmp_path / "kb", {"data/engines/a.json": rec("engine", "a"), "data/engines/b.json": rec("engine", "b")})
    kb = inferkb.open(kb_root)
    b = kb_root / "data/engines/b.json"
    theirs = json.dumps(rec("engine", "b", notes="theirs"), indent=2) + "\n"
    original = batch._exchange
    calls = []

    def racing(folder, a, target):
        calls.append(target)
        if target == b.name and len(calls) == 2:
            replace_atomically(b, theirs)
        return original(folder, a, target)

    monkeypatch.setattr(batch, "_exchange", racing)
    before = tree(kb_root)
    with pytest.raises(WriteConflict, match="data/engines/b.json"):
        kb.write_records([rec("engine", "a", notes="ours"), rec("engine", "b", notes="ours")], overwrite=True, validate=False)
    assert b.read_text() == theirs
    before["data/engines/b.json"] = theirs.encode()
    assert tree(kb_root) == before


HOOKED_CLI = textwrap.dedent(
    """
    import json, os, sys
    from inferkb.store import batch
    target = os.environ["EDIT_TARGET"]
    original = batch._write_journal
    def hooked(root, staged, *rest):
        doc = json.loads(open(target, encoding="utf-8").read())
        doc["value"] = 12345.0
        with open(target + ".ed~", "w", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, indent=2) + "\\n")
        os.replace(target + ".ed~", target)
        return original(root, staged, *rest)
    batch._write_journal = hooked
    from inferkb.cli import main
    sys.argv = ["inferkb", *sys.argv[1:]]
    main()
    """
)


def test_intake_update_refuses_an_edit_made_while_the_batch_was_staged(tmp_path):
    slo = sorted((CORPUS / "community/InferenceX/experimental/token_position_decode_slo").glob("*/results/*.json"))[:2]
    if not slo:
        pytest.skip(f"shared corpus not found at {CORPUS}")
    kb = tmp_path / "kb"
    shutil.copytree(BUNDLED, kb, ignore=lambda d, names: [n for n in names if n.endswith(".json") and d.endswith("/data/benchmarks")])
    args = ["intake", "inferencex-decode-slo", *map(str, slo), "--hardware-raw", "Slurm partition h200", "--count", "8", "--kb", str(kb)]
    first = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    bench = sorted((kb / "data/benchmarks").glob("*.json"))
    assert len(bench) >= 2
    target = bench[-1]
    before = tree(kb)
    env = dict(os.environ, EDIT_TARGET=str(target))
    proc = subprocess.run(
        [sys.executable, "-c", HOOKED_CLI, *args, "--update", "--engine-version", "v9"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert target.name in proc.stderr and "changed" in proc.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["value"] == 12345.0
    before[str(target.relative_to(kb))] = target.read_bytes()
    assert tree(kb) == before  # no record got the new engine version: all or nothing


# ---- D3: a journal naming paths outside the KB ------------------------------------------------------------


def _journal(kb_root: Path, **job) -> Path:
    base = {"target": "data/sources/none.json", "tmp": None, "bak": None, "create": False, "ino": 0, "size": 0, "mtime_ns": 0}
    base.update(job)
    path = kb_root / ".inferkb-journal.json"
    path.write_text(json.dumps({"pid": 1, "jobs": [base]}))
    return path


def _identity(path: Path) -> dict:
    st = os.lstat(path)
    return {"ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _kb_with_victim(tmp_path: Path) -> tuple[Path, Path]:
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    return kb_root, victim


def _refused(kb_root: Path, journal: Path) -> None:
    text = journal.read_text()
    with pytest.raises(KBError, match="journal") as info:
        inferkb.open(kb_root).write_record(rec("source", "x"))
    assert info.value.exit_code == 2
    assert journal.read_text() == text  # left in place for a human to look at
    assert not (kb_root / "data/sources/x.json").exists()


def test_a_journal_tmp_outside_the_kb_is_refused_and_nothing_is_deleted(tmp_path):
    kb_root, victim = _kb_with_victim(tmp_path)
    journal = _journal(kb_root, tmp="../victim.txt")
    _refused(kb_root, journal)
    assert victim.read_text() == "precious\n"


def test_a_journal_bak_outside_the_kb_is_not_moved_over_a_record(tmp_path):
    kb_root, victim = _kb_with_victim(tmp_path)
    s = kb_root / "data/sources/s.json"
    old = s.read_bytes()
    journal = _journal(kb_root, target="data/sources/s.json", bak="../victim.txt", **_identity(s))
    _refused(kb_root, journal)
    assert victim.read_text() == "precious\n" and s.read_bytes() == old


def test_a_journal_target_outside_the_kb_is_not_deleted(tmp_path):
    kb_root, victim = _kb_with_victim(tmp_path)
    journal = _journal(kb_root, target="../victim.txt", create=True, **_identity(victim))
    _refused(kb_root, journal)
    assert victim.read_text() == "precious\n"


def test_a_journal_target_through_a_symlinked_dir_is_refused(tmp_path):
    kb_root, victim = _kb_with_victim(tmp_path)
    (kb_root / "data/engines").symlink_to(tmp_path, target_is_directory=True)
    journal = _journal(kb_root, target="data/engines/victim.txt", create=True, **_identity(victim))
    _refused(kb_root, journal)
    assert victim.read_text() == "precious\n"


def test_a_journal_tmp_that_is_not_a_temp_name_is_refused(tmp_path):
    """A tmp entry naming another record (inside the KB) would delete that record."""
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s"), "data/sources/t.json": rec("source", "t")})
    journal = _journal(kb_root, target="data/sources/s.json", tmp="data/sources/t.json")
    _refused(kb_root, journal)
    assert (kb_root / "data/sources/t.json").exists()


def test_new_with_a_hostile_journal_exits_2_and_validate_does_not_promise_a_rollback(tmp_path):
    kb_root, victim = _kb_with_victim(tmp_path)
    _journal(kb_root, tmp="../victim.txt")
    report = inferkb.open(kb_root).validate()
    kb013 = [f for f in report.findings if f.code == "KB013"]
    assert len(kb013) == 1 and "rolls it back" not in kb013[0].message and "by hand" in kb013[0].message
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "new", "source", "--name", "x", "--kb", str(kb_root)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert ".inferkb-journal.json" in proc.stderr
    assert victim.read_text() == "precious\n"


def test_a_valid_journal_is_still_rolled_back(tmp_path):
    """The checks refuse only what inferkb never writes: a journal of the batch's own making recovers as before."""
    root = tmp_path.resolve()
    (root / "data/sources").mkdir(parents=True)
    a = root / "data/sources/a.json"
    a.write_text("old a\n")
    staged = [batch._stage(batch.Job(a, "data/sources/a.json", b"new a\n", False))]
    batch._write_journal(root, staged)
    batch._apply(staged[0])
    outcome = batch.recover(root)
    assert outcome.restored == ["data/sources/a.json"] and a.read_text() == "old a\n"


# ---- D4/D13: temp-file cleaning and reporting do not follow a symlinked directory ---------------------------


@pytest.mark.parametrize("linked", ["provenance/benchmarks", "data/benchmarks"])
def test_cleaning_does_not_follow_a_symlinked_type_dir(tmp_path, linked):
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    out = tmp_path / "out"
    out.mkdir()
    orphan = out / ".notes.json.inferkb-1-deadbeef.tmp"
    orphan.write_text("x\n")
    (kb_root / linked).parent.mkdir(exist_ok=True)
    (kb_root / linked).symlink_to(out, target_is_directory=True)
    inferkb.open(kb_root).write_record(rec("source", "x"))
    assert orphan.read_text() == "x\n"


@pytest.mark.parametrize("linked", ["provenance/benchmarks", "data/benchmarks"])
def test_validate_reports_a_symlinked_type_dir_and_not_the_files_behind_it(tmp_path, linked):
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    out = tmp_path / "out"
    out.mkdir()
    (out / ".notes.json.inferkb-1-deadbeef.tmp").write_text("x\n")
    (kb_root / linked).parent.mkdir(exist_ok=True)
    (kb_root / linked).symlink_to(out, target_is_directory=True)
    findings = inferkb.open(kb_root).validate().findings
    assert [(f.code, f.path) for f in findings if f.code in ("KB009", "KB012")] == [("KB009", linked)]


# ---- D6: a journal that cannot be written (a full disk) -------------------------------------------------------

FULL_DISK_JOURNAL = textwrap.dedent(
    """
    import resource, signal, sys
    import inferkb
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, like ENOSPC
    kb = inferkb.open(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))
    records = [{"id": f"r-{i:03d}", "type": "engine", "name": "r", "sources": []} for i in range(80)]
    try:
        kb.write_records(records, validate=False)  # each record is small; the journal of 80 is not
    except OSError as exc:
        print("refused:", exc)
        sys.exit(2)
    """
)


def test_a_journal_that_hits_a_full_disk_leaves_no_temp_file(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/keep.json": rec("engine", "keep")})
    before = tree(kb_root)
    proc = subprocess.run([sys.executable, "-c", FULL_DISK_JOURNAL, str(kb_root)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert tree(kb_root) == before, sorted(set(tree(kb_root)) - set(before))


def test_a_leftover_journal_temp_file_is_reported_and_cleaned(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/keep.json": rec("engine", "keep")})
    left = kb_root / "..inferkb-journal.json.inferkb-4711-0a1b2c3d.tmp"
    left.write_text('{"pid": 4711, "jobs": [')
    findings = inferkb.open(kb_root).validate().findings
    assert [(f.code, f.path) for f in findings if f.code in ("KB012", "KB013")] == [("KB012", left.name)]
    inferkb.open(kb_root).write_record(rec("engine", "after"))
    assert not left.exists()


def test_a_symlinked_type_dir_that_vanishes_while_loading_is_a_finding_not_a_crash(tmp_path, monkeypatch):
    # The QA re-run's swap race: the link is removed between lstat and readlink, and Python 3.11's non-strict
    # realpath raises FileNotFoundError. The race is made deterministic by making realpath raise for the link.
    root = write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")})
    real = tmp_path / "kb" / "real-sources"
    real.mkdir()
    (root / "data" / "sources").symlink_to(real)
    link = str(root / "data" / "sources")
    original = os.path.realpath

    def vanishing(path, *args, **kwargs):
        if os.fspath(path) == link:
            raise FileNotFoundError(2, "No such file or directory", link)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", vanishing)
    findings = inferkb.open(root).validate().findings
    assert [f.code for f in findings if "changed while being read" in f.message] == ["KB009"]
