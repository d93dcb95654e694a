"""``check`` writes the load cache as one of its tasks (``KB.load(defer_save=True)``, ``Store.save_load_cache``).

On a first run the cache write (0.95 s of CPU at 100,000 synthetic records) would otherwise sit between the load
and the audits, in the one process that exists then; as a task it goes to whichever worker is less loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import synth_kb
from inferkb import audit as audit_pkg
from inferkb.cli import cli
from inferkb.kb import KB
from inferkb.parallel import Task


@pytest.fixture(scope="module")
def small_kb(tmp_path_factory) -> Path:
    return synth_kb(tmp_path_factory.mktemp("deferred") / "kb", 200, seed=5)


def _load_shards(folder: Path) -> list[Path]:
    return sorted(folder.glob("load-*.json"))


def test_a_deferred_load_writes_nothing_until_saved_once(small_kb, caching):
    kb = KB.load(small_kb, defer_save=True)
    assert _load_shards(caching) == []
    assert kb.unsaved_load_cache_share() == 1.0
    assert kb.save_load_cache() is True
    assert len(_load_shards(caching)) == 16
    assert kb.save_load_cache() is False and kb.unsaved_load_cache_share() == 0.0
    again = KB.load(small_kb, defer_save=True)
    assert again.cache_hits == len(again.records) == len(kb.records)
    assert again.unsaved_load_cache_share() == 0.0  # nothing new: no task to add


def test_without_defer_the_load_writes_at_once(small_kb, caching):
    KB.load(small_kb)
    assert len(_load_shards(caching)) == 16


def test_tasks_given_first_run_before_the_rest_and_stay_out_of_the_report(small_kb):
    kb = KB.load(small_kb, cache=False)
    order: list[str] = []
    first = [Task("note", lambda: order.append("first") or "not a report", 0.01)]
    report = audit_pkg.run_audits(kb, ["identity"], first=first)
    assert order == ["first"]
    assert report.figures.keys() == {"identity"}
    assert report.to_dict() == audit_pkg.run_audits(kb, ["identity"]).to_dict()


def _check(kb: Path) -> tuple[int, bytes]:
    result = CliRunner().invoke(cli, ["check", "--kb", str(kb), "--format", "json"])
    return result.exit_code, result.stdout_bytes


def test_cli_check_writes_the_load_cache_from_a_worker_and_reports_the_same(small_kb, caching, monkeypatch):
    monkeypatch.setattr(audit_pkg, "PARALLEL_MIN_RECORDS", 0)
    monkeypatch.setenv("INFERKB_JOBS", "2")
    writers = caching.parent / "writers.txt"  # a worker's note must outlive the worker
    save = KB.save_load_cache

    def noting_save(self):
        if self._unsaved_load_cache is not None:
            with open(writers, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        return save(self)

    monkeypatch.setattr(KB, "save_load_cache", noting_save)
    first = _check(small_kb)
    assert len(_load_shards(caching)) == 16
    assert len(writers.read_text().split()) == 1  # written once: by the task (the CLI's own call found nothing left)
    assert KB.load(small_kb).cache_hits == len(KB.load(small_kb).records)
    warm = _check(small_kb)
    monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    assert first == warm == _check(small_kb)


def test_cli_check_still_writes_the_load_cache_when_an_audit_fails(small_kb, caching, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("audit bug")

    monkeypatch.setattr(audit_pkg, "run_audits", broken)
    code, _ = _check(small_kb)
    assert code != 0
    assert len(_load_shards(caching)) == 16
