"""Small KBs for the analysis and export tests: the bundled kb.toml, schemas and metric registry, plus hand-written records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import BUNDLED


def bench(rid: str, value: float, **fields) -> dict:
    """A benchmark record with every class condition stated (override any field)."""
    base = {
        "id": rid,
        "type": "benchmark",
        "name": rid,
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": [],
        "engine_id": "vllm",
        "model": "m",
        "model_id": "m70",
        "format_id": "fp8-e4m3",
        "metric": "output_tok_s",
        "value": value,
        "unit": "tok/s",
        "value_scope": "per-system",
        "scenario": "online-serving",
        "accelerator_ids": ["acc"],
        "accelerator_count": 8,
        "conditions": {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "warmup": 10, "engine_version": "0.11.0"},
    }
    base.update(fields)
    return base


def make_kb(root: Path, records: list[dict], *, models: list[dict] | None = None) -> Path:
    """A KB at ``root`` with the bundled kb.toml, schemas/ and metrics.json, an accelerator ``acc``, model ``m70`` and ``records``."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(BUNDLED / "kb.toml", root / "kb.toml")
    shutil.copy(BUNDLED / "metrics.json", root / "metrics.json")
    shutil.copytree(BUNDLED / "schemas", root / "schemas")
    dirs = {
        "benchmark": "benchmarks",
        "model": "models",
        "accelerator": "accelerators",
        "engine": "engines",
        "quantization": "quantization",
    }
    common = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}
    base = [
        {
            "id": "acc",
            "type": "accelerator",
            "name": "Acc 3350",
            "vram_gb": 80,
            "memory_bandwidth_gbps": 3350,
            "flops": [{"precision": "fp8", "tflops": 1979.0, "dense": True, "basis": "derived"}],
            **common,
        },
        {
            "id": "m70",
            "type": "model",
            "name": "M70",
            "architecture": "dense",
            "params_b": 70,
            "active_params_b": 70,
            "num_layers": 80,
            "num_kv_heads": 8,
            "head_dim": 128,
            "max_position_embeddings": 131072,
            "aliases": ["org/M-70B"],
            **common,
        },
        {"id": "vllm", "type": "engine", "name": "vLLM", **common},
        {"id": "sglang", "type": "engine", "name": "SGLang", **common},
        {"id": "fp8-e4m3", "type": "quantization", "name": "FP8 E4M3", "weight_bits": 8, **common},
    ]
    for r in base + (models or []) + records:
        d = root / "data" / dirs[r["type"]]
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{r['id']}.json").write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    return root
