"""Writing imported records: all-or-nothing batches, identical re-imports are no-ops, an interrupted import resumes."""

from __future__ import annotations

import pytest

import inferkb
from conftest import CORPUS
from inferkb.errors import RecordExists
from inferkb.intake import IntakeOptions, load_all
from inferkb.intake.base import commit

LLAMA = CORPUS / "harness" / "llama.cpp" / "json_b5606_rtx4090_cuda-rpc.json"


@pytest.fixture
def parsed(bundled_copy):
    if not LLAMA.is_file():
        pytest.skip(f"shared corpus not found at {LLAMA}")
    kb = inferkb.open(bundled_copy)
    result = load_all()["llama-bench"].parse([LLAMA], IntakeOptions(), kb)
    return kb, result.records


def test_reimporting_identical_records_writes_nothing(parsed):
    kb, records = parsed
    first = commit(kb, records)
    unchanged: list[str] = []
    assert commit(kb, records, unchanged=unchanged) == []
    assert sorted(unchanged) == sorted(first)


def test_reimport_after_a_derivation_backfilled_the_records_writes_nothing(parsed):
    """README: intake, then `derive interconnect-ids --write`, then the same intake again must be a no-op, not
    'exists with different content' (exit 2) — and --update must not be needed, which would drop the backfill."""
    from inferkb import derive

    kb, records = parsed
    first = commit(kb, records)
    derive.run(kb, "interconnect-ids", write=True)
    kb = inferkb.open(kb.root)
    bench_keys = [k for k in first if k.startswith("benchmarks/")]
    assert bench_keys and all(kb.records[k].data.get("interconnect_ids") for k in bench_keys)  # the derivation did fill them
    unchanged: list[str] = []
    assert commit(kb, records, unchanged=unchanged) == []
    assert sorted(unchanged) == sorted(first)
    assert all(kb.records[k].data.get("interconnect_ids") for k in bench_keys)


def test_reimport_with_a_real_change_beside_a_backfill_still_needs_update(parsed):
    from inferkb import derive

    kb, records = parsed
    commit(kb, records)
    derive.run(kb, "interconnect-ids", write=True)
    kb = inferkb.open(kb.root)
    changed = [dict(r, name=r.get("name", "") + " (re-run)") if r["type"] == "benchmark" else r for r in records]
    with pytest.raises(RecordExists, match="different content"):
        commit(kb, changed)


def test_interrupted_import_is_completed_by_running_it_again(parsed):
    kb, records = parsed
    written = commit(kb, records)
    lost = kb.records[written[-1]]
    (kb.root / lost.path).unlink()  # as if the run had stopped before this file
    kb = inferkb.open(kb.root)
    unchanged: list[str] = []
    assert commit(kb, records, unchanged=unchanged) == [lost.key]
    assert len(unchanged) == len(written) - 1


def test_changed_record_needs_update(parsed):
    kb, records = parsed
    commit(kb, records)
    changed = [dict(r, name=r.get("name", "") + " (re-run)") if r["type"] == "benchmark" else r for r in records]
    with pytest.raises(RecordExists, match="different content"):
        commit(kb, changed)
    assert commit(kb, changed, update=True)


def test_a_short_hardware_name_lists_every_part_it_can_mean_and_picks_none():
    from inferkb.intake.base import resolve_accelerator

    kb = inferkb.open()
    ids, alternates, raw, notes = resolve_accelerator(kb, IntakeOptions(hardware_raw="NVIDIA H100"), None)
    assert ids == [] and {"nvidia-h100-sxm", "nvidia-h100-pcie", "nvidia-h100-nvl"} <= set(alternates)
    assert "none chosen" in notes[0]
    ids, alternates, _, _ = resolve_accelerator(kb, IntakeOptions(hardware_raw="NVIDIA H100 80GB HBM3"), None)
    assert ids == ["nvidia-h100-sxm"] and alternates == []
