"""The one 'which value did you mean' decision that `where`/`query` and `compare` share for a selection that matched nothing."""

from __future__ import annotations

from inferkb import query
from inferkb.analysis import compare_select
from inferkb.query_expr import absent_value_near


def test_a_value_the_other_filters_records_have_is_not_blamed():
    assert absent_value_near(["offline"], {"offline", "server"}, {"offline", "server"}) is None


def test_a_value_somewhere_in_the_kb_is_not_blamed_when_the_others_select_nothing():
    assert absent_value_near(["offline"], set(), {"offline"}) is None


def test_a_misspelt_value_is_blamed_with_the_close_values():
    assert absent_value_near(["ofline"], {"server"}, {"offline", "server"}) == ["offline"]


def test_several_asked_values_give_their_close_values_once_in_order():
    near = absent_value_near(["lama-2-70b", "llama-2-70"], {"x"}, {"llama-2-70b", "x"})
    assert near == ["llama-2-70b"]


def test_a_value_near_nothing_is_blamed_with_no_suggestion():
    assert absent_value_near(["zzz"], {"server"}, {"offline", "server"}) == []


def test_where_and_compare_use_the_one_function():
    assert query.absent_value_near is absent_value_near
    assert compare_select.absent_value_near is absent_value_near  # compare's selection
