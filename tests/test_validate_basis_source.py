"""KB207 basis-source-unresolved: an accelerator's runtime_devices_basis.source_id must be a cited source record.

The real case is the bundled AMD Instinct MI250 record: runtime_devices 2 on the basis of
rocm-mi250-microarchitecture-089d751 ("of two GCDs, each of which constitutes one GPU device in the system").
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import pytest

import inferkb
from conftest import BUNDLED, rec, write_kb
from inferkb import validate_split

TODAY = dt.date(2026, 11, 29)
MI250 = json.loads((BUNDLED / "data" / "accelerators" / "amd-instinct-mi250.json").read_text(encoding="utf-8"))
BASIS_SRC = MI250["runtime_devices_basis"]["source_id"]


def kb207(root, **opts):
    report = inferkb.open(root, cache=False).validate(today=TODAY, **opts)
    return [f for f in report.findings if f.code in ("KB207", "KB201")]


def accel(sources, source_id):
    return rec(
        "accelerator",
        "gpu-a",
        sources=sources,
        runtime_devices=2,
        runtime_devices_basis={"source_id": source_id, "quote": "two devices"},
    )


def test_bundled_mi250_basis_names_a_cited_source_record():
    assert BASIS_SRC in MI250["sources"]
    report = inferkb.open().validate(select=["KB207"])
    assert [f.to_dict() for f in report.findings] == []


def test_cited_known_source_is_clean(tmp_path):
    write_kb(tmp_path, {"data/sources/s1.json": rec("source", "s1"), "data/accelerators/gpu-a.json": accel(["s1"], "s1")})
    assert kb207(tmp_path) == []


def test_unknown_source_id_is_reported(tmp_path):
    write_kb(tmp_path, {"data/sources/s1.json": rec("source", "s1"), "data/accelerators/gpu-a.json": accel(["s1"], "no-such")})
    (f,) = kb207(tmp_path)
    assert (f.code, f.rule, f.severity, f.field) == ("KB207", "basis-source-unresolved", "error", "runtime_devices_basis.source_id")
    assert f.path == "data/accelerators/gpu-a.json"
    assert "'no-such' is not a source record (expected data/sources/no-such.json)" in f.message
    assert f.extra == {"id": "no-such", "source_record_exists": False}


def test_source_record_not_among_the_records_sources_is_reported(tmp_path):
    files = {
        "data/sources/s1.json": rec("source", "s1"),
        "data/sources/s2.json": rec("source", "s2"),
        "data/accelerators/gpu-a.json": accel(["s1"], "s2"),
    }
    write_kb(tmp_path, files)
    (f,) = kb207(tmp_path)
    assert f.code == "KB207" and "is a source record but not among this record's sources" in f.message


def test_cited_but_missing_source_is_kb201_once_not_twice(tmp_path):
    write_kb(tmp_path, {"data/accelerators/gpu-a.json": accel(["ghost"], "ghost")})
    assert [f.code for f in kb207(tmp_path)] == ["KB201"]


def test_the_real_mi250_record_without_its_basis_source_cited_is_reported(tmp_path):
    broken = dict(MI250, sources=[s for s in MI250["sources"] if s != BASIS_SRC])
    files = {f"data/sources/{s}.json": rec("source", s) for s in MI250["sources"]}
    files["data/accelerators/amd-instinct-mi250.json"] = broken
    write_kb(tmp_path, files)
    (f,) = kb207(tmp_path, max_dangling_refs=1000)
    assert f.code == "KB207" and BASIS_SRC in f.message and "is a source record but not among" in f.message


def test_split_validate_reports_kb207_like_the_serial_one(tmp_path, monkeypatch):
    files = {"data/sources/s1.json": rec("source", "s1")}
    files.update({f"data/accelerators/gpu-{i}.json": dict(accel([], "s1"), id=f"gpu-{i}") for i in range(6)})
    write_kb(tmp_path, files)
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    split = validate_split.validate_path(tmp_path, 2, today=TODAY)
    if split is None:
        pytest.skip("this machine cannot fork a validate worker")
    serial = inferkb.open(tmp_path, cache=False).validate(today=TODAY)
    assert split.to_dict() == serial.to_dict()
    assert sum(f.code == "KB207" for f in split.findings) == 6


def test_rules_command_explains_kb207():
    proc = subprocess.run([sys.executable, "-m", "inferkb", "rules", "KB207"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "basis-source-unresolved" in proc.stdout and "runtime_devices_basis.source_id" in proc.stdout


def test_warm_validate_reports_kb207_like_a_cold_run(tmp_path, caching):
    """The warm path (findings cache) keeps runtime_devices_basis in each entry's cross-record data, so KB207 stays."""
    from inferkb import validate_warm

    kb_dir = tmp_path / "kb"
    files = {"data/sources/s1.json": rec("source", "s1"), "data/sources/s2.json": rec("source", "s2")}
    files.update({f"data/accelerators/gpu-{i}.json": dict(accel(["s1"], "s2"), id=f"gpu-{i}") for i in range(3)})
    write_kb(kb_dir, files)
    assert validate_warm.validate_path(kb_dir, today=TODAY) is None  # nothing cached yet
    inferkb.open(kb_dir).validate(today=TODAY)  # fills the findings cache
    warm = validate_warm.validate_path(kb_dir, today=TODAY)
    assert warm is not None, "the warm path did not apply"
    cold = inferkb.open(kb_dir, cache=False).validate(today=TODAY)
    assert warm.to_dict() == cold.to_dict()
    assert sum(f.code == "KB207" for f in warm.findings) == 3
