"""Audit model-geometry: a stated kv_cache_bytes_per_token is checked against the layer geometry."""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import make_kb

COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": [], "architecture": "moe", "params_b": 117}


def test_sliding_window_model_counted_as_full_attention_is_flagged(tmp_path):
    # 36 layers x 8 x 64 x 2 x 2 = 73,728 counts all layers; with 18 banded layers the growing figure is 36,864.
    wrong = {
        "id": "gptoss",
        "type": "model",
        "name": "x",
        "num_layers": 36,
        "num_kv_heads": 8,
        "head_dim": 64,
        "full_attention_layers": 18,
        "sliding_window": 128,
        "sliding_window_layers": 18,
        "kv_cache_bytes_per_token": 73728,
        **COMMON,
    }
    right = dict(wrong, id="ok", kv_cache_bytes_per_token=36864)
    kb = inferkb.open(make_kb(tmp_path, [], models=[wrong, right]))
    report = kb.audit("model-geometry")
    flagged = [(f.code, f.record) for f in report.findings]
    assert flagged == [("KB510", "models/gptoss")]
    assert "geometry gives 36864" in report.findings[0].message


def test_mla_model_uses_the_latent_width(tmp_path):
    mla = {
        "id": "ds",
        "type": "model",
        "name": "ds",
        "num_layers": 61,
        "num_kv_heads": 128,
        "head_dim": 128,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "kv_cache_bytes_per_token": 70272,
        **COMMON,
    }
    kb = inferkb.open(make_kb(tmp_path, [], models=[mla]))
    assert kb.audit("model-geometry").findings == []


def test_missing_geometry_is_reported_as_unchecked(tmp_path):
    m = {"id": "partial", "type": "model", "name": "p", "num_layers": 48, "kv_cache_bytes_per_token": 98304, **COMMON}
    kb = inferkb.open(make_kb(tmp_path, [], models=[m]))
    (f,) = [x for x in kb.audit("model-geometry").findings if x.record == "models/partial"]
    assert f.code == "KB511" and "num_kv_heads" in f.message


def test_bundled_models_all_match():
    report = inferkb.open().audit("model-geometry")
    assert report.findings == [] and report.figures["model-geometry"]["checked"] >= 14


COMMUNITY_MODELS = (
    "llama-2-7b llama-2-13b llama-7b llama-3-8b llama-3-70b llama-3-2-1b mistral-7b-v0-1 qwen2-7b qwen2-72b qwen1-5-7b "
    "qwen2-5-14b qwen3-5-397b-a17b minimax-m2-5 glm-5 bloom-7b1 opt-6-7b aquila-7b "
    "gemma-7b llama-13b opt-13b mistral-7b-v0-3 llama-3-1-70b decilm-7b"
).split()


def test_the_community_benchmarks_model_records_state_a_kv_size_their_geometry_gives():
    report = inferkb.open().audit("model-geometry")
    per_model = report.figures["model-geometry"]["per_model"]
    assert [m for m in COMMUNITY_MODELS if m not in per_model] == []
    assert {m: per_model[m] for m in COMMUNITY_MODELS if per_model[m]["stated"] != per_model[m]["geometry"]} == {}
    assert [f for f in report.findings if f.record.split("/")[-1] in COMMUNITY_MODELS] == []


def test_decilm_states_its_kv_size_summed_over_its_per_layer_kv_heads():
    # KV heads vary per layer, so no single num_kv_heads is true; the per-layer list has one entry for each of the
    # 32 layers and sums to 67: 67 x head_dim 128 x 2 (K and V) x 2 B = 34,304 B per token.
    rec = inferkb.open().get("decilm-7b")
    assert rec.data["num_kv_heads"] is None
    heads = rec.data["num_kv_heads_per_layer"]
    assert len(heads) == rec.data["num_layers"] == 32 and sum(heads) == 67
    assert rec.data["kv_cache_bytes_per_token"] == 34_304


def test_gemma_1_1_7b_it_has_no_geometry_and_fit_names_the_missing_field():
    # No stored page states Gemma 1.1 7B IT's config: the record keeps its geometry null and says why.
    from inferkb.analysis.common import AnalysisError
    from inferkb.analysis.fit import fit

    kb = inferkb.open()
    rec = kb.get("gemma-1-1-7b-it")
    assert rec.data["num_layers"] is None and rec.data["kv_cache_bytes_per_token"] is None
    assert "nothing read says so" in rec.data["notes"]
    with pytest.raises(AnalysisError, match="params_b"):
        fit(kb, "gemma-1-1-7b-it", "nvidia-h100-sxm", fmt="bf16", context=1024)
