"""Search finds model names, ids, aliases and hardware strings whole and in part, exact hits first (issue 11).

Expected sets are read straight from the bundled KB's files (a plain substring test on each file's text),
not from the search code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import pytest

import inferkb
from conftest import BUNDLED, rec, write_kb
from inferkb import query
from inferkb.errors import UsageError


@cache
def files_mentioning(text: str) -> frozenset[str]:
    """Keys (dir/id) of bundled records whose file contains ``text`` (any case) inside a string value."""
    out = set()
    needle = text.lower()
    for path in (BUNDLED / "data").glob("*/*.json"):
        raw = path.read_text(encoding="utf-8")
        if needle in raw.lower():
            out.add(f"{path.parent.name}/{path.stem}")
    return frozenset(out)


def keys(rows) -> list[str]:
    return [r["key"] for r in rows]


@pytest.fixture(scope="module")
def loaded():
    """The bundled KB loaded once (its in-memory catalogue is built once too)."""
    return inferkb.open()


@pytest.mark.parametrize("name", ["gpt-oss-120b", "deepseek-r1", "llama2-70b"])
@pytest.mark.parametrize("how", ["path", "loaded"])
def test_search_finds_every_record_naming_a_hyphenated_model(name, how, request):
    expected = files_mentioning(name)
    assert len(expected) > 100  # the bundled KB's MLPerf and model records
    kb = request.getfixturevalue("loaded") if how == "loaded" else None
    found = set(keys(query.search(kb, name, limit=None)))
    assert expected <= found, sorted(expected - found)[:5]


def test_exact_id_hit_ranks_first(loaded):
    rows = query.search(loaded, "deepseek-r1")
    assert rows[0]["key"] == "models/deepseek-r1" and rows[0]["exact"] is True
    assert all(not r["exact"] for r in rows[1:])


def test_exact_alias_hit_ranks_first_for_a_hardware_string():
    # "NVIDIA H100 80GB HBM3" is an alias of nvidia-h100-sxm (data/accelerators/nvidia-h100-sxm.json)
    rows = query.search(None, "NVIDIA H100 80GB HBM3")
    assert rows[0]["key"] == "accelerators/nvidia-h100-sxm" and rows[0]["exact"]


@pytest.mark.parametrize(
    ("part", "key"),
    [
        ("oss-120b", "models/gpt-oss-120b"),
        ("120b", "models/gpt-oss-120b"),
        ("hbm3", "accelerators/nvidia-h100-sxm"),
        ("deeps", "models/deepseek-r1"),  # a prefix of three or more characters
    ],
)
def test_names_are_found_in_part(part, key):
    assert key in keys(query.search(None, part, limit=None))


def test_spellings_with_and_without_the_hyphen_between_name_and_number_meet():
    # models/llama-2-70b is named "Llama 2 70B"; MLPerf writes the benchmark "llama2-70b-99"
    assert "models/llama-2-70b" in keys(query.search(None, "llama2-70b", limit=None, type_name="model"))
    assert "models/llama-2-70b" in keys(query.search(None, "llama-2-70b", limit=None, type_name="model"))


def test_type_filter_and_limit():
    rows = query.search(None, "gpt-oss-120b", type_name="benchmark", limit=7)
    assert len(rows) == 7 and {r["type"] for r in rows} == {"benchmark"}


def test_match_marks_the_whole_text_where_the_record_holds_it_as_a_phrase():
    row = query.search(None, "NVIDIA H100 80GB HBM3", limit=1)[0]
    assert "[NVIDIA H100 80GB HBM3]" in row["match"]


def test_match_marks_each_word_where_the_words_stand_apart():
    row = query.search(None, "HBM3 H100", limit=None, type_name="accelerator")
    match = next(r["match"] for r in row if r["key"] == "accelerators/nvidia-h100-sxm")
    assert "[HBM3]" in match and "[H100]" in match


def test_text_without_a_word_is_a_usage_error():
    with pytest.raises(UsageError, match="empty"):
        query.search(None, " -- ")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)


def test_cli_text_output_keeps_the_bracketed_matched_words():
    proc = _cli("search", "gpt-oss-120b", "--limit", "3")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[1].split("\t")
    assert first[0] == "models/gpt-oss-120b" and "[gpt-oss-120b]" in first[-1]


def test_cli_search_sorts_and_picks_fields():
    proc = _cli(
        "search", "gpt-oss-120b", "--type", "benchmark", "--fields", "key,value", "--sort", "value:desc", "--limit", "3", "--format", "json"
    )
    rows = json.loads(proc.stdout)
    values = [r["value"] for r in rows]
    assert values == sorted(values, reverse=True) and set(rows[0]) == {"key", "value"}
    # the largest value among every benchmark record mentioning gpt-oss-120b, read from the files
    best = max(
        v
        for k in files_mentioning("gpt-oss-120b")
        if k.startswith("benchmarks/") and isinstance(v := json.loads((BUNDLED / "data" / f"{k}.json").read_text())["value"], (int, float))
    )
    assert values[0] == best


def test_record_text_is_never_read_as_markup(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", name="[bold]Engine[/bold] [red]X[/red]")})
    rows = query.search(str(tmp_path), "engine")
    assert rows[0]["name"] == "[bold]Engine[/bold] [red]X[/red]"
    proc = _cli("list", "engine", "--kb", str(tmp_path))
    assert "[bold]Engine[/bold] [red]X[/red]" in proc.stdout
