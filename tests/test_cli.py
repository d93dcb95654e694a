"""The CLI as a user runs it (real processes): exit codes, errors without tracebacks, nothing written on error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import BUNDLED, rec, write_kb


def run(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_missing_kb_path_exits_2_with_one_clear_line(tmp_path):
    proc = run("validate", "--kb", tmp_path / "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr


def test_kb_without_data_dir_exits_2(tmp_path):
    proc = run("validate", "--kb", tmp_path)
    assert proc.returncode == 2 and "no data/ directory" in proc.stderr


def test_validate_exit_code_follows_findings(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")})
    assert run("validate", "--kb", tmp_path).returncode == 0
    write_kb(tmp_path, {"data/engines/y.json": rec("engine", "y", confidence=7)})
    proc = run("validate", "--kb", tmp_path)
    assert proc.returncode == 1
    assert "data/engines/y.json: KB107 confidence-out-of-range" in proc.stdout


def test_fail_on_warning_makes_warnings_fail(tmp_path):
    write_kb(tmp_path, {"data/engines/vllm.json": rec("engine", "vllm"), "data/sources/vllm.json": rec("source", "vllm")})
    assert run("validate", "--kb", tmp_path).returncode == 0
    assert run("validate", "--kb", tmp_path, "--fail-on", "warning").returncode == 1


def test_validate_json_output_has_the_design_shape(tmp_path):
    write_kb(tmp_path, {"data/engines/y.json": rec("engine", "y", confidence=7)})
    doc = json.loads(run("validate", "--kb", tmp_path, "--format", "json").stdout)
    assert set(doc) == {"kb", "records", "findings", "summary"}
    assert doc["records"] == 1 and doc["findings"][0]["code"] == "KB107"


def test_github_format_prints_annotations(tmp_path):
    write_kb(tmp_path, {"data/engines/y.json": rec("engine", "y", confidence=7)})
    # run from the KB's folder (no repository around it): paths are relative to the working directory; "confidence" is
    # line 6 of the file conftest.rec writes (id, type, name, status, then confidence, after the opening brace)
    out = run("validate", "--kb", tmp_path, "--format", "github", cwd=tmp_path).stdout
    assert out.startswith("::error file=data/engines/y.json,line=6,title=KB107")


def test_unknown_option_value_is_a_usage_error():
    proc = run("validate", "--format", "xml")
    assert proc.returncode == 2 and "xml" in proc.stderr


def test_rules_lists_and_explains():
    proc = run("rules", "--format", "json")
    codes = {r["code"] for r in json.loads(proc.stdout)}
    assert {"KB001", "KB101", "KB201", "KB204"} <= codes
    explained = run("rules", "KB002")
    assert explained.returncode == 0 and "duplicate-key" in explained.stdout and "Fails" in explained.stdout
    assert run("rules", "KB999").returncode == 2


@pytest.mark.parametrize("bad", ["../etc/passwd", "a/b/c", "x\\y", "engines/.."])
def test_show_refuses_ids_with_path_parts(tmp_path, bad):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")})
    proc = run("show", bad, "--kb", tmp_path)
    assert proc.returncode == 2 and "refused" in proc.stderr


def test_show_suggests_near_matches(tmp_path):
    write_kb(tmp_path, {"data/engines/tensorrt-llm.json": rec("engine", "tensorrt-llm")})
    proc = run("show", "tensorrt", "--kb", tmp_path)
    assert proc.returncode == 2 and "did you mean: engines/tensorrt-llm" in proc.stderr


def test_show_by_bare_id_and_dir_id(tmp_path):
    write_kb(tmp_path, {"data/engines/vllm.json": rec("engine", "vllm")})
    for ref in ("vllm", "engines/vllm"):
        proc = run("show", ref, "--kb", tmp_path, "--format", "json")
        assert json.loads(proc.stdout)["record"]["id"] == "vllm"


@pytest.mark.parametrize("bad", ["../x", "a/b", "x\x00y" if False else "x..y", "UPPER"])
def test_new_refuses_unsafe_ids_and_writes_nothing(tmp_path, bad):
    write_kb(tmp_path, {})
    before = sorted(p for p in tmp_path.rglob("*"))
    proc = run("new", "engine", "--name", "x", "--id", bad, "--kb", tmp_path)
    assert proc.returncode == 2 and "refused" in proc.stderr
    assert sorted(p for p in tmp_path.rglob("*")) == before


def test_new_refuses_nul_in_id(tmp_path):
    # A NUL cannot travel through argv, so the API is checked directly.
    import inferkb
    from inferkb.errors import UsageError
    from inferkb.skeleton import write_new

    write_kb(tmp_path, {})
    with pytest.raises(UsageError, match="refused"):
        write_new(inferkb.open(tmp_path), "engine", "x", record_id="a\x00b")
    with pytest.raises(UsageError, match="refused"):
        inferkb.open(tmp_path).get("a\x00b")


def test_new_writes_a_skeleton_and_never_overwrites(bundled_copy):
    tmp_path = bundled_copy
    write_kb(tmp_path, {"data/sources/s.json": rec("source", "s")}, schemas=False)
    proc = run("new", "engine", "--name", "My Engine 2", "--source", "s", "--kb", tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "data" / "engines" / "my-engine-2.json"
    data = json.loads(path.read_text())
    assert data["id"] == "my-engine-2" and data["sources"] == ["s"] and data["status"] == "draft"
    assert path.read_text().endswith("}\n")
    before = path.read_bytes()
    again = run("new", "engine", "--name", "My Engine 2", "--kb", tmp_path)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr
    assert path.read_bytes() == before


def test_new_with_unknown_source_or_type_fails_cleanly(tmp_path):
    write_kb(tmp_path, {})
    assert run("new", "engine", "--name", "x", "--source", "nope", "--kb", tmp_path).returncode == 2
    assert run("new", "enginez", "--name", "x", "--kb", tmp_path).returncode == 2
    assert list((tmp_path / "data").iterdir()) == []


def test_bundled_skeleton_validates_once_filled(bundled_copy):
    import inferkb
    from inferkb.skeleton import skeleton

    kb = inferkb.open(bundled_copy)
    src = next(iter(kb.ids_of_type("source")))
    sk = skeleton(kb, "engine", "Example Engine", source=src)
    sk.update({k: v for k, v in {"confidence": 0.5, "notes": None}.items()})
    sk = {k: v for k, v in sk.items() if v not in (None, [], {}) or k in ("sources",)}
    path = kb.record_path("engine", sk["id"])
    kb.write_record(sk)  # validates first; raises RecordInvalid if the filled skeleton were invalid
    assert path.exists()


def test_select_with_a_code_that_matches_no_rule_is_a_usage_error(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", confidence=7)})
    proc = run("validate", "--kb", tmp_path, "--select", "KB2O1")
    assert proc.returncode == 2 and "matches no rule" in proc.stderr


def test_show_prints_long_text_uncropped():
    proc = run("show", "vllm-mtp-regression-qwen3-next-80b-a3b")
    record = json.loads((BUNDLED / "data/benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.json").read_text())
    assert record["methodology"] in proc.stdout and record["notes"] in proc.stdout


def test_new_with_a_name_that_gives_no_id_asks_for_one(tmp_path):
    write_kb(tmp_path, {})
    proc = run("new", "engine", "--name", "!!!", "--kb", tmp_path)
    assert proc.returncode == 2 and "pass --id" in proc.stderr


def test_export_report_exports_the_chosen_arm_and_says_what_it_left_out():
    import yaml

    proc = run("export-report", "vllm-mtp-regression-qwen3-next-80b-a3b", "--arm", "mtp-2")
    doc = yaml.safe_load(proc.stdout)
    latency = doc["results"]["request_performance"]["aggregate"]["latency"]["request_latency"]
    assert (latency["mean"], latency["p99"]) == (1578.0, 1670.0)
    assert "--arm baseline" in proc.stderr
    assert run("export-report", "vllm-mtp-regression-qwen3-next-80b-a3b", "--arm", "nope").returncode == 2


def test_export_report_refuses_a_directory_as_output(tmp_path):
    proc = run("export-report", "vllm-mtp-regression-qwen3-next-80b-a3b", "-o", tmp_path)
    assert proc.returncode == 2 and "is a directory" in proc.stderr
    assert list(tmp_path.iterdir()) == []
