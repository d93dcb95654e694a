"""Edge cases of the community importers on tiny fixtures written here (no corpus needed)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import inferkb
from inferkb.errors import InputError
from inferkb.intake.base import IntakeOptions
from inferkb.intake.inferencex_slo import InferenceXDecodeSLO, layout_conditions, parse_name
from inferkb.intake.llama_bench import LlamaBench
from inferkb.intake.llm_inference_bench import LLMInferenceBench, power_watts, token_basis
from inferkb.intake.localscore import LocalScore

HEADER = "Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,Throughput"


def bench(result):
    return [r for r in result.records if r["type"] == "benchmark"]


def test_token_basis_by_hand():
    # 16 x (128 + 128) / 2.0 s = 2048 tok/s: the batch's input + output tokens.
    assert token_basis(2048.0, 2.0, 16, 128, 128)[:2] == ("total_tok_s", "aggregate")
    # (128 + 128) / 2.0 s = 128 tok/s whatever the batch: one sequence.
    assert token_basis(128.0, 2.0, 16, 128, 128)[:2] == ("total_tok_s", "per-request")
    # 1000 tok/s fits neither: the ambiguous metric, no scope.
    assert token_basis(1000.0, 2.0, 16, 128, 128)[:2] == ("tps_aggregate", None)


def test_power_scale_needs_evidence(tmp_path):
    path = tmp_path / "p.csv"
    row = {"_line": "2", "avg_power": "300000"}
    assert power_watts(row, 100.0, path, 400.0, 1)[0] == pytest.approx(300.0)  # 300 kW on one 400 W GPU: mW
    assert power_watts(row, 100.0, path, None, 1)[0] is None  # no TDP, no way to tell
    row = {"_line": "2", "avg_power": "450", "Throughput_per_watt_avg": "0.5"}
    assert power_watts(row, 100.0, path, 400.0, 1)[0] is None  # 100/450 is neither 0.5 nor 100/0.45


def test_unproven_throughput_keeps_the_ambiguous_metric_and_says_why(tmp_path):
    path = tmp_path / "Throughput" / "All_results.csv"
    path.parent.mkdir()
    path.write_text(f"{HEADER}\nAMD MI300X GPU,1,vLLM,org/m,128,16,2.0,1000\n")
    (rec,) = bench(LLMInferenceBench().parse([path], IntakeOptions(), inferkb.open()))
    assert rec["metric"] == "tps_aggregate" and "token_basis" in rec["condition_gaps"]
    assert rec["accelerator_ids"] == ["amd-instinct-mi300x"] and rec["engine_id"] == "vllm"


def test_the_same_row_in_a_second_file_is_skipped(tmp_path):
    a, b = tmp_path / "Throughput" / "All_results.csv", tmp_path / "Best" / "All_results.csv"
    for p in (a, b):
        p.parent.mkdir()
        p.write_text(f"{HEADER}\nAMD MI300X GPU,1,vLLM,org/m,128,1,1.0,256\n")
    res = LLMInferenceBench().parse([a, b], IntakeOptions(), inferkb.open())
    assert len(bench(res)) == 1 and res.stats["skipped"] == {"repeats-earlier-row": 1}
    assert any(f.code == "KB1131" for f in res.findings)


def test_inferencex_file_name_shape():
    assert parse_name("minimax_m25_vllm_tep8_isl1024_osl128_conc16") == {
        "model": "minimax_m25",
        "layout": "tep",
        "n": 8,
        "isl": 1024,
        "osl": 128,
        "conc": 16,
    }
    assert layout_conditions("dep", 8) == {"data_parallel": 8}
    assert parse_name("something_else") == {}


def slo_doc(**over):
    doc = {
        "date": "20260216-130554",
        "model_id": "org/m",
        "num_prompts": 10,
        "request_rate": "inf",
        "max_concurrency": 4,
        "completed": 10,
        "total_input_tokens": 10240,
        "total_output_tokens": 1280,
        "output_throughput": 100.0,
        "median_ttft": 0.5,
        "p99_ttft": 1.5,
    }
    doc.update(over)
    return doc


def test_inferencex_disagreement_between_name_and_totals_is_reported_and_the_file_wins(tmp_path):
    path = tmp_path / "m_vllm_tp8_isl2048_osl128_conc4.json"
    path.write_text(json.dumps(slo_doc()))  # 10240 / 10 = 1024, not 2048
    res = InferenceXDecodeSLO().parse([path], IntakeOptions(), inferkb.open())
    (rec,) = bench(res)
    assert rec["conditions"]["input_tokens"] == 1024
    assert any(f.code == "KB1101" and "isl 2048" in f.message for f in res.findings)
    assert rec["metrics"]["ttft_ms"]["stats"] == {"p50": 500.0, "p99": 1500.0, "n": 10}


def test_inferencex_run_with_no_completed_request_is_not_a_measurement(tmp_path):
    path = tmp_path / "m_vllm_tp8_isl1024_osl128_conc4.json"
    path.write_text(json.dumps(slo_doc(completed=0)))
    res = InferenceXDecodeSLO().parse([path], IntakeOptions(), inferkb.open())
    assert bench(res) == [] and any(f.code == "KB1102" for f in res.findings)


def test_sweep_line_without_bench_raw_is_skipped_with_a_finding(tmp_path):
    inner = {
        "build_commit": "abc1234",
        "build_number": 1,
        "n_prompt": 0,
        "n_gen": 8,
        "avg_ts": 10.0,
        "stddev_ts": 0.1,
        "gpu_info": "NVIDIA GeForce RTX 3090",
    }
    lines = [
        {
            "mode": "tg",
            "value": 8,
            "tokens_per_sec": 10.0,
            "bench_raw": inner,
            "avg_power_w": 200.0,
            "build": "llama.cpp-cuda",
            "fa": "",
            "b": "",
            "hipblaslt": "",
        },
        {
            "mode": "tg",
            "value": 16,
            "tokens_per_sec": None,
            "bench_raw": None,
            "build": "llama.cpp-cuda",
            "fa": "-fa 1",
            "b": "",
            "hipblaslt": "",
        },
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = LlamaBench().parse([path], IntakeOptions(), inferkb.open())
    (rec,) = bench(res)
    assert rec["value"] == 10.0 and rec["power_w"] == 200.0 and rec["accelerator_ids"] == ["nvidia-rtx-3090"]
    assert rec["arms"][0]["config"]["sweep_build"] == "llama.cpp-cuda"
    assert res.stats["skipped"] == {"test-not-finished": 1} and any(f.code == "KB1102" for f in res.findings)


def test_a_sqlite_file_of_another_application_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="missing table"):
        LocalScore().parse([path], IntakeOptions(), inferkb.open())
