"""Writes go through real folders only (issue 12, D5): a folder swapped for a symlink between the writer's path
check and its write, or one that is a symlink already, never receives a file, not even a temp file; the loader,
the temp-file cleaner and validate agree that a symlinked folder is not followed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb.errors import UnsafePath, UsageError
from inferkb.store import batch, dirfd

pytestmark = pytest.mark.skipif(not dirfd.SUPPORTED, reason="directory-descriptor writes are POSIX only")


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def swap_for_symlink(folder: Path, target: Path) -> Path:
    """Move ``folder`` aside (inside the KB) and put a symlink to ``target`` in its place; returns where it went."""
    aside = folder.parent / f"{folder.name}-moved"
    os.rename(folder, aside)
    folder.symlink_to(target, target_is_directory=True)
    return aside


@pytest.fixture()
def kb_and_outside(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s"), "data/engines/e.json": rec("engine", "e")})
    return kb_root, outside


def hook_once(monkeypatch, name: str, action) -> None:
    """Run ``action()`` once, the first time ``batch.<name>`` is called, before the real call."""
    real = getattr(batch, name)
    done = []

    def hooked(*args, **kwargs):
        if not done:
            done.append(True)
            action()
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, name, hooked)


# ---- a swap between the path check and the write ------------------------------------------------------------


def test_a_type_dir_swapped_for_a_symlink_after_the_path_check_is_refused(kb_and_outside, monkeypatch):
    # batch.clean runs under the lock, after the writer's resolved-path check and before any target is read.
    kb_root, outside = kb_and_outside
    kb = inferkb.open(kb_root)
    hook_once(monkeypatch, "clean", lambda: swap_for_symlink(kb_root / "data/engines", outside))
    with pytest.raises(UnsafePath, match=r"refused to write data/engines/eng\.json: data/engines is a symlink") as err:
        kb.write_record(rec("engine", "eng"))
    assert err.value.exit_code == 2 and "nothing was written" in str(err.value)
    assert files_under(outside) == []
    assert files_under(kb_root / "data/engines-moved") == ["e.json"]
    assert not (kb_root / ".inferkb-journal.json").exists()


def test_a_type_dir_swapped_after_it_was_opened_gets_the_file_not_the_symlink_target(kb_and_outside, monkeypatch):
    """The swap comes after the folder was opened (just before the temp file is named): the descriptor still names
    the folder that was checked, so the record lands there, now under its new name, and nothing goes outside."""
    kb_root, outside = kb_and_outside
    kb = inferkb.open(kb_root)
    hook_once(monkeypatch, "temp_path", lambda: swap_for_symlink(kb_root / "data/engines", outside))
    kb.write_record(rec("engine", "eng"))
    assert files_under(outside) == []
    assert files_under(kb_root / "data/engines-moved") == ["e.json", "eng.json"]


def test_a_provenance_dir_swapped_for_a_symlink_after_the_path_check_is_refused(kb_and_outside, monkeypatch):
    kb_root, outside = kb_and_outside
    (kb_root / "provenance/engines").mkdir(parents=True)
    kb = inferkb.open(kb_root)
    hook_once(monkeypatch, "clean", lambda: swap_for_symlink(kb_root / "provenance", outside))
    with pytest.raises(UnsafePath, match="provenance is a symlink"):
        kb.write_records([rec("engine", "eng")], files=[("provenance/engines/eng.json", "{}\n")])
    assert files_under(outside) == [] and not (kb_root / "data/engines/eng.json").exists()


def test_a_type_dir_flipping_to_a_symlink_while_writing_never_gets_a_file_outside(kb_and_outside):
    """A real race: a thread swaps data/engines with a symlink to outside the KB (renameat2 RENAME_EXCHANGE, so the
    name always exists) as fast as it can while 150 records are written one by one. A write may be refused; no
    file, temp or record, may ever appear outside."""
    if dirfd._renameat2() is None:
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    kb_root, outside = kb_and_outside
    data = kb_root / "data"
    (data / "engines-link").symlink_to(outside, target_is_directory=True)
    top = dirfd.Dir(data, None)
    stop = threading.Event()
    flips = []

    def flipper():
        while not stop.is_set():
            top.exchange("engines", "engines-link")
            flips.append(1)

    kb = inferkb.open(kb_root)
    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    written = refused = 0
    try:
        for i in range(150):
            try:
                kb.write_record(rec("engine", f"race-{i:03d}"))
                written += 1
            except UsageError:
                refused += 1
    finally:
        stop.set()
        thread.join(10)
    assert files_under(outside) == [], (written, refused, len(flips))
    assert len(flips) > 150 and written + refused == 150


# ---- a folder that is a symlink already --------------------------------------------------------------------


def test_a_type_dir_symlinked_inside_the_kb_is_refused_and_nothing_is_written(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "shared-engines").mkdir()
    (kb_root / "data/engines").symlink_to("../shared-engines", target_is_directory=True)
    kb = inferkb.open(kb_root)
    with pytest.raises(UnsafePath, match=r"data/engines is a symlink \(to \.\./shared-engines\)"):
        kb.write_record(rec("engine", "eng"))
    assert files_under(kb_root / "shared-engines") == []


def test_new_through_a_type_dir_symlinked_inside_the_kb_exits_2_naming_it(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "shared-engines").mkdir()
    (kb_root / "data/engines").symlink_to(kb_root / "shared-engines", target_is_directory=True)
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "new", "engine", "--name", "Through Link", "--kb", str(kb_root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "data/engines is a symlink" in proc.stderr
    assert files_under(kb_root / "shared-engines") == []


def test_a_symlinked_sub_folder_of_provenance_is_refused(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")})
    (kb_root / "provenance").mkdir()
    (kb_root / "elsewhere").mkdir()
    (kb_root / "provenance/engines").symlink_to("../elsewhere", target_is_directory=True)
    with pytest.raises(UnsafePath, match="provenance/engines is a symlink"):
        inferkb.open(kb_root).write_records([rec("engine", "eng")], files=[("provenance/engines/eng.json", "{}\n")])
    assert files_under(kb_root / "elsewhere") == [] and not (kb_root / "data/engines/eng.json").exists()


# ---- loader, cleaner and validate agree: a symlinked folder is not followed ----------------------------------


def test_a_type_dir_symlinked_inside_the_kb_is_not_loaded_and_is_reported(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    real = kb_root / "shared-engines"
    real.mkdir()
    (real / "e.json").write_text('{"id": "e", "type": "engine", "name": "E"}\n')
    orphan = real / ".e.json.inferkb-4711-0a1b2c3d.tmp"
    orphan.write_text("x\n")
    (kb_root / "data/engines").symlink_to("../shared-engines", target_is_directory=True)
    kb = inferkb.open(kb_root)
    assert "engines/e" not in kb.records
    found = [(f.code, f.path) for f in kb.validate().findings if f.code in ("KB009", "KB012", "KB017")]
    assert found == [("KB017", "data/engines")]
    kb.write_record(rec("source", "t"))  # the cleaner runs; it does not look behind the link either
    assert orphan.exists()


@pytest.mark.parametrize("linked", ["provenance", "provenance/engines"])
def test_a_provenance_folder_symlinked_inside_the_kb_is_reported_and_its_temp_files_are_left(tmp_path, linked):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")})
    real = kb_root / "elsewhere"
    (real / "engines").mkdir(parents=True)
    orphan = (real / "engines" if linked == "provenance" else real) / ".e.json.inferkb-4711-0a1b2c3d.tmp"
    orphan.write_text("x\n")
    link = kb_root / linked
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(real, target_is_directory=True)
    findings = inferkb.open(kb_root).validate().findings
    assert [(f.code, f.path) for f in findings if f.code in ("KB009", "KB012", "KB017")] == [("KB017", linked)]
    inferkb.open(kb_root).write_record(rec("engine", "f"))
    assert orphan.exists()


def test_a_temp_file_in_a_real_type_dir_is_reported_and_then_cleaned(tmp_path):
    """The counterpart: in a real folder KB012 says the next write removes the file, and it does."""
    kb_root = write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")})
    orphan = kb_root / "data/engines/.e.json.inferkb-4711-0a1b2c3d.tmp"
    orphan.write_text("x\n")
    [kb012] = [f for f in inferkb.open(kb_root).validate().findings if f.code == "KB012"]
    assert "next inferkb write removes it" in kb012.message
    inferkb.open(kb_root).write_record(rec("engine", "f"))
    assert not orphan.exists()


def test_the_query_catalogue_does_not_list_records_behind_a_symlinked_type_dir(tmp_path):
    from inferkb.query import list_records

    kb_root = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb_root / "shared-engines").mkdir()
    (kb_root / "shared-engines/e.json").write_text('{"id": "e", "type": "engine", "name": "E"}\n')
    (kb_root / "data/engines").symlink_to("../shared-engines", target_is_directory=True)
    assert list(list_records(kb_root, "engine")) == []  # the on-disk catalogue of a KB path
    assert list(list_records(inferkb.open(kb_root), "engine")) == []  # the in-memory one of a loaded KB
