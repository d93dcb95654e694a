"""Writing records: atomic, canonical, with sane file modes and safe ids."""

from __future__ import annotations

import json
import os
import stat

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb.errors import UsageError
from inferkb.jsonio import atomic_write_text, dumps_record


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_honours_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.json", "{}\n")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a.json") == 0o644


def test_rewriting_keeps_the_existing_mode(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("{}\n")
    os.chmod(path, 0o444)
    atomic_write_text(path, '{"x": 1}\n')
    assert mode(path) == 0o444 and json.loads(path.read_text()) == {"x": 1}


def test_no_temp_file_is_left_after_a_failed_write(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(tmp_path / "a.json", "{}\n")
    assert list(tmp_path.iterdir()) == []


def test_dumps_record_is_canonical():
    text = dumps_record({"id": "x", "name": "Café", "n": [1, 2]})
    assert text == '{\n  "id": "x",\n  "name": "Café",\n  "n": [\n    1,\n    2\n  ]\n}\n'


def test_write_then_read_returns_the_same_record(tmp_path):
    write_kb(tmp_path, {})
    kb = inferkb.open(tmp_path)
    data = rec("engine", "round-trip", notes="µ-ops ✓", confidence=0.25)
    kb.write_record(data)
    assert inferkb.open(tmp_path).get("round-trip").data == data


def test_overlong_ids_are_refused(tmp_path):
    write_kb(tmp_path, {})
    with pytest.raises(UsageError, match="at most"):
        inferkb.open(tmp_path).write_record(rec("engine", "a" * 300))


def test_types_can_be_named_by_directory(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")})
    kb = inferkb.open(tmp_path)
    assert [r.id for r in kb.by_type("engines")] == ["x"]
    assert kb.validate(types=["engines"]).figures["validate"]["records_checked"] == 1


def test_the_bundled_kb_of_an_installed_package_is_not_written(tmp_path):
    from inferkb import KB
    from inferkb.profile import load_profile

    root = tmp_path / "site-packages" / "inferkb" / "kb"  # no pyproject.toml three levels up: an installed wheel
    write_kb(root, {})
    kb = KB(root, load_profile(root), bundled=True)
    with pytest.raises(UsageError, match="init ./my-kb --with-data"):
        kb.write_record(rec("engine", "x"))
    assert not (root / "data" / "engines").exists()
    (tmp_path / "pyproject.toml").write_text("")  # a source checkout may grow its bundled KB
    kb.write_record(rec("engine", "x"))
