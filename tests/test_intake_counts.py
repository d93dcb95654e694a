"""Intake says what it built by type (issue 11 leftover): the text line, the JSON and the stats agree.

The worked example is the corpus file bench_serving_llama33-70b_h200_online_dec2024.jsonl: 7 lines, one
``sglang.bench_serving`` run each, so 7 benchmark records; no ``--source`` is given, so the batch also holds
one draft source record describing the file: 8 records, "7 benchmarks + 1 source"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CORPUS
from inferkb.intake.counts import count_by_type, describe

ONLINE = CORPUS / "harness" / "sglang" / "bench_serving_llama33-70b_h200_online_dec2024.jsonl"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture()
def online():
    if not ONLINE.is_file():
        pytest.skip(f"harness corpus file not found at {ONLINE}")
    assert len(ONLINE.read_text(encoding="utf-8").splitlines()) == 7  # the hand count the expectations rest on
    return ONLINE


def summary(stdout: str, fmt: str) -> str:
    [line] = [ln for ln in stdout.splitlines() if ln.startswith(f"{fmt}: ")]
    return line


def test_count_by_type_puts_benchmarks_first_then_types_by_name():
    recs = [{"type": "source"}, {"type": "benchmark"}, {"type": "engine"}, {"type": "benchmark"}, {}]
    assert list(count_by_type(recs).items()) == [("benchmark", 2), ("engine", 1), ("record", 1), ("source", 1)]


def test_describe_uses_singular_and_plural_and_names_an_empty_batch():
    assert describe({"benchmark": 7, "source": 1}) == "7 benchmarks + 1 source"
    assert describe({"benchmark": 1}) == "1 benchmark"
    assert describe({}) == "0 records" and describe({"benchmark": 0}) == "0 records"


def test_dry_run_text_says_seven_benchmarks_and_one_source(online):
    proc = run("intake", "sglang-serving", online, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert summary(proc.stdout, "sglang-serving") == "sglang-serving: built 7 benchmarks + 1 source; wrote nothing (dry run)"
    [stats] = [ln for ln in proc.stdout.splitlines() if ln.startswith("stats: ")]
    assert json.loads(stats[len("stats: ") :])["imported"] == 7


def test_dry_run_json_counts_agree_with_the_records_and_the_stats(online):
    doc = json.loads(run("intake", "sglang-serving", online, "--dry-run", "--format", "json").stdout)
    assert doc["built_by_type"] == {"benchmark": 7, "source": 1}
    assert len(doc["records"]) == 8 and doc["stats"]["imported"] == doc["built_by_type"]["benchmark"]
    assert doc["written"] == [] and doc["written_by_type"] == {}


def test_a_write_then_a_rerun_report_by_type(online, bundled_copy):
    first = run("intake", "sglang-serving", online, "--kb", bundled_copy)
    assert first.returncode == 0, first.stderr
    assert summary(first.stdout, "sglang-serving") == "sglang-serving: built 7 benchmarks + 1 source; wrote 7 benchmarks + 1 source"
    assert sum(1 for ln in first.stdout.splitlines() if ln.startswith("wrote benchmarks/")) == 7
    # On a re-run the file's source record exists: it is cited, not built again, so the batch is the 7 benchmarks.
    again = run("intake", "sglang-serving", online, "--kb", bundled_copy, "--format", "json")
    doc = json.loads(again.stdout)
    assert doc["built_by_type"] == {"benchmark": 7} and doc["written_by_type"] == {} and len(doc["unchanged"]) == 7
    text = run("intake", "sglang-serving", online, "--kb", bundled_copy)
    assert (
        summary(text.stdout, "sglang-serving")
        == "sglang-serving: built 7 benchmarks; wrote nothing, 7 benchmarks unchanged (already in the KB)"
    )


def test_import_community_counts_every_record_of_a_set_by_type():
    """Each set's batch is its benchmark records plus the set's source record; written + unchanged counts that
    whole batch, so "built" must add up to it (before, the text put benchmarks beside a total with the source)."""
    if not (CORPUS / "community").is_dir():
        pytest.skip(f"community corpus not found at {CORPUS / 'community'}")
    proc = run("import-community", "--dry-run", "--set", "localscore", "--format", "json")
    [r] = json.loads(proc.stdout)["sets"]
    assert r["built"] == {"benchmark": r["imported"], "source": 1}
    assert sum(r["built"].values()) == r["written"] + r["unchanged"]
    text = run("import-community", "--dry-run", "--set", "localscore").stdout
    [line] = [ln for ln in text.splitlines() if ln.startswith("localscore ")]
    assert f"built {r['imported']} benchmarks + 1 source " in line
