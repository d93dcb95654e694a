"""A dry run over records that already exist compares their numbers with the stored ones (intake.agreement)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import inferkb
from conftest import CORPUS
from inferkb.intake import IntakeOptions, load_all
from inferkb.intake.agreement import agreement
from inferkb.intake.base import commit

LLAMA = CORPUS / "harness" / "llama.cpp" / "json_b5606_rtx4090_cuda-rpc.json"
V61 = CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv"


def intake(*args):
    return subprocess.run([sys.executable, "-m", "inferkb", "intake", *args], capture_output=True, text=True, timeout=300)


def test_equal_numbers_differing_numbers_and_one_sided_numbers_are_told_apart():
    stored = {"id": "a", "value": 10, "arms": [{"p50": 1.5}], "per_accelerator": {"value": 2.5}, "notes": "x", "updated": "2026-01-01"}
    imported = {"id": "a", "value": 10.0, "arms": [{"p50": 1.6}], "extra": 7, "notes": "y", "updated": "2026-12-02"}
    tally = agreement([("benchmarks/a", stored, imported)])
    assert tally.records == 1
    assert tally.numbers_equal == 1  # value: 10 == 10.0
    assert tally.numbers_differ == 1
    assert tally.differences == [{"key": "benchmarks/a", "field": "arms[0].p50", "kb": 1.5, "import": 1.6}]
    assert dict(tally.numbers_only_in_kb) == {"per_accelerator": 1}
    assert dict(tally.numbers_only_in_import) == {"extra": 1}
    assert dict(tally.fields_differ) == {"notes": 1}  # `updated` is an import date, not a difference
    assert "1 differ (first: benchmarks/a arms[0].p50: KB 1.5, import 1.6)" in tally.lines()[0]


def test_a_number_turned_into_text_counts_once_on_the_kb_side():
    tally = agreement([("k", {"value": 3}, {"value": "3"})])
    assert tally.numbers_equal == 0 and tally.numbers_differ == 0
    assert dict(tally.numbers_only_in_kb) == {"value": 1} and not tally.fields_differ


def test_dry_run_names_a_stored_number_that_no_longer_matches_the_input(bundled_copy):
    if not LLAMA.is_file():
        pytest.skip(f"shared corpus not found at {LLAMA}")
    kb = inferkb.open(bundled_copy)
    written = commit(kb, load_all()["llama-bench"].parse([LLAMA], IntakeOptions(), kb).records)
    key = next(k for k in written if k.startswith("benchmarks/"))
    path = bundled_copy / "data" / f"{key}.json"
    data = json.loads(path.read_text())
    old_value = data["value"]
    data["value"] = old_value * 2  # as if someone had edited the stored number
    path.write_text(json.dumps(data, indent=2) + "\n")
    proc = intake("llama-bench", str(LLAMA), "--kb", str(bundled_copy), "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    agree = out["exists_different_agreement"]
    assert agree["records"] == 1 and agree["numbers_differ"] == 1
    assert agree["differences"] == [{"key": key, "field": "value", "kb": old_value * 2, "import": old_value}]
    text = intake("llama-bench", str(LLAMA), "--kb", str(bundled_copy), "--dry-run")
    assert f"1 differ (first: {key} value: KB {old_value * 2!r}, import {old_value!r})" in text.stdout


def test_bundled_mlperf_v61_rows_carry_the_numbers_of_the_round_table():
    """Every number the bundled v6.1 records share with a fresh import of summary.csv is equal (a re-read)."""
    if not V61.is_file():
        pytest.skip(f"shared corpus not found at {V61}")
    proc = intake("mlperf", str(V61), "--dry-run", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    agree = json.loads(proc.stdout)["exists_different_agreement"]
    assert agree["records"] == 408
    assert agree["numbers_differ"] == 0, agree["differences"]
    assert agree["numbers_equal"] > 3000
    assert "per_accelerator" in agree["numbers_only_in_kb"]  # added by `derive per-accelerator`, not by the table
