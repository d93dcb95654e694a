"""Pareto frontier within one class, and history of one system across rounds."""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.common import AnalysisError
from inferkb.analysis.history import history
from inferkb.analysis.pareto import frontier, pareto


def _sweep(rid, concurrency, total, per_user, **kw):
    cond = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": concurrency, "warmup": 10, "engine_version": "0.11.0"}
    return bench(rid, total, conditions=cond, metrics={"tok_s_per_user": {"value": per_user, "unit": "tok/s"}}, **kw)


def test_frontier_keeps_points_no_other_beats_on_both_axes():
    # (x = per-user tok/s, y = per-GPU tok/s): c4 (100, 500) and c16 (60, 1500) and c64 (20, 2500) trade off;
    # d (50, 1000) is beaten by c16 on both axes.
    pts = [("c4", 100.0, 500.0), ("c16", 60.0, 1500.0), ("c64", 20.0, 2500.0), ("d", 50.0, 1000.0)]
    assert frontier(pts, x_higher=True) == ["c4", "c16", "c64"]
    # For a lower-is-better x (p99 TTFT) the best x comes first.
    assert frontier([("a", 100.0, 10.0), ("b", 300.0, 20.0), ("c", 200.0, 5.0)], x_higher=False) == ["a", "b"]


def test_pareto_is_drawn_per_class_and_never_across_gpu_counts(tmp_path):
    recs = [
        _sweep("c4", 4, 4000.0, 100.0),
        _sweep("c16", 16, 12000.0, 60.0),
        _sweep("c64", 64, 20000.0, 20.0),
        _sweep("d", 32, 8000.0, 50.0),
        _sweep("four-gpus", 16, 9000.0, 70.0, accelerator_count=4),
        bench("no-x", 1.0),
    ]
    kb = inferkb.open(make_kb(tmp_path, recs))
    res = pareto(kb, model="m70", x="tok_s_per_user")
    eight = next(c for c in res.classes if c.key["accelerator_count"] == 8)
    assert eight.frontier == ["c4", "c16", "c64"]
    assert {p.id for p in eight.points} == {"c4", "c16", "c64", "d"}
    assert len(res.classes) == 2
    assert [o.id for o in res.outside] == ["no-x"]
    with pytest.raises(AnalysisError, match="never drawn across accelerator_count"):
        pareto(kb, model="m70", vary=["accelerator_count"])


def test_pareto_against_p99_ttft(tmp_path):
    def r(rid, conc, total, p99):
        cond = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": conc, "warmup": 10, "engine_version": "0.11.0"}
        return bench(rid, total, conditions=cond, metrics={"ttft_ms": {"stats": {"p99": p99}, "unit": "ms"}})

    kb = inferkb.open(make_kb(tmp_path, [r("a", 4, 4000.0, 100.0), r("b", 16, 12000.0, 400.0), r("c", 32, 10000.0, 900.0)]))
    res = pareto(kb, model="m70", x="ttft_ms:p99")
    assert res.x_direction == "lower" and res.classes[0].frontier == ["a", "b"]


def _round(rid, rnd, value, version, **kw):
    sub = {
        "suite": "MLPerf Inference",
        "round": rnd,
        "division": "closed",
        "mlperf_model": "llama2-70b-99",
        "scenario_raw": "Offline",
        "number_of_nodes": 1,
        "accelerators_per_node": 8,
    }
    return bench(rid, value, submission=sub, scenario="offline", system_series="acme-8x", conditions={"engine_version": version}, **kw)


def test_history_orders_rounds_and_shows_the_software_change(tmp_path):
    recs = [
        _round("r61", "v6.1", 30000.0, "1.2"),
        _round("r41", "v4.1", 20000.0, "0.9"),
        _round("r50", "v5.0", 24000.0, "0.9"),
        _round("r50-dup", "v5.0", 24000.0, "0.9", same_measurement_as=["r50"]),
        bench("loose", 1.0),
    ]
    kb = inferkb.open(make_kb(tmp_path, recs))
    res = history(kb, model="m70")
    (line,) = res.lines
    assert [p.round for p in line.points] == ["v4.1", "v5.0", "v6.1"]
    # +20% (24,000 vs 20,000), then +25% (30,000 vs 24,000); per accelerator divides by 8.
    assert [p.change_pct for p in line.points] == [None, pytest.approx(20.0), pytest.approx(25.0)]
    assert line.points[2].per_accelerator == 3750.0
    assert line.points[1].software_changed == {}
    assert line.points[2].software_changed == {"engine_version": ["0.9", "1.2"]}
    assert line.points[1].same_measurement == ["r50-dup"]
    assert res.without_series == 1


def test_history_does_not_call_a_respelt_engine_version_a_change(tmp_path):
    recs = [_round("r41", "v4.1", 20000.0, "10.2"), _round("r50", "v5.0", 24000.0, "10.2.0"), _round("r61", "v6.1", 30000.0, "10.2.0.19")]
    (line,) = history(inferkb.open(make_kb(tmp_path, recs)), model="m70").lines
    assert line.points[1].software_changed == {}
    assert line.points[2].software_changed == {"engine_version": ["10.2.0", "10.2.0.19"]}


def test_history_keeps_divisions_apart(tmp_path):
    a = _round("a", "v5.0", 1.0, "1")
    b = _round("b", "v6.1", 2.0, "1")
    b["submission"]["division"] = "open"
    kb = inferkb.open(make_kb(tmp_path, [a, b]))
    res = history(kb)
    assert res.lines == [] and res.single_round_lines == 2
