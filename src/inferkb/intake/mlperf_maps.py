"""Lookup tables and small matchers used by the MLPerf table importer.

Everything that maps an MLPerf string onto a KB id (engine, quantization
format, model) goes through the KB's own records and aliases; the tables here
only say what MLPerf's vocabulary means (scenario names, units, which
benchmark is an LLM) and which dtype words are too vague to name one format.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..hardware import normalise
from ..resolve import engine_names, name_table

if TYPE_CHECKING:
    from ..kb import KB

SCENARIOS = {
    "offline": "offline",
    "server": "server",
    "interactive": "interactive",
    "singlestream": "single-stream",
    "multistream": "multi-stream",
}

# Benchmark name patterns -> kind. Order matters: the first match wins. "llm" rows are imported;
# every other kind is a skip reason. VLM (Qwen3-VL) is an LLM decoder with an image encoder in front:
# imported, its modality recorded in the notes.
_KINDS = (
    (re.compile(r"(^|[^a-z])(vlm|qwen\d?(\.\d+)?-vl)", re.I), "llm"),
    (re.compile(r"llama|gpt-?j|gpt-oss|mixtral|mistral|deepseek|qwen|gemma|falcon|agentic", re.I), "llm"),
    (re.compile(r"dlrm", re.I), "non-llm-recommendation"),
    (re.compile(r"whisper|rnnt|speech", re.I), "non-llm-speech"),
    (re.compile(r"wan-|text_to_video|video", re.I), "non-llm-video-generation"),
    (re.compile(r"stable-diffusion|sdxl|flux", re.I), "non-llm-image-generation"),
    (re.compile(r"resnet|retinanet|yolo|3d-unet|ssd|mobilenet", re.I), "non-llm-vision"),
    (re.compile(r"rgat|gnn", re.I), "non-llm-graph"),
    (re.compile(r"bert", re.I), "non-llm-encoder"),
    (re.compile(r"e2e|rag|vector-database|question-answering", re.I), "non-llm-rag-pipeline"),
)
_TEXT_LLM = re.compile(r"llama|gpt-?j|gpt-oss|mixtral|mistral|deepseek|gemma|falcon|^qwen(?!.*vl)", re.I)


def model_kind(mlperf_model: str, model: str) -> str:
    """``"llm"`` or a skip reason (``non-llm-speech``, ...) for a row's MlperfModel/Model; ``unknown-benchmark`` otherwise."""
    for text in (mlperf_model, model):
        for pattern, kind in _KINDS:
            if pattern.search(text or ""):
                return kind
    return "unknown-benchmark"


def is_text_llm(mlperf_model: str) -> bool:
    """True for text-only LLM benchmarks, whose MLPerf throughput unit is tokens/s."""
    return bool(_TEXT_LLM.search(mlperf_model or ""))


def metric_for(units: str, value: float) -> tuple[str | None, str, str | None, float, str | None]:
    """Map the ``Units`` column to ``(metric, unit, value_scope, value, note)``; latency in s becomes ms."""
    u = units.strip().lower()
    if u in ("tokens/s", "tokens/sec"):
        return "output_tok_s", "tok/s", "per-system", value, None
    if u == "samples/s":
        return "samples_per_s", "samples/s", "per-system", value, None
    if u == "queries/s":
        return "request_throughput_rps", "req/s", "per-system", value, "The table states Queries/s (completed queries per second)."
    if u in ("latency (ms)", "latency (s)"):
        factor = 1000.0 if u.endswith("(s)") else 1.0
        note = "Single/MultiStream latency result as MLPerf reports it (an early-stopping percentile of per-query latency)"
        return "e2e_latency_ms", "ms", "per-request", value * factor, note + (", converted from s." if factor != 1 else ".")
    return None, units.strip(), None, value, f"Unit {units!r} has no metric in the registry."


_PART_COUNT = re.compile(r"\(x(\d+)(?:x(\d+))?\)")


def split_heterogeneous(raw: str) -> list[str]:
    """Split ``"A + B"`` / ``"A (x2x8) and B (x2x8)"`` / ``"A (x32), B (x16)"`` into its accelerator strings.

    Parenthesised counts are removed; a comma separates parts only when the
    string carries two or more ``(xN)`` counts (a single part's name may hold a comma).
    """
    sep = r"\s+\+\s+|\s+and\s+" + (r"|,\s*" if len(_PART_COUNT.findall(raw)) >= 2 else "")
    text = re.sub(r"\([^)]*\)", " ", raw)
    return [p.strip() for p in re.split(sep, text) if p.strip()]


def stated_part_count(raw: str) -> int | None:
    """The device total an accelerator string states in ``(xN)`` / ``(xAxB)`` counts, summed over its parts; ``None`` if it states none.

    ``"MI355X 288GB HBM3e (x87)"`` -> 87; ``"MI300X (x2x8) and MI355X (x2x8)"`` -> 32.
    """
    found = _PART_COUNT.findall(raw)
    if not found:
        return None
    return sum(int(a) * (int(b) if b else 1) for a, b in found)


# ---- engines -----------------------------------------------------------------

# TensorRT-LLM is built on TensorRT, so a framework string naming both names TensorRT as a dependency,
# not as a second engine (tensorrt engine record notes). PyTorch is the tensor library vLLM, SGLang and
# TensorRT-LLM's PyTorch backend run on: named next to any of them it is a dependency too.
_SUBSUMES = {"tensorrt-llm": {"tensorrt", "pytorch"}, "vllm": {"pytorch"}, "sglang": {"pytorch"}}


def engine_alias_index(kb: KB) -> list[tuple[re.Pattern, str]]:
    """``[(pattern, engine_id)]`` matching each engine's names (:func:`inferkb.resolve.engine_names`: the
    engine records' id, name and aliases) as whole words in free text."""

    def build() -> list[tuple[re.Pattern, str]]:
        out: list[tuple[re.Pattern, str]] = []
        for eid, names in engine_names(kb).items():
            for name in sorted(names):
                out.append((re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9]|-llm)", re.I), eid))
        return out

    return kb.cached("mlperf.engine_patterns", build)


def match_engine(framework: str, index: list[tuple[re.Pattern, str]]) -> tuple[str | None, str | None, str | None]:
    """``(engine_id, version, note)`` for a framework string: an id only when exactly one engine is named.

    The version is the token right after the engine's name when it contains a
    digit (``"vLLM 0.22.0"`` -> ``"0.22.0"``, ``"vllm-0.9.0"`` -> ``"0.9.0"``; ``"TensorRT-LLM feat/1.2-mlpinf"`` -> the
    branch as stated).
    """
    found: dict[str, str | None] = {}
    for pat, eid in index:
        for m in pat.finditer(framework):
            # "vLLM 0.22.0" and "vllm-0.9.0.2.dev108+..." (v5.1 MangoBoost): the joining hyphen is not part of the version.
            tail = re.match(r"\s*-?([^\s,;()]+)", framework[m.end() :])
            ver = tail.group(1) if tail and re.search(r"\d", tail.group(1)) else None
            if eid not in found or (found[eid] is None and ver):
                found[eid] = ver
    for outer, inner in _SUBSUMES.items():
        if outer in found:
            for eid in inner:
                found.pop(eid, None)
    if len(found) == 1:
        eid, ver = next(iter(found.items()))
        return eid, ver, None
    if not found:
        return None, None, f"framework {framework!r} names no inference engine of this KB; engine_id left null"
    return None, None, f"framework {framework!r} names several engines ({', '.join(sorted(found))}); engine_id left null"


# ---- formats -----------------------------------------------------------------

_VAGUE = {
    "fp8": "FP8 does not say E4M3, E5M2 or block-scaled",
    "fp4": "FP4 does not say NVFP4 or MXFP4",
    "int8": "INT8 does not say W8A8 or weight-only, nor the scale granularity",
    "int4": "INT4 does not say AWQ, GPTQ or another scheme",
}
_DTYPE = re.compile(r"^(nvfp4|mxfp\d|bf16|fp\d+|int\d+|f\d+_e\dm\d|u\d+|f\d+)$")


def format_index(kb: KB) -> dict[str, tuple[str, ...]]:
    """``{normalised id/name/alias/scheme: quantization ids}`` of the KB (the resolver's table)."""
    return name_table(kb, "quantization", normalised=True)


def match_format(weight_types: str, index: dict[str, tuple[str, ...]]) -> tuple[str | None, str]:
    """``(format_id, reason)``: an id only when the weight dtypes name exactly one KB format unambiguously.

    KV-cache components (``"FP8 KV cache"``) are not weight types and are
    dropped; several weight dtypes, a vague word (:data:`_VAGUE`) or a dtype
    without a quantization record give ``None`` and the reason.
    """
    if not weight_types:
        return None, "the table states no weight data types (the v4.1 layout has no weight_data_types column)"
    comps = [c for c in re.split(r"[,;/]", weight_types) if c.strip() and "kv" not in c.lower()]
    tokens = []
    for comp in comps:
        word = re.sub(r"\([^)]*\)", " ", comp).strip().split()
        if word and _DTYPE.match(word[0].lower()):
            tokens.append(word[0].lower())
    tokens = list(dict.fromkeys(tokens))
    if not tokens:
        return None, f"{weight_types!r} names no dtype this importer recognises"
    if len(tokens) > 1:
        return None, f"{weight_types!r} lists several dtypes ({', '.join(tokens)}); no single format"
    tok = tokens[0]
    if tok in _VAGUE:
        return None, f"{weight_types!r}: {_VAGUE[tok]}"
    ids = index.get(normalise(tok), [])
    if len(ids) == 1:
        return ids[0], ""
    if ids:
        return None, f"{weight_types!r} matches several formats ({', '.join(ids)})"
    return None, f"{weight_types!r}: no quantization record for {tok!r} in this KB"


# ---- models, environment, accuracy ------------------------------------------------


def model_index(kb: KB) -> dict[str, tuple[str, ...]]:
    """``{normalised id/name/alias: model ids}`` of the KB (the resolver's table)."""
    return name_table(kb, "model", normalised=True)


def resolve_model(name: str, index: dict[str, tuple[str, ...]]) -> str | None:
    """A model id when ``name`` (or ``name`` without MLPerf's ``-99``/``-99.9`` accuracy-target suffix) names one model."""
    for text in (name, re.sub(r"-99(\.9)?$", "", name.strip())):
        ids = index.get(normalise(text), [])
        if len(ids) == 1:
            return ids[0]
    return None


def environment(framework: str, os_name: str, cpu: str, engine_version: str | None) -> dict[str, Any]:
    """The ``environment`` object from the row's framework, OS and host CPU strings (versions as stated)."""

    def grab(pattern: str) -> str | None:
        m = re.search(pattern, framework, re.I)
        return m.group(1) if m else None

    placeholder = framework.strip().upper() in ("TODO", "TBD", "N/A", "NA", "")
    return {
        "engine_version": engine_version,
        "framework": None if placeholder else framework,
        "cuda": grab(r"CUDA(?: Toolkit)?\s+v?(\d[\w.]*)"),
        "rocm": grab(r"ROCm\s+v?(\d[\w.]*)"),
        "torch": grab(r"PyTorch\s+v?(\d[\w.+]*)"),
        "host_cpu": cpu.strip() or None,
        "os": os_name.strip() or None,
    }


_PAIR = re.compile(r"([A-Za-z_][\w]*)\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_TOKEN_FIELDS = {"TOKENS_PER_SAMPLE", "GEN_LEN"}


def parse_accuracy(text: str) -> list[dict[str, Any]]:
    """``[{metric, value, unit}]`` from ``"ROUGE1: 44.5  TOKENS_PER_SAMPLE: 284.1"``; a bare number is ``unlabelled``."""
    pairs = _PAIR.findall(text or "")
    if pairs:
        return [{"metric": k, "value": float(v), "unit": "tokens" if k in _TOKEN_FIELDS else None} for k, v in pairs]
    try:
        return [{"metric": "unlabelled", "value": float(text), "unit": None}]
    except (TypeError, ValueError):
        return []
