"""The store's index: a write counter that rebuilds every derived table, and one all-or-nothing batch writer."""

from __future__ import annotations

import json

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import hardware
from inferkb.errors import RecordExists, RecordInvalid
from inferkb.store import batch as store_batch


def _kb(tmp_path, files=None):
    return inferkb.open(
        write_kb(tmp_path / "kb", files or {"data/accelerators/gpu-a.json": rec("accelerator", "gpu-a", aliases=["GPU A"])})
    )


def test_alias_lookup_finds_an_accelerator_written_on_the_same_kb_object(tmp_path):
    kb = _kb(tmp_path)
    assert hardware.candidates(kb, "GPU A") == ["gpu-a"]  # builds and caches the alias table
    kb.write_record(rec("accelerator", "gpu-b", aliases=["Accelerator B 80GB"]))
    assert hardware.candidates(kb, "Accelerator B 80GB") == ["gpu-b"]


def test_every_write_bumps_the_counter_and_rebuilds_ids_and_types(tmp_path):
    kb = _kb(tmp_path)
    v0 = kb.version
    assert kb.ids_of_type("engine") == set() and "eng" not in kb.by_id
    kb.write_record(rec("engine", "eng"))
    assert kb.version > v0
    assert kb.ids_of_type("engine") == {"eng"} and [r.key for r in kb.by_type("engine")] == ["engines/eng"]
    assert kb.by_id["eng"][0].key == "engines/eng"


def test_records_cannot_be_changed_behind_the_index(tmp_path):
    kb = _kb(tmp_path)
    with pytest.raises(TypeError):
        kb.records["engines/x"] = kb.records["accelerators/gpu-a"]


def test_a_batch_whose_second_record_is_invalid_writes_nothing(tmp_path):
    kb = _kb(tmp_path)
    bad = rec("engine", "bad")
    del bad["name"]  # required by the test schema
    with pytest.raises(RecordInvalid) as exc:
        kb.write_records([rec("engine", "good"), bad])
    assert exc.value.findings and not (kb.root / "data/engines/good.json").exists()
    assert "engines/good" not in kb.records and kb.ids_of_type("engine") == set()


def test_records_of_one_batch_may_reference_each_other(tmp_path):
    kb = _kb(tmp_path)
    written = kb.write_records([rec("engine", "eng", sources=["src-1"]), rec("source", "src-1")])
    assert [r.key for r in written] == ["engines/eng", "sources/src-1"]
    assert inferkb.open(kb.root).validate().findings == []


def test_an_existing_record_is_not_overwritten_without_asking(tmp_path):
    kb = _kb(tmp_path)
    with pytest.raises(RecordExists):
        kb.write_records([rec("engine", "new-one"), rec("accelerator", "gpu-a")])
    assert not (kb.root / "data/engines/new-one.json").exists()


def test_a_failed_write_puts_back_the_files_already_written(tmp_path, monkeypatch):
    kb = _kb(tmp_path)
    path_a = kb.root / "data/accelerators/gpu-a.json"
    before = path_a.read_bytes()
    real = store_batch._apply
    calls = []

    def flaky(staged):  # the second file fails as it is put in place, after the first was renamed into place
        if calls:
            raise OSError("disk full (simulated)")
        calls.append(staged.job.path)
        real(staged)

    monkeypatch.setattr(store_batch, "_apply", flaky)
    changed = rec("accelerator", "gpu-a", aliases=["GPU A", "GPU A 2"])
    with pytest.raises(OSError, match="disk full"):
        kb.write_records([changed, rec("engine", "eng")], overwrite=True)
    assert calls == [path_a]  # the first file had been replaced before the second failed
    assert path_a.read_bytes() == before
    assert not (kb.root / "data/engines/eng.json").exists()
    assert kb.records["accelerators/gpu-a"].data["aliases"] == ["GPU A"] and "engines/eng" not in kb.records


def test_sidecar_files_are_written_first_and_must_stay_inside_the_kb(tmp_path):
    kb = _kb(tmp_path)
    kb.write_records([rec("engine", "eng")], files=[("provenance/engines/eng.json", '{"record": "engines/eng"}\n')])
    assert json.loads((kb.root / "provenance/engines/eng.json").read_text()) == {"record": "engines/eng"}
    with pytest.raises(inferkb.UsageError, match="outside the KB"):
        kb.write_records([rec("engine", "eng2")], files=[("../escape.json", "{}\n")])
    assert not (tmp_path / "escape.json").exists()


def test_a_skeleton_goes_through_the_store_and_is_indexed(tmp_path):
    from inferkb.skeleton import write_new

    kb = _kb(tmp_path)
    write_new(kb, "engine", "My Engine")
    assert kb.resolve("my-engine", "engine") is not None
