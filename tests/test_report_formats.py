"""--format github paths, line numbers and info findings; audit's report shaped and capped like check's (issue 11)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import CORPUS, rec, write_kb


def run(*args, cwd=None, env=None):
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


ANNOTATION = re.compile(r"^::(error|warning|notice) (?:file=([^,]+),)?(?:line=(\d+),)?title=([^:]+)::(.*)$")


def test_github_paths_are_from_the_workspace_with_lines_and_no_info(research_kb):
    proc = run("audit", "--kb", research_kb, "--format", "github", env={"GITHUB_WORKSPACE": str(CORPUS)})
    report = json.loads(run("audit", "--kb", research_kb, "--format", "json").stdout)
    infos = sum(1 for f in report["findings"] if f["severity"] == "info")
    lines = proc.stdout.splitlines()
    parsed = [ANNOTATION.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed, strict=True) if not m][:3]
    located = [m for m in parsed if m.group(2)]
    assert located and all(m.group(2).startswith("inference-research/data/") for m in located)
    # every finding but the info ones is annotated, plus one notice saying how many info findings were left out
    assert len(lines) == len(report["findings"]) - infos + 1
    assert lines[-1].startswith("::notice title=inferkb::") and f"{infos} info findings" in lines[-1]
    # the line of a top-level field is where its key stands in the file (found here with a plain text search)
    lines_of = {(m.group(2), m.group(4).split()[0], m.group(5)): m.group(3) for m in located}
    checked = 0
    for f in report["findings"]:
        if f["severity"] == "info" or not f["field"] or not re.fullmatch(r"\w+", f["field"]) or "%" in f["message"]:
            continue
        text = (research_kb / f["path"]).read_text().splitlines()
        want = next((n for n, line in enumerate(text, 1) if line.lstrip().startswith(f'"{f["field"]}":')), None)
        got = lines_of[(f"inference-research/{f['path']}", f["code"], f["message"])]
        assert got == (str(want) if want else None), f
        checked += 1
    assert checked > 10


def test_github_includes_info_when_asked(research_kb):
    quiet = run("audit", "load-conditions", "--kb", research_kb, "--format", "github").stdout
    loud = run("audit", "load-conditions", "--kb", research_kb, "--format", "github", "--fail-on", "info").stdout
    assert "::notice file=" not in quiet and "::notice file=" in loud


def test_github_line_of_a_field_in_a_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    write_kb(tmp_path / "kb", {"data/engines/y.json": rec("engine", "y", confidence=7)})
    out = run("validate", "--kb", tmp_path / "kb", "--format", "github", cwd=tmp_path / "kb" / "data").stdout
    # relative to the repository (the folder holding .git), whatever the working directory; "confidence" is line 6
    assert out.startswith("::error file=kb/data/engines/y.json,line=6,title=KB107 confidence-out-of-range::")


def test_audit_text_has_the_check_shape_and_caps(research_kb):
    out = run("audit", "--kb", research_kb).stdout
    assert "audit: findings by stage" in out and "check: findings by stage" not in out
    stage_rows = out.split("audit: findings by stage", 1)[1]
    assert "validate" not in stage_rows  # validation did not run
    assert "more findings not shown" in out
    report = json.loads(run("audit", "--kb", research_kb, "--format", "json").stdout)
    shown = [line for line in out.splitlines() if ": KB301 " in line]
    assert len(shown) == 5 < report["summary"]["by_code"]["KB301"]
    every = run("audit", "--kb", research_kb, "--all").stdout
    assert sum(": KB301 " in line for line in every.splitlines()) == report["summary"]["by_code"]["KB301"]
