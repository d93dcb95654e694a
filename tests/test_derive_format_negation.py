"""format-id reads a negation over a whole list of formats (issue #8): 'does not say E4M3, E5M2 or block-scaled'."""

from __future__ import annotations

import datetime as dt

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import derive
from inferkb.derive.format_id import mentions

TODAY = dt.date(2026, 11, 29)


@pytest.fixture(scope="module")
def bundled():
    return inferkb.open()


def kinds(kb, text: str) -> list[tuple[str, str]]:
    return [(m.token.name, m.kind) for m in mentions(kb, {"name": text})]


def test_every_item_of_a_negated_list_is_negated(bundled):
    assert kinds(bundled, "FP8 checkpoint; the model card does not say E4M3, E5M2 or block-scaled.") == [
        ("FP8", "positive"),
        ("E4M3", "negated"),
        ("E5M2", "negated"),
        ("BLOCK-SCALED", "negated"),
    ]


def test_neither_nor_negates_both_items(bundled):
    assert kinds(bundled, "neither E4M3 nor E5M2") == [("E4M3", "negated"), ("E5M2", "negated")]


def test_but_ends_the_scope_of_a_negation(bundled):
    assert kinds(bundled, "not FP8 but INT8 weights") == [("FP8", "negated"), ("INT8", "positive")]


def test_a_negated_word_before_a_comma_does_not_negate_the_format_after_it(bundled):
    assert kinds(bundled, "no quantization, FP16 weights") == [("FP16", "positive")]


def test_derivation_leaves_a_negated_list_ambiguous_instead_of_picking_e5m2(tmp_path):
    q = {rid: rec("quantization", rid) for rid in ("fp8-e4m3", "fp8-e5m2", "fp8-block-scaled")}
    root = write_kb(
        tmp_path,
        {
            **{f"data/quantization/{rid}.json": r for rid, r in q.items()},
            "data/benchmarks/b.json": rec(
                "benchmark", "b", format_id=None, notes="FP8 checkpoint; the model card does not say E4M3, E5M2."
            ),
        },
    )
    result = derive.run(inferkb.open(root), "format-id", today=TODAY)
    # Reading "E5M2" as a mention would intersect FP8 with it and fill fp8-e5m2; only "FP8" is stated.
    assert result.changes == []
    (finding,) = [f for f in result.findings if f.record == "benchmarks/b"]
    assert finding.code == "KB1001"
    assert finding.extra["candidates"] == ["fp8-block-scaled", "fp8-e4m3", "fp8-e5m2"]
