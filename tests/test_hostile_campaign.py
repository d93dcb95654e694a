"""benchmarks/hostile_campaign.py keeps working: a tiny run of every category passes and writes nothing into the repo."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import CORPUS, REPO

SCRIPT = REPO / "benchmarks" / "hostile_campaign.py"


def _status() -> str:
    proc = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""


def test_a_tiny_campaign_runs_every_category_and_passes(tmp_path):
    if not (CORPUS / "harness").is_dir() or not (CORPUS / "mlperf").is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    before = _status()
    args = ["--seed", "7", "--mutate", "8", "--kill", "2", "--kill-rows", "20", "--race", "1", "--content", "1"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--out-dir", str(tmp_path / "evidence")], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    runs = dict(re.findall(r"^(\w+): (\d+) runs, \2 passed, 0 failed", proc.stdout, re.M))
    assert runs.keys() == {"mutate", "kill", "race", "content"}, proc.stdout
    assert runs["mutate"] == "8" and runs["kill"] == "2"
    assert int(runs["race"]) == 2 and int(runs["content"]) > 10  # one pair per race kind; ~20 commands per KB
    assert _status() == before, "the campaign wrote into the repository"


def test_an_unknown_category_is_a_usage_error():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--only", "mutat"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown categories ['mutat']" in proc.stderr
