"""Per-layer KV heads (num_kv_heads_per_layer): KV bytes sum over layers in fit and roofline, and KB124 checks the length.

Expected figures are worked by hand in each test's comment from the record's own numbers.
"""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import make_kb
from conftest import rec
from inferkb.analysis.common import AnalysisError, lookup
from inferkb.analysis.fit import fit, kv_geometry
from inferkb.analysis.roofline import roofline


def varkv(**fields) -> dict:
    """A 4-layer variable-GQA model: KV heads 4, 2, 2, 1 (9 in all), head_dim 128, 1e9 parameters."""
    geometry = {
        "architecture": "dense",
        "params_b": 1,
        "num_layers": 4,
        "num_kv_heads": None,
        "num_kv_heads_per_layer": [4, 2, 2, 1],
        "head_dim": 128,
    }
    return rec("model", "varkv", name="Variable KV", **(geometry | fields))


def open_kb(tmp_path, model: dict):
    return inferkb.open(make_kb(tmp_path, [], models=[model]))


@pytest.fixture(scope="module")
def bundled():
    return inferkb.open()


def test_kv_bytes_per_token_is_the_sum_over_layers(tmp_path):
    # (4 + 2 + 2 + 1) = 9 KV heads x head_dim 128 x 2 (K and V) x 2 B (bf16) = 4,608 B per token.
    # A single num_kv_heads could not give this: 4 layers x 4 heads would say 8,192 B, 4 x 1 would say 2,048 B.
    r = fit(open_kb(tmp_path, varkv()), "varkv", "acc", fmt="fp8-e4m3", context=1024)
    assert r.kv_bytes_per_token == 4_608
    # 1,024 tokens x 4,608 B = 4,718,592 B per sequence.
    assert r.kv_bytes_per_sequence == 4_718_592


def test_tensor_parallel_splits_each_layer_s_heads_separately(tmp_path):
    # TP 2: each rank holds ceil(4/2) + ceil(2/2) + ceil(2/2) + ceil(1/2) = 2 + 1 + 1 + 1 = 5 of the 9 heads
    # (the 1-head layer is replicated).  KV/device at 1,024 tokens, batch 1 = 4,718,592 x 5 / 9 = 2,621,440 B.
    r = fit(open_kb(tmp_path, varkv()), "varkv", "acc", count=2, fmt="fp8-e4m3", context=1024)
    assert r.kv_per_device == pytest.approx(2_621_440)


def test_largest_context_uses_the_summed_figure(tmp_path):
    # acc: 80 GB x 0.9 = 72e9 usable; weights 1e9 x 1 B (fp8) = 1e9 -> 71e9 free for KV.
    # Largest context at batch 1 = floor(71e9 / 4,608) = 15,407,986 tokens, capped at nothing (no max_position_embeddings).
    r = fit(open_kb(tmp_path, varkv()), "varkv", "acc", fmt="fp8-e4m3", context=1024)
    assert r.max_context_at_batch == 15_407_986


def test_roofline_reads_the_summed_kv_cache(tmp_path):
    # Decode step bytes at batch 1, 1,024 tokens, one device: 1e9 params x 1 B + 4,718,592 B KV x 1 = 1,004,718,592 B.
    r = roofline(open_kb(tmp_path, varkv()), "varkv", "acc", fmt="fp8-e4m3", context=1024)
    assert r.step_bytes == 1_004_718_592


def test_equal_entries_give_the_same_figure_as_num_kv_heads(tmp_path):
    # [8, 8, 8, 8] x 128 x 2 x 2 = 16,384 B, the uniform formula 4 layers x 8 x 128 x 2 x 2.
    per_layer = fit(open_kb(tmp_path / "a", varkv(num_kv_heads_per_layer=[8, 8, 8, 8])), "varkv", "acc", fmt="bf16", context=64)
    uniform = fit(open_kb(tmp_path / "b", varkv(num_kv_heads_per_layer=None, num_kv_heads=8)), "varkv", "acc", fmt="bf16", context=64)
    assert per_layer.kv_bytes_per_token == uniform.kv_bytes_per_token == 16_384


def test_decilm_7b_fits_with_its_per_layer_heads(bundled):
    # Bundled record: 32 layers whose KV heads sum to 67, head_dim 128: 67 x 128 x 2 x 2 B = 34,304 B per token.
    r = fit(bundled, "decilm-7b", "nvidia-h100-sxm", fmt="bf16", context=8192)
    assert r.kv_bytes_per_token == 34_304
    assert r.stated_kv_bytes_per_token == 34_304
    assert r.kv_bytes_per_sequence == 34_304 * 8192


def test_decilm_7b_stated_figure_is_checked_by_the_model_geometry_audit(bundled):
    res = bundled.audit("model-geometry")
    assert res.figures["model-geometry"]["per_model"]["decilm-7b"] == {"stated": 34304, "geometry": 34304}
    assert not [f for f in res.findings if f.record == "models/decilm-7b"]


def test_a_list_one_entry_short_is_refused_by_fit(tmp_path):
    with pytest.raises(AnalysisError, match=r"num_kv_heads_per_layer' has 3 entries but num_layers is 4"):
        fit(open_kb(tmp_path, varkv(num_kv_heads_per_layer=[4, 2, 2])), "varkv", "acc", fmt="bf16", context=64)


def test_a_list_with_sliding_window_layers_is_refused(tmp_path):
    model = varkv(sliding_window=128, sliding_window_layers=2)
    with pytest.raises(AnalysisError, match="cannot be combined with sliding-window or hybrid"):
        fit(open_kb(tmp_path, model), "varkv", "acc", fmt="bf16", context=64)


def test_a_num_kv_heads_contradicting_the_list_is_refused(tmp_path):
    with pytest.raises(AnalysisError, match="num_kv_heads' is 4 but num_kv_heads_per_layer varies"):
        kv_geometry(lookup(open_kb(tmp_path, varkv(num_kv_heads=4)), "varkv", "model"))


def kb124(kb) -> list:
    return [f for f in kb.validate().findings if f.code == "KB124"]


def test_validate_accepts_one_entry_per_layer(tmp_path):
    assert kb124(open_kb(tmp_path, varkv())) == []


@pytest.mark.parametrize("heads", [[4, 2, 1], [4, 2, 2, 1, 1]])
def test_validate_reports_kb124_when_the_length_differs_from_num_layers(tmp_path, heads):
    found = kb124(open_kb(tmp_path, varkv(num_kv_heads_per_layer=heads)))
    assert [(f.record, f.field, f.severity) for f in found] == [("models/varkv", "num_kv_heads_per_layer", "error")]
    assert f"has {len(heads)} entries but num_layers is 4" in found[0].message


def test_validate_reports_kb124_when_num_layers_is_missing(tmp_path):
    found = kb124(open_kb(tmp_path, varkv(num_layers=None)))
    assert len(found) == 1 and "num_layers is not stated" in found[0].message


def test_schema_refuses_a_zero_head_entry(tmp_path):
    findings = open_kb(tmp_path, varkv(num_kv_heads_per_layer=[4, 0, 2, 1])).validate().findings
    assert any(f.record == "models/varkv" and "num_kv_heads_per_layer" in (f.field or "") for f in findings)
