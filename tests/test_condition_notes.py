"""What show and the site say of a null run condition with no gap reason (inferkb.condition_notes), on real records."""

from __future__ import annotations

import copy

import pytest

import inferkb
from inferkb.condition_notes import absent_note


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def data(kb, rid):
    return kb.resolve(rid, "benchmark").data


MI250_LLAMACPP = "lib-throughput-amd-mi250-x1-llama-cpp-llama-2-7b-hf-in1024-out1024-bs1"
H100_VLLM = "lib-throughput-nvidia-h100-x1-vllm-llama-2-7b-hf-in1024-out1024-bs32"


def test_load_given_by_another_field(kb):
    d = data(kb, MI250_LLAMACPP)
    assert d["conditions"]["batch_size"] == 1 and d["conditions"]["concurrency"] is None
    note = absent_note(kb, d, "concurrency")
    assert note.kind == "load-given" and "batch_size=1" in note.text


def test_no_load_at_all_is_unexplained(kb):
    d = copy.deepcopy(data(kb, MI250_LLAMACPP))
    d["conditions"]["batch_size"] = None
    assert absent_note(kb, d, "concurrency").kind == "unexplained"
    assert absent_note(kb, d, "warmup").kind == "unexplained"  # keyed, whatever else the record says


def test_load_absent_with_its_gap_on_batch_size(kb):
    d = data(kb, "llama-bench-gpt-oss-120b-f16-amd-radeon-graphics-2025-08-06t03-00-39z-pp1")
    assert d["conditions"]["batch_size"] is None and d["condition_gaps"]["batch_size"]["reason"]
    note = absent_note(kb, d, "concurrency")
    assert note.kind == "load-gap" and "batch_size gap" in note.text
    d = copy.deepcopy(d)
    del d["condition_gaps"]["batch_size"]
    assert absent_note(kb, d, "concurrency").kind == "unexplained"


def test_one_mi250_module_is_two_runtime_devices_so_tp_is_not_ruled_out(kb):
    # accelerator_count 1, but ROCm lists an MI250 module as two GCDs (the accelerator's runtime_devices = 2).
    d = data(kb, MI250_LLAMACPP)
    assert kb.resolve("amd-instinct-mi250", "accelerator").data["runtime_devices"] == 2
    assert absent_note(kb, d, "tensor_parallel").kind == "optional"


def test_one_device_rules_parallel_sizes_out_even_with_alternates(kb):
    # The H100 row names no single part (alternates), but every candidate is one runtime device.
    d = data(kb, H100_VLLM)
    assert not d["accelerator_ids"] and d["accelerator_alternates"] and d["accelerator_count"] == 1
    for name in ("pipeline_parallel", "data_parallel", "expert_parallel"):
        assert absent_note(kb, d, name).kind == "not-applicable"
    d2 = copy.deepcopy(d)
    d2["accelerator_count"] = 2
    assert absent_note(kb, d2, "pipeline_parallel").kind == "optional"


def test_dense_model_rules_expert_parallel_out_but_not_a_moe(kb):
    d = copy.deepcopy(data(kb, MI250_LLAMACPP))
    assert absent_note(kb, d, "expert_parallel").kind == "not-applicable"  # llama-2-7b: dense
    d["model_id"] = "mixtral-8x7b"  # num_experts 8
    assert kb.resolve("mixtral-8x7b", "model").data["num_experts"]
    assert absent_note(kb, d, "expert_parallel").kind == "optional"
    d["model_id"] = "no-such-model"
    assert absent_note(kb, d, "expert_parallel").kind == "optional"  # unresolved: the cautious answer


def test_unresolved_accelerator_gets_the_cautious_answer(kb):
    d = copy.deepcopy(data(kb, H100_VLLM))
    d["accelerator_ids"], d["accelerator_alternates"] = ["no-such-gpu"], []
    assert absent_note(kb, d, "pipeline_parallel").kind == "optional"


def test_show_prints_the_notes(kb):
    from inferkb.record_view import summary_lines

    text = "\n".join(summary_lines(kb, kb.resolve(MI250_LLAMACPP, "benchmark")))
    assert "request_rate       — not needed: the load is given as batch_size=1" in text
    assert "expert_parallel    — n/a: dense model (no experts)" in text
    assert "NOT STATED" not in text
