"""The load-conditions audit as a whole: severities and figures on small KBs and the real corpus."""

from __future__ import annotations

import inferkb
from conftest import rec, write_kb

FULL = {
    "model": "Llama 3.1 8B",
    "accelerator_ids": ["gpu-a"],
    "accelerator_count": 1,
    "conditions": {"batch_size": 1, "input_tokens": 512, "output_tokens": 128, "engine_version": "0.6.3", "warmup": 10},
}


def run(tmp_path, **fields):
    write_kb(tmp_path, {"data/benchmarks/b.json": rec("benchmark", "b", **fields)})
    return inferkb.open(tmp_path).audit("load-conditions")


def test_record_with_all_seven_conditions_is_complete_and_quiet(tmp_path):
    report = run(tmp_path, **FULL)
    assert report.findings == []
    assert report.figures["load-conditions"]["complete"] == ["benchmarks/b"]


def test_undocumented_absent_condition_is_a_warning(tmp_path):
    fields = {**FULL, "conditions": {**FULL["conditions"], "warmup": None}}
    report = run(tmp_path, **fields)
    assert [(f.code, f.severity, f.field) for f in report.findings] == [("KB301", "warning", "conditions.warmup")]
    assert "recover" in report.findings[0].message.lower()


def test_absent_condition_documented_in_condition_gaps_is_info(tmp_path):
    fields = {
        **FULL,
        "conditions": {**FULL["conditions"], "warmup": None},
        "condition_gaps": {"warmup": {"reason": "the issue's command line does not pass --num-iters-warmup"}},
    }
    report = run(tmp_path, **fields)
    assert [(f.code, f.severity) for f in report.findings] == [("KB304", "info")]
    figs = report.figures["load-conditions"]
    assert figs["absent_by_condition"]["warmup"] == 1 and figs["absent_documented_by_condition"]["warmup"] == 1
    assert figs["complete"] == []


def test_corpus_mtp_record_is_never_present_on_what_its_text_says_is_not_given(research_kb):
    report = inferkb.open(research_kb).audit("load-conditions")
    mtp = {
        f.extra["condition"]
        for f in report.findings
        if f.record == "benchmarks/ev-vllm-mtp-regression-qwen3-next-80b-a3b" and f.code in ("KB301", "KB302", "KB304")
    }
    # "No prompt length, output length or concurrency level is given in the source"
    assert {"input_length", "output_length", "batch_or_concurrency"} <= mtp
