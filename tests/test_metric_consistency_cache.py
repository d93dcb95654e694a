"""The metric-consistency audit's cache (inferkb.audit.metric_consistency_cache): a warm run takes each unchanged
benchmark's result from it and reports exactly what a cold run does; an edited benchmark is checked again alone,
another metric registry checks every benchmark again; a corrupt shard is ignored; with the cache off nothing is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inferkb
from conftest import edit_record, rewrite_cache_entry, synth_kb
from inferkb.audit import metric_consistency
from inferkb.audit.metric_consistency_cache import SKIPPED, metric_consistency_cache


def _synth_kb(root: Path) -> Path:
    return synth_kb(root, 300, seed=3)


def _run(root: Path | None, **kw) -> tuple[dict, int, int]:
    """(metric-consistency report, cache hits, benchmarks) of a fresh open of ``root``."""
    kb = inferkb.open(root, **kw)
    report = kb.audit("metric-consistency").to_dict()
    cache = metric_consistency_cache(kb)
    return report, (cache.hits if cache else 0), len(list(kb.by_type("benchmark")))


def _figures(report: dict) -> dict:
    return report["summary"]["figures"]["metric-consistency"]


def _shards(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("metric-consistency-"))


def test_warm_metric_consistency_equals_cold_on_the_real_corpus(research_kb: Path, caching: Path) -> None:
    plain, hits, n = _run(research_kb, cache=False)
    assert hits == 0 and _figures(plain)["skipped_no_metric"] > 0 and _figures(plain)["percent_quotes_checked"] > 0
    cold, hits, _ = _run(research_kb)
    assert hits == 0 and cold == plain
    assert _shards(caching)
    warm, hits, _ = _run(research_kb)
    assert hits > n / 2  # files with \\u escapes are never cached by the loader, so they have no stamp
    assert warm == plain


def test_warm_metric_consistency_equals_cold_on_the_bundled_kb(caching: Path) -> None:
    plain, _, n = _run(None, cache=False)
    _run(None)
    warm, hits, _ = _run(None)
    assert hits > n / 2 and warm == plain


def test_every_benchmark_gets_a_small_entry(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    benchmarks = sorted((root / "data" / "benchmarks").iterdir())
    edit_record(benchmarks[0], metric="a_metric_no_registry_has")
    edit_record(benchmarks[1], methodology="Median went from 100 ms to 150 ms (+50%) after the change.")
    cold, _, n = _run(root)
    payloads = {key: entry[1] for key, entry in metric_consistency_cache(inferkb.open(root)).entries.items()}
    assert len(payloads) == n
    assert payloads[f"benchmarks/{benchmarks[0].stem}"] == SKIPPED
    assert _figures(cold)["skipped_no_metric"] == 1 and _figures(cold)["percent_quotes_checked"] >= 1
    assert sum(len(p[1]) for p in payloads.values() if type(p) is list) == len(cold["findings"]) > 0
    assert all(type(p) is int or p[1] for p in payloads.values())


def test_a_warm_run_really_takes_the_stored_result(tmp_path: Path, caching: Path) -> None:
    # White-box: an entry rewritten through the cache's own API (valid checksum) is what the warm run reports.
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    cache = metric_consistency_cache(inferkb.open(root))
    key = next(k for k, e in cache.entries.items() if type(e[1]) is list)
    entry = cache.entries[key]
    entry[1][1][0][3] = "a message no check writes"
    rewrite_cache_entry(cache, key, entry)
    warm, hits, n = _run(root)
    assert hits == n
    assert "a message no check writes" in [f["message"] for f in warm["findings"] if f["record"] == key]
    assert warm != cold


def test_an_edited_benchmark_is_checked_again_alone(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    path = sorted((root / "data" / "benchmarks").iterdir())[0]
    edit_record(path, methodology="Median went from 100 ms to 150 ms (+40%) after the change.")
    warm, hits, n = _run(root)
    assert hits == n - 1
    assert warm == _run(root, cache=False)[0]
    assert _figures(warm)["percent_quotes_checked"] == _figures(cold)["percent_quotes_checked"] + 1
    assert "KB404" in [f["code"] for f in warm["findings"] if f["record"] == f"benchmarks/{path.stem}"]


def test_another_metric_registry_checks_every_benchmark_again(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    unscoped = next(f["message"].split()[0] for f in cold["findings"] if f["code"] == "KB406")
    registry = json.loads((root / "metrics.json").read_text())
    entry = next(m for m in registry["metrics"] if m["name"] == unscoped)
    entry["dimension"] = "quality"  # not a rate any more: its scope is not asked for
    (root / "metrics.json").write_text(json.dumps(registry))
    warm, hits, _ = _run(root)
    assert hits == 0
    assert warm == _run(root, cache=False)[0] != cold


@pytest.mark.parametrize("damage", ["garbage", "valid json, wrong checksum"])
def test_a_corrupt_shard_is_ignored(tmp_path: Path, caching: Path, damage: str) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, n = _run(root)
    shard = max(_shards(caching), key=lambda p: p.stat().st_size)
    head, body = shard.read_bytes().split(b"\n", 1)
    lost = len(json.loads(body))
    if damage == "garbage":
        body = body[:-40] + b"x" * 40
    else:  # same length, still JSON: one record's "0 quoted percentages checked" becomes 1
        assert b'",0]' in body
        body = body.replace(b'",0]', b'",1]', 1)
    shard.write_bytes(head + b"\n" + body)
    warm, hits, _ = _run(root)
    assert lost > 0 and hits == n - lost
    assert warm == cold


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_no_cache_reads_and_writes_nothing(tmp_path: Path, caching: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    root = _synth_kb(tmp_path / "kb")
    if how == "environment":
        monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    kb = inferkb.open(root, **({} if how == "environment" else {"cache": False}))
    assert kb.audit("metric-consistency").findings
    assert metric_consistency_cache(kb) is None
    assert not caching.exists() or not _shards(caching)


def test_the_cost_estimate_falls_when_the_cache_is_warm(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    assert metric_consistency._cost(inferkb.open(root)) > 0.15
    _run(root)
    assert metric_consistency._cost(inferkb.open(root)) < 0.03
