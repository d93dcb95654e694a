"""The CLI contract of issue #8 (real processes): JSON errors, intake's --fail-on, the --list flags, the stage table."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import CORPUS, rec, write_kb

HARNESS = CORPUS / "harness"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def harness(rel: str):
    path = HARNESS / rel
    if not path.is_file():
        pytest.skip(f"harness corpus file not found at {path}")
    return path


# ---- --format json errors --------------------------------------------------


def test_a_missing_kb_under_format_json_is_one_json_error_object_on_stdout(tmp_path):
    proc = run("validate", "--kb", tmp_path / "nope", "--format", "json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["error"] == "kb-not-found" and "does not exist" in doc["message"]
    assert proc.stderr == ""


def test_an_unusable_input_file_under_format_json_names_the_file(tmp_path):
    bad = tmp_path / "run.json"
    bad.write_text('{"completed": 3, ')
    proc = run("intake", "vllm-serve", bad, "--dry-run", "--format=json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["error"] == "input" and doc["path"] == str(bad) and "truncated" in doc["message"]


def test_a_bad_option_value_under_format_json_is_a_json_usage_error():
    proc = run("validate", "--format", "json", "--max-dangling-refs", "-3")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["error"] == "usage" and "-3" in doc["message"]


def test_without_format_json_errors_stay_one_line_on_stderr(tmp_path):
    proc = run("validate", "--kb", tmp_path / "nope")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("inferkb: error:")


# ---- intake --fail-on -------------------------------------------------------


def test_intake_exits_1_when_the_import_reports_an_error_finding():
    invalid = harness("mlperf/loadgen5.1_local_llama3.1-8b_Server_INVALID_summary.txt")
    proc = run("intake", "mlperf", invalid, "--dry-run")
    assert proc.returncode == 1, proc.stderr
    assert "KB1110" in proc.stderr
    doc = json.loads(run("intake", "mlperf", invalid, "--dry-run", "--format", "json").stdout)
    assert [f["severity"] for f in doc["findings"]] == ["error"]


def test_intake_exit_code_follows_fail_on():
    # A hardware string naming no accelerator is a warning (KB1103): 0 by default, 1 with --fail-on warning.
    serve = harness("vllm/serve_llama8B_tp1_qps-1_vllm-ascend-ci_metrics-only.json")
    args = ("intake", "vllm-serve", serve, "--hardware-raw", "Quantum Widget 9000", "--dry-run")
    assert run(*args).returncode == 0
    proc = run(*args, "--fail-on", "warning")
    assert proc.returncode == 1 and "KB1103" in proc.stderr


# ---- --list flags ------------------------------------------------------------


def test_intake_list_formats_flag_lists_the_importers():
    for flag in ("--list-formats", "--list"):
        proc = run("intake", flag)
        assert proc.returncode == 0 and re.search(r"^vllm-serve\s", proc.stdout, re.M), flag
    names = [d["name"] for d in json.loads(run("intake", "--list", "--format", "json").stdout)]
    assert "llama-bench" in names


def test_derive_list_flag_lists_the_derivations():
    proc = run("derive", "--list")
    assert proc.returncode == 0 and re.search(r"^format-id\s", proc.stdout, re.M)
    names = [d["name"] for d in json.loads(run("derive", "--list", "--format", "json").stdout)]
    assert "interconnect-ids" in names


def test_derive_without_a_name_or_list_is_a_usage_error():
    proc = run("derive")
    assert proc.returncode == 2 and "--list" in proc.stderr


# ---- the findings-by-stage table ---------------------------------------------


def _stage_rows(text: str) -> dict[str, tuple[int, int, int]]:
    rows = {}
    for m in re.finditer(r"^\W*([a-z][a-z-]+)\s*\W\s*(\d+)\s*\W\s*(\d+)\s*\W\s*(\d+)\s*\W*$", text, re.M):
        rows[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return rows


def test_audit_stage_table_agrees_with_check_and_has_no_validate_row(tmp_path):
    kb = write_kb(
        tmp_path,
        {
            "data/engines/y.json": rec("engine", "y", confidence=7),  # a validate error
            "data/sources/s.json": rec("source", "s"),
        },
    )
    audit_out = run("audit", "--kb", kb).stdout
    check_out = run("check", "--kb", kb).stdout
    audit_rows, check_rows = _stage_rows(audit_out), _stage_rows(check_out)
    assert "audit: findings by stage" in audit_out and "check: findings by stage" in check_out
    assert check_rows["validate"][0] >= 1
    assert "validate" not in audit_rows
    assert audit_rows and all(check_rows[stage] == counts for stage, counts in audit_rows.items())
