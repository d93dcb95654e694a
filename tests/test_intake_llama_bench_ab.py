"""llama-bench Markdown forms of issue #8: the 'llama.cpp build X (N)' header line and A/B tables (two builds side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest

import inferkb
from inferkb.arms import arm_deltas
from inferkb.intake import IntakeOptions, load_all

DATA = Path(__file__).resolve().parent / "data" / "intake"


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def parse(name: str, kb, **opts):
    return load_all()["llama-bench"].parse([DATA / name], IntakeOptions(**opts), kb)


def bench(result):
    return [r for r in result.records if r["type"] == "benchmark"]


def test_header_build_line_gives_the_engine_version_of_the_rows_below(kb):
    records = bench(parse("llama_bench_header_build.md", kb))
    assert [r["conditions"]["engine_version"] for r in records] == ["b5606", "b5606"]
    assert records[0]["submission"]["build_commit"] == "66906cd8"
    assert records[0]["environment"]["engine_commit"] == "66906cd8"


def test_cuda_device_line_on_its_own_gives_the_hardware_string(kb):
    (pp, _tg) = bench(parse("llama_bench_header_build.md", kb))
    assert pp["hardware_raw"] == "NVIDIA GeForce RTX 4090"


def test_ab_table_is_eight_records_with_two_arms_each(kb):
    records = bench(parse("llama_bench_ab_compare.md", kb))
    assert len(records) == 8
    assert all([a["id"] for a in r["arms"]] == ["master", "pr"] and r["baseline_arm"] == "master" for r in records)
    first = records[0]
    assert first["metric"] == "prefill_tok_s" and first["value"] == 11002.40
    assert [a["stats"]["mean"] for a in first["arms"]] == [11002.40, 11563.52]
    assert first["conditions"]["input_tokens"] == 512 and first["model"] == "llama 8B Q4_0"
    assert records[6]["arms"][0]["config"]["n_depth"] == 4096
    assert records[6]["submission"]["test"] == "pp512 @ d4096"


def test_ab_deltas_are_computed_from_the_arms_not_typed_in(kb):
    first = bench(parse("llama_bench_ab_compare.md", kb))[0]
    # (11563.52 - 11002.40) / 11002.40 x 100 = 561.12 / 11002.40 x 100 = 5.09998 %
    assert arm_deltas(first)["pr"]["mean_delta_pct"] == pytest.approx(5.09998, abs=1e-4)
    assert "speedup" not in str(first["arms"])


def test_ab_speedup_column_disagreeing_with_the_arms_is_reported(kb):
    result = parse("llama_bench_ab_compare.md", kb)
    # Row 8: 92.40 / 88.00 = 1.05, but the table says 1.10; rows 1-7 agree to two decimals.
    (finding,) = [f for f in result.findings if f.code == "KB1101"]
    assert "row 8" in finding.message and finding.extra["file"] == 1.10
    assert finding.extra["recomputed"] == pytest.approx(1.05)


def test_ab_arms_are_different_builds_so_engine_version_is_a_reasoned_gap(kb):
    first = bench(parse("llama_bench_ab_compare.md", kb))[0]
    assert first["conditions"]["engine_version"] is None
    assert "master, PR" in first["condition_gaps"]["engine_version"]["reason"]
    assert [a["config"]["build"] for a in first["arms"]] == ["master", "PR"]


def test_ab_records_validate(kb):
    from inferkb.store import Record
    from inferkb.validate import validate_record

    result = parse("llama_bench_ab_compare.md", kb, source=next(iter(kb.ids_of_type("source"))))
    for data in bench(result):
        rec = Record(key=f"benchmarks/{data['id']}", id=data["id"], type="benchmark", dir="benchmarks", path="x", data=data)
        assert [f.code for f in validate_record(kb, rec) if f.severity == "error"] == []
