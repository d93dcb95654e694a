"""Write a synthetic KB of N records with realistic shapes and full referential integrity.

Usage::

    python benchmarks/synth_kb.py OUT_DIR --records N [--seed S] [--corpus-like]

The default mode writes a KB in the bundled KB's layout: ``kb.toml``,
``schemas/`` and ``metrics.json`` are copied from ``src/inferkb/kb/`` and every
record validates against those schemas. ``--corpus-like`` writes a KB shaped
like ``shared/corpus/inference-research`` instead: no ``kb.toml`` (read with the
built-in profile), that corpus's ``schemas/`` copied, and records projected onto
its narrower schemas (conditions live only in the prose, as in the corpus).

The type mix is proportional to a real KB of this kind (about half benchmarks,
a fifth sources, then papers, gotchas, models, hardware ...). Every id in a
``sources`` list or a reference field of ``kb.toml`` resolves, and ids are
unique across types. Benchmark prose (``methodology``, ``notes``) names the
conditions, the hardware string and source ids the way the corpus does, so the
audits have text to work on. All values are invented; they are for timing only.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "src" / "inferkb" / "kb"
CORPUS = REPO.parent / "shared" / "corpus" / "inference-research"

# Share of each type in a KB of this kind (benchmarks dominate, then sources).
MIX: dict[str, float] = {
    "benchmark": 0.50,
    "source": 0.22,
    "paper": 0.06,
    "gotcha": 0.05,
    "model": 0.04,
    "accelerator": 0.03,
    "supply": 0.025,
    "quantization": 0.02,
    "metric_exposure": 0.02,
    "interconnect": 0.012,
    "engine": 0.01,
    "flop": 0.008,
    "compiler": 0.005,
}
# Types other records point at: at least one of each, whatever N is.
MINIMUM = {"source": 3, "engine": 1, "accelerator": 2, "interconnect": 1, "quantization": 1, "model": 1}
DIRS = {
    "accelerator": "accelerators",
    "flop": "flops",
    "engine": "engines",
    "quantization": "quantization",
    "interconnect": "interconnect",
    "benchmark": "benchmarks",
    "gotcha": "gotchas",
    "supply": "supply",
    "model": "models",
    "paper": "papers",
    "compiler": "compilers",
    "metric_exposure": "metric-exposures",
    "source": "sources",
}
# id prefixes keep ids unique across types (a shared bare id is a validation error).
PREFIX = {
    "flop": "flop",
    "quantization": "fmt",
    "interconnect": "ic",
    "benchmark": "bench",
    "gotcha": "gotcha",
    "supply": "supply",
    "model": "model",
    "paper": "paper",
    "compiler": "compiler",
    "metric_exposure": "mx",
    "source": "src",
    "engine": "eng",
    "accelerator": "hw",
}

# (id slug, vendor, marketing name, nvidia-smi-like string, arch, GB, GB/s, interconnect kinds)
HARDWARE = [
    ("nvidia-h100-sxm", "nvidia", "NVIDIA H100 SXM5 80GB", "NVIDIA H100 80GB HBM3", "Hopper", 80, 3350, ("nvlink", "infiniband")),
    ("nvidia-h100-pcie", "nvidia", "NVIDIA H100 PCIe", "NVIDIA H100 PCIe", "Hopper", 80, 2000, ("pcie",)),
    ("nvidia-h200-sxm", "nvidia", "NVIDIA H200 SXM", "NVIDIA H200", "Hopper", 141, 4800, ("nvlink", "infiniband")),
    ("nvidia-a100-sxm", "nvidia", "NVIDIA A100 SXM4 80GB", "NVIDIA A100-SXM4-80GB", "Ampere", 80, 2039, ("nvlink",)),
    ("nvidia-b200", "nvidia", "NVIDIA B200", "NVIDIA B200", "Blackwell", 180, 8000, ("nvlink", "nvswitch")),
    ("nvidia-l40s", "nvidia", "NVIDIA L40S", "NVIDIA L40S", "Ada Lovelace", 48, 864, ("pcie",)),
    ("nvidia-rtx-4090", "nvidia", "GeForce RTX 4090", "NVIDIA GeForce RTX 4090", "Ada Lovelace", 24, 1008, ("pcie",)),
    ("amd-instinct-mi300x", "amd", "AMD Instinct MI300X", "AMD Instinct MI300X", "CDNA3", 192, 5300, ("xgmi", "pcie")),
    ("amd-instinct-mi325x", "amd", "AMD Instinct MI325X", "AMD Instinct MI325X", "CDNA3", 256, 6000, ("xgmi",)),
    ("google-tpu-v5e", "google", "Google TPU v5e", "TPU v5 lite", "TPU v5e", 16, 819, ("other",)),
    ("intel-gaudi-3", "intel", "Intel Gaudi 3", "HL-325L", "Gaudi 3", 128, 3700, ("ethernet", "roce")),
    ("apple-m4-max", "apple", "Apple M4 Max", "Apple M4 Max", "M4", 128, 546, ("other",)),
]
ENGINES = [
    ("vllm", "vLLM", "v0.10."),
    ("sglang", "SGLang", "v0.5."),
    ("tensorrt-llm", "TensorRT-LLM", "1.0."),
    ("llama-cpp", "llama.cpp", "b6"),
    ("tgi", "Text Generation Inference", "3.3."),
    ("mlx-lm", "MLX LM", "0.26."),
]
# (slug, HF-style name, architecture, total B, active B)
MODELS = [
    ("llama-3-1-8b", "meta-llama/Llama-3.1-8B-Instruct", "dense", 8.0, 8.0),
    ("llama-3-3-70b", "meta-llama/Llama-3.3-70B-Instruct", "dense", 70.6, 70.6),
    ("qwen3-next-80b-a3b", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "hybrid-moe", 80.0, 3.0),
    ("mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1", "moe", 46.7, 12.9),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1", "moe", 671.0, 37.0),
    ("gpt-j-6b", "EleutherAI/gpt-j-6b", "dense", 6.0, 6.0),
]
FORMATS = [
    ("fp8-e4m3", "FP8 E4M3", "8"),
    ("awq", "AWQ INT4", "4"),
    ("gptq", "GPTQ INT4", "4"),
    ("nvfp4", "NVFP4", "4"),
    ("mxfp4", "MXFP4", "4"),
    ("gguf-q4_k_m", "GGUF Q4_K_M", "4.5"),
    ("bf16", "BF16", "16"),
    ("int8", "INT8", "8"),
]
METRICS = [
    ("tps_aggregate", "tok/s", 3000.0),
    ("decode_tok_s", "tok/s", 120.0),
    ("ttft_ms", "ms", 250.0),
    ("itl_ms", "ms", 25.0),
    ("e2e_latency_ms", "ms", 1800.0),
    ("tok_s_per_user", "tok/s", 60.0),
    ("prefill_tok_s", "tok/s", 9000.0),
    ("output_tok_s", "tok/s", 2500.0),
    ("speedup_ratio", "x", 1.4),
]
HARNESSES = ["vllm bench serve", "vllm bench latency", "genai-perf", "llmperf", "sglang.bench_serving", "llama-bench"]
WORDS = (
    "prefill decode kv-cache batching scheduler kernel attention quantized speculative paged chunked "
    "throughput latency overlap fused graphs sampling router expert tensor pipeline"
).split()
SOURCE_KINDS = ("spec-sheet", "paper", "benchmark", "repo", "release-notes", "forum", "blog", "issue", "vendor-docs")
STATUS = ("verified",) * 6 + ("draft",) * 3 + ("contested",)
BASE_DAY = _dt.date(2024, 1, 1).toordinal()


def _choose_counts(n: int) -> dict[str, int]:
    counts = {t: max(int(n * share), MINIMUM.get(t, 0)) for t, share in MIX.items()}
    counts["benchmark"] += n - sum(counts.values())
    if counts["benchmark"] < 1:
        raise ValueError(f"--records {n} is too small; need at least {sum(MINIMUM.values()) + 1}")
    return counts


def _day(rng: random.Random, span: int = 1000) -> str:
    return _dt.date.fromordinal(BASE_DAY + rng.randrange(span)).isoformat()


def _prose(rng: random.Random, k: int) -> str:
    return " ".join(rng.choices(WORDS, k=k))


class _Gen:
    """Holds the id pools so each record can reference records that exist."""

    def __init__(self, counts: dict[str, int], seed: int) -> None:
        self.rng = random.Random(seed)
        self.counts = counts
        self.ids: dict[str, list[str]] = {t: [self._id(t, i) for i in range(c)] for t, c in counts.items()}

    def _id(self, t: str, i: int) -> str:
        catalog = {"accelerator": HARDWARE, "engine": ENGINES, "model": MODELS, "quantization": FORMATS}.get(t)
        if catalog and i < len(catalog):
            return catalog[i][0] if t != "quantization" else f"fmt-{catalog[i][0].replace('_', '-')}"
        if t == "accelerator":
            return f"{HARDWARE[i % len(HARDWARE)][0]}-r{i}"
        return f"{PREFIX[t]}-{i:06d}"

    def common(self, t: str, i: int, name: str, n_sources: int = 1) -> dict[str, Any]:
        rng = self.rng
        srcs = self.ids["source"]
        rec: dict[str, Any] = {
            "id": self.ids[t][i],
            "type": t,
            "name": name,
            "status": rng.choice(STATUS),
            "confidence": round(0.5 + rng.random() * 0.49, 2),
            "updated": _day(rng),
        }
        if t != "source":
            rec["sources"] = rng.sample(srcs, min(n_sources, len(srcs)))
        return rec

    def pick(self, t: str, k: int = 1) -> list[str]:
        pool = self.ids[t]
        return self.rng.sample(pool, min(k, len(pool)))

    # ---- one builder per type --------------------------------------------
    def source(self, i: int) -> dict[str, Any]:
        rng = self.rng
        kind = rng.choice(SOURCE_KINDS)
        rec = self.common("source", i, f"{kind.replace('-', ' ').title()} on {_prose(rng, 3)} #{i}")
        host = rng.choice(
            (
                "github.com/vllm-project/vllm/issues",
                "arxiv.org/abs",
                "docs.nvidia.com",
                "www.amd.com/en/products",
                "mlcommons.org/benchmarks",
                "blog.example.org",
            )
        )
        rec.update(
            url=f"https://{host}/{i}",
            publisher=rng.choice(("NVIDIA", "AMD", "MLCommons", "vLLM project", "arXiv", None)),
            kind=kind,
            published=_day(rng, 700),
            accessed=rec["updated"],
            archived_url=None,
            notes=f"States {_prose(rng, 12)}; figures read from the {kind} itself.",
        )
        return rec

    def accelerator(self, i: int) -> dict[str, Any]:
        rng = self.rng
        slug, vendor, name, smi, arch, gb, bw, kinds = HARDWARE[i % len(HARDWARE)]
        rec = self.common("accelerator", i, name if i < len(HARDWARE) else f"{name} (rev {i})", 3)
        ics = self.pick("interconnect", rng.choice((1, 2)))
        rec.update(
            vendor=vendor,
            architecture=arch,
            release_year=2020 + i % 6,
            process_nm=rng.choice((4, 5, 7)),
            form_factors=[rng.choice(("sxm", "pcie", "oam"))],
            vram_gb=gb,
            memory_type="hbm3",
            memory_bus_bit=5120,
            memory_bandwidth_gbps=bw,
            memory_bandwidth_basis=f"bus width x per-pin rate / 8, from {rec['sources'][0]}",
            flops=[
                {
                    "precision": p,
                    "tflops": round(bw * f / 10, 1),
                    "dense": True,
                    "vendor_claim": True,
                    "source_id": rec["sources"][0],
                    "basis": "vendor-spec-sheet",
                    "basis_detail": f"{p} dense figure transcribed from the spec sheet",
                }
                for p, f in (("fp32", 0.2), ("bf16", 3.0), ("fp8", 6.0), ("int8", 6.0))
            ],
            tdp_w=rng.choice((300, 450, 700, 1000)),
            interconnect=ics,
            unified_memory=vendor == "apple",
            consumer="rtx" in slug,
            aliases=[smi, name] + ([slug.upper()] if i % 2 else []),
            notes=f"Bandwidth and FLOPS per {', '.join(rec['sources'])}; {', '.join(kinds)} fabric.",
        )
        return rec

    def interconnect(self, i: int) -> dict[str, Any]:
        rng = self.rng
        kind = rng.choice(("nvlink", "infiniband", "pcie", "xgmi", "ethernet", "nvswitch"))
        rec = self.common("interconnect", i, f"{kind.upper()} gen {i % 6 + 1}")
        rec.update(
            kind=kind,
            version=f"{i % 6 + 1}.0",
            bandwidth_gbps=float(rng.choice((25, 50, 64, 100, 200))),
            bandwidth_basis="per link, one direction",
            link_count=rng.choice((1, 4, 18)),
            topology="switched",
            scale_up=kind in ("nvlink", "xgmi", "nvswitch"),
            scale_out=kind in ("infiniband", "ethernet"),
            switching=None,
            aliases=[kind.upper()],
            per_device_bandwidth_gbps=900.0,
            generation=str(i % 6 + 1),
            notes=None,
        )
        return rec

    def engine(self, i: int) -> dict[str, Any]:
        slug, name, _ = ENGINES[i % len(ENGINES)]
        rec = self.common("engine", i, name if i < len(ENGINES) else f"{name} fork {i}", 2)
        rec.update(
            repo=f"https://github.com/example/{slug}",
            languages=["python", "c++"],
            license="Apache-2.0",
            first_release_year=2023,
            design_goal=["throughput"],
            scheduling=["continuous batching"],
            supported_backends=["cuda", "rocm"],
            supported_formats=[f[1] for f in FORMATS[:4]],
            notable_features=["paged attention", "prefix caching", "speculative decoding"],
            hardware_caveats=[],
            best_for=["online serving"],
            avoid_for=[],
            docs_url=f"https://docs.example.org/{slug}",
            aliases=[name],
            tracing_support="basic",
            verified_negatively=None,
            notes=None,
        )
        return rec

    def model(self, i: int) -> dict[str, Any]:
        slug, hf, arch, total, active = MODELS[i % len(MODELS)]
        rec = self.common("model", i, hf.split("/")[1] if i < len(MODELS) else f"{hf.split('/')[1]} variant {i}", 2)
        rec.update(
            family=slug.split("-")[0],
            vendor=hf.split("/")[0],
            release_year=2024,
            architecture=arch,
            params_b=total,
            active_params_b=active,
            num_experts=8 if "moe" in arch else None,
            experts_per_token=2 if "moe" in arch else None,
            hidden_size=4096,
            num_layers=32 + i % 48,
            num_kv_heads=8,
            head_dim=128,
            max_position_embeddings=131072,
            open_weights=True,
            license="open weights",
            aliases=[hf],
            notes=f"Parameter counts from {rec['sources'][0]}.",
        )
        return rec

    def quantization(self, i: int) -> dict[str, Any]:
        scheme, name, bits = FORMATS[i % len(FORMATS)]
        rec = self.common("quantization", i, name if i < len(FORMATS) else f"{name} recipe {i}")
        rec.update(
            scheme=scheme,
            bits=bits,
            weight_group_size=128 if bits == "4" else None,
            activation_scheme=None,
            native_support=self.pick("accelerator", 2),
            emulated_support=self.pick("accelerator", 1),
            kernels=["marlin"],
            quality_delta=None,
            aliases=[name],
            weight_bits=float(bits),
            notes=None,
        )
        return rec

    def benchmark(self, i: int) -> dict[str, Any]:
        rng = self.rng
        hw = rng.randrange(len(self.ids["accelerator"]))
        acc_id = self.ids["accelerator"][hw]
        _, _, hw_name, smi, _, _, _, _ = HARDWARE[hw % len(HARDWARE)]
        eng = rng.randrange(len(self.ids["engine"]))
        eng_name, eng_ver = ENGINES[eng % len(ENGINES)][1], f"{ENGINES[eng % len(ENGINES)][2]}{rng.randrange(10)}"
        mod = rng.randrange(len(self.ids["model"]))
        model_name = MODELS[mod % len(MODELS)][1]
        metric, unit, scale = rng.choice(METRICS)
        count = rng.choice((1, 1, 2, 4, 8))
        rec = self.common(
            "benchmark", i, f"{eng_name} {metric} on {model_name.split('/')[1]} at {count}x {hw_name} #{i}", rng.choice((1, 1, 1, 2, 3))
        )
        tp = count if rng.random() < 0.7 else None
        cond = {
            "batch_size": rng.choice((1, 8, 32, 64, None)),
            "concurrency": rng.choice((1, 16, 64, None)),
            "input_tokens": rng.choice((128, 512, 1024, 2048, None)),
            "output_tokens": rng.choice((128, 256, 1024, None)),
            "num_prompts": rng.choice((100, 500, None)),
            "dataset": rng.choice(("ShareGPT", "random", None)),
            "warmup": rng.choice((10, None, None)),
            "engine_version": eng_ver if rng.random() < 0.6 else None,
            "tensor_parallel": tp,
            "pipeline_parallel": None,
            "expert_parallel": None,
            "data_parallel": None,
            "max_model_len": rng.choice((8192, 32768, None)),
            "request_rate": rng.choice(("inf", 4.0, None)),
        }
        stated = []
        for key, fmt in (
            ("batch_size", "bs={}"),
            ("concurrency", "concurrency {}"),
            ("input_tokens", "ISL {}"),
            ("output_tokens", "OSL {}"),
            ("warmup", "warmup {} iters"),
            ("tensor_parallel", "TP={}"),
        ):
            if cond[key] is not None:
                stated.append(fmt.format(cond[key]))
        harness = rng.choice(HARNESSES)
        srcs = rec["sources"]
        version = f" {eng_ver}" if cond["engine_version"] else ""
        methodology = (
            f"Measured with `{harness}` on {count}x {smi} ({eng_name}{version}), "
            f"{', '.join(stated) or 'no load conditions stated'}. Model {model_name}. "
            f"Figures from {srcs[0]}; {_prose(rng, 18)}."
        )
        gaps = {
            k: {
                "reason": f"{k.replace('_', ' ')} not stated in {srcs[0]}",
                "checked": ["methodology", "notes"],
                "recover": "the harness command line or its log",
            }
            for k in ("batch_size", "input_tokens", "output_tokens", "warmup", "engine_version")
            if cond[k] is None
        }
        value = round(scale * (0.3 + rng.random() * 1.7), 2)
        rec.update(
            engine_id=self.ids["engine"][eng],
            accelerator_ids=[acc_id],
            accelerator_count=count,
            hardware_raw=smi,
            interconnect_ids=self.pick("interconnect", 1) if count > 1 else [],
            interconnect_exercised=(tp or 1) > 1 if tp else None,
            model=model_name,
            model_id=self.ids["model"][mod],
            format_id=self.pick("quantization")[0] if rng.random() < 0.5 else None,
            metric=metric,
            value=value,
            unit=unit + (" vs baseline arm" if metric == "speedup_ratio" else ""),
            value_scope=rng.choice(("per-request", "aggregate", "per-device", None)),
            scenario=rng.choice(("per-request", "offline", "server", "online-serving", None)),
            conditions=cond,
        )
        if gaps:
            rec["condition_gaps"] = gaps
        if rng.random() < 0.4:
            arms = []
            for a, label in enumerate(("baseline", "treatment", "treatment-plus")[: rng.choice((2, 3))]):
                mean = round(value * (1 + 0.3 * a), 3)
                arms.append(
                    {
                        "id": label,
                        "label": f"{label} arm",
                        "config": {"speculative": a > 0},
                        "stats": {
                            "mean": mean,
                            "p50": mean,
                            "p90": round(mean * 1.05, 3),
                            "p99": round(mean * 1.1, 3),
                            "n": rng.choice((10, 100, None)),
                        },
                        "unit": unit,
                    }
                )
            rec.update(arms=arms, baseline_arm="baseline")
        if len(self.ids["accelerator"]) > 1 and rng.random() < 0.1:
            rec["accelerator_alternates"] = [a for a in self.pick("accelerator", 2) if a != acc_id][:1]
        rec.update(
            environment={
                "engine_version": cond["engine_version"],
                "engine_commit": f"{rng.getrandbits(40):010x}",
                "driver": "580.105.08",
                "cuda": "12.9",
                "rocm": None,
                "framework": "PyTorch",
                "torch": "2.8.0",
                "python": "3.12",
                "host_cpu": None,
                "os": "Ubuntu 22.04",
                "gpu_raw": smi,
            },
            methodology=methodology,
            measured_by=rng.choice(("vendor", "third_party", "self")),
            reproducible=rng.random() < 0.5,
            notes=f"{acc_id} chosen from '{smi}'. See {' and '.join(srcs)}{self._stray_citation(srcs)}.",
            power_w=None,
            power_scope=None,
            thermal_state=None,
        )
        if stated and rng.random() < 0.5:
            quote = stated[0]
            rec["provenance"] = [
                {
                    "date": _day(rng),
                    "tag": "synthetic-backfill",
                    "field": "conditions",
                    "action": "backfill",
                    "method": "extract from methodology",
                    "evidence": {"field": "methodology", "quote": quote},
                    "basis": "stated in the record's own text",
                    "numbers_changed": False,
                }
            ]
        return rec

    def _stray_citation(self, declared: list[str]) -> str:
        # A few records cite in prose a source they do not declare, as real KBs do.
        if self.rng.random() < 0.03:
            other = self.pick("source")[0]
            if other not in declared:
                return f"; compare {other}"
        return ""

    def gotcha(self, i: int) -> dict[str, Any]:
        rng = self.rng
        rec = self.common("gotcha", i, f"Trap: {_prose(rng, 5)} #{i}", 2)
        pool = rng.choice(("engine", "accelerator", "benchmark", "quantization"))
        rec.update(
            **{"class": rng.choice(("driver", "kernel", "framework", "config", "measurement"))},
            affects=self.pick(pool, 2),
            concepts=rng.sample(WORDS, 2),
            symptom=_prose(rng, 15),
            root_cause=_prose(rng, 12),
            workaround=_prose(rng, 10) if rng.random() < 0.7 else None,
            severity=rng.choice(("blocker", "major", "minor")),
            notes=f"Reported in {rec['sources'][0]}.",
        )
        return rec

    def paper(self, i: int) -> dict[str, Any]:
        rng = self.rng
        rec = self.common("paper", i, f"{_prose(rng, 4).title()}: efficient inference #{i}")
        rec.update(
            arxiv_id=f"2{rng.randrange(300, 600)}.{rng.randrange(10000, 99999)}",
            venue=rng.choice(("arxiv-preprint", "mlsys", "osdi")),
            venue_track="main",
            year=2023 + i % 3,
            category=rng.choice(("kv-cache", "quantization", "speculative-decoding")),
            authors=["A. Author", "B. Author"],
            affiliations=["Example University"],
            problem=_prose(rng, 12),
            mechanism=_prose(rng, 15),
            hardware_relevance=self.pick("accelerator", 2),
            speedup_reported="1.8x vs baseline",
            adoption=rng.choice(("in-production", "research-only", "unknown")),
            code_url=None,
            open_weights=None,
            notes=None,
        )
        return rec

    def supply(self, i: int) -> dict[str, Any]:
        rng = self.rng
        rec = self.common("supply", i, f"Channel {i} for {self.ids['accelerator'][i % len(self.ids['accelerator'])]}")
        rec.update(
            kind=rng.choice(("cloud", "oem-direct", "used-market")),
            vendor="Example Cloud",
            accelerator_ids=[self.ids["accelerator"][i % len(self.ids["accelerator"])]],
            region="us",
            channels=["web"],
            price_usd=round(rng.uniform(1, 40000), 2),
            price_basis="per unit",
            availability=rng.choice(("in-stock", "lead-time", "unknown")),
            lead_time_weeks=None,
            export_controlled=None,
            notes=None,
        )
        return rec

    def flop(self, i: int) -> dict[str, Any]:
        rng = self.rng
        rec = self.common("flop", i, f"Operation class {i}")
        rec.update(
            **{"class": rng.choice(("decode_gemm", "prefill_attention", "decode_attention"))},
            arithmetic_intensity="low",
            bound_by=rng.choice(("memory", "compute")),
            scales_with=["batch size"],
            affected_by_hardware=self.pick("accelerator", 3),
            hardware_parameters=[{"parameter": "memory_bandwidth", "effect": "sets the decode ceiling"}],
            workarounds=["batch more"],
            notes=None,
        )
        return rec

    def compiler(self, i: int) -> dict[str, Any]:
        rec = self.common("compiler", i, f"Compiler {i}")
        rec.update(
            repo=None,
            language="python",
            license="MIT",
            first_release_year=2022,
            category="kernel-dsl",
            target_backends=["cuda"],
            input_languages=["python"],
            output_artifacts=["ptx"],
            compilation_strategy="jit",
            autotuning=True,
            production_ready=True,
            production_evidence=[],
            strengths=["fast"],
            weaknesses=["young"],
            learning_curve="moderate",
            compile_time_seconds=None,
            notes=None,
        )
        return rec

    def metric_exposure(self, i: int) -> dict[str, Any]:
        rng = self.rng
        rec = self.common("metric_exposure", i, f"Metric endpoint {i}")
        rec.update(
            engine_id=self.pick("engine")[0],
            metric_name=f"engine:time_to_first_token_seconds_{i}",
            metric_type=rng.choice(("histogram", "gauge", "counter")),
            unit="s",
            exposure="prometheus",
            endpoint="/metrics",
            histogram_buckets=[0.01, 0.1, 1.0],
            labels=["model_name"],
            enabled_by_default=True,
            phase_scoped=None,
            verified_negatively=None,
            notes=None,
        )
        return rec


def _project(rec: dict[str, Any], schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Keep only what ``schema`` (a corpus schema) allows: drop unknown keys and disallowed nulls, fix enums."""
    props = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for key, value in rec.items():
        spec = props.get(key)
        if spec is None:
            continue
        enum = spec.get("enum")
        if enum is not None and value not in enum:
            value = rng.choice([e for e in enum if e is not None])
        allowed = spec.get("type")
        if value is None and allowed is not None and "null" not in (allowed if isinstance(allowed, list) else [allowed]):
            if key not in required:
                continue
            value = 0 if allowed in ("number", "integer") else ""
        out[key] = value
    return out


def generate(out_dir: str | Path, n: int, seed: int = 0, *, corpus_like: bool = False) -> dict[str, int]:
    """Write a KB of ``n`` records to ``out_dir`` (created; must not hold a KB already); return counts per type.

    ``corpus_like`` writes the inference-research layout (no kb.toml, the
    corpus's schemas) and raises ``FileNotFoundError`` when that corpus is
    absent. Raises ``FileExistsError`` if ``out_dir/data`` exists and
    ``ValueError`` when ``n`` is too small to hold one record of each
    referenced type.
    """
    out = Path(out_dir)
    if (out / "data").exists():
        raise FileExistsError(f"{out}/data exists; generate into an empty directory")
    counts = _choose_counts(n)
    out.mkdir(parents=True, exist_ok=True)
    schema_dir = (CORPUS if corpus_like else BUNDLED) / "schemas"
    if not schema_dir.is_dir():
        raise FileNotFoundError(f"schemas not found at {schema_dir}")
    shutil.copytree(schema_dir, out / "schemas")
    if not corpus_like:
        shutil.copy2(BUNDLED / "kb.toml", out / "kb.toml")
        shutil.copy2(BUNDLED / "metrics.json", out / "metrics.json")
    gen = _Gen(counts, seed)
    opts = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    for t, c in counts.items():
        target = out / "data" / DIRS[t]
        target.mkdir(parents=True, exist_ok=True)
        build = getattr(gen, t)
        schema = orjson.loads((schema_dir / f"{t}.schema.json").read_bytes()) if corpus_like else None
        for i in range(c):
            rec = build(i)
            if schema is not None:
                rec = _project(rec, schema, gen.rng)
            (target / f"{rec['id']}.json").write_bytes(orjson.dumps(rec, option=opts))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--records", type=int, required=True, help="number of records (150 .. 100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus-like", action="store_true", help="shape records like shared/corpus/inference-research")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    try:
        counts = generate(args.out_dir, args.records, args.seed, corpus_like=args.corpus_like)
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"synth_kb: {exc}", file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    print(f"wrote {sum(counts.values())} records to {args.out_dir} in {took:.1f} s: " + ", ".join(f"{t} {c}" for t, c in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
