"""fit: worked examples for GQA, MLA, hybrid linear attention and sliding-window attention, derived by hand from the bundled records."""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb.analysis.common import AnalysisError
from inferkb.analysis.fit import fit, kv_geometry


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def test_gqa_llama_3_3_70b_fp8_on_two_h100(kb):
    # Record: 80 layers, 8 KV heads, head_dim 128, 70.55e9 params; H100 SXM 80 GB.
    # KV/token = 80 x 8 x 128 x 2 (K,V) x 2 B = 327,680 B.  Sequence of 32,768 tokens = 10,737,418,240 B.
    # Weights/device = 70.55e9 x 1 B / 2 = 35.275e9.  Usable = 80e9 x 0.9 = 72e9 -> 36.725e9 free.
    # TP 2 splits the 8 KV heads: each rank holds 4/8.  Batch 8 needs 8 x 10,737,418,240 x 0.5 = 42,949,672,960 B: does not fit.
    # Largest batch = floor(36.725e9 / 5,368,709,120) = 6.  Largest context at batch 8 = floor(36.725e9 / (8 x 0.5) / 327,680) = 28,018.
    r = fit(kb, "llama-3-3-70b", "nvidia-h100-sxm", count=2, fmt="fp8-e4m3", context=32768, batch=8)
    assert r.kv_bytes_per_token == 327_680
    assert r.kv_bytes_per_sequence == 10_737_418_240
    assert r.weights_per_device == pytest.approx(35.275e9)
    assert r.kv_per_device == pytest.approx(42_949_672_960)
    assert r.fits is False
    assert r.max_batch_at_context == 6
    assert r.max_context_at_batch == 28_018


def test_mla_deepseek_r1_fp8_on_eight_b200(kb):
    # MLA: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B = 70,272 B/token (the GQA formula with
    # 128 KV heads x 128 would give 61 x 128 x 128 x 2 x 2 = 3,997,696 B, 56.9x more).
    # Weights/device = 671e9 x 1 B / 8 = 83.875e9; usable 180e9 x 0.9 = 162e9 -> 78.125e9 free.
    # The latent is replicated on every TP rank: a 32,768-token sequence = 70,272 x 32,768 = 2,302,672,896 B per device.
    # Largest batch = floor(78.125e9 / 2,302,672,896) = 33.
    r = fit(kb, "deepseek-r1", "nvidia-b200", count=8, fmt="fp8-block-scaled", context=32768, batch=1)
    assert r.geometry["kind"] == "mla"
    assert r.kv_bytes_per_token == 70_272
    assert r.kv_per_device == 2_302_672_896
    assert r.fits is True and r.max_batch_at_context == 33


def test_hybrid_qwen3_next_counts_only_full_attention_layers(kb):
    # 12 of 48 layers are full attention: 12 x 2 KV heads x 256 x 2 x 2 B = 24,576 B/token (all 48 would give 98,304).
    # 80e9 params x 1 B on one H200 (141 GB): usable 126.9e9 -> 46.9e9 free.  At 262,144 tokens a sequence holds
    # 24,576 x 262,144 = 6,442,450,944 B; largest batch = floor(46.9e9 / 6,442,450,944) = 7.
    r = fit(kb, "qwen3-next-80b-a3b", "nvidia-h200-sxm", count=1, fmt="fp8-e4m3", context=262144)
    assert r.kv_bytes_per_token == 24_576
    assert r.geometry["fixed_state_layers"] == 36
    assert r.kv_bytes_per_sequence == 6_442_450_944
    assert r.max_batch_at_context == 7


def test_sliding_window_gpt_oss_120b_caps_half_the_layers_at_128_tokens(kb):
    # Per layer per token: 8 KV heads x 64 x 2 x 2 B = 2,048 B.  18 full layers grow; 18 banded layers hold <= 128 tokens.
    # At 131,072 tokens: 18 x 2,048 x 131,072 + 18 x 2,048 x 128 = 4,831,838,208 + 4,718,592 = 4,836,556,800 B.
    # MXFP4 stores 4.25 bits per weight (4-bit E2M1 + one 8-bit E8M0 scale per 32): 116.8e9 x 0.53125 B = 62.05e9 on one H100:
    # 72e9 - 62.05e9 = 9.95e9 free -> floor(9.95e9 / 4,836,556,800) = 2 sequences
    # (counting all 36 layers as full attention would give 9,663,676,416 B and 1 sequence).
    # Largest context at batch 4: budget 2.4875e9 per sequence; past the window (2.4875e9 - 4,718,592) / (18 x 2,048) = 67,349.8.
    r = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=131072, batch=1)
    assert r.kv_bytes_per_sequence == 4_836_556_800
    assert r.max_batch_at_context == 2
    r4 = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=131072, batch=4)
    assert r4.max_context_at_batch == 67_349 and r4.context_capped is False
    r1 = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=131072, batch=1)
    assert r1.max_context_at_batch == 131_072 and r1.context_capped is True


def test_stated_kv_bytes_per_token_matches_geometry_for_every_bundled_model(kb):
    for rec in kb.by_type("model"):
        stated = rec.data.get("kv_cache_bytes_per_token")
        if stated is None:
            continue
        assert kv_geometry(rec).bytes_per_token(2) == stated, rec.id


def test_missing_geometry_names_the_record_and_field(tmp_path):
    m = {
        "id": "nokv",
        "type": "model",
        "name": "No KV",
        "architecture": "dense",
        "params_b": 7,
        "num_layers": 32,
        "num_kv_heads": 8,
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": [],
    }
    kb = inferkb.open(make_kb(tmp_path, [], models=[m]))
    with pytest.raises(AnalysisError, match=r"data/models/nokv.json: field 'head_dim' is missing"):
        fit(kb, "nokv", "acc", fmt="fp8-e4m3", context=1024)


def test_hybrid_without_full_attention_layers_is_refused(tmp_path):
    m = {
        "id": "hyb",
        "type": "model",
        "name": "Hyb",
        "architecture": "hybrid-moe",
        "params_b": 7,
        "num_layers": 32,
        "num_kv_heads": 8,
        "head_dim": 128,
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": [],
    }
    kb = inferkb.open(make_kb(tmp_path, [], models=[m]))
    with pytest.raises(AnalysisError, match="full_attention_layers"):
        fit(kb, "hyb", "acc", fmt="fp8-e4m3", context=1024)


@pytest.mark.parametrize("kw", [{"count": 0}, {"count": -2}, {"batch": 0}, {"context": 0}])
def test_zero_or_negative_counts_are_refused(kb, kw):
    args = {"fmt": "bf16", "context": 1024} | kw
    with pytest.raises(AnalysisError, match="positive integer"):
        fit(kb, "llama-3-1-8b", "nvidia-h100-sxm", **args)


def test_unknown_accelerator_suggests_near_matches(kb):
    with pytest.raises(AnalysisError, match="did you mean: .*nvidia-h100-sxm"):
        fit(kb, "llama-3-1-8b", "nvidia-h100-sx", fmt="bf16")


def test_weight_format_is_required(kb):
    with pytest.raises(AnalysisError, match="weight format not given"):
        fit(kb, "llama-3-1-8b", "nvidia-h100-sxm", fmt=None)


@pytest.mark.parametrize(
    ("fmt", "bits", "says"),
    [
        ("mxfp4", 4.25, "4.25 bits per weight: 4-bit E2M1 + 8-bit scale per 32"),
        ("nvfp4", 4.5, "4.5 bits per weight: 4-bit E2M1 + 8-bit scale per 16"),
    ],
)
def test_block_scaled_weights_count_their_scales(kb, fmt, bits, says):
    # gpt-oss-120b: 116.8e9 params; OCP MX v1.0 puts one E8M0 scale on 32 E2M1 elements, NVFP4 one E4M3 scale on 16.
    r = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt=fmt, batch=4)
    assert r.bytes_per_weight == bits / 8
    assert r.weights_total == pytest.approx(116.8e9 * bits / 8)
    assert any(says in a for a in r.assumptions)


def test_every_block_scaled_format_states_its_storage_bits(kb):
    # A record whose scales sit on blocks of weights must say how many bits a weight costs with them,
    # and the figure must equal weight_bits + (scale_bits + zero_point_bits) / weights_per_scale.
    for rec in kb.by_type("quantization"):
        d = rec.data
        group = d.get("weight_group_size")
        if not group:
            continue
        assert isinstance(d.get("storage_bits_per_weight"), (int, float)), rec.id
        if d.get("scale_bits"):
            expected = d["weight_bits"] + (d["scale_bits"] + (d.get("zero_point_bits") or 0)) / d["weights_per_scale"]
            assert d["storage_bits_per_weight"] == pytest.approx(expected), rec.id


def test_context_past_the_model_maximum_is_a_warning(kb):
    # gpt-oss-120b's record: max_position_embeddings 131,072.
    r = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=10_000_000)
    assert len(r.warnings) == 1 and "exceeds gpt-oss-120b's maximum of 131,072 tokens" in r.warnings[0]
    assert fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=131_072).warnings == []


def test_tp_that_does_not_divide_the_heads_is_a_warning(kb):
    # gpt-oss-120b: 64 attention heads, 8 KV heads.  TP 3 divides neither; TP 16 replicates each KV head twice (allowed);
    # TP 8 splits both evenly.
    three = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", count=3, fmt="mxfp4")
    assert any("TP 3 does not divide gpt-oss-120b's 64 attention heads" in w for w in three.warnings)
    assert any("8 KV heads (num_kv_heads)" in w for w in three.warnings)
    assert fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", count=16, fmt="mxfp4").warnings == []
    assert fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", count=8, fmt="mxfp4").warnings == []


def test_tp_warning_says_once_that_all_devices_are_one_tp_group(kb):
    # --count 3 could be 3 data-parallel replicas in a real deployment; fit models one TP group of 3, and says so once.
    three = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", count=3, fmt="mxfp4")
    noted = [w for w in three.warnings if "treat the 3 devices as one tensor-parallel group" in w]
    assert len(noted) == 1 and noted[0].startswith("TP 3 does not divide"), three.warnings
    assert "data-parallel replicas" in noted[0]
    # A context-only warning (TP 1) carries no TP note.
    long = fit(kb, "gpt-oss-120b", "nvidia-h100-sxm", fmt="mxfp4", context=10_000_000)
    assert not any("tensor-parallel group" in w for w in long.warnings)
