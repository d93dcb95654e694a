"""show: names resolved through the one resolver, a readable text summary, pure JSON with computed deltas (issue 11).

The worked numbers come from data/benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.json: baseline mean 894.0 ms,
mtp-2 mean 1578.0 ms, so mtp-2's mean delta is (1578 - 894) / 894 x 100 = +76.51 %; p99 907.0 -> 1670.0 is +84.12 %.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import BUNDLED

SEED = "vllm-mtp-regression-qwen3-next-80b-a3b"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "accelerators/nvidia-h100-sxm"),  # an exact alias
        ("data/accelerators/nvidia-h100-sxm.json", "accelerators/nvidia-h100-sxm"),  # what check prints
        ("src/inferkb/kb/data/models/llama-2-70b.json", "models/llama-2-70b"),  # a path from the repository root
        ("NVIDIA-H100-SXM", "accelerators/nvidia-h100-sxm"),  # upper-case id
        ("meta-llama/Llama-2-70b-hf", "models/llama-2-70b"),  # a model alias with a slash
        ("b200", "accelerators/nvidia-b200"),  # the alias added for issue 11
    ],
)
def test_show_accepts_what_a_user_has_in_hand(text, key):
    proc = run("show", text, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["key"] == key


def test_show_lists_candidates_when_a_name_is_ambiguous():
    proc = run("show", "H100")
    assert proc.returncode == 2 and "'H100' names 3 records" in proc.stderr
    for key in ("accelerators/nvidia-h100-sxm", "accelerators/nvidia-h100-pcie", "accelerators/nvidia-h100-nvl"):
        assert key in proc.stderr


def test_show_json_is_the_record_plus_computed_deltas():
    proc = run("show", SEED, "--format", "json")
    doc = json.loads(proc.stdout)  # pure JSON: no comment line
    assert doc["record"] == json.loads((BUNDLED / "data" / "benchmarks" / f"{SEED}.json").read_text())
    deltas = doc["computed"]["arm_deltas"]["mtp-2"]
    assert round(deltas["mean_delta_pct"], 2) == 76.51 and round(deltas["p99_delta_pct"], 2) == 84.12
    assert "baseline" not in doc["computed"]["arm_deltas"]


def test_show_text_is_a_readable_summary():
    out = run("show", SEED).stdout
    lines = out.splitlines()
    assert lines[0] == f"benchmarks/{SEED}  (data/benchmarks/{SEED}.json)"
    assert "metric        e2e_latency_ms = 894 ms  (aggregate)" in out
    assert "4 x nvidia-h100-sxm (NVIDIA H100 SXM)" in out
    arm = next(line for line in lines if line.strip().startswith("mtp-2 ")).split()
    assert arm[:3] == ["mtp-2", "ms", "1,578"] and "+76.5" in arm and "+84.1" in arm
    assert any(line.strip().startswith("concurrency") and "GAP:" in line for line in lines)
    # 4 devices, no reason recorded for PP: optional, not a comparability condition; the load is batch_size=8.
    assert any(line.strip().startswith("pipeline_parallel") and "not stated; optional" in line for line in lines)
    assert any(line.strip().startswith("request_rate") and "load is given as batch_size=8" in line for line in lines)
    assert "NOT STATED" not in out
    assert "ev-vllm-issue-35387-mtp-latency-regression" in out and "<https://github.com/vllm-project/vllm/issues/35387>" in out
    assert "findings (validation" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_show_findings_name_the_field_once():
    from inferkb.record_view import _with_field

    assert _with_field("confidence", "confidence: null is not of type 'number'") == "confidence: null is not of type 'number'"
    assert _with_field("confidence", "null is not of type 'number'") == "confidence: null is not of type 'number'"
    assert _with_field(None, "no field") == "no field"
