"""compare with a scenario or origin that no selected benchmark has (a typo such as 'ofline', a prefix such as
'mlperf'): an empty answer (exit 0) that says which values the rest of the selection has, with counts, and which of
the KB's values are close to the one asked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.compare import compare
from inferkb.query_expr import close_values


@pytest.fixture
def root(tmp_path):
    records = [
        bench("a", 1000.0, scenario="offline", origin="mlperf-inference"),
        bench("b", 2000.0, scenario="offline", origin="mlperf-inference"),
        bench("c", 3000.0, scenario="server", origin="mlperf-inference"),
        bench("d", 40.0, scenario="interactive", model_id="other", model="other"),
    ]
    return make_kb(tmp_path, records)


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_a_misspelt_scenario_lists_the_scenarios_of_the_rest_and_the_near_one(root):
    res = compare(inferkb.open(root), model="m70", scenario="ofline")
    assert res.selected == 0
    assert res.values_without_filter == {"scenario": {"offline": 2, "server": 1}}  # most first; d is another model
    assert res.did_you_mean == {"scenario": ["offline"]}


def test_an_origin_prefix_suggests_the_full_origin(root):
    res = compare(inferkb.open(root), model="m70", origin="mlperf")
    assert res.values_without_filter == {"origin": {"mlperf-inference": 3}}
    assert res.did_you_mean == {"origin": ["mlperf-inference"]}


def test_nothing_is_said_when_something_is_selected(root):
    assert compare(inferkb.open(root), model="m70", scenario="offline").values_without_filter == {}


def test_a_value_the_kb_has_is_listed_against_the_rest_of_the_selection(root):
    # 'interactive' exists, only not for m70: the scenarios m70 has are listed
    res = compare(inferkb.open(root), model="m70", scenario="interactive")
    assert res.selected == 0 and res.values_without_filter == {"scenario": {"offline": 2, "server": 1}}


def test_a_right_value_beside_a_typo_is_not_blamed(root):
    res = compare(inferkb.open(root), model="m70", scenario="ofline", origin="mlperf-inference")
    assert list(res.values_without_filter) == ["scenario"] and res.did_you_mean == {"scenario": ["offline"]}


def test_two_typos_are_both_named(root):
    res = compare(inferkb.open(root), model="m70", scenario="ofline", origin="mlperf")
    assert res.values_without_filter == {"scenario": {}, "origin": {}}
    assert res.did_you_mean == {"scenario": ["offline"], "origin": ["mlperf-inference"]}


def test_close_values_takes_prefixes_and_typos_not_strangers():
    values = ["offline", "server", "online-serving", "mlperf-inference"]
    assert close_values("ofline", values) == ["offline"]
    assert close_values("mlperf", values) == ["mlperf-inference"]
    assert close_values("zzz", values) == []


def test_cli_text_says_so_and_exits_0(root):
    proc = run("compare", "--model", "m70", "--scenario", "ofline", "--kb", root)
    assert proc.returncode == 0, proc.stderr
    assert "has scenario ofline (did you mean offline?); the scenario values they have: offline 2, server 1" in proc.stdout


def test_cli_json_has_the_fields_and_csv_says_it_on_stderr(root):
    proc = run("compare", "--model", "m70", "--origin", "mlperf", "--kb", root, "--format", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["selected"] == 0
    assert doc["values_without_filter"] == {"origin": {"mlperf-inference": 3}} and doc["did_you_mean"] == {"origin": ["mlperf-inference"]}
    csv_out = run("compare", "--model", "m70", "--origin", "mlperf", "--kb", root, "--format", "csv")
    assert csv_out.returncode == 0 and "did you mean mlperf-inference?" not in csv_out.stdout
    assert "has origin mlperf (did you mean mlperf-inference?)" in csv_out.stderr
