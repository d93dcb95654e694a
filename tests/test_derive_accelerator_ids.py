"""Derivation ``accelerator-ids``: an empty accelerator_ids from the record's own hardware_raw, through the one resolver."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from conftest import BUNDLED
from inferkb import derive

TODAY = dt.date(2026, 12, 3)
COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}
PARTS = [
    {"id": "cpu-x", "type": "accelerator", "name": "CPU X", "aliases": ["Vendor CPU X 24-Core Processor"], **COMMON},
    # Two records sharing one alias: the string cannot pick between them.
    {"id": "twin-a", "type": "accelerator", "name": "Twin A", "aliases": ["Twin GPU"], **COMMON},
    {"id": "twin-b", "type": "accelerator", "name": "Twin B", "aliases": ["Twin GPU"], **COMMON},
]
GAP = {"reason": "a CPU run; no accelerator record describes a CPU", "checked": ["the database"]}


def _bench(rid: str, raw: object, **fields) -> dict:
    rec = bench(rid, 14.0, **{"hardware_raw": raw, "accelerator_ids": [], "accelerator_count": 1, **fields})
    if raw is ...:
        del rec["hardware_raw"]
    return rec


@pytest.fixture()
def kb_root(tmp_path: Path) -> Path:
    records = [
        _bench("b-exact", "Vendor CPU X 24-Core Processor", condition_gaps={"accelerator_ids": GAP, "warmup": GAP}),
        _bench("b-count", "1x vendor cpu x 24-core processor"),
        _bench("b-twins", "Twin GPU"),
        _bench("b-unknown", "Vendor CPU Y"),
        _bench("b-already-set", "Twin GPU", accelerator_ids=["twin-a"]),
        _bench("b-alternates", "Twin GPU", accelerator_alternates=["twin-a", "twin-b"]),
        _bench("b-no-raw", ...),
    ]
    return make_kb(tmp_path / "kb", records + PARTS)


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def _run(root: Path, write: bool = True) -> derive.DeriveResult:
    return derive.run(inferkb.open(root, cache=False), "accelerator-ids", write=write, today=TODAY)


def _findings(result: derive.DeriveResult, rid: str) -> list:
    return [f for f in result.findings if f.record == f"benchmarks/{rid}"]


def test_an_exact_alias_links_the_part_and_drops_the_gap_it_explained(kb_root):
    _run(kb_root)
    rec = _rec(kb_root, "b-exact")
    assert rec["accelerator_ids"] == ["cpu-x"]
    assert "accelerator_ids" not in rec["condition_gaps"] and rec["condition_gaps"]["warmup"] == GAP
    [entry] = [e for e in rec["provenance"] if e["field"] == "accelerator_ids"]
    assert entry["evidence"] == {"field": "hardware_raw", "quote": "Vendor CPU X 24-Core Processor"}
    assert entry["tag"] == "derive:accelerator-ids" and entry["numbers_changed"] is False and "exact match" in entry["basis"]


def test_a_leading_count_is_removed_and_the_spelling_normalised(kb_root):
    _run(kb_root)
    rec = _rec(kb_root, "b-count")
    assert rec["accelerator_ids"] == ["cpu-x"]
    assert next(e for e in rec["provenance"] if e["field"] == "accelerator_ids")["evidence"]["quote"] == "vendor cpu x 24-core processor"


def test_a_string_naming_two_parts_picks_none_and_lists_them(kb_root):
    result = _run(kb_root)
    assert _rec(kb_root, "b-twins")["accelerator_ids"] == []
    [f] = _findings(result, "b-twins")
    assert f.code == "KB1001" and f.extra == {"candidates": ["twin-a", "twin-b"]}


def test_a_string_no_record_names_fills_nothing(kb_root):
    result = _run(kb_root)
    assert _rec(kb_root, "b-unknown")["accelerator_ids"] == []
    assert [f.code for f in _findings(result, "b-unknown")] == ["KB1002"]


@pytest.mark.parametrize("rid", ["b-already-set", "b-alternates", "b-no-raw"])
def test_records_with_a_part_alternates_or_no_string_are_never_touched(kb_root, rid):
    before = (kb_root / "data" / "benchmarks" / f"{rid}.json").read_bytes()
    result = _run(kb_root)
    assert (kb_root / "data" / "benchmarks" / f"{rid}.json").read_bytes() == before
    assert _findings(result, rid) == []


def test_the_proof_passes_with_no_number_changed_and_a_second_run_is_empty(kb_root):
    result = _run(kb_root, write=False)
    assert result.proof.ok
    assert result.proof.changed_fields() == {"accelerator_ids": 2, "condition_gaps": 1, "provenance": 2}
    _run(kb_root)
    again = _run(kb_root, write=False)
    assert again.changes == [] and again.files == []


def test_the_bundled_kb_has_nothing_left_to_link():
    # The 18 LocalScore CPU rows were linked by this derivation (amd-epyc-7352, apple-m4-max-cpu); nothing else resolves.
    result = derive.run(inferkb.open(), "accelerator-ids", write=False, today=TODAY)
    assert result.changes == []
    linked = [p for p in (BUNDLED / "data" / "benchmarks").glob("localscore-*.json") if "derive:accelerator-ids" in p.read_text()]
    assert len(linked) == 18
