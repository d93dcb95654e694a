"""format_id from what a harness file states plainly, through the one resolver (issue 8, item 6).

The corpus trtllm-bench log states "Quantization: FP8" (E4M3? E5M2? block-scaled?); the SGLang server_info says
dtype "auto". Neither names one format, so both stay null with the reason; small edits of the same files show the
plain cases resolve, with provenance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inferkb
from conftest import harness_file
from inferkb.intake import IntakeOptions, load_all
from inferkb.intake.weight_format import weight_format
from inferkb.store import Record
from inferkb.validate import validate_record

TRT = "trtllm-bench/throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt"
SG_AGG = "sglang/bench_serving_qwen25-3b_agg_c32_server-info_dec2025.jsonl"


corpus = harness_file


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def record(fmt: str, path: Path, kb) -> dict:
    (rec,) = [r for r in load_all()[fmt].parse([path], IntakeOptions(source="repo-vllm"), kb).records if r["type"] == "benchmark"]
    return rec


def assert_valid(kb, data):
    rec = Record(key=f"benchmarks/{data['id']}", id=data["id"], type="benchmark", dir="benchmarks", path="x.json", data=data)
    assert [f.message for f in validate_record(kb, rec) if f.severity == "error"] == []


def edited_trt(tmp_path: Path, old: str, new: str) -> Path:
    text = corpus(TRT).read_text()
    assert old in text
    path = tmp_path / Path(TRT).name
    path.write_text(text.replace(old, new))
    return path


def test_trtllm_fp8_is_ambiguous_and_stays_null_with_the_candidates(kb):
    rec = record("trtllm-bench", corpus(TRT), kb)
    assert rec["format_id"] is None and "provenance" not in rec
    reason = rec["condition_gaps"]["format_id"]["reason"]
    # "Quantization:\t\tFP8"
    assert reason.startswith("ENGINE DETAILS Quantization is 'FP8'")
    assert "fp8-e4m3, fp8-e5m2, fp8-block-scaled alike and none is picked" in reason


def test_trtllm_plain_quantization_resolves_with_provenance(kb, tmp_path):
    rec = record("trtllm-bench", edited_trt(tmp_path, "Quantization:\t\tFP8", "Quantization:\t\tNVFP4"), kb)
    assert rec["format_id"] == "nvfp4" and "format_id" not in rec["condition_gaps"]
    (entry,) = rec["provenance"]
    assert (entry["field"], entry["action"], entry["evidence"]) == (
        "format_id",
        "import",
        {"field": "ENGINE DETAILS Quantization", "quote": "NVFP4"},
    )
    assert_valid(kb, rec)


def test_trtllm_without_quantization_the_dtype_is_the_weight_format_not_the_kv_cache_dtype(kb, tmp_path):
    # "Dtype:\t\t\tbfloat16" and "KV Cache Dtype:\t\tFP8" stay; only the quantization is switched off
    rec = record("trtllm-bench", edited_trt(tmp_path, "Quantization:\t\tFP8", "Quantization:\t\tNone"), kb)
    assert rec["format_id"] == "bf16" and rec["provenance"][0]["evidence"] == {"field": "ENGINE DETAILS Dtype", "quote": "bfloat16"}


def test_sglang_dtype_auto_is_not_a_format(kb):
    rec = record("sglang-serving", corpus(SG_AGG), kb)
    # server_info: "dtype": "auto", "quantization": null
    assert rec["format_id"] is None and "'auto' is the checkpoint's own dtype" in rec["condition_gaps"]["format_id"]["reason"]


@pytest.mark.parametrize(("server", "expected"), [({"dtype": "bfloat16"}, "bf16"), ({"quantization": "fp8"}, None)])
def test_sglang_server_info_quantization_and_dtype(kb, tmp_path, server, expected):
    doc = json.loads(corpus(SG_AGG).read_text().splitlines()[0])
    doc["server_info"].update(server)
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    rec = record("sglang-serving", path, kb)
    assert rec["format_id"] == expected
    if expected is None:
        assert "server_info.quantization is 'fp8'" in rec["condition_gaps"]["format_id"]["reason"]
    else:
        assert rec["provenance"][0]["evidence"] == {"field": "server_info.dtype", "quote": "bfloat16"}
        assert_valid(kb, rec)


def test_an_unknown_text_names_no_format_and_lists_no_candidates(kb):
    fmt, entry, gap = weight_format(kb, ("Quantization", "W3A7-mystery"), ["x"], "t", absent="-")
    assert (fmt, entry) == (None, None) and gap[
        "reason"
    ] == "Quantization is 'W3A7-mystery', which names no single quantization format of this KB"
