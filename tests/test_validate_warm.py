"""Warm validate (inferkb.validate_warm): the unchanged files from the findings cache give the cold report exactly.

Each test turns the load cache on in a folder of its own (the suite runs with it off) with no racy window, fills
it with one validate, then compares the warm report (and the CLI's JSON and text, byte for byte) with a run
without the cache.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import inferkb
from conftest import BUNDLED, rec
from inferkb import validate as validate_mod
from inferkb import validate_warm
from inferkb.cli import cli
from inferkb.store import cache as load_cache
from test_validate_split import troubled_kb  # noqa: F401 - the fixture: KB0xx problems, rule errors, broken references

TODAY = dt.date(2026, 6, 1)


def _cold(root: Path | None, **options) -> dict:
    return inferkb.open(root, cache=False).validate(today=TODAY, **options).to_dict()


def _fill(root: Path | None) -> None:
    """The run that fills the cache: the usual load (load cache) and validate (findings cache)."""
    assert validate_warm.validate_path(root, today=TODAY) is None  # nothing cached yet
    inferkb.open(root).validate(today=TODAY)


def _warm(root: Path | None, **options) -> dict:
    report = validate_warm.validate_path(root, today=TODAY, **options)
    assert report is not None, "the warm path did not apply"
    return report.to_dict()


def _counting_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the records whose per-record checks run from now on."""
    seen: list[str] = []
    check = validate_mod.record_checks

    def spy(kb, rec, schemas, today):
        seen.append(rec.key)
        return check(kb, rec, schemas, today)

    monkeypatch.setattr(validate_mod, "record_checks", spy)
    return seen


def test_a_warm_report_equals_the_cold_one_with_problem_files(troubled_kb, caching, monkeypatch):  # noqa: F811
    cold = _cold(troubled_kb)
    _fill(troubled_kb)
    checks = _counting_checks(monkeypatch)
    assert _warm(troubled_kb) == cold
    codes = {f["code"] for f in cold["findings"]}
    assert {"KB001", "KB002", "KB008", "KB009", "KB010", "KB011", "KB012", "KB014", "KB101", "KB105", "KB106"} <= codes
    assert {"KB107", "KB201", "KB205"} <= codes
    # only the records no cache may keep were checked again (KB011's Bad_Name.json, the symlink out of the KB)
    assert checks and all("Bad_Name" in key for key in checks)


def test_options_types_select_ignore_and_budget_pass_through(troubled_kb, caching):  # noqa: F811
    _fill(troubled_kb)
    for options in ({"types": ["benchmark"], "ignore": ["KB101"], "max_dangling_refs": 2}, {"select": ["KB2"]}, {"types": ["sources"]}):
        assert _warm(troubled_kb, **options) == _cold(troubled_kb, **options)


def test_the_bundled_kb_warm_equals_cold(caching):
    assert BUNDLED.is_dir()
    cold = _cold(None)
    _fill(None)
    assert _warm(None) == cold


def test_the_research_corpus_warm_equals_cold(research_kb, caching):
    cold = _cold(research_kb)
    assert {f["code"] for f in cold["findings"]} >= {"KB101"}
    _fill(research_kb)
    assert _warm(research_kb) == cold


def _cli(root: Path | None, *args: str) -> tuple[int, bytes]:
    kb = ["--kb", str(root)] if root is not None else []
    result = CliRunner().invoke(cli, ["validate", *kb, *args])
    return result.exit_code, result.stdout_bytes


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_cli_output_is_byte_identical_to_a_cold_run(troubled_kb, caching, monkeypatch, fmt):  # noqa: F811
    monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    cold = _cli(troubled_kb, "--format", fmt)
    monkeypatch.delenv("INFERKB_NO_CACHE")
    taken = []
    warm_path = validate_warm.validate_path
    monkeypatch.setattr(validate_warm, "validate_path", lambda *a, **k: taken.append(r := warm_path(*a, **k)) or r)
    fill = _cli(troubled_kb, "--format", fmt)
    warm = _cli(troubled_kb, "--format", fmt)
    assert cold[0] == 1 and fill == cold and warm == cold
    assert taken[0] is None and taken[1] is not None  # the second run took the warm path
    if fmt == "json":
        assert b'"KB014"' in warm[1] and b'"KB201"' in warm[1]


def test_cli_bundled_kb_json_is_byte_identical_to_a_cold_run(caching, monkeypatch):
    monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    cold = _cli(None, "--format", "json")
    monkeypatch.delenv("INFERKB_NO_CACHE")
    assert _cli(None, "--format", "json") == cold  # fills
    assert _cli(None, "--format", "json") == cold


def _small_kb(root: Path) -> Path:
    from conftest import write_kb

    return write_kb(
        root,
        {
            "data/accelerators/good-one.json": rec("accelerator", "good-one"),
            "data/accelerators/wrong-id.json": rec("accelerator", "other-id"),
            "data/gotchas/bad-date.json": rec("gotcha", "bad-date", updated="2026-02-30"),
            "data/sources/too-sure.json": rec("source", "too-sure", confidence=3),
            "data/sources/cited.json": rec("source", "cited"),
            "data/models/citing.json": rec("model", "citing", sources=["cited"]),
            "data/models/dangling.json": rec("model", "dangling", sources=["no-such-source"]),
        },
    )


def test_an_edited_file_is_checked_again_and_only_it(tmp_path, caching, monkeypatch):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    path = root / "data/accelerators/good-one.json"
    path.write_text(json.dumps(rec("accelerator", "good-one", confidence=7)), encoding="utf-8")
    checks = _counting_checks(monkeypatch)
    warm = _warm(root)
    assert checks == ["accelerators/good-one"]
    assert any(f["code"] == "KB107" and f["record"] == "accelerators/good-one" for f in warm["findings"])
    assert warm == _cold(root)
    checks.clear()
    assert _warm(root) == warm and checks == []  # the fresh entry was kept


def test_a_same_size_same_mtime_edit_is_seen_by_its_ctime(tmp_path, caching, monkeypatch):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    path = root / "data/sources/too-sure.json"
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"confidence": 3', '"confidence": 0'), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    checks = _counting_checks(monkeypatch)
    warm = _warm(root)
    assert checks == ["sources/too-sure"]
    assert not any(f["code"] == "KB107" for f in warm["findings"])
    assert warm == _cold(root)


def test_a_removed_file_breaks_the_references_to_it(tmp_path, caching):
    # The citing record is taken from the cache: its references are resolved again over the records as they are now.
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    (root / "data/sources/cited.json").unlink()
    warm = _warm(root)
    assert any(f["code"] == "KB201" and f["record"] == "models/citing" for f in warm["findings"])
    assert warm == _cold(root)


def test_a_cached_file_swapped_for_a_fifo_or_a_directory_is_reported(tmp_path, caching):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    os.unlink(root / "data/gotchas/bad-date.json")
    os.mkfifo(root / "data/gotchas/bad-date.json")
    os.unlink(root / "data/accelerators/wrong-id.json")
    (root / "data/accelerators/wrong-id.json").mkdir()
    warm = _warm(root)
    assert {"KB014", "KB010"} <= {f["code"] for f in warm["findings"]}
    assert warm == _cold(root)


def test_a_file_changed_within_the_racy_window_is_checked_again(tmp_path, caching, monkeypatch):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    monkeypatch.setattr(load_cache, "RACY_NS", 10**20)  # every file counts as just written
    checks = _counting_checks(monkeypatch)
    warm = _warm(root)
    assert len(checks) == 7
    assert warm == _cold(root)


def test_another_day_or_a_schema_change_takes_the_usual_path(tmp_path, caching):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    assert validate_warm.validate_path(root, today=TODAY + dt.timedelta(days=1)) is None
    schema = root / "schemas" / "accelerator.schema.json"
    doc = json.loads(schema.read_text())
    doc.setdefault("required", []).append("vendor_url")
    schema.write_text(json.dumps(doc))
    assert validate_warm.validate_path(root, today=TODAY) is None


def test_the_cache_off_takes_the_usual_path(tmp_path, caching, monkeypatch):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    assert validate_warm.validate_path(root, today=TODAY) is None


def test_a_corrupt_findings_shard_is_ignored(tmp_path, caching, monkeypatch):
    root = _small_kb(tmp_path / "kb")
    _fill(root)
    for shard in caching.glob("findings-*.json"):
        shard.write_bytes(shard.read_bytes()[:-3])
    assert validate_warm.validate_path(root, today=TODAY) is None  # every shard refused: the usual path
    inferkb.open(root).validate(today=TODAY)  # rewrites them
    assert _warm(root) == _cold(root)


def test_an_unknown_type_is_the_usage_error_of_a_cold_run(tmp_path, caching):
    from inferkb.errors import UsageError

    root = _small_kb(tmp_path / "kb")
    _fill(root)
    with pytest.raises(UsageError) as cold:
        inferkb.open(root, cache=False).validate(types=["nosuch"], today=TODAY)
    with pytest.raises(UsageError) as warm:
        validate_warm.validate_path(root, types=["nosuch"], today=TODAY)
    assert str(warm.value) == str(cold.value) and "unknown type 'nosuch'" in str(warm.value)


def test_repeat_groups_compare_the_cached_members_whole(tmp_path, caching):
    # A member's cached cross-record data is its whole record: KB127 compares conditions of members taken from the cache.
    from analysis_helpers import bench, make_kb

    other = bench("g1-2", 300.0, repeat_group="g1")
    other["conditions"]["concurrency"] = 32  # KB127
    records = [
        bench("g1", 100.0, repeat_group="g1"),
        other,
        bench("g2", 1.0),
        bench("g2-2", 2.0, repeat_group="g2"),  # KB126: g2 is in no group
        bench("g3", 5.0, repeat_group="nope"),  # KB126: no such record
    ]
    root = make_kb(tmp_path, records)
    cold = _cold(root)
    _fill(root)
    warm = _warm(root)
    assert warm == cold
    codes = sorted((f["code"], f["record"]) for f in warm["findings"] if f["code"] in ("KB126", "KB127"))
    assert codes == [("KB126", "benchmarks/g2-2"), ("KB126", "benchmarks/g3"), ("KB127", "benchmarks/g1-2")]
