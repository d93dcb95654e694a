"""Impossible statistics are findings (KB120-KB123), in validate and before intake writes (issue 12)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, CORPUS, rec, write_kb
from inferkb.validate_stats import stats_problems

HARNESS = CORPUS / "harness"


def codes(problems):
    return [(rule.code, slot) for rule, slot, _ in problems]


# ---- the rules on one stats object (worked by hand) ---------------------------------------------------


def test_ordered_stats_have_no_problem():
    assert stats_problems({"min": 10, "p50": 12, "p90": 20, "p99": 30, "max": 41, "mean": 14, "stdev": 5.0, "n": 50}) == []


def test_equal_neighbours_are_not_out_of_order():
    # a console rounds to two decimals: p50 == p90 == max is possible for a tight run
    assert stats_problems({"min": 7.41, "p50": 7.41, "p90": 7.41, "max": 7.41, "mean": 7.41, "stdev": 0.0}) == []


def test_p99_below_p50_is_kb120_at_p99():
    assert codes(stats_problems({"p50": 120.0, "p99": 80.0})) == [("KB120", "p99")]


def test_max_below_mean_is_kb120_at_mean():
    assert codes(stats_problems({"mean": 50.0, "max": 40.0})) == [("KB120", "mean")]


def test_min_above_a_percentile_is_kb120():
    assert codes(stats_problems({"min": 60.0, "p50": 55.0})) == [("KB120", "p50")]


def test_an_extra_percentile_map_joins_the_order():
    # p25 = 30 sits between min 10 and p50 40: fine; p99.9 = 90 below p99 = 95: out of order
    problems = stats_problems({"min": 10, "p50": 40, "p99": 95}, {"p25": 30, "p99.9": 90})
    assert codes(problems) == [("KB120", "percentiles.p99.9")]


def test_negative_stdev_is_kb121():
    assert codes(stats_problems({"stdev": -0.5})) == [("KB121", "stdev")]


def test_stdev_above_the_popoviciu_bound_is_kb123():
    # range [10, 11], n = 50: the sample stdev is at most (11 - 10) / 2 * sqrt(50 / 49) = 0.50508...
    assert codes(stats_problems({"min": 10, "max": 11, "stdev": 0.6, "n": 50})) == [("KB123", "stdev")]
    assert stats_problems({"min": 10, "max": 11, "stdev": 0.505, "n": 50}) == []


def test_without_n_the_two_sample_bound_applies():
    # two samples 10 and 11 have sample stdev 1 / sqrt(2) = 0.7071...: the largest any n allows
    assert stats_problems({"min": 10, "max": 11, "stdev": 0.7071}) == []
    assert codes(stats_problems({"min": 10, "max": 11, "stdev": 0.72})) == [("KB123", "stdev")]


def test_two_samples_reach_the_bound_exactly():
    xs = [10.0, 11.0]
    mean = sum(xs) / 2
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    assert stats_problems({"min": 10.0, "max": 11.0, "stdev": sd, "n": 2}) == []


def test_one_sample_with_spread_is_kb123():
    assert codes(stats_problems({"min": 5, "max": 5, "stdev": 1.0, "n": 1})) == [("KB123", "stdev")]


# ---- validate reports them on the record and field --------------------------------------------------


def bench(rid, **fields):
    return rec("benchmark", rid, engine_id="e", metric=fields.pop("metric", "ttft_ms"), **fields)


def test_validate_reports_each_rule_at_its_field(tmp_path):
    kb_root = write_kb(
        tmp_path,
        {
            "data/engines/e.json": rec("engine", "e"),
            "data/benchmarks/order.json": bench("order", arms=[{"id": "a", "stats": {"p50": 120.0, "p99": 80.0}}]),
            "data/benchmarks/neg.json": bench("neg", metric="output_tok_s", value=-812.0),
            "data/benchmarks/zero.json": bench("zero", submission={"duration_s": 0}),
            "data/benchmarks/lat0.json": bench("lat0", metrics={"ttft_ms": {"value": 0, "unit": "ms"}}),
            "data/benchmarks/spread.json": bench("spread", metrics={"itl_ms": {"stats": {"min": 1, "max": 2, "stdev": 3}, "unit": "ms"}}),
            "data/benchmarks/fine.json": bench("fine", value=35.1, metrics={"ttft_ms": {"stats": {"p50": 30, "p99": 50}, "unit": "ms"}}),
        },
    )
    found = {(f.record, f.code, f.field) for f in inferkb.open(kb_root).validate().findings if f.code.startswith("KB12")}
    assert found == {
        ("benchmarks/order", "KB120", "arms[0].stats.p99"),
        ("benchmarks/neg", "KB121", "value"),
        ("benchmarks/zero", "KB122", "submission.duration_s"),
        ("benchmarks/lat0", "KB122", "metrics.ttft_ms.value"),
        ("benchmarks/spread", "KB123", "metrics.itl_ms.stats.stdev"),
    }


def test_a_zero_gap_between_tokens_is_real_but_a_zero_ttft_or_e2e_is_not(tmp_path):
    # Streamed chunks carrying several tokens give zero inter-token gaps (the corpus AIPerf profile's ITL
    # minimum is 0); TTFT and end-to-end latency are spent by every request.
    stats0 = {"stats": {"min": 0, "p50": 12.0, "max": 40.0}, "unit": "ms"}
    kb_root = write_kb(
        tmp_path,
        {
            "data/engines/e.json": rec("engine", "e"),
            "data/benchmarks/gaps.json": bench("gaps", metrics={"itl_ms": stats0, "tpot_ms": stats0}),
            "data/benchmarks/ttft0.json": bench("ttft0", metrics={"ttft_ms": stats0}),
            "data/benchmarks/e2e0.json": bench("e2e0", metrics={"e2e_latency_ms": stats0}),
            "data/benchmarks/negitl.json": bench("negitl", metrics={"itl_ms": {"value": -1.0, "unit": "ms"}}),
        },
    )
    found = {(f.record, f.code, f.field) for f in inferkb.open(kb_root).validate().findings if f.code.startswith("KB12")}
    assert found == {
        ("benchmarks/ttft0", "KB122", "metrics.ttft_ms.stats.min"),
        ("benchmarks/e2e0", "KB122", "metrics.e2e_latency_ms.stats.min"),
        ("benchmarks/negitl", "KB121", "metrics.itl_ms.value"),
    }


def test_the_bundled_kb_and_the_corpus_have_no_impossible_statistics(research_kb):
    for kb in (inferkb.open(), inferkb.open(research_kb)):
        assert [f for f in kb.validate().findings if f.code in ("KB120", "KB121", "KB122", "KB123")] == []


# ---- intake refuses them before writing -----------------------------------------------------------


@pytest.fixture()
def kb_copy(tmp_path) -> Path:
    """The bundled KB without its benchmark records (engines, accelerators, sources to resolve against)."""
    dest = tmp_path / "kb"
    shutil.copytree(BUNDLED, dest, ignore=lambda d, names: [n for n in names if n.endswith(".json") and d.endswith("/data/benchmarks")])
    return dest


def intake(kb: Path, *args) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "intake", *map(str, args), "--kb", str(kb)], capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path}")
    return path


def refused(proc, kb: Path, rule_text: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing was written" in proc.stderr and rule_text in proc.stderr
    assert list((kb / "data" / "benchmarks").iterdir()) == []


def test_vllm_serve_with_p99_below_the_median_is_refused(kb_copy, tmp_path):
    doc = json.loads(need(HARNESS / "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json").read_text())
    doc["p99_ttft_ms"] = 100.0  # median_ttft_ms is 349.85
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(doc))
    refused(
        intake(kb_copy, "vllm-serve", path, "--hardware-raw", "NVIDIA H100 80GB HBM3", "--count", "8"), kb_copy, "p99 = 100 is below p50"
    )


def test_vllm_latency_with_p99_below_p90_is_refused(kb_copy, tmp_path):
    doc = json.loads(need(HARNESS / "vllm/latency_llama8B_tp1_vllm-ascend-ci.json").read_text())
    del doc["latencies"]  # no raw samples: the file's percentiles are what the record gets
    doc["percentiles"]["99"] = 1.0  # seconds; p90 is 7.54 s
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(doc))
    proc = intake(kb_copy, "vllm-latency", "--arm", f"baseline={path}", "--model", "m", "--count", "1", "--engine", "vllm")
    refused(proc, kb_copy, "p99 = 1000 is below p90")


def test_inferencex_row_with_p99_ttft_below_p90_is_refused(kb_copy, tmp_path):
    doc = json.loads(need(HARNESS / "inferencex/powerx.json").read_text())
    doc["rows"] = doc["rows"][:3]
    doc["rows"][0]["metrics"]["p99_ttft"] = 0.001  # seconds; p90_ttft is 1.28 s
    path = tmp_path / "ix.json"
    path.write_text(json.dumps(doc))
    refused(intake(kb_copy, "inferencex", path), kb_copy, "p99 = 1 is below p90")


def test_llmd_report_with_ttft_p99_below_p95_is_refused(kb_copy, tmp_path):
    text = need(HARNESS / "llm-d/br_v0_2_1_example.yaml").read_text()
    start = text.index("time_to_first_token:")
    p99 = text.index("p99:", start)
    text = text[:p99] + "p99: 0.0001" + text[text.index("\n", p99) :]
    path = tmp_path / "br.yaml"
    path.write_text(text)
    refused(intake(kb_copy, "llmd-report", path), kb_copy, "below p95")


def test_mlperf_loadgen_summary_with_p99_below_p50_is_refused(kb_copy, tmp_path):
    text = need(HARNESS / "mlperf/v4.1_NVIDIA_DGX-H100x8_mixtral-8x7b_Server_summary.txt").read_text()
    text = re.sub(r"(99\.00 percentile latency \(ns\)\s*:\s*)\d+", r"\g<1>1000", text, count=1)
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text)
    proc = intake(kb_copy, "mlperf", path, "--engine", "tensorrt-llm")
    refused(proc, kb_copy, "below")


def test_an_intake_of_ordered_statistics_still_writes(kb_copy):
    proc = intake(
        kb_copy,
        "vllm-serve",
        need(HARNESS / "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json"),
        "--hardware-raw",
        "NVIDIA H100 80GB HBM3",
        "--count",
        "8",
    )
    assert proc.returncode == 0, proc.stderr
    assert len(list((kb_copy / "data" / "benchmarks").iterdir())) == 1


def test_vllm_serve_with_a_zero_duration_is_refused(kb_copy, tmp_path):
    doc = json.loads(need(HARNESS / "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json").read_text())
    doc["duration"] = 0
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(doc))
    proc = intake(kb_copy, "vllm-serve", path, "--hardware-raw", "NVIDIA H100 80GB HBM3", "--count", "8")
    refused(proc, kb_copy, "submission.duration_s = 0")


def test_inferencex_decode_slo_with_a_zero_duration_is_refused(kb_copy, tmp_path):
    name = "minimax_m25_vllm_tep8_isl4096_osl128_conc64.json"
    src = need(CORPUS / "community/InferenceX/experimental/token_position_decode_slo/minimax-m2.5/results" / name)
    doc = json.loads(src.read_text())
    doc["duration"] = 0.0
    path = tmp_path / name  # the importer reads TP, ISL, OSL and concurrency from the file name
    path.write_text(json.dumps(doc))
    proc = intake(kb_copy, "inferencex-decode-slo", path, "--hardware-raw", "Slurm partition h200", "--count", "8")
    refused(proc, kb_copy, "submission.duration_s = 0")
