"""The load cache (inferkb.store.cache): unchanged files come from it, anything changed is read and checked again,
and results are the same with and without it."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, REPO, rec, write_kb
from inferkb.store import cache as load_cache

TODAY = dt.date(2026, 6, 1)


def _findings(kb: inferkb.KB) -> list[dict]:
    return [f.to_dict() for f in kb.validate(today=TODAY).findings]


def _records(kb: inferkb.KB) -> dict[str, dict]:
    return {k: r.data for k, r in kb.records.items()}


def _kb_with_findings(root: Path) -> Path:
    """A KB whose records draw per-record findings (schema, id, date, confidence) and reference findings."""
    return write_kb(
        root,
        {
            "data/accelerators/good-one.json": rec("accelerator", "good-one"),
            "data/accelerators/no-name.json": {k: v for k, v in rec("accelerator", "no-name").items() if k != "name"},
            "data/accelerators/wrong-id.json": rec("accelerator", "other-id"),
            "data/gotchas/bad-date.json": rec("gotcha", "bad-date", updated="2026-02-30"),
            "data/gotchas/future.json": rec("gotcha", "future", updated="2026-12-31"),
            "data/sources/too-sure.json": rec("source", "too-sure", confidence=3),
            "data/models/dangling.json": rec("model", "dangling", sources=["no-such-source"]),
        },
    )


def test_a_second_load_takes_every_unchanged_file_from_the_cache(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    first = inferkb.open(root)
    assert first.cache_hits == 0 and {p.name.split("-")[0] for p in caching.iterdir()} == {"load"}
    second = inferkb.open(root)
    assert second.cache_hits == len(second.records) == 7
    assert _records(second) == _records(first)


def test_findings_with_the_cache_are_those_without_it(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    plain = _findings(inferkb.open(root, cache=False))
    assert {f["code"] for f in plain} >= {"KB101", "KB102", "KB105", "KB106", "KB107", "KB201"}
    assert _findings(inferkb.open(root)) == plain  # cold: fills both cache files
    assert {p.name.split("-")[0] for p in caching.iterdir()} == {"load", "findings"}
    warm = inferkb.open(root)
    assert warm.cache_hits == 7
    assert _findings(warm) == plain


def test_today_is_part_of_the_findings_key(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    assert "KB106" in {f["code"] for f in _findings(inferkb.open(root))}  # 2026-12-31 is after TODAY
    later = [f.to_dict() for f in inferkb.open(root).validate(today=dt.date(2027, 1, 1)).findings]
    assert "KB106" not in {f["code"] for f in later}


def test_an_edited_file_is_read_and_validated_again(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    _findings(inferkb.open(root))
    path = root / "data/accelerators/good-one.json"
    path.write_text(json.dumps(rec("accelerator", "good-one", confidence=7)), encoding="utf-8")
    kb = inferkb.open(root)
    assert kb.cache_hits == 6
    assert kb.get("accelerators/good-one").data["confidence"] == 7
    assert any(f["code"] == "KB107" and f["record"] == "accelerators/good-one" for f in _findings(kb))


def test_a_touched_file_of_the_same_size_and_mtime_is_read_again(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    _findings(inferkb.open(root))
    path = root / "data/sources/too-sure.json"
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert '"confidence": 3' in text
    path.write_text(text.replace('"confidence": 3', '"confidence": 0'), encoding="utf-8")  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back: only ctime tells
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    kb = inferkb.open(root)
    assert kb.cache_hits == 6
    assert kb.get("sources/too-sure").data["confidence"] == 0
    assert not any(f["code"] == "KB107" for f in _findings(kb))


def test_a_file_changed_within_the_racy_window_is_not_kept(tmp_path: Path, caching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    monkeypatch.setattr(load_cache, "RACY_NS", 2_000_000_000)  # the real window: every file was just written
    inferkb.open(root)
    assert inferkb.open(root).cache_hits == 0


def test_a_code_version_change_drops_the_cache(tmp_path: Path, caching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    _findings(inferkb.open(root))
    monkeypatch.setattr(load_cache, "_CODE_VERSION", "another inferkb")
    assert inferkb.open(root).cache_hits == 0


def test_a_schema_change_validates_every_record_again(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    assert not any(f["record"] == "accelerators/good-one" for f in _findings(inferkb.open(root)))
    schema = json.loads((root / "schemas/accelerator.schema.json").read_text())
    schema["required"].append("vendor")
    (root / "schemas/accelerator.schema.json").write_text(json.dumps(schema))
    kb = inferkb.open(root)
    assert kb.cache_hits == 7  # parsing does not depend on schemas
    assert _findings(kb) == _findings(inferkb.open(root, cache=False))
    assert any(f["code"] == "KB101" and f["record"] == "accelerators/good-one" for f in _findings(kb))


def test_a_metric_registry_change_validates_benchmarks_again(tmp_path: Path, caching: Path) -> None:
    bench = rec("benchmark", "b-one", metric="ttft_ms", value=-5)
    registry = {"metrics": [{"name": "ttft_ms", "dimension": "latency", "unit": "ms", "direction": "lower"}]}
    root = write_kb(
        tmp_path / "kb", {"data/benchmarks/b-one.json": bench, "metrics.json": json.dumps(registry)}, toml=(BUNDLED / "kb.toml").read_text()
    )
    before = _findings(inferkb.open(root))
    registry["metrics"][0]["dimension"] = "ratio"
    (root / "metrics.json").write_text(json.dumps(registry))
    after = _findings(inferkb.open(root))
    assert after == _findings(inferkb.open(root, cache=False))
    assert [f["code"] for f in before if f["code"] == "KB121"] != [f["code"] for f in after if f["code"] == "KB121"]


@pytest.mark.parametrize("damage", ["garbage", "flipped byte", "truncated", "empty", "header only"])
def test_a_corrupt_cache_file_is_ignored_and_rewritten(tmp_path: Path, caching: Path, damage: str) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    plain = _findings(inferkb.open(root, cache=False))
    _findings(inferkb.open(root))
    for file in caching.iterdir():
        raw = file.read_bytes()
        head, body = raw.split(b"\n", 1)
        if damage == "garbage":
            bad = b"\x00\xff not a cache"
        elif damage == "flipped byte":
            i = body.index(b"data/") + 1
            bad = head + b"\n" + body[:i] + b"A" + body[i + 1 :]  # still JSON, same length: only the checksum tells
        elif damage == "truncated":
            bad = raw[: len(raw) // 2]
        elif damage == "empty":
            bad = b""
        else:
            bad = head + b"\n"
        file.write_bytes(bad)
    kb = inferkb.open(root)
    assert kb.cache_hits == 0
    assert _records(kb) == _records(inferkb.open(root, cache=False))
    assert _findings(kb) == plain
    assert inferkb.open(root).cache_hits == 7  # every shard rewritten


def test_another_kbs_cache_file_is_not_used(tmp_path: Path, caching: Path) -> None:
    one = write_kb(tmp_path / "one", {"data/accelerators/a-one.json": rec("accelerator", "a-one")})
    two = write_kb(tmp_path / "two", {"data/accelerators/a-one.json": rec("accelerator", "a-one", confidence=0.9)})
    inferkb.open(one)
    inferkb.open(two)
    files = {p.name: p for p in caching.iterdir()}
    assert len(files) == 2  # one shard each, of the same number (the same relative path)
    names = sorted(files)
    foreign = files[names[0]].read_bytes()
    files[names[1]].write_bytes(foreign)  # one KB's cache under the other's name
    for root in (one, two):
        kb = inferkb.open(root)
        assert _records(kb) == _records(inferkb.open(root, cache=False))


def test_a_cached_file_swapped_for_a_fifo_is_reported_not_taken_from_the_cache(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    inferkb.open(root)
    path = root / "data/accelerators/good-one.json"
    path.unlink()
    os.mkfifo(path)
    kb = inferkb.open(root)
    assert "accelerators/good-one" not in kb.records
    assert [f.code for f in kb.load_findings] == ["KB014"]


def test_a_cached_file_swapped_for_a_symlink_out_of_the_kb_is_not_followed(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    inferkb.open(root)
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(rec("accelerator", "good-one")))
    path = root / "data/accelerators/good-one.json"
    path.unlink()
    path.symlink_to(outside)
    kb = inferkb.open(root)
    assert "accelerators/good-one" not in kb.records
    assert [f.code for f in kb.load_findings] == ["KB009"]


def test_a_record_written_through_the_store_is_validated_not_taken_from_the_findings_cache(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    kb = inferkb.open(root)
    _findings(kb)
    kb.write_records([rec("source", "too-sure")], overwrite=True, validate=False)
    assert not any(f["record"] == "sources/too-sure" for f in _findings(kb))
    assert not any(f["record"] == "sources/too-sure" for f in _findings(inferkb.open(root)))


def test_no_cache_switches_keep_every_file_out(tmp_path: Path, caching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    inferkb.open(root, cache=False).validate()
    assert not caching.exists()
    time.sleep(2.1)  # the CLI processes use the real racy window: files written within 2 s are never cached
    env = {**os.environ, "INFERKB_CACHE_DIR": str(caching)}
    cli = [sys.executable, "-m", "inferkb"]
    run = subprocess.run([*cli, "validate", "--kb", str(root), "--no-cache"], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and not caching.exists()
    run = subprocess.run([*cli, "--no-cache", "validate", "--kb", str(root)], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and not caching.exists()
    run = subprocess.run([*cli, "validate", "--kb", str(root)], env={**env, "INFERKB_NO_CACHE": "1"}, capture_output=True, text=True)
    assert run.returncode == 1 and not caching.exists()
    run = subprocess.run([*cli, "validate", "--kb", str(root)], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and {p.name.split("-")[0] for p in caching.iterdir()} == {"load", "findings"}


def _synth():
    spec = importlib.util.spec_from_file_location("synth_kb", REPO / "benchmarks" / "synth_kb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reports_with_and_without_cache(root: Path) -> tuple[dict, dict, dict]:
    plain = inferkb.open(root, cache=False).check(jobs=1).to_dict()
    cold = inferkb.open(root).check(jobs=1).to_dict()
    warm_kb = inferkb.open(root)
    assert warm_kb.cache_hits == len(warm_kb.records) > 0
    return plain, cold, warm_kb.check(jobs=1).to_dict()


def test_check_on_a_synthetic_kb_is_the_same_with_and_without_the_cache(tmp_path: Path, caching: Path) -> None:
    root = tmp_path / "synth"
    _synth().generate(root, 300, seed=3)
    # some per-record findings too: a schema error, a wrong id, an impossible statistic
    bench = sorted((root / "data" / "benchmarks").iterdir())[0]
    data = json.loads(bench.read_text())
    data["confidence"] = "high"
    data["id"] = "renamed"
    bench.write_text(json.dumps(data, indent=2))
    plain, cold, warm = _reports_with_and_without_cache(root)
    assert {f["code"] for f in plain["findings"]} >= {"KB101", "KB102"}
    assert cold == plain and warm == plain


def test_check_on_the_bundled_kb_is_the_same_with_and_without_the_cache(caching: Path) -> None:
    assert BUNDLED.is_dir()
    plain = inferkb.open(None, cache=False).check(jobs=1).to_dict()
    inferkb.open(None).validate()
    warm_kb = inferkb.open(None)
    assert warm_kb.cache_hits > len(warm_kb.records) / 2  # (files with \u escapes take the strict parser: never cached)
    assert warm_kb.check(jobs=1).to_dict() == plain


def test_warm_validation_takes_per_record_findings_from_the_cache(tmp_path: Path, caching: Path) -> None:
    # White-box: a findings cache entry rewritten (with a valid checksum) is what a warm run reports, so the
    # per-record rules really were skipped for an unchanged file; the KB-wide rules still ran.
    import zlib

    import orjson

    root = _kb_with_findings(tmp_path / "kb")
    _findings(inferkb.open(root))
    (file,) = [p for p in caching.iterdir() if p.name.startswith("findings-") and b"good-one" in p.read_bytes()]
    header, body = file.read_bytes().split(b"\n", 1)
    entries = orjson.loads(body)
    entries["data/accelerators/good-one.json"][1] = [
        ["KB107", "confidence-range", "error", "planted", "accelerators/good-one", None, None, None, None]
    ]
    body = orjson.dumps(entries)
    head = orjson.loads(header)
    head.update(length=len(body), crc32=zlib.crc32(body))
    file.write_bytes(orjson.dumps(head) + b"\n" + body)
    found = _findings(inferkb.open(root))
    assert any(f["message"] == "planted" for f in found)
    assert any(f["code"] == "KB201" for f in found)


def test_an_edit_rewrites_only_the_shard_of_its_file(tmp_path: Path, caching: Path) -> None:
    root = _kb_with_findings(tmp_path / "kb")
    inferkb.open(root)
    before = {p.name: p.stat().st_mtime_ns for p in caching.iterdir()}
    assert len(before) > 1
    rel = "data/gotchas/future.json"
    (root / rel).write_text(json.dumps(rec("gotcha", "future", confidence=0.25)), encoding="utf-8")
    assert inferkb.open(root).cache_hits == 6
    after = {p.name: p.stat().st_mtime_ns for p in caching.iterdir()}
    changed = sorted(n for n in after if after[n] != before.get(n))
    assert changed == [n for n in sorted(after) if n.endswith(f"-{load_cache.shard_of(rel):02d}.json")]
    assert inferkb.open(root).get("gotchas/future").data["confidence"] == 0.25
