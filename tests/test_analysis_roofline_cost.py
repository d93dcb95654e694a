"""roofline and cost: worked examples derived by hand, and the bad inputs they refuse."""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.common import AnalysisError
from inferkb.analysis.cost import Price, cost, price_from_supply
from inferkb.analysis.roofline import roofline


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def test_70b_fp8_on_eight_3_35_tb_s_devices_decodes_at_most_383_tok_s(kb):
    # Issue's worked example: 8 x 3350 GB/s / (70e9 params x 1 B) = 382.86 tok/s per request before KV reads.
    # Prefill: 8 x 1979 TFLOPS / (2 x 70e9) = 113,085.7 tok/s.  Ridge: 1979e12 / 3350e9 = 590.75 FLOP/byte.
    # Decode turns compute-bound at batch 590.75 x 70e9 / (2 x 70e9) = 295.4.
    r = roofline(kb, "llama-2-70b", "nvidia-h100-sxm", count=8, fmt="fp8-e4m3")
    assert r.decode_per_request_tok_s == pytest.approx(382.857, abs=1e-3)
    assert r.prefill_tok_s == pytest.approx(113_085.71, abs=0.01)
    assert r.ridge_flop_per_byte == pytest.approx(590.746, abs=1e-3)
    assert r.compute_bound_batch == pytest.approx(295.373, abs=1e-3)


def test_kv_reads_lower_the_decode_ceiling(kb):
    # Llama-2-70B KV: 80 x 8 x 128 x 2 x 2 = 327,680 B/token; 4,096 tokens = 1,342,177,280 B.
    # Step = 70e9 + 1,342,177,280 B -> 8 x 3350e9 / 71,342,177,280 = 375.65 tok/s.
    r = roofline(kb, "llama-2-70b", "nvidia-h100-sxm", count=8, fmt="fp8-e4m3", context=4096)
    assert r.step_bytes == 71_342_177_280
    assert r.decode_per_request_tok_s == pytest.approx(375.654, abs=1e-3)


def test_measured_runs_are_placed_with_their_own_device_count(tmp_path):
    # 10,000 output tok/s on 8 devices: MFU = 10,000 x 2 x 70e9 / (8 x 1979e12) = 0.0884.
    kb = inferkb.open(make_kb(tmp_path, [bench("run", 10_000.0)]))
    r = roofline(kb, "m70", "acc", count=1, fmt="fp8-e4m3")
    (placed,) = r.measured
    assert placed.devices == 8 and placed.kind == "MFU"
    assert placed.utilisation == pytest.approx(0.088428, abs=1e-6)


def test_missing_bandwidth_names_the_field(kb):
    # The RTX PRO 4500 Server record still has no bandwidth (the 6000 Server's was filled in truth12).
    with pytest.raises(AnalysisError, match=r"nvidia-rtx-pro-4500-blackwell-server.json: field 'memory_bandwidth_gbps' is missing"):
        roofline(kb, "llama-3-1-8b", "nvidia-rtx-pro-4500-blackwell-server", fmt="fp8-e4m3")


def test_missing_flops_gives_the_bandwidth_bound_and_says_why(kb):
    # H200 NVL: bandwidth recorded, no FLOPs rows (the B300 got an fp4 row in truth12).
    r = roofline(kb, "llama-2-70b", "nvidia-h200-nvl", count=8, fmt="fp8-e4m3")
    assert r.prefill_tok_s is None and r.ridge_flop_per_byte is None
    assert any("field 'flops'" in a for a in r.assumptions)


AMD = "mlperf-v6-1-closed-amd-8xmi355x-2xepyc-9575f-llama2-70b-99-9-offline"


def test_cost_per_device_price(kb):
    # 106,517 tok/s on 8 MI355X at $2.50 per device-hour: $20/h over 106,517 x 3600 = 383,461,200 tokens/h
    # -> 20 / 383,461,200 x 1e6 = $0.052157 per 1M output tokens.
    r = cost(kb, AMD, Price(2.5, "per-device", 1, None, "test"))
    assert r.system_usd_per_hour == 20.0
    assert r.usd_per_million_output == pytest.approx(0.052157, abs=1e-6)
    assert r.usd_per_million_total is None and "not both stated" in r.total_basis


def test_cost_with_utilisation_is_higher(kb):
    full = cost(kb, AMD, Price(2.5, "per-device", 1, None, "test"))
    half = cost(kb, AMD, Price(2.5, "per-device", 1, None, "test"), utilisation=0.5)
    assert half.usd_per_million_output == pytest.approx(2 * full.usd_per_million_output)


def test_cost_per_module_supply_price_gb200(kb):
    # spheron GB200 Superchip: $9.08 per module of 2 GPUs.  HPE GB200 run: 245,352 tok/s on 8 nodes x 4 = 32 GPUs
    # -> 16 modules x 9.08 = $145.28/h; 245,352 x 3600 = 883,267,200 tok/h -> $0.164480 per 1M output tokens.
    price = price_from_supply(kb, "spheron-gb200-superchip-on-demand-2026-03")
    r = cost(kb, "mlperf-v6-1-open-hpe-hpe-gb200-nvl72-gb200-186gb-aarch64x32-trt-deepseek-r1-offline", price)
    assert r.units_rented == 16 and r.system_usd_per_hour == pytest.approx(145.28)
    assert r.usd_per_million_output == pytest.approx(0.164480, abs=1e-6)


def test_cost_says_when_the_supply_price_has_no_date(kb):
    """supply/aws-p5-48xlarge-on-demand states $98.32/h with price_date null; cloud prices move, so the answer must say so."""
    b = "mlperf-v5-1-closed-cisco-hgx-h100-h100-sxm-80gbx32-trt-llama2-70b-99-9-offline"
    undated = cost(kb, b, price_from_supply(kb, "aws-p5-48xlarge-on-demand"))
    assert any("price date not stated" in a for a in undated.assumptions)
    dated = cost(kb, b, price_from_supply(kb, "lambda-h100-sxm-on-demand-2026-05"))
    assert any("price dated 2026-05-07" in a for a in dated.assumptions)
    assert not any("price date not stated" in a for a in dated.assumptions)


def test_cost_total_tokens_from_fixed_lengths(tmp_path):
    # 1,000 output tok/s at ISL 3,000 / OSL 1,000: total = 4,000 tok/s.  $8/h over 3.6e6 output tokens = $2.2222 per 1M output,
    # $0.5556 per 1M total.
    rec = bench("r", 1000.0, accelerator_count=1, conditions={"input_tokens": 3000, "output_tokens": 1000})
    kb = inferkb.open(make_kb(tmp_path, [rec]))
    r = cost(kb, "r", Price(8.0, "per-device", 1, None, "test"))
    assert r.usd_per_million_output == pytest.approx(2.22222, abs=1e-5)
    assert r.usd_per_million_total == pytest.approx(0.55556, abs=1e-5)


def test_price_without_basis_is_refused():
    with pytest.raises(AnalysisError, match="without a basis"):
        Price(2.0, "per-hour", 1, None, "test")


def test_supply_without_price_scope_is_refused(tmp_path):
    root = make_kb(tmp_path, [])
    (root / "data" / "supply").mkdir()
    (root / "data" / "supply" / "s.json").write_text(
        '{"id": "s", "type": "supply", "name": "s", "kind": "cloud", "accelerator_ids": ["acc"], "price_usd": 2.0, "price_unit": "USD/hour",'
        ' "status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}'
    )
    kb = inferkb.open(root)
    with pytest.raises(AnalysisError, match=r"data/supply/s.json: field 'price_scope' is None; .* a price without a basis is refused"):
        price_from_supply(kb, "s")


def test_per_user_rate_has_no_cost_per_token(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("u", 50.0, metric="output_tok_s", value_scope="per-user")]))
    with pytest.raises(AnalysisError, match="per-user"):
        cost(kb, "u", Price(2.0, "per-device", 1, None, "test"))


def test_supply_price_for_other_hardware_is_refused(kb):
    price = price_from_supply(kb, "lambda-h100-sxm-on-demand-2026-05")
    with pytest.raises(AnalysisError, match="is for nvidia-h100-sxm"):
        cost(kb, AMD, price)


def test_mla_latent_is_read_on_every_tensor_parallel_rank(kb):
    # DeepSeek-R1 on 8 B200 (8000 GB/s), block-scaled FP8 weights: 37e9 active params x (8 + 32/16384 bits, one FP32
    # scale per 128x128 block) / 8 = 37,009,033,203.125 B.  KV at 4,096 tokens: 70,272 x 4,096 = 287,834,112 B per
    # sequence, replicated on each of 8 ranks -> step = 37,009,033,203.125 + 8 x 287,834,112 = 39,311,706,099.125 B;
    # per request <= 8 x 8000e9 / 39,311,706,099.125 = 1628.01 tok/s.
    r = roofline(kb, "deepseek-r1", "nvidia-b200", count=8, fmt="fp8-block-scaled", context=4096)
    assert r.step_bytes == pytest.approx(39_311_706_099.125)
    assert r.decode_per_request_tok_s == pytest.approx(1628.01, abs=0.01)
    assert any("mixture of experts" in a for a in r.assumptions)


def test_roofline_says_when_the_weights_do_not_fit():
    # Bundled records: Llama-3.3-70B has 70.55e9 parameters; H100 SXM 80 GB, fit's usable share 0.9 -> 72 GB.
    # bf16 on one device needs 70.55e9 x 2 B = 141.1 GB > 72 GB; fp8 over eight needs 70.55e9 / 8 = 8.8 GB.
    bundled = inferkb.open()
    one = roofline(bundled, "llama-3-3-70b", "nvidia-h100-sxm", count=1, fmt="bf16")
    assert one.fits_in_memory is False
    assert "141.1 GB" in one.memory_note and "72.0 GB usable" in one.memory_note
    eight = roofline(bundled, "llama-3-3-70b", "nvidia-h100-sxm", count=8, fmt="fp8-e4m3")
    assert eight.fits_in_memory is True and "8.8 GB per device" in eight.memory_note
    # Apple M4 states no vram_gb (unified memory): the fit is not guessed, and the note names the field.
    m4 = roofline(bundled, "llama-2-70b", "apple-m4", fmt="bf16")
    assert m4.fits_in_memory is None and "vram_gb" in m4.memory_note


def test_roofline_cli_prints_the_memory_warning_first():
    import subprocess
    import sys

    args = ["roofline", "--model", "llama-3-3-70b", "--accelerator", "nvidia-h100-sxm", "--weights", "bf16"]
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith(
        "warning: does not fit in memory at context 1 (batch 1) since --context is 0: 141.1 GB"
    ), proc.stdout


def test_roofline_memory_line_names_its_context_and_the_model_maximum():
    # gpt-oss-120b (116.8e9 params, MXFP4 4.25 bits -> 62.05 GB) on one H100 (72 GB usable), batch 4.
    # Context 1: KV 4 x 36 layers x 2,048 B = 294,912 B -> 62.05 GB, fits.  At the model's maximum 131,072 tokens the
    # batch needs 62.05 + 4 x 4.8366 = 81.40 GB: does not fit.  At --context 4,096: 4 x 36 x 2,048 x 4,096 B more = 62.65 GB.
    bundled = inferkb.open()
    at0 = roofline(bundled, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", batch=4)
    assert at0.fits_in_memory is True
    assert "at context 1 (batch 4) since --context is 0: 62.1 GB" in at0.memory_note
    assert "at the model's maximum context 131,072: does not fit, 81.4 GB per device" in at0.memory_note
    given = roofline(bundled, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", batch=4, context=4096)
    assert "at context 4,096 (batch 4): 62.7 GB" in given.memory_note and "maximum" not in given.memory_note


def test_mfu_is_against_the_peak_of_the_records_own_weight_format(kb):
    # MLPerf v4.1 B200 Llama-2-70B Offline, FP16 weights: 11,264.4 tok/s on 1 device, 70e9 active params;
    # the B200 record's dense bf16/fp16 peak is 2,250 TFLOPS -> 11,264.4 x 2 x 70e9 / 2,250e12 = 0.70089
    # (the site's roofline page shows 70.1%), not 0.175 against the 9,000 TFLOPS FP4 peak.
    rid = "mlperf-v4-1-closed-nvidia-b200-sxm-180gbx1-trt-llama2-70b-99-offline"
    r = roofline(kb, "llama-2-70b", "nvidia-b200", count=1, fmt="fp16", batch=65, context=1024)
    placed = next(m for m in r.measured if m.id == rid)
    assert placed.kind == "MFU" and placed.utilisation == pytest.approx(0.70089, abs=1e-5)
    assert "vs 2250 TFLOPS" in placed.basis and "peak at the record's weight format, format fp16" in placed.basis


def test_mfu_falls_back_to_the_fastest_datapath_only_without_a_stated_format(tmp_path):
    # 1,000 tok/s on 8 devices of a 70e9-parameter model: 1,000 x 140e9 = 1.4e14 FLOP/s.  Against 8 x 1,979 TFLOPS (fp8,
    # the stated format's width) MFU = 0.0088429; with no format stated, against 8 x 3,958 TFLOPS (fp4) = 0.0044214.
    acc = {
        "id": "acc",
        "type": "accelerator",
        "name": "Acc",
        "vram_gb": 80,
        "memory_bandwidth_gbps": 3350,
        "flops": [
            {"precision": "fp8", "tflops": 1979.0, "dense": True, "basis": "derived"},
            {"precision": "fp4", "tflops": 3958.0, "dense": True, "basis": "derived"},
        ],
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": [],
    }
    root = make_kb(tmp_path, [acc, bench("stated", 1000.0), bench("unstated", 1000.0, format_id=None)])
    r = roofline(inferkb.open(root), "m70", "acc", count=8, fmt="fp8-e4m3")
    by_id = {m.id: m for m in r.measured}
    assert by_id["stated"].utilisation == pytest.approx(0.0088429, abs=1e-7)
    assert by_id["unstated"].utilisation == pytest.approx(0.0044214, abs=1e-7)
    assert "fastest datapath: the record states no weight format" in by_id["unstated"].basis


def test_roofline_gives_fits_input_warnings_in_text_and_json():
    # gpt-oss-120b's record: 64 attention heads, 8 KV heads, max_position_embeddings 131,072 (as in test_analysis_fit).
    import json
    import subprocess
    import sys

    from inferkb.analysis.common import lookup
    from inferkb.analysis.fit import input_warnings

    bundled = inferkb.open()
    r = roofline(bundled, "gpt-oss-120b", "nvidia-h100-sxm", count=3, fmt="mxfp4", context=10_000_000)
    assert r.warnings == input_warnings(lookup(bundled, "gpt-oss-120b", "model"), 3, 10_000_000)
    assert any("TP 3 does not divide gpt-oss-120b's 64 attention heads" in w for w in r.warnings)
    assert any("exceeds gpt-oss-120b's maximum of 131,072 tokens" in w for w in r.warnings)
    assert roofline(bundled, "gpt-oss-120b", "nvidia-h100-sxm", count=8, fmt="mxfp4").warnings == []
    args = ["roofline", "--model", "gpt-oss-120b", "--accelerator", "nvidia-h100-sxm", "--count", "3", "--weights", "mxfp4"]
    text = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[1].startswith("warning: TP 3 does not divide"), text.stdout
    js = subprocess.run([sys.executable, "-m", "inferkb", *args, "--format", "json"], capture_output=True, text=True, timeout=120)
    assert js.returncode == 0, js.stderr
    assert any("TP 3 does not divide" in w for w in json.loads(js.stdout)["warnings"])
