"""compare --pareto on an x metric most of the selection lacks: a hint names the x metrics it does carry."""

from __future__ import annotations

import json
import subprocess
import sys

import inferkb
from inferkb.analysis.pareto import pareto, x_metric_counts

MIXTRAL = ("--model", "mixtral-8x7b", "--origin", "llm-inference-bench", "--pareto", "tok_s_per_user")


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_an_x_metric_no_record_carries_gets_a_hint_in_text_and_json():
    text = run("compare", "--model", "llama-2-70b", "--pareto", "tok_s_per_user")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[1].startswith("hint: in this selection, e2e_latency_ms is in "), lines[:3]
    doc = json.loads(run("compare", "--model", "llama-2-70b", "--pareto", "tok_s_per_user", "--format", "json").stdout)
    assert doc["hint"] == lines[1]
    assert {"x", "x_direction", "y", "filters", "classes", "outside", "selected", "metrics_without_filter"} <= set(doc)


def test_the_hint_suggests_a_metric_only_when_it_would_draw_points():
    # Argonne's TensorRT-LLM mixtral rows carry e2e_latency_ms, but none states every class condition: nothing to draw
    res = pareto(inferkb.open(), x="tok_s_per_user", model="mixtral-8x7b", origin="llm-inference-bench", engine="tensorrt-llm")
    assert res.hint is not None and "try --pareto" not in res.hint
    assert "none of them states every condition a class needs" in res.hint
    assert not pareto(inferkb.open(), x="e2e_latency_ms", model="mixtral-8x7b", origin="llm-inference-bench", engine="tensorrt-llm").classes
    varied = pareto(
        inferkb.open(), x="tok_s_per_user", model="mixtral-8x7b", origin="llm-inference-bench", vary=["warmup", "engine_version"]
    )
    assert varied.hint is not None and varied.hint.endswith("; try --pareto e2e_latency_ms")
    drawn = pareto(
        inferkb.open(), x="e2e_latency_ms", model="mixtral-8x7b", origin="llm-inference-bench", vary=["warmup", "engine_version"]
    )
    assert drawn.classes


def test_no_hint_when_most_points_carry_the_x_metric():
    res = pareto(inferkb.open(), x="e2e_latency_ms", model="mixtral-8x7b", origin="llm-inference-bench", vary=["warmup", "engine_version"])
    assert res.classes and res.hint is None
    text = run("compare", "--model", "mixtral-8x7b", "--origin", "llm-inference-bench", "--pareto", "e2e_latency_ms")
    assert "hint:" not in text.stdout


def test_hint_candidates_are_registry_metrics_with_a_direction_and_never_a_throughput():
    kb = inferkb.open()
    records = [r for r in kb.by_type("benchmark") if r.data.get("model_id") == "llama-2-70b"]
    counts = x_metric_counts(kb, records, "tok_s_per_user")
    assert counts and "tok_s_per_user" not in counts
    for metric, (n, points) in counts.items():
        assert kb.metrics[metric]["direction"] in ("higher", "lower")
        assert kb.metrics[metric]["measures"] != "throughput"
        assert n >= points >= 0
    assert list(counts.values()) == sorted(counts.values(), key=lambda t: (-t[1], -t[0]))


def test_an_unknown_x_metric_is_still_refused_with_exit_2():
    proc = run("compare", "--model", "llama-2-70b", "--pareto", "tok_s_per_usr")
    assert proc.returncode == 2
    assert "unknown metric 'tok_s_per_usr' for the x axis" in proc.stderr
