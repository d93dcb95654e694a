"""What `inferkb intake` tells a user on the command line: impossible layouts refused, dry-run output sized to read,
and a model string that names no model record said out loud."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import harness_file
from inferkb.errors import UsageError
from inferkb.intake import IntakeOptions

SERVE = "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json"
TRTLLM = "trtllm-bench/throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt"
H100 = ("--hardware-raw", "NVIDIA H100 80GB HBM3")


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
