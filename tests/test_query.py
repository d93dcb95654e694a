"""Query commands: list, show, search, where, refs, stats, gaps (API and CLI JSON)."""

from __future__ import annotations

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import query
from inferkb.errors import UsageError


@pytest.fixture
def kb(tmp_path):
    write_kb(
        tmp_path,
        {
            "data/sources/s1.json": rec("source", "s1", name="NVIDIA H100 datasheet"),
            "data/accelerators/gpu-a.json": rec(
                "accelerator", "gpu-a", name="GPU A", interconnect=["link-x"], sources=["s1"], confidence=0.9
            ),
            "data/accelerators/gpu-b.json": rec("accelerator", "gpu-b", name="GPU B", status="verified", confidence=0.7),
            "data/interconnect/link-x.json": rec("interconnect", "link-x"),
            "data/engines/vllm.json": rec("engine", "vllm", name="vLLM", notes="speculative decoding supported"),
            "data/benchmarks/b1.json": rec(
                "benchmark",
                "b1",
                engine_id="vllm",
                accelerator_ids=["gpu-a"],
                metric="ttft_ms",
                value=894.0,
                conditions={"batch_size": 8, "tensor_parallel": 4},
                arms=[{"id": "base", "stats": {"p99": 907}}, {"id": "mtp", "stats": {"p99": 1670}}],
                sources=["s1"],
                notes="speculative decoding made latency worse",
            ),
            "data/benchmarks/b2.json": rec(
                "benchmark",
                "b2",
                engine_id="vllm",
                accelerator_ids=["gpu-b"],
                metric="decode_tok_s",
                value=50,
                conditions={"batch_size": 1},
                updated="2025-06-01",
            ),
        },
    )
    return inferkb.open(tmp_path)


def test_list_returns_rows_of_one_type_sorted(kb):
    rows = query.list_records(kb, "accelerator")
    assert [r["id"] for r in rows] == ["gpu-a", "gpu-b"]
    with pytest.raises(UsageError, match="unknown type"):
        query.list_records(kb, "gpus")


def test_search_ranks_name_matches_above_body_matches(kb):
    rows = query.search(kb, "vllm")
    assert rows[0]["key"] == "engines/vllm"
    assert {r["key"] for r in rows} >= {"engines/vllm", "benchmarks/b1", "benchmarks/b2"}


def test_search_requires_every_word_and_reaches_nested_fields(kb):
    assert [r["key"] for r in query.search(kb, "speculative worse")] == ["benchmarks/b1"]
    assert query.search(kb, "nonexistentword") == []
    with pytest.raises(UsageError):
        query.search(kb, "  ")


@pytest.mark.parametrize(
    ("field", "op", "value", "expected"),
    [
        ("metric", "=", "ttft_ms", ["benchmarks/b1"]),
        ("value", ">", "100", ["benchmarks/b1"]),
        ("value", "<=", "50", ["benchmarks/b2"]),
        ("conditions.batch_size", "!=", "1", ["benchmarks/b1"]),
        ("accelerator_ids", "=", "gpu-b", ["benchmarks/b2"]),
        ("arms.stats.p99", ">=", "1600", ["benchmarks/b1"]),
        ("arms.0.id", "=", "base", ["benchmarks/b1"]),
        ("notes", "~", "SPECULATIVE", ["benchmarks/b1", "engines/vllm"]),
        ("updated", "<", "2026-01-01", ["benchmarks/b2"]),
        ("conditions.tensor_parallel", "=", "null", ["benchmarks/b2"]),
    ],
)
def test_where_dotted_paths_lists_and_operators(kb, field, op, value, expected):
    rows = query.where(kb, field, op, value, type_name=None if field in ("notes", "updated") and value != "2026-01-01" else "benchmark")
    assert sorted(r["key"] for r in rows) == expected


def test_parse_condition_accepts_split_or_joined_forms():
    assert query.parse_condition(["conditions.batch_size", ">=", "8"]) == ("conditions.batch_size", ">=", "8")
    assert query.parse_condition(["metric=ttft_ms"]) == ("metric", "=", "ttft_ms")
    with pytest.raises(UsageError):
        query.parse_condition(["metric", "ttft_ms"])


def test_refs_lists_what_a_record_cites_and_what_cites_it(kb):
    out = query.refs(kb, "gpu-a")
    cites = {(c["field"], c["id"], c["resolved"]) for c in out["cites"]}
    assert cites == {("sources", "s1", True), ("interconnect", "link-x", True)}
    assert out["cited_by"] == [{"key": "benchmarks/b1", "field": "accelerator_ids"}]
    assert {c["key"] for c in query.refs(kb, "s1")["cited_by"]} == {"accelerators/gpu-a", "benchmarks/b1"}


def test_stats_counts_by_type_and_status(kb):
    out = query.stats(kb)
    assert out["records"] == 7
    assert out["types"]["accelerator"] == {"count": 2, "by_status": {"draft": 1, "verified": 1}, "mean_confidence": 0.8}


def test_gaps_lists_empty_types_and_unfilled_fields(kb):
    out = query.gaps(kb)
    assert "gotcha" in out["empty_types"] and "benchmark" not in out["empty_types"]
    # the mini schema declares `confidence`, which every accelerator fills, so it is not a gap
    assert "confidence" not in out["unfilled_fields"].get("accelerator", [])


def test_gaps_on_bundled_kb_uses_its_schemas():
    out = query.gaps(inferkb.open())
    assert isinstance(out["unfilled_fields"], dict)


@pytest.mark.parametrize(
    ("field", "op", "value", "message"),
    [
        ("value", ">", "", "has no value"),
        ("value", ">", "abc", "numbers or ISO dates"),
        ("conditions.", ">", "1", "empty path segment"),
        ("valeu", "=", "1", "no record has a field 'valeu'"),
    ],
)
def test_where_rejects_conditions_that_cannot_match_anything(kb, field, op, value, message):
    with pytest.raises(UsageError, match=message):
        query.where(kb, field, op, value)
