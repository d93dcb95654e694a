"""KB201 on ``flops[i].source_id``: an accelerator's peak row citing a source id with no source record is a dangling source.

Before truth12 only the citations audit looked at ``flops[].source_id``; validate passed a row whose source
leads nowhere. The serial, two-process and warm (findings cache) validate must agree.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import validate_split

TODAY = dt.date(2026, 12, 4)


def row(source_id, precision="bf16") -> dict:
    return {"precision": precision, "tflops": 100, "dense": True, "source_id": source_id, "basis": "vendor-docs"}


def accel(rid: str, sources: list[str], *rows: dict) -> dict:
    return rec("accelerator", rid, sources=sources, flops=list(rows))


def kb201(root) -> list:
    report = inferkb.open(root, cache=False).validate(today=TODAY)
    return [f for f in report.findings if f.code == "KB201"]


def test_row_citing_a_known_source_is_clean(tmp_path):
    write_kb(tmp_path, {"data/sources/s1.json": rec("source", "s1"), "data/accelerators/gpu-a.json": accel("gpu-a", ["s1"], row("s1"))})
    assert kb201(tmp_path) == []


def test_row_citing_an_unknown_source_is_kb201_naming_the_row_and_the_expected_file(tmp_path):
    files = {
        "data/sources/s1.json": rec("source", "s1"),
        "data/accelerators/gpu-a.json": accel("gpu-a", ["s1"], row("s1"), row("no-such", "fp8")),
    }
    write_kb(tmp_path, files)
    (f,) = kb201(tmp_path)
    assert (f.rule, f.severity, f.field, f.path) == ("source-unresolved", "error", "flops[1].source_id", "data/accelerators/gpu-a.json")
    assert f.message == "flops[1].source_id: 'no-such' is not a source record (expected data/sources/no-such.json)"
    assert f.extra == {"id": "no-such"}


def test_unknown_id_also_in_sources_is_reported_once_on_sources(tmp_path):
    write_kb(tmp_path, {"data/accelerators/gpu-a.json": accel("gpu-a", ["ghost"], row("ghost"))})
    assert [f.field for f in kb201(tmp_path)] == ["sources"]


def test_null_or_absent_source_id_and_odd_rows_are_not_references(tmp_path):
    rows = [row(None), {"precision": "fp8", "tflops": 1, "basis": "derived"}, "not-a-row", row(3)]
    write_kb(tmp_path, {"data/accelerators/gpu-a.json": rec("accelerator", "gpu-a", flops=rows)})
    assert kb201(tmp_path) == []


def test_validate_exits_1_and_prints_the_finding(tmp_path):
    write_kb(tmp_path, {"data/accelerators/gpu-a.json": accel("gpu-a", [], row("no-such"))})
    cmd = [sys.executable, "-m", "inferkb", "validate", "--kb", str(tmp_path), "--select", "KB201"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "data/accelerators/gpu-a.json" in proc.stdout and "KB201" in proc.stdout
    assert "flops[0].source_id: 'no-such'" in proc.stdout and "Traceback" not in proc.stderr


def test_split_validate_reports_it_like_the_serial_one(tmp_path, monkeypatch):
    files = {f"data/accelerators/gpu-{i}.json": accel(f"gpu-{i}", [], row("no-such")) for i in range(6)}
    write_kb(tmp_path, files)
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    split = validate_split.validate_path(tmp_path, 2, today=TODAY)
    if split is None:
        pytest.skip("this machine cannot fork a validate worker")
    serial = inferkb.open(tmp_path, cache=False).validate(today=TODAY)
    assert split.to_dict() == serial.to_dict()
    assert sum(f.field == "flops[0].source_id" for f in split.findings) == 6


def test_warm_validate_reports_it_like_a_cold_run(tmp_path, caching):
    """The findings cache keeps each row's source_id in the cross-record data, so a cached record still gets KB201."""
    from inferkb import validate_warm

    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, {f"data/accelerators/gpu-{i}.json": accel(f"gpu-{i}", [], row("s-late")) for i in range(3)})
    assert validate_warm.validate_path(kb_dir, today=TODAY) is None  # nothing cached yet
    inferkb.open(kb_dir).validate(today=TODAY)  # fills the findings cache
    warm = validate_warm.validate_path(kb_dir, today=TODAY)
    assert warm is not None, "the warm path did not apply"
    cold = inferkb.open(kb_dir, cache=False).validate(today=TODAY)
    assert warm.to_dict() == cold.to_dict()
    assert sum(f.field == "flops[0].source_id" for f in warm.findings) == 3


def test_bundled_kb_has_no_dangling_flops_source():
    report = inferkb.open().validate(select=["KB201"])
    assert [f.to_dict() for f in report.findings] == []
