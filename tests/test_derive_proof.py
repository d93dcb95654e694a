"""The structural proof: only allowed paths change, and no number changes anywhere."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from inferkb.derive.proof import diff_paths, number_leaves, prove_file

RECORD = {"id": "x", "value": 894.0, "arms": [{"stats": {"p50": 12, "n": 3}}], "notes": "n", "interconnect_ids": []}

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5)
json_trees = st.recursive(
    json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3), max_leaves=12
)


def test_filling_an_allowed_field_passes():
    new = copy.deepcopy(RECORD)
    new["interconnect_ids"] = ["nvlink-4"]
    new["provenance"] = [{"field": "interconnect_ids", "numbers_changed": False}]
    proof = prove_file("r.json", RECORD, new, ("interconnect_ids", "provenance", "updated"))
    assert proof.ok, proof.violations


def test_a_changed_number_fails_even_under_an_allowed_prefix():
    new = copy.deepcopy(RECORD)
    new["arms"][0]["stats"]["p50"] = 13
    proof = prove_file("r.json", RECORD, new, ("arms",))
    assert any("arms[0].stats.p50" in v for v in proof.violations)


def test_an_int_turned_float_counts_as_a_changed_number():
    new = copy.deepcopy(RECORD)
    new["arms"][0]["stats"]["n"] = 3.0
    assert not prove_file("r.json", RECORD, new, ("arms",)).ok


def test_a_field_outside_the_allowed_set_fails():
    new = copy.deepcopy(RECORD)
    new["notes"] = "n (backfilled interconnect_ids)"
    proof = prove_file("r.json", RECORD, new, ("interconnect_ids", "provenance"))
    assert proof.violations == ["notes changed, outside the fields this derivation may touch (interconnect_ids, provenance)"]


def test_a_new_container_is_checked_leaf_by_leaf():
    proof = prove_file("s.json", None, {"derived": {"value": "x"}}, ("derived.format_id",))
    assert not proof.ok


def test_an_added_number_fails():
    new = copy.deepcopy(RECORD)
    new["interconnect_ids"] = [4]
    assert any("number added" in v for v in prove_file("r.json", RECORD, new, ("interconnect_ids",)).violations)


@given(json_trees)
def test_a_tree_compared_with_itself_has_no_differences(tree):
    assert list(diff_paths(tree, copy.deepcopy(tree))) == []


@given(st.dictionaries(st.text(min_size=1, max_size=4), json_trees, max_size=4), st.integers(), st.text(max_size=4))
def test_adding_or_changing_a_number_is_always_caught(tree, number, key):
    new = copy.deepcopy(tree)
    new["zz-" + key] = number
    assert not prove_file("r.json", tree, new, tuple(new)).ok


def test_number_leaves_ignores_booleans():
    assert number_leaves({"a": True, "b": [1, 2.5], "c": {"d": False}}) == {"b[0]": 1, "b[1]": 2.5}
