"""The citations audit's cache (inferkb.audit.citations_cache): a warm run takes each unchanged record's KB601/KB604
result from it and reports exactly what a cold run does; an edited record is scanned again alone, a change to the
id vocabulary or to the set of source records scans every record again; a corrupt or foreign shard is ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inferkb
from conftest import edit_record, rewrite_cache_entry, synth_kb
from inferkb.audit import citations
from inferkb.audit.citations_cache import citations_cache


def _synth_kb(root: Path) -> Path:
    return synth_kb(root, 300, seed=3)


def _cache(kb):
    return citations_cache(kb, *citations._vocabulary(kb))


def _run(root: Path | None, **kw) -> tuple[dict, int, int]:
    """(citations report, cache hits, records) of a fresh open of ``root``."""
    kb = inferkb.open(root, **kw)
    report = kb.audit("citations").to_dict()
    cache = _cache(kb)
    return report, (cache.hits if cache else 0), len(kb.records)


def _add_source(root: Path, source_id: str) -> None:
    template = sorted((root / "data" / "sources").iterdir())[0]
    data = json.loads(template.read_text())
    data["id"] = source_id
    (root / "data" / "sources" / f"{source_id}.json").write_text(json.dumps(data, indent=2))


def _shards(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("citations-"))


def test_warm_citations_equal_cold_on_the_real_corpus(research_kb: Path, caching: Path) -> None:
    plain, hits, n = _run(research_kb, cache=False)
    assert hits == 0 and plain["summary"]["figures"]["citations"]["records_walked_field_by_field"] > 0
    cold, hits, _ = _run(research_kb)
    assert hits == 0 and cold == plain
    assert _shards(caching)
    warm, hits, _ = _run(research_kb)
    assert hits > n / 2  # files with \\u escapes are never cached by the loader, so they have no stamp
    assert warm == plain


def test_warm_citations_equal_cold_on_the_bundled_kb(caching: Path) -> None:
    plain, _, n = _run(None, cache=False)
    _run(None)
    warm, hits, _ = _run(None)
    assert hits > n / 2 and warm == plain


def test_every_record_gets_a_small_entry(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, n = _run(root)
    payloads = [entry[1] for entry in _cache(inferkb.open(root)).entries.values()]
    assert len(payloads) == n
    walked = cold["summary"]["figures"]["citations"]["records_walked_field_by_field"]
    assert payloads.count(0) == n - walked
    assert sum(len(p) for p in payloads if type(p) is list) == len(cold["findings"]) > 0


def test_a_warm_run_really_takes_the_stored_result(tmp_path: Path, caching: Path) -> None:
    # White-box: an entry rewritten through the cache's own API (valid checksum) is what the warm run reports.
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    cache = _cache(inferkb.open(root))
    key = next(k for k, e in cache.entries.items() if type(e[1]) is list)
    entry = cache.entries[key]
    entry[1][0][3] = "a message no check writes"
    rewrite_cache_entry(cache, key, entry)
    warm, hits, n = _run(root)
    assert hits == n
    assert "a message no check writes" in [f["message"] for f in warm["findings"] if f["record"] == key]
    assert warm != cold


def test_an_edited_record_is_scanned_again_alone(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, _ = _run(root)
    path = sorted((root / "data" / "benchmarks").iterdir())[0]
    key = f"benchmarks/{path.stem}"
    assert not [f for f in cold["findings"] if f["record"] == key]
    edit_record(path, notes="TODO: fill in the methodology")
    warm, hits, n = _run(root)
    assert hits == n - 1
    assert warm == _run(root, cache=False)[0]
    assert [f["code"] for f in warm["findings"] if f["record"] == key] == ["KB604"]


def test_a_new_source_record_scans_every_record_again(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    _run(root)
    _add_source(root, "src-added-later")
    warm, hits, _ = _run(root)
    assert hits == 0
    assert warm == _run(root, cache=False)[0]


def test_a_new_id_in_a_sources_list_scans_every_record_again(tmp_path: Path, caching: Path) -> None:
    # No source record is added: only the vocabulary grows, and an unchanged record's mention becomes a finding.
    root = _synth_kb(tmp_path / "kb")
    first, second = sorted((root / "data" / "benchmarks").iterdir())[:2]
    edit_record(second, notes="Numbers as in src-ghost-two.")
    cold, _, _ = _run(root)
    key = f"benchmarks/{second.stem}"
    assert not [f for f in cold["findings"] if f["record"] == key]
    edit_record(first, sources=[*json.loads(first.read_text())["sources"], "src-ghost-two"])
    warm, hits, _ = _run(root)
    assert hits == 0
    assert [f["code"] for f in warm["findings"] if f["record"] == key] == ["KB601"]
    assert warm == _run(root, cache=False)[0]


def test_a_source_record_for_an_id_already_cited_scans_every_record_again(tmp_path: Path, caching: Path) -> None:
    # The vocabulary already holds the id (another record lists it in sources); only the set of source records
    # changes, and with it the KB601 message ("has no source record here" -> "a source record of this KB").
    root = _synth_kb(tmp_path / "kb")
    first, second = sorted((root / "data" / "benchmarks").iterdir())[:2]
    edit_record(first, sources=[*json.loads(first.read_text())["sources"], "src-ghost-one"])
    edit_record(second, notes="Numbers as in src-ghost-one.")
    cold, _, _ = _run(root)
    key = f"benchmarks/{second.stem}"
    assert [f["extra"]["source_record_exists"] for f in cold["findings"] if f["record"] == key] == [False]
    _add_source(root, "src-ghost-one")
    warm, hits, _ = _run(root)
    assert hits == 0
    assert [f["extra"]["source_record_exists"] for f in warm["findings"] if f["record"] == key] == [True]
    assert warm == _run(root, cache=False)[0]


def _largest_shard(folder: Path) -> tuple[Path, dict, bytes]:
    """(file, header, body) of the citations shard with the most entries."""
    shard = max(_shards(folder), key=lambda p: p.stat().st_size)
    head, body = shard.read_bytes().split(b"\n", 1)
    return shard, json.loads(head), body


@pytest.mark.parametrize("damage", ["garbage", "valid json, wrong checksum"])
def test_a_corrupt_shard_is_ignored(tmp_path: Path, caching: Path, damage: str) -> None:
    root = _synth_kb(tmp_path / "kb")
    cold, _, n = _run(root)
    shard, head, body = _largest_shard(caching)
    lost = len(json.loads(body))
    if damage == "garbage":
        body = body[:-40] + b"x" * 40
    else:  # same length, still JSON: one record's "not walked" becomes "walked"
        assert b'",0]' in body
        body = body.replace(b'",0]', b'",1]', 1)
    shard.write_bytes(json.dumps(head).encode() + b"\n" + body)
    warm, hits, _ = _run(root)
    assert lost > 0 and hits == n - lost
    assert warm == cold


@pytest.mark.parametrize("field", ["root", "fingerprint", "format"])
def test_a_shard_written_for_something_else_is_ignored(tmp_path: Path, caching: Path, field: str) -> None:
    # The entries would match (same files, same stamps); only the header says whose they are.
    root = _synth_kb(tmp_path / "kb")
    cold, _, n = _run(root)
    shard, head, body = _largest_shard(caching)
    lost = len(json.loads(body))
    head[field] = f"{head[field]}-elsewhere"
    shard.write_bytes(json.dumps(head).encode() + b"\n" + body)
    warm, hits, _ = _run(root)
    assert lost > 0 and hits == n - lost
    assert warm == cold


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_no_cache_reads_and_writes_nothing(tmp_path: Path, caching: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    root = _synth_kb(tmp_path / "kb")
    if how == "environment":
        monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    kb = inferkb.open(root, **({} if how == "environment" else {"cache": False}))
    assert kb.audit("citations").findings
    assert _cache(kb) is None
    assert not caching.exists() or not _shards(caching)


def test_the_cost_estimate_falls_when_the_cache_is_warm(tmp_path: Path, caching: Path) -> None:
    root = _synth_kb(tmp_path / "kb")
    assert citations._cost(inferkb.open(root)) > 1.3
    _run(root)
    assert citations._cost(inferkb.open(root)) < 0.3
