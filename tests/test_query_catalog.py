"""The on-disk query catalogue stays true to the files: every change is seen, nothing stale is answered."""

from __future__ import annotations

import json
import os
import time

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import query, query_index
from inferkb.query_index import Catalog

OLD = time.time() - 3600  # an hour ago: outside the two-second window in which a file is always read again


def age(root):
    for path in (root / "data").rglob("*.json"):
        os.utime(path, (OLD, OLD))


@pytest.fixture
def kb(tmp_path):
    write_kb(
        tmp_path,
        {
            "data/engines/vllm.json": rec("engine", "vllm", name="vLLM"),
            "data/engines/sglang.json": rec("engine", "sglang", name="SGLang"),
            "data/benchmarks/b1.json": rec("benchmark", "b1", metric="ttft_ms", value=12, notes="speculative decoding"),
        },
    )
    age(tmp_path)
    return tmp_path


def keys(rows):
    return [r["key"] for r in rows]


def test_a_second_open_reads_nothing_and_a_change_is_read_again(kb, monkeypatch):
    # the fixture's utime just moved every file's inode change time to now: trust such files at once for this test
    monkeypatch.setattr(query_index, "RACY_NS", 0)
    assert Catalog.open(kb).refreshed == 3
    assert Catalog.open(kb).refreshed == 0
    time.sleep(0.05)  # past the file system's timestamp granularity
    path = kb / "data" / "benchmarks" / "b1.json"
    text = path.read_text().replace('"value": 12', '"value": 99')  # same size
    path.write_text(text)
    os.utime(path, (OLD, OLD))  # even with the old mtime back, the inode change time moved
    cat = Catalog.open(kb)
    assert cat.refreshed == 1
    assert keys(query.where(kb, "value = 99")) == ["benchmarks/b1"]


def test_a_file_written_just_now_is_read_again_next_time(kb):
    Catalog.open(kb)
    (kb / "data" / "engines" / "tgi.json").write_text(json.dumps(rec("engine", "tgi", name="TGI")))
    assert "engines/tgi" in keys(query.search(kb, "tgi"))
    assert Catalog.open(kb).refreshed >= 1  # within the racy window: read again rather than trusted


def test_removed_and_broken_files_leave_the_answers(kb):
    Catalog.open(kb)
    (kb / "data" / "engines" / "sglang.json").unlink()
    (kb / "data" / "engines" / "vllm.json").write_text('{"id": "vllm", "id": "twice"}')  # duplicate key: the store skips it
    assert keys(query.list_records(kb, "engine")) == []
    (kb / "data" / "engines" / "vllm.json").write_text(json.dumps(rec("engine", "vllm", name="vLLM")))
    assert keys(query.list_records(kb, "engine")) == ["engines/vllm"]


def test_a_corrupt_catalogue_is_rebuilt(kb):
    cat = Catalog.open(kb)
    file = cat.file
    cat.con.close()
    file.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{file}{suffix}"):
            os.unlink(f"{file}{suffix}")
    again = Catalog.open(kb)
    assert again.file == file and again.refreshed == 3 and again.count() == 3


def test_a_changed_kb_toml_rebuilds(kb):
    Catalog.open(kb)
    toml = "[types.engine]\ndir = 'engines'\n[types.benchmark]\ndir = 'benchmarks'\n"
    (kb / "kb.toml").write_text(toml)
    cat = Catalog.open(kb)
    assert cat.refreshed == 3 and set(cat.profile.types) == {"engine", "benchmark"}


def test_an_empty_cache_dir_setting_keeps_the_catalogue_in_memory(kb, monkeypatch):
    monkeypatch.setenv("INFERKB_CACHE_DIR", "")
    cat = Catalog.open(kb)
    assert cat.file is None and cat.count() == 3


def test_a_loaded_kb_and_the_disk_catalogue_give_the_same_rows(kb):
    loaded = inferkb.open(kb)
    for call in (
        lambda k: query.search(k, "speculative"),
        lambda k: query.where(k, "metric = ttft_ms"),
        lambda k: query.list_records(k, "engine", sort="name:desc"),
    ):
        assert call(loaded) == call(kb)


def test_a_write_through_the_store_is_seen_by_the_loaded_kbs_catalogue(kb):
    loaded = inferkb.open(kb)
    assert keys(query.search(loaded, "tgi")) == []
    loaded.write_record(rec("engine", "tgi", name="TGI"))
    assert keys(query.search(loaded, "tgi")) == ["engines/tgi"]
    assert keys(query.search(kb, "tgi")) == ["engines/tgi"]
