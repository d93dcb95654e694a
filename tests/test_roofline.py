"""Roofline calculators: every expectation below is worked out by hand in the comment next to it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferkb import roofline
from inferkb.arms import arm_deltas, pct_change


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("BF16", 2.0),
        ("fp16", 2.0),
        ("FP8", 1.0),
        ("fp8-e4m3", 1.0),
        ("INT8", 1.0),
        ("Q4_K_M", 0.5),
        ("gguf-q4-k-m", 0.5),
        ("4-bit", 0.5),
        ("NVFP4", 0.5),
        ("mxfp4", 0.5),
        ("AWQ", 0.5),
        ("W4A16", 0.5),
        ("FP32", 4.0),
    ],
)
def test_bytes_per_weight_of_known_formats(fmt, expected):
    assert roofline.bytes_per_weight(fmt) == expected


@pytest.mark.parametrize("fmt", ["", "Q1_0", "2bit", "half the time", "FP8 and BF16"])
def test_bytes_per_weight_is_none_for_unknown_or_conflicting_formats(fmt):
    assert roofline.bytes_per_weight(fmt) is None


def test_format_mentions_skip_kv_cache_and_activation_formats():
    found = roofline.format_mentions("Llama 2 70B (WMXFP4 weights, FP8 KV cache); gpt-oss FP8-e4m3 activations")
    assert found == {"WMXFP4": 0.5}


def test_decode_bound_is_bandwidth_over_bytes_per_token():
    # 8e9 params x 2 bytes = 16e9 bytes/token; 2 devices x 3350 GB/s = 6.7e12 B/s -> 418.75 tok/s
    assert roofline.decode_bound_tok_s(3350, 2, 16e9) == pytest.approx(418.75)


def test_bytes_per_decode_token_adds_kv_cache_per_request():
    # 1e9 x 1 byte + batch 4 x 1000 B/token x 2048 tokens = 1e9 + 8,192,000
    assert roofline.bytes_per_decode_token(1e9, 1.0, kv_bytes_per_token=1000, context_tokens=2048, batch=4) == 1e9 + 8_192_000


def test_mbu_is_achieved_over_peak_bytes():
    # 100 tok/s x 16e9 B = 1.6e12 B/s over 2e12 B/s = 0.8
    assert roofline.mbu(100, 16e9, 2000, 1) == pytest.approx(0.8)


def test_mfu_uses_two_flops_per_active_parameter():
    # 1000 tok/s x 2 x 70e9 = 1.4e14 FLOP/s over 4 x 989.5e12 = 3.958e15 -> 0.035371...
    assert roofline.mfu(1000, 70e9, 989.5, 4) == pytest.approx(1.4e14 / 3.958e15)


def test_flops_bound_matches_mfu_of_one():
    bound = roofline.flops_bound_tok_s(1000, 8, 8e9)  # 8 x 1e15 / 16e9 = 500,000
    assert bound == pytest.approx(500_000)
    assert roofline.mfu(bound, 8e9, 1000, 8) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0, -1.0])
def test_calculators_refuse_non_positive_inputs(bad):
    with pytest.raises(ValueError):
        roofline.mbu(10, 1e9, bad)
    with pytest.raises(ValueError):
        roofline.decode_bound_tok_s(1000, 1, bad)


def test_peak_dense_tflops_takes_fastest_dense_row_no_narrower_than_the_weights():
    rows = [
        {"precision": "bf16", "tflops": 989.5},
        {"precision": "fp8", "tflops": 1979},
        {"precision": "fp8", "tflops": 3958, "dense": False},
        {"precision": "fp4", "tflops": 9000},
    ]
    assert roofline.peak_dense_tflops(rows, 16) == (989.5, "bf16")
    assert roofline.peak_dense_tflops(rows, 8) == (1979, "fp8")  # the sparse 3958 row is ignored
    assert roofline.peak_dense_tflops(rows, 4) == (9000, "fp4")
    assert roofline.peak_dense_tflops([], 8) is None


@given(st.floats(1, 1e5), st.floats(1e8, 1e12), st.floats(10, 1e5), st.integers(1, 128))
def test_mbu_equals_rate_over_decode_bound(rate, bytes_per_token, bw, devices):
    util = roofline.mbu(rate, bytes_per_token, bw, devices)
    assert math.isclose(util, rate / roofline.decode_bound_tok_s(bw, devices, bytes_per_token), rel_tol=1e-9)


def test_arm_deltas_are_relative_to_the_baseline_arm():
    record = {
        "baseline_arm": "base",
        "arms": [
            {"id": "base", "stats": {"mean": 0.894, "p99": 0.907}},
            {"id": "mtp", "stats": {"mean": 1.578, "p99": 1.670}},
        ],
    }
    deltas = arm_deltas(record)
    assert set(deltas) == {"mtp"}
    assert deltas["mtp"]["mean_delta_pct"] == pytest.approx((1.578 - 0.894) / 0.894 * 100)  # 76.51...
    assert deltas["mtp"]["p99_delta_pct"] == pytest.approx((1.670 - 0.907) / 0.907 * 100)


def test_arm_deltas_empty_without_a_valid_baseline():
    assert arm_deltas({"arms": [{"id": "a", "stats": {"mean": 1}}]}) == {}
    assert arm_deltas({"baseline_arm": "zzz", "arms": [{"id": "a", "stats": {"mean": 1}}]}) == {}
    assert pct_change(0, 5) is None
