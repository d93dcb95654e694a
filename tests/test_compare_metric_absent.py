"""compare with a known metric that no selected benchmark has: it says so and lists the metrics the rest of the
selection has, with counts (exit 0: an empty answer, not a misspelling); an unknown metric name stays a usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.common import AnalysisError
from inferkb.analysis.compare import compare


@pytest.fixture
def root(tmp_path):
    records = [
        bench("a", 1000.0),
        bench("b", 2000.0),
        bench("c", 3000.0, metric="total_tok_s"),
        bench("d", 40.0, metric="ttft_ms", unit="ms", model_id="other", model="other"),
    ]
    return make_kb(tmp_path, records)


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_a_metric_no_selected_record_has_lists_the_metrics_the_selection_has(root):
    res = compare(inferkb.open(root), model="m70", metric="ttft_ms")
    assert res.selected == 0 and res.metric_absent
    assert res.metrics_without_filter == {"output_tok_s": 2, "total_tok_s": 1}  # most first


def test_no_list_when_the_metric_selects_something_or_no_metric_was_asked(root):
    kb = inferkb.open(root)
    assert compare(kb, model="m70", metric="output_tok_s").metrics_without_filter == {}
    res = compare(kb, model="m70")
    assert res.metrics_without_filter == {} and not res.metric_absent


def test_an_empty_selection_without_the_metric_lists_nothing(root):
    res = compare(inferkb.open(root), model="m70", metric="ttft_ms", scenario="offline")
    assert res.metric_absent and res.metrics_without_filter == {}


def test_an_unknown_metric_name_is_still_an_error(root):
    with pytest.raises(AnalysisError, match="unknown metric 'ttft'"):
        compare(inferkb.open(root), model="m70", metric="ttft")


def test_cli_text_says_so_and_exits_0(root):
    proc = run("compare", "--model", "m70", "--metric", "ttft_ms", "--kb", root)
    assert proc.returncode == 0, proc.stderr
    assert "no benchmark selected by model = m70 has metric ttft_ms; the metrics they have: output_tok_s 2, total_tok_s 1" in proc.stdout


def test_cli_text_when_the_other_filters_select_nothing(root):
    proc = run("compare", "--model", "m70", "--metric", "ttft_ms", "--scenario", "offline", "--kb", root)
    assert proc.returncode == 0
    assert "no benchmark is selected by model = m70, scenario = offline with any metric" in proc.stdout


def test_cli_json_carries_the_counts(root):
    proc = run("compare", "--model", "m70", "--metric", "ttft_ms", "--kb", root, "--format", "json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["selected"] == 0 and doc["metrics_without_filter"] == {"output_tok_s": 2, "total_tok_s": 1}


def test_cli_csv_keeps_stdout_a_table_and_says_so_on_stderr(root):
    proc = run("compare", "--model", "m70", "--metric", "ttft_ms", "--kb", root, "--format", "csv")
    assert proc.returncode == 0 and "ttft_ms" not in proc.stdout
    assert "has metric ttft_ms; the metrics they have: output_tok_s 2" in proc.stderr


def test_cli_unknown_metric_exits_2(root):
    proc = run("compare", "--model", "m70", "--metric", "nosuch_metric", "--kb", root)
    assert proc.returncode == 2 and "unknown metric 'nosuch_metric'" in proc.stderr


def test_bundled_meta_llama_3_70b_counts_match_the_records():
    kb = inferkb.open()
    res = compare(kb, model="Meta-Llama-3-70B", metric="ttft_ms")
    # counted straight from the records: benchmarks whose model_id is llama-3-70b (the model the name resolves to)
    expected = Counter(r.data.get("metric") for r in kb.by_type("benchmark") if r.data.get("model_id") == "llama-3-70b")
    assert res.metric_absent and "ttft_ms" not in expected
    assert res.metrics_without_filter == dict(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0])))


def test_pareto_with_an_absent_metric_lists_the_metrics_the_selection_has(root):
    from inferkb.analysis.pareto import pareto

    res = pareto(inferkb.open(root), x="tok_s_per_user", model="m70", metric="ttft_ms")
    assert res.selected == 0 and res.metric_absent
    assert res.metrics_without_filter == {"output_tok_s": 2, "total_tok_s": 1}
    assert not pareto(inferkb.open(root), x="tok_s_per_user", model="m70").metric_absent


def test_pareto_cli_text_json_and_csv_say_so(root):
    args = ("compare", "--model", "m70", "--metric", "ttft_ms", "--pareto", "tok_s_per_user", "--kb", root)
    text = run(*args)
    assert text.returncode == 0, text.stderr
    assert "0 benchmark(s) selected by model = m70, metric = ttft_ms" in text.stdout
    assert "has metric ttft_ms; the metrics they have: output_tok_s 2, total_tok_s 1" in text.stdout
    doc = json.loads(run(*args, "--format", "json").stdout)
    assert doc["selected"] == 0 and doc["metrics_without_filter"] == {"output_tok_s": 2, "total_tok_s": 1}
    csv = run(*args, "--format", "csv")
    assert csv.returncode == 0 and "the metrics they have: output_tok_s 2" in csv.stderr


def test_pareto_text_tallies_the_reasons_points_are_outside():
    from inferkb.analysis.pareto import pareto

    res = pareto(inferkb.open(), x="tok_s_per_user", model="gpt-oss-120b")
    tally = res.outside_by_reason()
    assert sum(tally.values()) == len(res.outside) > 10
    assert list(tally.values()) == sorted(tally.values(), reverse=True)
    proc = run("compare", "--model", "gpt-oss-120b", "--pareto", "tok_s_per_user")
    assert proc.returncode == 0
    top_reason, top_count = next(iter(tally.items()))
    assert "outside by reason:" in proc.stdout and f"{top_count:>6,}  {top_reason}" in proc.stdout
