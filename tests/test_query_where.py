"""where: several conditions (AND), ==, in, is null / is not null, and a loud error for anything unreadable (issue 11).

Expected rows are computed by reading the bundled benchmark files with json, not by the query code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import pytest

from conftest import BUNDLED, rec, write_kb
from inferkb import query
from inferkb.errors import UsageError
from inferkb.query_expr import Condition, parse_conditions


@cache
def benchmarks() -> dict[str, dict]:
    return {f"benchmarks/{p.stem}": json.loads(p.read_text()) for p in (BUNDLED / "data" / "benchmarks").glob("*.json")}


def expected(pred) -> list[str]:
    return sorted(k for k, d in benchmarks().items() if pred(d))


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def cli_keys(*args) -> list[str]:
    proc = cli("where", *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return sorted(r["key"] for r in json.loads(proc.stdout))


def test_two_conditions_are_anded():
    want = expected(lambda d: d.get("model_id") == "llama-2-70b" and d.get("scenario") == "offline")
    assert len(want) > 20
    assert cli_keys("model_id = llama-2-70b", "scenario = offline") == want
    assert cli_keys("model_id", "=", "llama-2-70b", "and", "scenario=offline") == want


def test_double_equals_means_equals():
    want = expected(lambda d: d.get("metric") == "output_tok_s")
    assert cli_keys("metric == output_tok_s", "--type", "benchmark") == want


def test_in_matches_any_listed_value():
    want = expected(lambda d: d.get("model_id") in ("llama-2-70b", "gpt-oss-120b"))
    assert cli_keys("model_id in llama-2-70b,gpt-oss-120b", "--type", "benchmark") == want


def test_is_null_and_is_not_null():
    null = expected(lambda d: d.get("format_id") is None)
    not_null = expected(lambda d: d.get("format_id") is not None)
    assert null and not_null
    assert cli_keys("format_id is null", "--type", "benchmark") == null
    assert cli_keys("format_id", "is", "not", "null", "--type", "benchmark") == not_null


def test_list_fields_match_when_any_element_does_with_another_condition():
    want = expected(lambda d: "nvidia-h100-sxm" in (d.get("accelerator_ids") or []) and (d.get("accelerator_count") or 0) >= 8)
    assert cli_keys("accelerator_ids = nvidia-h100-sxm", "accelerator_count >= 8") == want


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["metric = ttft_ms", "garbage"], "cannot read condition 'garbage'"),
        (["metric", "ttft_ms"], "is not an operator"),
        (["metric = ttft_ms", "or", "value > 1"], "AND only"),
        (["hardware_raw = NVIDIA", "H100"], "cannot read condition 'H100'"),
        (["value >"], "has no value"),
        (["format_id is maybe"], "'is' takes 'null' or 'not null'"),
        (["model_id", "in"], "give the values"),
        (["model_id in"], "cannot read condition"),
    ],
)
def test_unreadable_conditions_fail_loudly(words, message):
    with pytest.raises(UsageError, match=message):
        parse_conditions(words)


def test_cli_unreadable_condition_exits_2_without_rows():
    proc = cli("where", "metric = ttft_ms", "garbage")
    assert proc.returncode == 2 and "cannot read condition" in proc.stderr and proc.stdout == ""


def test_parsing_keeps_values_with_spaces_and_operators_inside():
    conds = parse_conditions(["hardware_raw = NVIDIA H100 80GB HBM3", "name ~ a=b", "x", "!=", "8 GB"])
    assert [(c.field, c.op, c.values) for c in conds] == [
        ("hardware_raw", "=", ("NVIDIA H100 80GB HBM3",)),
        ("name", "~", ("a=b",)),
        ("x", "!=", ("8 GB",)),
    ]
    assert parse_conditions(["v = null"])[0].op == "is null" and parse_conditions(["v != null"])[0].op == "is not null"


def test_value_text_of_a_record_is_exact(tmp_path):
    write_kb(
        tmp_path,
        {
            "data/benchmarks/a.json": rec("benchmark", "a", flag=True, n=1, tiny=1e-05, tags=[]),
            "data/benchmarks/b.json": rec("benchmark", "b", flag=False, n=1.0, tiny=2.5, tags=["x"]),
        },
    )
    kb = str(tmp_path)
    keys = lambda *c: [r["key"] for r in query.where(kb, *c)]  # noqa: E731
    assert keys("flag = true") == ["benchmarks/a"]
    assert keys("n = 1") == ["benchmarks/a", "benchmarks/b"]  # 1 and 1.0 are the same number
    assert keys("flag = 1") == []  # a boolean is not the number 1
    assert keys("tags is null") == ["benchmarks/a"]  # an empty list has no value
    assert keys("tags != y") == ["benchmarks/a", "benchmarks/b"]
    assert keys("tiny ~ 0.00001") == ["benchmarks/a"]  # numbers as JSON writes them
    with pytest.raises(UsageError, match="no record has a field 'tagz'"):
        query.where(kb, "tagz is null")


def test_condition_objects_and_words_combine(tmp_path):
    write_kb(
        tmp_path, {"data/benchmarks/a.json": rec("benchmark", "a", value=5), "data/benchmarks/b.json": rec("benchmark", "b", value=50)}
    )
    rows = query.where(str(tmp_path), Condition.make("value", ">", "1"), "value < 10")
    assert [r["key"] for r in rows] == ["benchmarks/a"]


@pytest.fixture
def typo_kb(tmp_path):
    records = {
        "a": {"model_id": "llama-2-70b", "scenario": "offline"},
        "b": {"model_id": "llama-2-70b", "scenario": "offline"},
        "c": {"model_id": "llama-2-70b", "scenario": "server"},
        "d": {"model_id": "gpt-oss-120b", "scenario": "interactive"},
    }
    write_kb(tmp_path, {f"data/benchmarks/{k}.json": rec("benchmark", k, **v) for k, v in records.items()})
    return str(tmp_path)


def test_a_misspelt_value_that_matches_nothing_gets_a_did_you_mean_and_the_values_there_are(typo_kb):
    rows = query.where(typo_kb, "model_id = lama-2-70b")
    assert list(rows) == []
    assert rows.notes == [
        "no record has model_id = lama-2-70b (did you mean llama-2-70b?); records have model_id: llama-2-70b 3, gpt-oss-120b 1"
    ]


def test_the_values_listed_are_those_of_the_records_the_other_conditions_match(typo_kb):
    rows = query.where(typo_kb, "model_id = llama-2-70b", "scenario in ofline,interactive")
    assert (
        "no record where model_id = llama-2-70b has scenario in ofline,interactive (did you mean offline?); "
        "those records have scenario: offline 2, server 1"
    ) in rows.notes
    # 'interactive' exists (on d), so the model condition is named too, against the one record the scenarios match
    assert (
        "no record where scenario in ofline,interactive has model_id = llama-2-70b; those records have model_id: gpt-oss-120b 1"
        in rows.notes
    )


def test_a_right_value_beside_a_typo_is_not_blamed_and_a_match_has_no_note(typo_kb):
    rows = query.where(typo_kb, "model_id = llama-2-70b", "scenario = ofline")
    assert len(rows.notes) == 1 and "has scenario = ofline" in rows.notes[0]
    assert query.where(typo_kb, "model_id = llama-2-70b").notes == []
    assert query.where(typo_kb, "model_id = lama-2-70b", "scenario = ofline").notes[1].startswith("no record where model_id")


def test_cli_says_it_on_stderr_and_keeps_stdout_rows_only(typo_kb):
    for fmt in ("json", "csv"):
        proc = cli("where", "model_id = lama-2-70b", "--kb", typo_kb, "--format", fmt)
        assert proc.returncode == 0 and "did you mean llama-2-70b?" in proc.stderr and "did you mean" not in proc.stdout
    assert json.loads(cli("where", "model_id = lama-2-70b", "--kb", typo_kb, "--format", "json").stdout) == []
