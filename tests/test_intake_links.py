"""Importers link model_id through the resolver, use the GPU name `inferkb env` captured, and list what they wrote (issue 11).

The file ../shared/corpus/harness/vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json names its model
"meta-llama/Llama-3.3-70B-Instruct", an alias of data/models/llama-3-3-70b.json; it names no hardware.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CORPUS

SERVE = CORPUS / "harness" / "vllm" / "serve_llama33-70b_tp8_qps-inf_v0.8-era.json"


def intake(*args):
    if not SERVE.is_file():
        pytest.skip(f"harness corpus not found at {SERVE}")
    proc = subprocess.run([sys.executable, "-m", "inferkb", "intake", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def benchmark(doc):
    return next(r for r in doc["records"] if r["type"] == "benchmark")


def test_model_id_is_filled_when_the_model_name_is_an_exact_alias():
    doc = json.loads(intake("vllm-serve", SERVE, "--count", "8", "--dry-run", "--format", "json").stdout)
    rec = benchmark(doc)
    assert rec["model"] == "meta-llama/Llama-3.3-70B-Instruct" and rec["model_id"] == "llama-3-3-70b"
    assert doc["model_ids"] and "llama-3-3-70b" in doc["model_ids"][0]


def test_the_captured_gpu_name_resolves_the_hardware(tmp_path):
    env = tmp_path / "env.json"
    env.write_text(json.dumps({"gpu_raw": "NVIDIA H100 80GB HBM3", "gpus": [], "gpu_count": 8}))
    rec = benchmark(json.loads(intake("vllm-serve", SERVE, "--count", "8", "--env", env, "--dry-run", "--format", "json").stdout))
    assert rec["hardware_raw"] == "NVIDIA H100 80GB HBM3" and rec["accelerator_ids"] == ["nvidia-h100-sxm"]


def test_a_write_lists_the_ids_and_paths_it_wrote(bundled_copy):
    proc = intake("vllm-serve", SERVE, "--count", "8", "--kb", bundled_copy, "--format", "json")
    doc = json.loads(proc.stdout)
    # the benchmark record and the draft source describing the local file
    assert sorted(k.split("/")[0] for k in doc["written"]) == ["benchmarks", "sources"]
    for key, path in zip(doc["written"], doc["written_paths"], strict=True):
        assert path == str(bundled_copy.resolve() / "data" / f"{key}.json")
    path = doc["written_paths"][[k.split("/")[0] for k in doc["written"]].index("benchmarks")]
    assert json.loads(open(path).read())["model_id"] == "llama-3-3-70b"
