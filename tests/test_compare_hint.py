"""compare on a selection that is mostly not comparable: a hint names the unstated conditions and the --vary set that helps."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from itertools import combinations

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.comparability import CONDITION_NAMES, NEVER_VARIED
from inferkb.analysis.compare import compare
from inferkb.analysis.compare_hint import NOT_SUGGESTED, PER_ACCELERATOR_SUGGESTED, SUGGESTED

MIXTRAL = ("compare", "--model", "mixtral-8x7b", "--origin", "llm-inference-bench")
HINTED = ["format", "hardware", "warmup", "engine_version"]


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _ranked(res) -> tuple[int, int, set[str]]:
    """(classes of 2+ rows, records in them, their ids) of a compare result: what the hint promises, counted by compare."""
    big = [c for c in res.classes if c.size >= 2]
    ids = {i for c in big for r in c.rows for i in (r.id, *r.same_measurement, *((r.repeats or {}).get("ids") or []))}
    return len(big), len(ids), ids


@pytest.fixture(scope="module")
def mixtral():
    return compare(inferkb.open(), model="mixtral-8x7b", origin="llm-inference-bench")


def test_a_mostly_not_comparable_selection_gets_a_hint_line_after_the_header():
    proc = run(*MIXTRAL)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "20 comparability class(es), 523 not comparable" in lines[0]
    assert lines[1] == (
        "hint: 523 of 543 records are not comparable, most often for lack of engine_version (523), warmup (342), "
        "format (280), hardware (200); --vary format,hardware,warmup,engine_version puts 431 of them into classes "
        "(140 classes of 2+ rows) and folds 9 repeat groups, now listed apart, into one row each"
    )


def test_the_hint_counts_are_what_compare_gives_with_the_suggested_vary(mixtral):
    hint = mixtral.vary_hint
    assert hint.vary == HINTED and mixtral.hint == hint.text
    varied = compare(inferkb.open(), model="mixtral-8x7b", origin="llm-inference-bench", vary=hint.vary)
    classes, records, ids = _ranked(varied)
    assert (hint.classes, hint.in_classes) == (classes, records) == (140, 451)
    # placed counts only the records that were not comparable before; the other 20 were already in classes
    assert hint.placed == len(ids & {n.id for n in mixtral.not_comparable}) == 431
    assert hint.placed * 2 > hint.not_comparable
    assert varied.hint is None and varied.vary_hint is None  # nothing is left out now


def test_no_smaller_vary_set_puts_most_of_them_into_classes(mixtral):
    kb = inferkb.open()
    for subset in combinations(HINTED, len(HINTED) - 1):  # varying fewer only splits classes, so one smaller is enough
        res = compare(kb, model="mixtral-8x7b", origin="llm-inference-bench", vary=subset)
        assert _ranked(res)[1] * 2 <= mixtral.vary_hint.not_comparable, subset


def test_the_hinted_vary_folds_repeats_that_were_separate_not_comparable_rows(mixtral):
    marked = {n.id: n.repeat for n in mixtral.not_comparable if n.repeat}
    assert len(marked) == 18 and {r["n"] for r in marked.values()} == {2}
    varied = compare(inferkb.open(), model="mixtral-8x7b", origin="llm-inference-bench", vary=mixtral.vary_hint.vary)
    rows = [r for c in varied.classes for r in c.rows]
    folded = [r for r in rows if r.repeats]
    assert len(folded) == mixtral.vary_hint.repeats_folded == 9
    assert {i for r in folded for i in r.repeats["ids"]} == set(marked)
    assert len({r.id for r in rows} & set(marked)) == 9  # one row per pair, not two


def test_json_carries_the_hint_line_and_its_figures():
    text = run(*MIXTRAL).stdout.splitlines()[1]
    doc = json.loads(run(*MIXTRAL, "--format", "json").stdout)
    assert doc["hint"] == text
    fig = doc["vary_hint"]
    assert fig["vary"] == HINTED and fig["missing"] == {"engine_version": 523, "warmup": 342, "format": 280, "hardware": 200}
    assert (fig["selected"], fig["not_comparable"], fig["placed"], fig["classes"], fig["excluded"]) == (543, 523, 431, 140, {})
    assert {"classes", "not_comparable", "split_by", "selected"} <= set(doc)


def test_csv_stdout_stays_a_table_and_the_hint_goes_to_stderr():
    proc = run(*MIXTRAL, "--format", "csv")
    assert proc.returncode == 0
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 543 and not any("hint" in (r["id"] or "") for r in rows)
    assert proc.stderr.strip().startswith("hint: 523 of 543 records are not comparable")


def test_no_hint_when_most_rows_are_comparable(tmp_path):
    no_warmup = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "engine_version": "0.11.0"}
    records = [bench("a", 1.0), bench("b", 2.0), bench("c", 3.0, conditions=no_warmup)]
    root = make_kb(tmp_path, records)
    res = compare(inferkb.open(root), model="m70")
    assert len(res.classes) == 1 and len(res.not_comparable) == 1
    assert res.hint is None and res.vary_hint is None
    proc = run("compare", "--model", "m70", "--kb", str(root))
    assert proc.returncode == 0 and "hint:" not in proc.stdout
    assert json.loads(run("compare", "--model", "m70", "--kb", str(root), "--format", "json").stdout)["hint"] is None


def test_a_fixture_missing_only_warmup_is_told_to_vary_warmup(tmp_path):
    no_warmup = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "engine_version": "0.11.0"}
    records = [bench("a", 1.0, conditions=no_warmup), bench("b", 2.0, conditions=no_warmup), bench("c", 3.0)]
    res = compare(inferkb.open(make_kb(tmp_path, records)), model="m70")
    assert res.vary_hint.vary == ["warmup"] and (res.vary_hint.placed, res.vary_hint.classes, res.vary_hint.in_classes) == (2, 1, 3)


def test_a_workload_condition_is_never_suggested(tmp_path):
    # Every record lacks the input length: varying it would rank a 128-token prompt against a 4096-token one.
    no_isl = {"output_tokens": 1024, "concurrency": 64, "warmup": 10, "engine_version": "0.11.0"}
    records = [bench(f"r{i}", float(i), conditions=no_isl) for i in range(3)]
    res = compare(inferkb.open(make_kb(tmp_path, records)), model="m70")
    assert res.vary_hint.vary is None and res.vary_hint.excluded == {"input_tokens": 3}
    assert res.hint.endswith(
        "no --vary set this hint may suggest puts them into classes of 2+ rows; never suggested: input_tokens (see compare --help)"
    )


def test_accelerator_count_is_not_suggested_for_a_system_ranking(tmp_path):
    counted = [bench(f"r{i}", float(i)) for i in range(3)]
    for r in counted:
        del r["accelerator_count"]
    root = make_kb(tmp_path, counted)
    plain = compare(inferkb.open(root), model="m70")
    assert plain.vary_hint.vary is None and "accelerator_count" in plain.vary_hint.excluded
    assert set(PER_ACCELERATOR_SUGGESTED) <= set(NOT_SUGGESTED)


def test_every_condition_is_either_suggested_or_excluded_with_a_reason():
    assert set(SUGGESTED).isdisjoint(NOT_SUGGESTED)
    assert set(SUGGESTED) | set(NOT_SUGGESTED) == set(CONDITION_NAMES)
    assert NEVER_VARIED <= set(NOT_SUGGESTED) and all(NOT_SUGGESTED.values())


def test_records_passed_in_get_no_hint(mixtral):
    kb = inferkb.open()
    ids = {n.id for n in mixtral.not_comparable}
    res = compare(kb, records=[r for r in kb.by_type("benchmark") if r.id in ids])
    assert not res.classes and res.hint is None  # the site passes its groups' records and never shows a hint


def test_an_unknown_vary_name_is_still_exit_2_with_no_hint():
    proc = run(*MIXTRAL, "--vary", "warmup,engine_versoin")
    assert proc.returncode == 2 and "unknown condition 'engine_versoin' to vary" in proc.stderr
    assert "hint:" not in proc.stdout + proc.stderr
