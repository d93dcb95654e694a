"""The physical-plausibility audit's cache (inferkb.audit.plausibility_cache): a warm run takes each unchanged
benchmark's result from it and reports exactly what a cold run does; an edited benchmark is checked again alone,
an edited model, accelerator or format record or another metric registry checks every benchmark again."""

from __future__ import annotations

import json
from pathlib import Path

import inferkb
from conftest import edit_record, rewrite_cache_entry, synth_kb
from inferkb.audit import plausibility
from inferkb.audit.plausibility_cache import add_figures, compact, figures_skeleton, plausibility_cache


def _run(root: Path, **kw) -> tuple[dict, int, int]:
    """(physical-plausibility report, cache hits, benchmarks) of a fresh open of ``root``."""
    kb = inferkb.open(root, **kw)
    report = kb.audit("physical-plausibility").to_dict()
    cache = plausibility_cache(kb)
    return report, (cache.hits if cache else 0), len(list(kb.by_type("benchmark")))


def test_warm_plausibility_equals_cold_on_the_real_corpus(research_kb: Path, caching: Path) -> None:
    plain, _, n = _run(research_kb, cache=False)
    assert plain["summary"]["figures"]["physical-plausibility"]["rate_records"] > 0
    cold, hits, _ = _run(research_kb)
    assert hits == 0 and cold == plain
    warm, hits, _ = _run(research_kb)
    assert hits > n / 2 and warm == plain


def test_warm_plausibility_equals_cold_on_the_bundled_kb(caching: Path) -> None:
    plain, _, n = _run(None, cache=False)
    _run(None)
    warm, hits, _ = _run(None)
    assert hits > n / 2 and warm == plain


def test_a_warm_run_really_takes_the_stored_result(tmp_path: Path, caching: Path) -> None:
    root = synth_kb(tmp_path / "kb", 300, seed=7)
    cold, _, _ = _run(root)
    kb = inferkb.open(root)
    cache = plausibility_cache(kb)
    key = next(k for k, e in cache.entries.items() if e[1][0])
    entry = cache.entries[key]
    entry[1][0][0][3] = "a message no check writes"
    rewrite_cache_entry(cache, key, entry)
    warm, hits, n = _run(root)
    assert hits == n
    assert "a message no check writes" in [f["message"] for f in warm["findings"] if f["record"] == key]


def test_an_edited_benchmark_is_checked_again_alone(tmp_path: Path, caching: Path) -> None:
    root = synth_kb(tmp_path / "kb", 300, seed=7)
    _run(root)
    kb = inferkb.open(root, cache=False)
    rec = next(
        r for r in kb.by_type("benchmark") if r.id in kb.audit("physical-plausibility").figures["physical-plausibility"]["per_record"]
    )
    edit_record(root / rec.path, value=rec.data["value"] * 1000)
    warm, hits, n = _run(root)
    assert hits == n - 1
    assert warm == _run(root, cache=False)[0]
    assert (
        warm["summary"]["figures"]["physical-plausibility"]["per_record"][rec.id]
        != (kb.audit("physical-plausibility").figures["physical-plausibility"]["per_record"][rec.id])
    )


def test_an_edited_accelerator_checks_every_benchmark_again(tmp_path: Path, caching: Path) -> None:
    root = synth_kb(tmp_path / "kb", 300, seed=7)
    _run(root)
    path = sorted((root / "data" / "accelerators").iterdir())[0]
    edit_record(path, memory_bandwidth_gbps=1.0)
    warm, hits, _ = _run(root)
    assert hits == 0
    assert warm == _run(root, cache=False)[0]


def test_another_metric_registry_checks_every_benchmark_again(tmp_path: Path, caching: Path) -> None:
    root = synth_kb(tmp_path / "kb", 300, seed=7)
    _run(root)
    registry = json.loads((root / "metrics.json").read_text())
    assert inferkb.open(root, cache=False).metrics  # the synthetic KB names metrics.json in kb.toml
    registry["metrics"][0]["requires_baseline"] = not registry["metrics"][0]["requires_baseline"]
    (root / "metrics.json").write_text(json.dumps(registry))
    assert _run(root)[1] == 0


def test_figures_of_records_add_up_as_one_run() -> None:
    total, one, two = figures_skeleton(), figures_skeleton(), figures_skeleton()
    one["rate_records"] += 1
    one["mfu_bands"]["<=50%"] += 1
    one["per_record"]["a"] = {"mfu": 0.1}
    two["rate_records"] += 1
    two["mbu_bands"][">100%"] -= 1
    two["mbu_bands"]["90-100%"] += 1
    two["candidate_per_record"]["b"] = {"mbu_min": 0.5}
    assert compact(figures_skeleton()) == {}
    add_figures(total, compact(one))
    add_figures(total, compact(two))
    assert total["rate_records"] == 2 and total["per_record"] == {"a": {"mfu": 0.1}}
    assert total["mbu_bands"] == {"<=50%": 0, "50-90%": 0, "90-100%": 1, ">100%": -1}
    assert list(total) == list(figures_skeleton()) and total["candidate_per_record"] == {"b": {"mbu_min": 0.5}}


def test_the_cost_estimate_falls_when_the_cache_is_warm(tmp_path: Path, caching: Path) -> None:
    root = synth_kb(tmp_path / "kb", 300, seed=7)
    assert plausibility._cost(inferkb.open(root)) > 0.7
    _run(root)
    assert plausibility._cost(inferkb.open(root)) < 0.15
