"""The one-pass KB120-KB123 of a numbers block gives what the rules as written give (speed pass 6)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inferkb
from conftest import BUNDLED, CORPUS
from inferkb.metrics import bundled_metrics
from inferkb.validate_stats import SCALAR_SLOTS, _block_problems_general, block_problems, stat_findings

NUMBERS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=50),
    st.integers(min_value=2**63, max_value=2**1100),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-3, max_value=30, allow_nan=False),
    st.sampled_from([0, 0.0, -0.0, 1e-10, 10.0, 10.000000001]),
    st.text(max_size=3),
)
SLOTS = st.sampled_from([*SCALAR_SLOTS, "stdev", "n", "unit", "p25"])
STATS = st.dictionaries(SLOTS, NUMBERS, max_size=10) | st.dictionaries(SLOTS, NUMBERS, max_size=10).map(lambda d: dict(reversed(d.items())))
BLOCKS = st.fixed_dictionaries(
    {},
    optional={
        "stats": STATS | st.just([1]) | st.none(),
        "value": NUMBERS,
        "percentiles": st.just({}) | st.none() | st.dictionaries(st.sampled_from(["p25", "p99.9", "p50", "x"]), NUMBERS, max_size=3),
    },
)


def as_rows(problems):
    return [(rule.code, field, message) for rule, field, message in problems]


@settings(max_examples=3000, deadline=None)
@given(
    block=BLOCKS,
    dim=st.sampled_from([None, "latency", "rate", "memory", "energy", "ratio"]),
    zero_impossible=st.booleans(),
)
def test_one_pass_block_findings_equal_the_rules_as_written(block, dim, zero_impossible):
    fast = block_problems("metrics.ttft_ms", "ttft_ms", block, dim, zero_impossible)
    assert as_rows(fast) == as_rows(_block_problems_general("metrics.ttft_ms", "ttft_ms", block, dim, zero_impossible))


def test_one_pass_finds_an_order_a_spread_and_a_sign_error_in_one_block():
    block = {"stats": {"p99": 80.0, "max": 90.0, "mean": -1.0, "p50": 120.0, "min": 0.0, "stdev": 500.0, "n": 10}}
    rows = as_rows(block_problems("arms[0]", "ttft_ms", block, "latency", True))
    assert rows == as_rows(_block_problems_general("arms[0]", "ttft_ms", block, "latency", True))
    assert [(code, field) for code, field, _ in rows] == [
        ("KB120", "arms[0].stats.p99"),
        ("KB120", "arms[0].stats.mean"),
        ("KB123", "arms[0].stats.stdev"),
        ("KB121", "arms[0].stats.mean"),
        ("KB122", "arms[0].stats.min"),
    ]


def _general_stat_findings(data, metrics):
    """stat_findings with every block through the rules as written (the reference for the records below)."""
    import inferkb.validate_stats as S

    saved = S.block_problems
    S.block_problems = S._block_problems_general
    try:
        return stat_findings(data, metrics, record="r", path="p")
    finally:
        S.block_problems = saved


@pytest.mark.parametrize("root", [BUNDLED, CORPUS / "inference-research"], ids=["bundled", "corpus"])
def test_one_pass_equals_the_rules_on_every_real_benchmark(root):
    if not root.exists():
        pytest.skip(f"{root} is absent (the shared corpus is not mounted)")
    kb = inferkb.open(root)
    metrics = kb.metrics or bundled_metrics()
    benches = [r for r in kb.records.values() if r.type == "benchmark"]
    assert benches
    for r in benches:
        fast = stat_findings(r.data, metrics, record="r", path="p")
        assert [f.to_dict() if hasattr(f, "to_dict") else vars(f) for f in fast] == [
            f.to_dict() if hasattr(f, "to_dict") else vars(f) for f in _general_stat_findings(r.data, metrics)
        ], json.dumps(r.data)[:200]
