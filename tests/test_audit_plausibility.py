"""physical-plausibility audit (KB501-KB505). Expected MBU/MFU values are worked out by hand in comments."""

from __future__ import annotations

import pytest

import inferkb
from conftest import RESEARCH, rec, write_kb

AUDIT = "physical-plausibility"

# 1000 GB/s, 100 dense BF16 TFLOPS, 200 dense FP8 TFLOPS.
ACCEL = rec(
    "accelerator",
    "test-gpu",
    memory_bandwidth_gbps=1000,
    aliases=["Test GPU 1000"],
    flops=[{"precision": "bf16", "tflops": 100, "basis": "derived"}, {"precision": "fp8", "tflops": 200, "basis": "derived"}],
)
DENSE = rec("model", "dense-8b", architecture="dense", params_b=8, active_params_b=8, aliases=["org/Dense-8B-Instruct"])
KV_MODEL = rec("model", "kv-8b", architecture="dense", params_b=8, active_params_b=8, kv_cache_bytes_per_token=131072)
DSV3 = rec("model", "deepseek-v3", name="DeepSeek-V3", architecture="moe", params_b=671, active_params_b=37)
BF16 = rec("quantization", "bf16", scheme="bf16", bits="16", weight_bits=16)


def bench(rid: str, **fields) -> dict:
    base = {
        "engine_id": "vllm",
        "metric": "decode_tok_s",
        "value": 30.0,
        "unit": "tok/s",
        "value_scope": "per-request",
        "model_id": "dense-8b",
        "format_id": "bf16",
        "accelerator_ids": ["test-gpu"],
        "accelerator_count": 1,
    }
    base.update(fields)
    return rec("benchmark", rid, **base)


def run(tmp_path, *benches: dict):
    files = {
        f"data/{d}/{r['id']}.json": r
        for d, r in [("accelerators", ACCEL), ("models", DENSE), ("models", KV_MODEL), ("models", DSV3), ("quantization", BF16)]
    }
    files.update({f"data/benchmarks/{b['id']}.json": b for b in benches})
    report = inferkb.open(write_kb(tmp_path / "kb", files)).audit(AUDIT)
    return report.findings, report.figures[AUDIT]


def codes(found):
    return [(f.code, f.severity) for f in found]


def test_decode_rate_above_the_bandwidth_ceiling_is_impossible(tmp_path):
    # 70 tok/s x 8e9 x 2 B = 1.12e12 B/s > 1e12 B/s -> MBU 112%
    found, figs = run(tmp_path, bench("x", value=70.0))
    assert codes(found) == [("KB501", "error")]
    assert figs["per_record"]["x"]["mbu"] == pytest.approx(1.12)


def test_decode_rate_between_90_and_100_percent_mbu_is_suspicious(tmp_path):
    # 60 x 16e9 = 0.96e12 -> 96%
    found, _ = run(tmp_path, bench("x", value=60.0))
    assert codes(found) == [("KB502", "warning")]


def test_decode_rate_well_under_the_ceiling_passes_and_is_reported_as_a_figure(tmp_path):
    # 30 x 16e9 = 0.48e12 -> 48%
    found, figs = run(tmp_path, bench("x", value=30.0))
    assert found == []
    assert figs["per_record"]["x"]["mbu"] == pytest.approx(0.48)
    assert figs["mbu_bands"]["<=50%"] == 1


def test_speculative_decoding_turns_an_over_ceiling_rate_into_a_warning(tmp_path):
    found, _ = run(tmp_path, bench("x", value=70.0, notes="EAGLE speculative decoding enabled"))
    assert codes(found) == [("KB501", "warning")]


def test_itl_is_converted_to_a_rate_before_the_check(tmp_path):
    # itl 10 ms -> 100 tok/s -> 1.6e12 B/s -> 160%
    found, figs = run(tmp_path, bench("x", metric="itl_ms", value=10.0, unit="ms inter-token latency"))
    assert codes(found) == [("KB501", "error")]
    assert figs["per_record"]["x"]["mbu"] == pytest.approx(1.6)


def test_kv_cache_is_counted_when_context_and_kv_bytes_are_known(tmp_path):
    # 8e9 x 2 + 131072 B x 4096 tokens = 16e9 + 536,870,912 B; x 60 tok/s / 1e12 = 0.99221...
    found, figs = run(tmp_path, bench("x", value=60.0, model_id="kv-8b", conditions={"input_tokens": 4096}))
    assert figs["per_record"]["x"]["mbu"] == pytest.approx(60 * (16e9 + 131072 * 4096) / 1e12, abs=1e-4)
    assert codes(found) == [("KB502", "warning")]


def test_throughput_above_peak_flops_is_impossible(tmp_path):
    # 10,000 tok/s x 2 x 8e9 = 1.6e14 FLOP/s vs 1 x 100 TFLOPS bf16 -> MFU 160%
    found, figs = run(tmp_path, bench("x", metric="tps_aggregate", value=10000.0, value_scope="aggregate"))
    assert codes(found) == [("KB503", "error")]
    assert figs["per_record"]["x"]["mfu"] == pytest.approx(1.6)


def test_throughput_under_peak_flops_passes(tmp_path):
    # 5,000 x 1.6e10 = 8e13 -> 80%
    found, figs = run(tmp_path, bench("x", metric="tps_aggregate", value=5000.0, value_scope="aggregate"))
    assert found == [] and figs["per_record"]["x"]["mfu"] == pytest.approx(0.8)


# The harness's file size says 8 bits per weight (KB503 checks against the 200 TFLOPS FP8 peak); the record
# states BF16, whose 100 TFLOPS peak is what `inferkb roofline` and the site divide by.
EIGHT_BIT_FILE = {"model_size": 8e9, "model_n_params": 8e9}


def test_mfu_above_the_stated_format_peak_is_a_warning_naming_peak_and_causes(tmp_path):
    # 10,000 tok/s x 2 x 8e9 = 1.6e14 FLOP/s: 80% of 200 FP8 TFLOPS (no KB503), 160% of 100 BF16 TFLOPS
    found, figs = run(tmp_path, bench("x", metric="tps_aggregate", value=10000.0, value_scope="aggregate", submission=EIGHT_BIT_FILE))
    assert figs["per_record"]["x"]["mfu"] == pytest.approx(0.8)
    assert codes(found) == [("KB506", "warning")]
    message = found[0].message
    assert message.startswith("x: tps_aggregate 10000 implies MFU 160% against 1 x 100 dense bf16 TFLOPS (test-gpu;")
    assert "format bf16" in message
    assert "wrong format_id" in message and "wrong device count" in message and "per-system value" in message
    assert found[0].extra["mfu_stated_format"] == pytest.approx(1.6)


def test_mfu_at_95_percent_of_the_stated_format_peak_is_not_flagged(tmp_path):
    # 5,937.5 x 1.6e10 = 9.5e13 -> 95% of 100 BF16 TFLOPS
    found, _ = run(tmp_path, bench("x", metric="tps_aggregate", value=5937.5, value_scope="aggregate", submission=EIGHT_BIT_FILE))
    assert found == []


def test_a_rate_already_impossible_at_its_storage_format_is_kb503_not_also_kb506(tmp_path):
    found, _ = run(tmp_path, bench("x", metric="tps_aggregate", value=30000.0, value_scope="aggregate", submission=EIGHT_BIT_FILE))
    assert codes(found) == [("KB503", "error")]


def test_no_bundled_record_is_above_the_stated_format_peak():
    # Measured on the bundled KB: 0 records (highest with a known device count: 70.09%, the B200 FP16 Llama-2-70B offline run).
    found = inferkb.open().audit(AUDIT).findings
    assert [f.record for f in found if f.code == "KB506"] == []


def test_size_from_a_dense_model_name_is_used_and_said(tmp_path):
    # Llama-2-70B: 70e9 x 2 B = 1.4e11 B/token; 8 tok/s -> 1.12e12 B/s -> 112%
    found, figs = run(tmp_path, bench("x", value=8.0, model_id=None, model="meta-llama/Llama-2-70B"))
    assert codes(found) == [("KB501", "error")]
    assert "model NAME" in found[0].message
    assert figs["per_record"]["x"]["size_basis"] == "model name"


@pytest.mark.parametrize("name", ["Mixtral-8x7B", "Qwen3-30B-A3B", "gpt-oss-120b", "Some-MoE-20B"])
def test_size_is_never_read_from_a_moe_looking_name(tmp_path, name):
    found, _ = run(tmp_path, bench("x", value=1000.0, model_id=None, model=name))
    assert codes(found) == [("KB504", "info")]
    assert "mixture-of-experts" in found[0].message


def test_model_text_matching_an_alias_resolves_to_the_model_record(tmp_path):
    _, figs = run(tmp_path, bench("x", model_id=None, model="org/Dense-8B-Instruct"))
    assert figs["per_record"]["x"]["size_basis"] == "model record"


def test_a_later_version_does_not_match_an_earlier_model_record(tmp_path):
    from inferkb.audit.plausibility import match_model

    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/models/deepseek-v3.json": DSV3}))
    assert match_model(kb, "DeepSeek-V3.2 AWQ 4-bit")[0] == []
    assert [r.id for r in match_model(kb, "DeepSeek-V3 671B (Q4_K_M)")[0]] == ["deepseek-v3"]


def test_unknown_weight_format_skips_with_an_info_finding_naming_it(tmp_path):
    found, _ = run(tmp_path, bench("x", format_id=None))
    assert codes(found) == [("KB504", "info")]
    assert "weight format unknown" in found[0].message


def test_over_one_device_with_unstated_count_asks_for_the_count(tmp_path):
    found, _ = run(tmp_path, bench("x", value=70.0, accelerator_count=None))
    assert codes(found) == [("KB505", "warning")]


def _mixed(value: float) -> dict:
    # MLPerf-style row whose own fields disagree on the count: '(x3)' in the name, 2 nodes x 2 per node = 4
    return bench(
        "x",
        metric="tps_aggregate",
        value=value,
        value_scope="aggregate",
        accelerator_count=None,
        hardware_raw="Test GPU 1000 (x3)",
        submission={"number_of_nodes": 2, "accelerators_per_node": 2},
    )


def test_candidate_counts_bound_a_rate_whose_count_is_contested(tmp_path):
    # 20,000 tok/s x 2 x 8e9 = 3.2e14 FLOP/s = 320% of one 100-TFLOPS device; / 3 = 107%, / 4 = 80%: not settled -> KB505
    found, figs = run(tmp_path, _mixed(20000.0))
    assert codes(found) == [("KB505", "warning")] and "at 3 devices but 80% at 4" in found[0].message
    assert figs["per_record"]["x"]["candidate_counts"] == [3, 4]
    # 9,000 tok/s -> 144% of one device; 48% at 3, 36% at 4: plausible at either count, no finding
    found, figs = run(tmp_path, _mixed(9000.0))
    assert found == [] and figs["per_record"]["x"]["mfu"] == pytest.approx(0.48)
    # 50,000 tok/s -> 800% of one; 200% even at 4 devices: impossible at every candidate
    found, _ = run(tmp_path, _mixed(50000.0))
    assert codes(found) == [("KB503", "error")]


def test_count_from_text_names_the_accelerator_not_the_host_cpus(tmp_path):
    from inferkb.audit.plausibility import accelerator_tokens, device_count

    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/accelerators/test-gpu.json": ACCEL}))
    tokens = accelerator_tokens(kb.get("test-gpu"))
    data = {"name": "run", "methodology": "4x Test GPU 1000 (TP=4), 2x Intel Xeon host CPUs"}
    assert device_count(data, None, tokens)[0] == 4


def test_audit_runs_on_the_bundled_kb():
    report = inferkb.open().audit(AUDIT)
    assert {"rate_records", "mbu_bands", "mfu_bands", "per_record"} <= set(report.figures[AUDIT])


# ---- the real corpus ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus():
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    report = inferkb.open(RESEARCH).audit(AUDIT)
    return report.findings, report.figures[AUDIT]


def _by_id(found, code):
    return {f.record.split("/", 1)[1]: f for f in found if f.code == code}


def test_corpus_70b_q4_at_45_tok_s_on_one_rtx_5090_exceeds_its_bandwidth(corpus):
    # Llama 3.3 70B record: 70.55e9 params; Q4_K_M record: 4.8944 bits -> 43.16 GB/token; x 45 = 1942 GB/s > 1792 GB/s.
    found, figs = corpus
    hit = _by_id(found, "KB505")["local-rtx-5090-70b-q4-decode"]
    assert hit.severity == "warning"
    assert figs["per_record"]["local-rtx-5090-70b-q4-decode"]["mbu"] == pytest.approx(45 * 70.55e9 * 4.8944 / 8 / 1792e9, abs=1e-3)


def test_corpus_70b_q8_at_55_tok_s_on_one_rtx_pro_6000_is_far_over(corpus):
    # 70.55e9 x 8.5008/8 B = 74.97 GB/token x 55 = 4123 GB/s vs 1792 GB/s -> 230%
    found, figs = corpus
    assert "local-rtx-pro-6000-70b-q8-decode" in _by_id(found, "KB505")
    assert figs["per_record"]["local-rtx-pro-6000-70b-q8-decode"]["mbu"] == pytest.approx(4123e9 / 1792e9, abs=2e-3)


def test_corpus_deepseek_v3_uses_active_not_total_parameters(corpus):
    # deepseek-v3 record: 37B active; Q4_K_M 4.8944 bits; 36.53 tok/s over 8 x MI300X (5300 GB/s)
    _, figs = corpus
    expected = 36.53 * 37e9 * 4.8944 / 8 / (8 * 5300e9)
    assert figs["per_record"]["llama-cpp-mi300x-deepseek-v3-671b-q4-decode-tok-s"]["mbu"] == pytest.approx(expected, abs=1e-3)


def test_corpus_moe_named_model_without_record_is_skipped_not_sized(corpus):
    found, figs = corpus
    hit = _by_id(found, "KB504")["ryzen-ai-max-8060s-qwen35-35b-a3b-decode-tok-s"]
    assert "mixture-of-experts" in hit.message
    assert "ryzen-ai-max-8060s-qwen35-35b-a3b-decode-tok-s" not in figs["per_record"]


def test_corpus_mlperf_rack_throughput_uses_all_72_gpus(corpus):
    # 894,002 tok/s x 2 x 70e9 over 72 x 10,000 dense fp4 TFLOPS (gb200 record) = 17.4%
    _, figs = corpus
    entry = figs["per_record"]["bench-mlperf-v6-1-coreweave-gb200-nvl72-llama2-70b-offline"]
    assert entry["devices"] == 72
    assert entry["mfu"] == pytest.approx(894002 * 140e9 / (72 * 1e16), abs=1e-3)


def test_corpus_per_gpu_power_cap_is_not_read_as_a_per_gpu_value(corpus):
    # name: "8xMI355X at a 1000W PER-GPU POWER CAP"; unit: "output tokens/s (aggregate ...)": the value spans 8 GPUs
    found, figs = corpus
    rid = "bench-mlperf-v6-0-dell-mangoboost-mi355x-powercap-1000w-offline"
    assert figs["per_record"][rid]["devices"] == 8
    assert rid not in _by_id(found, "KB503")
