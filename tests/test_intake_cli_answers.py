"""What `inferkb intake` tells a user on the command line: impossible layouts refused, dry-run output sized to read,
and a model string that names no model record said out loud."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CORPUS, harness_file
from inferkb.errors import UsageError
from inferkb.intake import IntakeOptions

SERVE = "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json"
TRTLLM = "trtllm-bench/throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt"
H100 = ("--hardware-raw", "NVIDIA H100 80GB HBM3")
MLPERF_V61 = CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_tp_larger_than_count_exits_2_naming_the_options():
    proc = run("intake", "vllm-serve", harness_file(SERVE), *H100, "--count", 8, "--tp", 16, "--dry-run", "--format", "json")
    assert proc.returncode == 2, proc.stdout[:500]
    error = json.loads(proc.stdout)  # --format json reports the error as JSON, with no records
    assert "--tp 16" in error["message"] and "--count 8" in error["message"]
    assert "records" not in error


def test_tp_larger_than_count_exits_2_in_text_mode_too():
    proc = run("intake", "trtllm-bench", harness_file(TRTLLM), *H100, "--count", 4, "--tp", 8, "--dry-run")
    assert proc.returncode == 2 and "--tp 8" in proc.stderr and "--count 4" in proc.stderr


@pytest.mark.parametrize(
    ("opts", "named"),
    [
        ({"count": 4, "tensor_parallel": 4, "pipeline_parallel": 2}, "--tp 4 x --pp 2"),
        ({"count": 2, "pipeline_parallel": 4}, "--pp 4"),
        ({"count": 8, "tensor_parallel": 4, "data_parallel": 4}, "--tp 4 x --dp 4"),
    ],
)
def test_layout_needing_more_devices_than_count_is_refused(opts, named):
    with pytest.raises(UsageError, match=named):
        IntakeOptions(**opts)


@pytest.mark.parametrize(
    "opts",
    [
        {"count": 8, "tensor_parallel": 8},
        {"count": 8, "tensor_parallel": 4, "pipeline_parallel": 2},
        {"count": 16, "tensor_parallel": 8},
        {"tensor_parallel": 16},
        {"count": 1, "data_parallel": 4},
    ],
)
def test_layout_that_fits_the_count_or_lacks_one_side_is_accepted(opts):
    IntakeOptions(**opts)


def test_text_dry_run_lists_each_record_on_one_line_not_its_json():
    proc = run("intake", "trtllm-bench", harness_file(TRTLLM), *H100, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert not any(ln.lstrip().startswith(("{", '"')) for ln in lines), proc.stdout[:500]
    [bench] = [ln for ln in lines if ln.startswith("benchmarks/trtllm-bench-")]
    assert bench.endswith("  output_tok_s = 14,389.8 tok/s")
    assert lines[-2] == "trtllm-bench: built 1 benchmark + 1 source; wrote nothing (dry run)"


def test_text_dry_run_of_a_large_table_prints_the_summary_and_lists_records_only_when_asked():
    table = MLPERF_V61
    if not table.is_file():
        pytest.skip(f"MLPerf v6.1 summary.csv not found at {table}")
    proc = run("intake", "mlperf", table, "--dry-run")
    assert proc.returncode in (0, 1), proc.stderr
    assert len(proc.stdout.splitlines()) < 15, proc.stdout[:2000]
    assert "408 records not listed (--show-records lists them, --format json prints them whole)" in proc.stdout
    listed = run("intake", "mlperf", table, "--dry-run", "--show-records").stdout.splitlines()
    assert sum(ln.startswith("benchmarks/mlperf-v6-1-") for ln in listed) == 408


def test_dry_run_says_a_model_string_resolves_to_no_model_record():
    proc = run("intake", "trtllm-bench", harness_file(TRTLLM), *H100, "--dry-run")
    assert (
        "model_id: 'meta-llama/Llama-3.1-70B-Instruct' matches no model id, name or alias of this KB: model_id stays null (1 record)"
        in proc.stdout.splitlines()
    )
    doc = json.loads(run("intake", "trtllm-bench", harness_file(TRTLLM), *H100, "--dry-run", "--format", "json").stdout)
    assert doc["model_ids"] == [] and len(doc["model_ids_unresolved"]) == 1


def test_dry_run_says_which_model_record_a_string_resolved_to():
    proc = run("intake", "vllm-serve", harness_file(SERVE), *H100, "--count", 8, "--dry-run")
    assert "model_id: 'meta-llama/Llama-3.3-70B-Instruct' -> llama-3-3-70b (1 record, set by the model resolver)" in proc.stdout


def test_link_models_reports_each_unknown_model_string_once_with_its_record_count():
    import inferkb
    from inferkb.intake.base import link_models

    records = [{"type": "benchmark", "id": f"r{i}", "model": "acme/NoSuchModel-9B"} for i in range(3)]
    records.append({"type": "benchmark", "id": "gap", "model": "acme/Other", "condition_gaps": {"model": {"reason": "open"}}})
    unlinked: list[str] = []
    assert link_models(inferkb.open(), records, unlinked) == []
    assert unlinked == ["'acme/NoSuchModel-9B' matches no model id, name or alias of this KB: model_id stays null (3 records)"]
    assert all(r.get("model_id") is None for r in records)


def test_a_misspelt_format_is_answered_with_the_close_name_exit_2():
    proc = run("intake", "mlpref", "summary.csv", "--format", "json")
    assert proc.returncode == 2
    answer = json.loads(proc.stdout)
    assert set(answer) == {"error", "message", "exit_code"}
    assert answer["error"] == "usage"
    assert "unknown format 'mlpref' (did you mean 'mlperf'?); formats: " in answer["message"]


def test_a_format_near_no_name_gets_no_guess():
    proc = run("intake", "zzzz", "summary.csv")
    assert proc.returncode == 2
    assert "unknown format 'zzzz'; formats: vllm-latency" in proc.stderr
    assert "did you mean" not in proc.stderr
