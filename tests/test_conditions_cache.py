"""The load-conditions audit's cache (inferkb.audit.conditions_cache): a warm run takes each unchanged benchmark's
reading from it and reports exactly what a cold run does; an edited record, another engine name or another
accelerator alias is read again."""

from __future__ import annotations

import json
from pathlib import Path

import inferkb
from conftest import rewrite_cache_entry, synth_kb
from inferkb.audit import load_conditions
from inferkb.audit.conditions_cache import conditions_cache
from inferkb.resolve import engine_names


def _synth_kb(root: Path) -> Path:
    return synth_kb(root, 300, seed=5)


def _run(root: Path, **kw) -> tuple[dict, int, int]:
    """(load-conditions report, cache hits, benchmarks) of a fresh open of ``root``."""
    kb = inferkb.open(root, **kw)
    report = kb.audit("load-conditions").to_dict()
    cache = conditions_cache(kb, engine_names(kb))
    return report, (cache.hits if cache else 0), len(list(kb.by_type("benchmark")))


def test_warm_load_conditions_equal_cold_on_the_real_corpus(research_kb: Path, caching: Path) -> None:
    plain, hits, n = _run(research_kb, cache=False)
    assert hits == 0 and n > 100
    cold, hits, _ = _run(research_kb)
    assert hits == 0 and cold == plain
    assert any(p.name.startswith("conditions-") for p in caching.iterdir())
    warm, hits, _ = _run(research_kb)
    assert hits > n / 2  # files with \\u escapes are never cached by the loader, so they have no stamp
    assert warm == plain


def test_a_warm_run_really_takes_the_stored_reading(tmp_path: Path, caching: Path) -> None:
    # White-box: an entry rewritten through the cache's own API (valid checksum) is what the warm run reports.
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    kb = inferkb.open(root)
    cache = conditions_cache(kb, engine_names(kb))
    key = next(k for k, e in cache.entries.items() if e[1][1][0])
    entry = cache.entries[key]
    entry[1][1][0][0][1] = "a message no reading writes"
    rewrite_cache_entry(cache, key, entry)
    warm, hits, n = _run(root)
    assert hits == n
    assert "a message no reading writes" in [f["message"] for f in warm["findings"] if f["record"] == key]
    assert warm != cold


def test_an_edited_benchmark_is_read_again(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    _run(root)
    path = sorted((root / "data" / "benchmarks").iterdir())[0]
    data = json.loads(path.read_text())
    data["conditions"]["warmup"] = None
    data["methodology"] = "Measured after 7 warmup iterations."
    path.write_text(json.dumps(data, indent=2))
    warm, hits, n = _run(root)
    assert hits == n - 1
    assert warm == _run(root, cache=False)[0]
    key = f"benchmarks/{data['id']}"
    warmup = [f for f in warm["findings"] if f["record"] == key and f["extra"]["condition"] == "warmup"]
    assert [f["code"] for f in warmup] == ["KB303"] and warmup[0]["extra"]["value"] == 7


def test_another_engine_name_reads_every_record_again(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    _run(root)
    path = sorted((root / "data" / "engines").iterdir())[0]
    data = json.loads(path.read_text())
    data["aliases"] = [*(data.get("aliases") or []), "a new engine alias"]
    path.write_text(json.dumps(data, indent=2))
    warm, hits, _ = _run(root)
    assert hits == 0
    assert warm == _run(root, cache=False)[0]


def test_another_accelerator_alias_reads_its_benchmarks_again(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    _run(root)
    kb = inferkb.open(root, cache=False)
    used = [r.data["accelerator_ids"][0] for r in kb.by_type("benchmark") if r.data.get("accelerator_ids")]
    aid = max(set(used), key=used.count)
    naming = sum(1 for r in kb.by_type("benchmark") if aid in (r.data.get("accelerator_ids") or []))
    path = root / "data" / "accelerators" / f"{aid}.json"
    data = json.loads(path.read_text())
    data["aliases"] = [*(data.get("aliases") or []), "Zorblax 9000"]
    path.write_text(json.dumps(data, indent=2))
    warm, hits, n = _run(root)
    assert 0 < naming and hits == n - naming
    assert warm == _run(root, cache=False)[0]


def test_the_cost_estimate_falls_when_the_cache_is_warm(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold = load_conditions._cost(inferkb.open(root))
    _run(root)
    warm = load_conditions._cost(inferkb.open(root))
    assert cold > 1.5 and warm < 0.3
    assert load_conditions._cost(inferkb.open(root, cache=False)) == cold
