"""vllm-serve console blocks (issue #8): the input-throughput line, no invented concurrency reason, model/hardware gaps."""

from __future__ import annotations

from pathlib import Path

import pytest

import inferkb
from test_intake_vllm import bench, corpus, parse

DATA = Path(__file__).resolve().parent / "data" / "intake"


@pytest.fixture(scope="module")
def kb():
    """The bundled KB, read only (parsing never writes)."""
    return inferkb.open()


def test_console_input_token_throughput_line_is_kept_as_input_tok_s(kb):
    (record,) = bench(parse("vllm-serve", [DATA / "serve_console_input_throughput.log"], kb))
    assert record["metrics"]["input_tok_s"] == {
        "value": 2670.58,
        "unit": "tok/s",
        "value_scope": "aggregate",
        "basis": "`input_throughput` of the run",
    }
    assert record["metrics"]["output_tok_s"]["value"] == 333.82 and record["metrics"]["total_tok_s"]["value"] == 3004.40


def test_input_tok_s_is_a_registered_metric(kb):
    assert kb.metrics["input_tok_s"]["unit"] == "tok/s" and kb.metrics["input_tok_s"]["direction"] == "higher"


def test_console_without_max_concurrency_gets_no_invented_no_cap_reason(kb):
    # The Namespace of this v0.6-era log has no max_concurrency key at all: the log says nothing about a cap.
    (record,) = bench(parse("vllm-serve", [corpus("serve_console_benchmark_serving_qwen25-7b_dec2024.log")], kb))
    reason = record["condition_gaps"]["concurrency"]["reason"]
    assert "no concurrency cap" not in reason and "not stated" in reason


def test_console_block_without_model_or_hardware_gets_gaps_and_one_warning(kb):
    result = parse("vllm-serve", [DATA / "serve_console_input_throughput.log"], kb)
    (record,) = bench(result)
    assert record["model"] is None and record["accelerator_ids"] == [] and record["hardware_raw"] is None
    assert {"model", "accelerator_ids", "accelerator_count"} <= set(record["condition_gaps"])
    assert all(record["condition_gaps"][k]["checked"] for k in ("model", "accelerator_ids"))
    warnings = [f for f in result.findings if f.code == "KB1106"]
    assert len(warnings) == 1 and warnings[0].severity == "warning"
    assert "no model and no hardware" in warnings[0].message


def test_console_block_with_options_has_no_identity_gap_or_warning(kb):
    result = parse(
        "vllm-serve",
        [DATA / "serve_console_input_throughput.log"],
        kb,
        model="Qwen/Qwen2.5-7B-Instruct",
        hardware_raw="NVIDIA H100 80GB HBM3",
        count=1,
    )
    (record,) = bench(result)
    assert not {"model", "accelerator_ids", "accelerator_count"} & set(record["condition_gaps"])
    assert not [f for f in result.findings if f.code == "KB1106"]
    assert record["accelerator_ids"] == ["nvidia-h100-sxm"]
