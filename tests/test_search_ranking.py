"""Search ranks in tiers: a record named the text, then one whose name holds it, then one whose text holds it as a
phrase, then every word anywhere; numbers match as written; a note says when no record is named the text.

The small KB below is written so that plain BM25 over all text would get the order wrong: the Llama 2 record repeats
"Llama", "3.1" and "70B" in its notes many times.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import rec, write_kb
from inferkb import query
from inferkb.errors import UsageError

NOISE = "Llama 2 70B compared with 3.1 and 70B and Llama; " * 30


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranking")
    files = {
        "data/models/llama-3-1-70b.json": rec("model", "llama-3-1-70b", name="Llama 3.1 70B", aliases=["Meta-Llama-3.1-70B-Instruct"]),
        "data/models/llama-3-2-70b.json": rec("model", "llama-3-2-70b", name="Llama 3.2 70B", notes="not 3.1; " + NOISE),
        "data/models/llama-3-1-7b.json": rec("model", "llama-3-1-7b", name="Llama 3.1 7B", notes="Llama 3.1 7B"),
        "data/models/llama-2-70b.json": rec("model", "llama-2-70b", name="Llama 2 70B", notes=NOISE),
        "data/benchmarks/run-named.json": rec("benchmark", "run-named", name="vLLM serving Llama 3.1 70B on 8x H100"),
        "data/benchmarks/run-phrase.json": rec("benchmark", "run-phrase", name="an MLPerf run", notes="used Llama 3.1 70B in place"),
        "data/benchmarks/run-words.json": rec("benchmark", "run-words", name="a run", notes="Llama family; version 3.1; size 70B"),
        "data/benchmarks/run-700.json": rec("benchmark", "run-700", name="H700 run", notes="Llama 3.10 700B at batch 1024"),
        "data/accelerators/gpu-h100.json": rec("accelerator", "gpu-h100", name="Acme H100 SXM", aliases=["H100 SXM5"]),
        "data/sources/h100-system.json": rec("source", "h100-system", name="MLPerf submission: Vendor HGX-H100_H100-SXM-80GBx8_TRT"),
    }
    write_kb(root, files)
    return str(root)


def keys(rows) -> list[str]:
    return [r["key"] for r in rows]


def test_a_record_named_the_text_comes_first_and_is_tier_1(kb):
    rows = query.search(kb, "Llama 3.1 70B", limit=None)
    assert rows[0]["key"] == "models/llama-3-1-70b"
    assert (rows[0]["tier"], rows[0]["exact"]) == (1, True)
    assert all(r["tier"] > 1 and not r["exact"] for r in rows[1:])


@pytest.mark.parametrize("spelling", ["llama-3.1-70b", "LLAMA 3.1 70B", "Llama3.1 70B", "llama 3 1 70b", "meta llama 3.1 70b instruct"])
def test_tier_1_ignores_case_spaces_hyphens_dots_and_letter_digit_joins(kb, spelling):
    rows = query.search(kb, spelling, limit=None)
    assert rows[0]["key"] == "models/llama-3-1-70b" and rows[0]["tier"] == 1


def test_tiers_run_named_then_name_holds_phrase_then_text_holds_phrase_then_all_words(kb):
    rows = query.search(kb, "Llama 3.1 70B", limit=None)
    tier_of = {r["key"]: r["tier"] for r in rows}
    assert tier_of == {
        "models/llama-3-1-70b": 1,
        "benchmarks/run-named": 2,
        "benchmarks/run-phrase": 3,
        "benchmarks/run-words": 4,
        "models/llama-3-2-70b": 4,  # mentions 3.1 and 70B, not as the phrase
        "models/llama-2-70b": 4,
    }
    assert [r["tier"] for r in rows] == sorted(r["tier"] for r in rows)


def test_a_different_version_or_size_never_ranks_above_the_record_it_names(kb):
    rows = keys(query.search(kb, "Llama 3.1 70B", limit=None))
    assert rows.index("models/llama-3-1-70b") < rows.index("models/llama-3-2-70b")
    assert rows.index("benchmarks/run-named") < rows.index("models/llama-2-70b")
    assert "models/llama-3-1-7b" not in rows  # "7B" is not "70B"


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("Llama 3.1 70", "benchmarks/run-700"),
        ("3.1", "benchmarks/run-700"),
        ("H70", "benchmarks/run-700"),
        ("batch 102", "benchmarks/run-700"),
    ],
)
def test_numbers_match_as_written_not_as_prefixes(kb, text, absent):
    # run-700 holds "3.10", "700B", "H700" and "1024": a number in the query is not the start of a longer number
    assert absent not in keys(query.search(kb, text, limit=None))


def test_a_word_of_letters_still_matches_as_a_prefix(kb):
    assert "benchmarks/run-named" in keys(query.search(kb, "serv", limit=None))


def test_within_tier_2_the_closest_name_comes_first(kb):
    rows = query.search(kb, "H100", limit=None)
    assert keys(rows)[:2] == ["accelerators/gpu-h100", "sources/h100-system"]  # "H100 SXM5" is one word more
    assert {r["tier"] for r in rows[:2]} == {2}


def test_a_note_says_when_no_record_is_named_the_text(kb):
    rows = query.search(kb, "Llama 3.1 70B in place", limit=None)
    assert keys(rows) == ["benchmarks/run-phrase"]
    assert rows.notes[0] == "no record is named 'Llama 3.1 70B in place' (id, name or alias); showing records that mention the phrase"
    words = query.search(kb, "family 70B", limit=None)
    assert words.notes[0].endswith("showing records that mention all its words")


def test_no_note_when_a_record_is_named_or_nothing_is_found(kb):
    assert query.search(kb, "Llama 3.1 70B").notes == []
    assert query.search(kb, "vLLM serving").notes == []  # a name holds the phrase (tier 2)
    assert query.search(kb, "nothing-like-this").notes == []


def test_the_note_names_the_type_filter(kb):
    rows = query.search(kb, "Llama 3.1 70B", type_name="benchmark", limit=None)
    assert rows[0]["key"] == "benchmarks/run-named"
    rows = query.search(kb, "version 3.1", type_name="benchmark", limit=None)
    assert rows.notes[0].startswith("no benchmark record is named 'version 3.1'")


def test_sorting_by_a_field_keeps_every_hit_and_the_tier_column(kb):
    rows = query.search(kb, "Llama 3.1 70B", limit=None, sort="key:desc", fields="key,tier")
    assert keys(rows) == sorted(keys(rows), reverse=True) and len(rows) == 6
    assert all(set(r) == {"key", "tier"} for r in rows)


def test_snippets_are_made_only_for_the_rows_returned(kb, monkeypatch):
    from inferkb.query_index import Catalog

    made = []
    real = Catalog.snippet
    monkeypatch.setattr(Catalog, "snippet", lambda self, key, text: made.append(key) or real(self, key, text))
    rows = query.search(kb, "Llama 3.1 70B", sort="key", limit=2)
    assert len(rows) == 2 and sorted(made) == sorted(keys(rows))
    made.clear()
    query.search(kb, "Llama 3.1 70B", sort="key", fields="key,name", limit=None)
    assert made == []  # no match column, no snippet


@pytest.mark.parametrize("text", ['"', 'Llama 3.1 "70B', "AND OR NOT", "(x) * ^", "{names} : x", "NEAR(a b)"])
def test_fts5_syntax_in_the_text_is_searched_as_words_or_refused_cleanly(kb, text):
    try:
        query.search(kb, text, limit=None)
    except UsageError as exc:
        assert "search" in str(exc)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)


def test_cli_prints_the_note_on_stderr_and_json_rows_carry_the_tier(kb):
    proc = _cli("search", "Llama", "3.1", "70B", "in", "place", "--kb", kb, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [(r["key"], r["tier"], r["exact"]) for r in rows] == [("benchmarks/run-phrase", 3, False)]
    assert "no record is named 'Llama 3.1 70B in place'" in proc.stderr
