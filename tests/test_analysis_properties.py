"""Invariants of the analyses, checked on generated inputs (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inferkb
from inferkb.analysis.comparability import conditions_of
from inferkb.analysis.compare import compare
from inferkb.analysis.fit import fit
from inferkb.analysis.pareto import frontier

points = st.lists(
    st.tuples(st.floats(min_value=0.1, max_value=1e4, allow_nan=False), st.floats(min_value=0.1, max_value=1e6, allow_nan=False)),
    min_size=1,
    max_size=25,
)


def _dominates(q, p, x_higher):
    x_ok = q[1] >= p[1] if x_higher else q[1] <= p[1]
    x_strict = q[1] > p[1] if x_higher else q[1] < p[1]
    return x_ok and q[2] >= p[2] and (x_strict or q[2] > p[2])


@given(points, st.booleans())
def test_frontier_points_are_undominated_and_the_rest_dominated(raw, x_higher):
    pts = [(f"p{i}", x, y) for i, (x, y) in enumerate(raw)]
    front = set(frontier(pts, x_higher))
    for p in pts:
        dominated = any(_dominates(q, p, x_higher) for q in pts if q[0] != p[0])
        if p[0] in front:
            assert not dominated
        elif not any(q[1:] == p[1:] and q[0] in front for q in pts):
            assert dominated


@pytest.fixture(scope="module")
def bundled():
    return inferkb.open()


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=200_000), st.integers(min_value=1, max_value=8))
def test_largest_batch_fits_and_one_more_does_not(context, count):
    kb = inferkb.open()
    r = fit(kb, "llama-3-1-8b", "nvidia-h100-sxm", count=count, fmt="bf16", context=context, batch=1)
    if r.max_batch_at_context >= 1:
        assert fit(kb, "llama-3-1-8b", "nvidia-h100-sxm", count=count, fmt="bf16", context=context, batch=r.max_batch_at_context).fits
    assert not fit(kb, "llama-3-1-8b", "nvidia-h100-sxm", count=count, fmt="bf16", context=context, batch=r.max_batch_at_context + 1).fits


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.sampled_from(["engine", "engine_version", "hardware", "accelerator_count", "format", "scenario", "load"]),
        max_size=4,
        unique=True,
    ),
    st.booleans(),
)
def test_every_class_shares_its_key_and_no_ranked_row_misses_a_condition(bundled, vary, per_acc):
    res = compare(bundled, vary=vary, per_accelerator_basis=per_acc)
    for cls in res.classes:
        keys = set()
        for row in cls.rows:
            cs = conditions_of(bundled.get(f"benchmarks/{row.id}").data)
            if per_acc:
                cs.values["value_scope"] = "per accelerator"
            assert cs.missing(vary) == []
            keys.add(cs.key(vary))
        assert len(keys) == 1
    ranked = {r.id for c in res.classes for r in c.rows} | {i for c in res.classes for r in c.rows for i in r.same_measurement}
    assert ranked.isdisjoint({n.id for n in res.not_comparable})
