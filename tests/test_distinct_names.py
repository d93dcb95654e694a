"""Benchmark names a reader can tell apart: the shared rule, the ``distinct-names`` derivation, importers, KB1401."""

from __future__ import annotations

import datetime as dt
import importlib
import json
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, CORPUS, rec, write_kb
from inferkb import derive
from inferkb.intake import IMPORTERS, IntakeOptions
from inferkb.intake.distinct_names import apply_to, distinct_names

COMMUNITY = CORPUS / "community"
LIB = COMMUNITY / "argonne-LLM-Inference-Bench" / "gh-pages" / "docs" / "data"
STRIX = COMMUNITY / "lhl-strix-halo-testing" / "llm-bench" / "llama-2-7b.Q4_0" / "results.jsonl"
NAME = "LLM-Inference-Bench Llama-2-7b-hf on 1x Nvidia GH200 GPU, vLLM, in/out 512/512, batch 64"


def bench(rid: str, name: str = NAME, value: float = 1.0, **submission) -> dict:
    return rec("benchmark", rid, name=name, metric="total_tok_s", value=value, unit="tok/s", submission=submission)


def fixture_kb(tmp_path: Path) -> Path:
    lib = {"data_set": "LLM-Inference-Bench (Argonne)", "path": "docs/data/Perplexity/All_results.csv"}
    files = {
        "data/benchmarks/lib-throughput-a.json": bench("lib-throughput-a", value=6000.5, table="Throughput", line=7),
        "data/benchmarks/lib-perplexity-a.json": bench("lib-perplexity-a", value=6147.7, table="Perplexity", line=44, **lib),
        "data/benchmarks/lib-perplexity-a-2.json": bench("lib-perplexity-a-2", value=6150.1, table="Perplexity", line=64, **lib),
        "data/benchmarks/alone.json": bench("alone", "a name nobody else has", value=3.0, table="Perplexity", line=1),
    }
    return write_kb(tmp_path / "kb", files)


def test_rule_uses_the_first_differing_fact_then_repeat_by_csv_line():
    lib = {"path": "docs/data/Perplexity/All_results.csv"}
    plan = distinct_names(
        [
            bench("t", table="Throughput", line=7),
            bench("p2", table="Perplexity", line=64, **lib),
            bench("p1", table="Perplexity", line=44, **lib),
        ]
    )
    assert plan["t"][0] == NAME + " (Throughput dashboard)"
    assert plan["p1"][0] == NAME + " (Perplexity dashboard, repeat 1 of 2, CSV line 44)"
    assert plan["p2"][0] == NAME + " (Perplexity dashboard, repeat 2 of 2, CSV line 64)"


def test_rule_uses_run_time_platform_and_leaves_what_nothing_separates():
    plan = distinct_names(
        [
            bench("r1", "llama-bench tg32", test_time="2025-08-04T12:22:08Z"),
            bench("r2", "llama-bench tg32", test_time="2025-08-08T05:08:50Z"),
            bench("m1", "MLPerf x", platform="trt-10.11"),
            bench("m2", "MLPerf x", platform="trt-10.14"),
            bench("same1", "twins"),
            bench("same2", "twins"),
        ]
    )
    assert plan["r1"][0] == "llama-bench tg32 (run 2025-08-04T12:22:08Z)"
    assert plan["m2"][0] == "MLPerf x (platform trt-10.14)"
    assert "same1" not in plan and "same2" not in plan  # nothing to tell them by: left for KB1401, nothing invented


def test_rule_ignores_records_without_a_string_name_or_id():
    records = [{"id": "a", "name": None}, {"id": "b", "name": None}, {"name": "x"}, {"id": 3, "name": "x"}]
    assert distinct_names(records) == {}
    assert apply_to(records) == 0


def test_derivation_names_the_fixture_records_and_proves_no_number_changed(tmp_path):
    root = fixture_kb(tmp_path)
    kb = inferkb.open(root)
    dry = derive.run(kb, "distinct-names", today=dt.date(2026, 12, 3))
    assert dry.proof.ok and not dry.written
    assert {c.record: c.new for c in dry.changes} == {
        "benchmarks/lib-throughput-a": NAME + " (Throughput dashboard)",
        "benchmarks/lib-perplexity-a": NAME + " (Perplexity dashboard, repeat 1 of 2, CSV line 44)",
        "benchmarks/lib-perplexity-a-2": NAME + " (Perplexity dashboard, repeat 2 of 2, CSV line 64)",
    }
    assert dry.proof.numbers_compared > 0
    assert kb.audit("distinct-names").figures["distinct-names"]["records"] == 3
    derive.run(kb, "distinct-names", write=True, today=dt.date(2026, 12, 3))
    again = inferkb.open(root)
    assert again.records["benchmarks/lib-perplexity-a"].data["value"] == 6147.7
    assert again.records["benchmarks/lib-perplexity-a-2"].data["name"].endswith("CSV line 64)")
    assert derive.run(again, "distinct-names").changes == []  # idempotent
    assert again.audit("distinct-names").findings == []


def test_derivation_provenance_quotes_the_distinguishing_field(tmp_path):
    kb = inferkb.open(fixture_kb(tmp_path))
    derive.run(kb, "distinct-names", write=True, today=dt.date(2026, 12, 3))
    side = tmp_path / "kb" / "provenance" / "benchmarks" / "lib-throughput-a.json"
    data = json.loads((tmp_path / "kb" / "data" / "benchmarks" / "lib-throughput-a.json").read_text())
    entries = data.get("provenance") or json.loads(side.read_text())["provenance"]
    entry = [e for e in entries if e["tag"] == "derive:distinct-names"][0]
    assert entry["field"] == "name"
    assert entry["evidence"] == {"field": "submission.table", "quote": "Throughput"}
    assert "lib-perplexity-a" in entry["basis"] and "lib-perplexity-a-2" in entry["basis"]


def test_audit_flags_each_record_of_a_shared_name_naming_the_others(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/benchmarks/a.json": bench("a"), "data/benchmarks/b.json": bench("b")})
    res = inferkb.open(root).audit("distinct-names")
    assert sorted((f.code, f.record) for f in res.findings) == [("KB1401", "benchmarks/a"), ("KB1401", "benchmarks/b")]
    assert "b" in [f for f in res.findings if f.record == "benchmarks/a"][0].extra["others"]
    assert res.figures["distinct-names"] == {"benchmarks": 2, "groups": 1, "records": 2}


def test_audit_does_not_flag_distinct_names(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/benchmarks/a.json": bench("a", "one"), "data/benchmarks/b.json": bench("b", "two")})
    assert inferkb.open(root).audit("distinct-names").findings == []


def test_bundled_kb_has_no_shared_benchmark_name():
    res = inferkb.open(BUNDLED).audit("distinct-names")
    assert res.findings == [], [f.message for f in res.findings[:5]]


def test_rule_is_explained_with_a_passing_and_a_failing_example():
    from inferkb.rules import RULES

    rule = RULES["KB1401"]
    assert rule.slug == "duplicate-name" and rule.severity == "warning" and "Throughput dashboard" in rule.passing


def _parse(name: str, paths: list[Path]):
    importlib.import_module(f"inferkb.intake.{name.replace('-', '_')}")
    return IMPORTERS[name].parse(paths, IntakeOptions(), inferkb.open())


def test_llm_inference_bench_import_names_dashboards_and_repeats_like_the_bundled_records():
    if not LIB.is_dir():
        pytest.skip(f"shared corpus not found at {LIB}")
    res = _parse("llm-inference-bench", [LIB / "Perplexity" / "All_results.csv", LIB / "Throughput" / "All_results.csv"])
    names = {r["id"]: r["name"] for r in res.records if r["type"] == "benchmark"}
    assert len(names) == len(set(names.values()))
    pair = (
        "lib-perplexity-nvidia-gh200-x1-vllm-llama-2-7b-hf-in512-out512-bs1",
        "lib-perplexity-nvidia-gh200-x1-vllm-llama-2-7b-hf-in512-out512-bs1-2",
    )
    assert [names[i].rsplit(" (", 1)[1] for i in pair] == [
        "Perplexity dashboard, repeat 1 of 2, CSV line 29)",
        "Perplexity dashboard, repeat 2 of 2, CSV line 49)",
    ]
    bundled = inferkb.open(BUNDLED)
    for rid in pair + ("lib-throughput-nvidia-gh200-x1-vllm-llama-2-7b-hf-in512-out512-bs64",):
        assert names[rid] == bundled.records[f"benchmarks/{rid}"].data["name"]


def test_llama_bench_import_names_the_run_time_like_the_bundled_records():
    if not STRIX.is_file():
        pytest.skip(f"shared corpus not found at {STRIX}")
    res = _parse("llama-bench", [STRIX])
    bench_records = [r for r in res.records if r["type"] == "benchmark"]
    assert res.stats["renamed"] > 0
    assert len({r["name"] for r in bench_records}) == len(bench_records)
    rid = "llama-bench-llama-2-7b-q4-0-radeon-8060s-graphics-2025-08-04t12-22-08z-tg32"
    got = {r["id"]: r["name"] for r in bench_records}[rid]
    assert got.endswith("(run 2025-08-04T12:22:08Z)")
    assert got == inferkb.open(BUNDLED).records[f"benchmarks/{rid}"].data["name"]
