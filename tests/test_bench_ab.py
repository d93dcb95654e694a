"""benchmarks/bench_ab.py: ``--cache`` times warm runs, each variant with a load cache of its own kept across rounds;
``--first`` times first runs, each variant's cache folder emptied before every run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from conftest import BUNDLED, REPO


def _bench_ab():
    spec = importlib.util.spec_from_file_location("bench_ab", REPO / "benchmarks" / "bench_ab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cache_runs_each_variant_warm_in_a_folder_of_its_own(tmp_path: Path, capsys, monkeypatch) -> None:
    bench = _bench_ab()
    envs: list[dict[str, str]] = []
    monkeypatch.setattr(bench, "run_once", lambda cmd, env, empty=None: envs.append(env) or (0.1, 0.1))
    src = str(REPO / "src")
    args = ["--kb", str(BUNDLED), "--rounds", "2", "--src", f"a={src}", "--src", f"b={src}", "--cache", str(tmp_path / "c")]
    assert bench.main(args) == 0
    assert len(envs) == 6  # a warm-up round, then two
    assert all("INFERKB_NO_CACHE" not in env for env in envs)
    assert [env["INFERKB_CACHE_DIR"] for env in envs[:2]] == [str(tmp_path / "c" / "a"), str(tmp_path / "c" / "b")]
    assert envs[2:4] == envs[:2] and (tmp_path / "c" / "a").is_dir()
    assert "warm (load cache in" in capsys.readouterr().out


def test_without_cache_every_run_is_cold(tmp_path: Path, capsys, monkeypatch) -> None:
    bench = _bench_ab()
    envs: list[dict[str, str]] = []
    monkeypatch.setattr(bench, "run_once", lambda cmd, env, empty=None: envs.append(env) or (0.1, 0.1))
    assert bench.main(["--kb", str(BUNDLED), "--rounds", "1", "--src", f"a={REPO / 'src'}"]) == 0
    assert all(env["INFERKB_NO_CACHE"] == "1" for env in envs)
    assert "cold (INFERKB_NO_CACHE=1)" in capsys.readouterr().out


def test_first_runs_empty_each_variants_folder_before_every_run(tmp_path: Path, capsys, monkeypatch) -> None:
    bench = _bench_ab()
    calls: list[tuple[str, Path | None]] = []
    monkeypatch.setattr(bench, "run_once", lambda cmd, env, empty=None: calls.append((env["INFERKB_CACHE_DIR"], empty)) or (0.1, 0.1))
    src = str(REPO / "src")
    args = ["--kb", str(BUNDLED), "--rounds", "1", "--src", f"a={src}", "--src", f"b={src}", "--first", str(tmp_path / "f")]
    assert bench.main(args) == 0
    assert calls == [(str(tmp_path / "f" / v), tmp_path / "f" / v) for v in "abab"]  # the warm-up round, then one
    assert "first runs (load cache in" in capsys.readouterr().out


def test_run_once_empties_the_folder_outside_the_timing(tmp_path: Path) -> None:
    bench = _bench_ab()
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "findings-x-00.json").write_text("{}")
    wall, cpu = bench.run_once([sys.executable, "-c", "pass"], {}, folder)
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert wall > 0 and cpu >= 0
