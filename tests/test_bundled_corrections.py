"""Issue 7 corrections in the bundled KB: each changed value carries a correction or backfill entry with its basis."""

from __future__ import annotations

import inferkb


def get(rid: str) -> dict:
    return inferkb.open().get(rid).data


def entries(data: dict, field: str) -> list[dict]:
    return [p for p in data.get("provenance", []) if p["field"] == field]


def test_seed_case_latency_is_of_one_whole_batch():
    data = get("vllm-mtp-regression-qwen3-next-80b-a3b")
    assert data["value_scope"] == "aggregate"
    (fix,) = entries(data, "value_scope")
    assert fix["action"] == "correction" and "single batch" in fix["evidence"]["quote"]


def test_seed_case_harness_defaults_are_values_with_their_basis_and_quote():
    data = get("vllm-mtp-regression-qwen3-next-80b-a3b")
    c = data["conditions"]
    assert (c["batch_size"], c["input_tokens"], c["output_tokens"], c["warmup"]) == (8, 32, 128, 10)
    for field, flag in (
        ("batch_size", "--batch-size"),
        ("input_tokens", "--input-len"),
        ("output_tokens", "--output-len"),
        ("warmup", "--num-iters-warmup"),
    ):
        (entry,) = entries(data, f"conditions.{field}")
        assert entry["basis"].startswith("harness default at that commit")
        assert flag in entry["evidence"]["quote"] and entry["numbers_changed"] is False
        assert field not in data["condition_gaps"]


def test_seed_case_drops_what_the_source_does_not_say():
    data = get("vllm-mtp-regression-qwen3-next-80b-a3b")
    assert data["reproducible"] is None and "nvswitch-nvlink4" not in data["interconnect_ids"]
    assert entries(data, "reproducible")[0]["action"] == "correction"
    assert entries(data, "interconnect_ids")[-1]["action"] == "correction"


def test_b300_memory_is_the_parts_288_gb_and_270_stays_an_alias():
    data = get("nvidia-b300")
    assert data["vram_gb"] == 288 and "NVIDIA B300-SXM-270GB" in data["aliases"]
    (fix,) = entries(data, "vram_gb")
    assert fix["action"] == "correction" and fix["numbers_changed"] is True and "288GB" in fix["evidence"]["quote"]


def test_rtx_5070_die_and_fp4_pair():
    data = get("nvidia-rtx-5070")
    assert "GB205" in data["architecture"]
    fp4 = {row["dense"]: row["tflops"] for row in data["flops"] if row["precision"] == "fp4"}
    fp32 = [row["tflops"] for row in data["flops"] if row["precision"] == "fp32"]
    assert fp4 == {True: 494, False: 988} and fp32 == [30.87]


def test_m5_ultra_has_no_chip_tdp_and_no_unsourced_memory_figures():
    data = get("apple-m5-ultra")
    assert data["tdp_w"] is None and data["vram_gb"] is None and data["memory_bandwidth_gbps"] is None
    assert {p["field"] for p in data["provenance"] if p["action"] == "correction"} >= {"tdp_w", "vram_gb", "memory_bandwidth_gbps"}


def test_no_accelerator_is_verified_on_a_source_that_was_not_re_read():
    kb = inferkb.open()
    for rec in kb.by_type("accelerator"):
        if rec.data["status"] != "verified":
            continue
        notes = [kb.get(s).data.get("notes") or "" for s in rec.data["sources"]]
        assert not any("not re-read" in n for n in notes), rec.id
