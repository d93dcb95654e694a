"""Importer ``trtllm-bench``: the text report of ``trtllm-bench ... throughput`` (TensorRT-LLM 0.16-era; FORMATS.md 7).

The report is three ``===``-framed blocks on stdout amid MPI and INFO noise:
ENGINE DETAILS, WORLD + RUNTIME INFORMATION and PERFORMANCE OVERVIEW, each line
``Label:<tabs>value``. One log is one run -> one benchmark record.

- headline ``Token Throughput (tokens/sec)`` counts **output** tokens only ->
  ``output_tok_s``; it is cross-checked against requests x average output
  length / Total Latency (KB1101 beyond 0.1 %): in the corpus sample
  30000 x 128 / 266.8557 s = 14389.80, the printed 14389.7989;
- ``Request Throughput (req/sec)`` -> ``request_throughput_rps``;
  ``Total Latency (ms)`` is the whole run's wall time (``submission.duration_s``);
- conditions: TP and PP sizes, the request count, the engine version; the
  report gives only *average* input and output lengths, so lengths stay null
  with the averages in the reason (a fixed-length data set is not stated);
- ``Issue Rate (req/sec)`` printed as a huge number (``2.9766E+13``) is the
  harness's "unlimited" sentinel: ``request_rate`` = ``"inf"`` when it is
  above 1e9 req/s; ``Max Runtime Batch Size`` is the engine's in-flight
  limit, kept in the concurrency gap's reason, not a stated concurrency;
- ``format_id``: the ENGINE DETAILS ``Quantization`` line (the weights'
  quantization; with ``Quantization: None`` the ``Dtype`` line) resolved
  through :mod:`inferkb.intake.weight_format`; the corpus log's ``FP8`` does
  not say E4M3, E5M2 or block-scaled, so it stays null with the candidates in
  the gap; ``KV Cache Dtype`` is not the weight format;
- the device count is the number of distinct GPUs in the log's
  ``Rank N is using GPU M`` lines; the GPU model is not printed (KB1106
  unless ``--hardware-raw``/``--accelerator``).

A log from TensorRT-LLM without a PERFORMANCE OVERVIEW block (an aborted run)
yields no record and a KB1102 finding; a file that is not a trtllm-bench log
is an input error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register
from .weight_format import weight_format

if TYPE_CHECKING:
    from ..kb import KB

FMT = "trtllm-bench"
_SECTION = re.compile(r"^=\s+(ENGINE DETAILS|WORLD \+ RUNTIME INFORMATION|PERFORMANCE OVERVIEW)\s*$")
_LINE = re.compile(r"^([A-Za-z][^:\t]*?):\t+\s*(.*?)\s*$")
_RANK_GPU = re.compile(r"Rank (\d+) is using GPU (\d+)")
_HEADER = re.compile(r"TensorRT-LLM(?:\]|\s)\s*TensorRT-LLM version:\s*(\S+)|\[TRT-LLM\]")
UNLIMITED_RATE = 1e9
RELEVANT = ("concurrency", "input_tokens", "output_tokens", "num_prompts", "warmup", "engine_version", "tensor_parallel", "dataset")


def parse_report(text: str, path: Path) -> dict[str, dict[str, str]] | None:
    """``{section: {label: value}}`` of the report blocks; ``None`` when the log has no PERFORMANCE OVERVIEW."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in re.split(r"\r\n|\r|\n", text):
        m = _SECTION.match(line.strip())
        if m:
            current = sections.setdefault(m.group(1), {})
            continue
        if current is None or line.startswith("="):
            continue
        kv = _LINE.match(line)
        if kv:
            current[kv.group(1).strip()] = kv.group(2)
        elif line.strip().startswith("["):
            current = None  # log noise after the block
    return sections if "PERFORMANCE OVERVIEW" in sections else None


def _num(block: dict[str, str], label: str, path: Path) -> float | None:
    raw = block.get(label)
    if raw is None:
        return None
    try:
        return float(raw.rstrip("%"))
    except ValueError:
        raise InputError(f"{label!r} is {raw!r}, not a number", path=str(path), field=label) from None


def log_record(
    text: str, report: dict[str, dict[str, str]], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any]:
    """One benchmark record for one log's report."""
    engine_block = report.get("ENGINE DETAILS", {})
    world = report.get("WORLD + RUNTIME INFORMATION", {})
    perf = report["PERFORMANCE OVERVIEW"]
    tput = _num(perf, "Token Throughput (tokens/sec)", path)
    if tput is None:
        raise InputError("PERFORMANCE OVERVIEW has no 'Token Throughput (tokens/sec)' line", path=str(path), field="Token Throughput")
    requests = _num(perf, "Number of requests", path)
    avg_in = _num(perf, "Average Input Length (tokens)", path)
    avg_out = _num(perf, "Average Output Length (tokens)", path)
    total_ms = _num(perf, "Total Latency (ms)", path)
    req_tput = _num(perf, "Request Throughput (req/sec)", path)
    if requests and avg_out and total_ms:
        expected = requests * avg_out / (total_ms / 1000.0)
        if abs(expected - tput) > 1e-3 * tput:
            result.findings.append(
                C.KB1101.finding(
                    f"Token Throughput {tput:g} tok/s is not requests x average output length / total latency ({expected:.6g}); "
                    "it may not count output tokens only",
                    path=str(path),
                    field="Token Throughput (tokens/sec)",
                )
            )
    metrics: dict[str, dict[str, Any]] = {
        "output_tok_s": {
            "value": tput,
            "unit": "tok/s",
            "value_scope": "aggregate",
            "basis": "Token Throughput (tokens/sec): output tokens",
        }
    }
    if req_tput is not None:
        metrics["request_throughput_rps"] = {
            "value": req_tput,
            "unit": "req/s",
            "value_scope": "aggregate",
            "basis": "Request Throughput (req/sec)",
        }
    model = options.model or engine_block.get("Model")
    version = engine_block.get("TensorRT-LLM Version")
    engine = C.engine_id(kb, options, "tensorrt-llm" if "tensorrt-llm" in kb.ids_of_type("engine") else None)
    gpus = {int(g) for _, g in _RANK_GPU.findall(text)}
    tp, pp = _num(world, "TP Size", path), _num(world, "PP Size", path)
    rid = C.make_id(FMT, Path(model).name if model else None, options.hardware_raw or options.accelerator, path.stem)
    rec = C.skeleton(
        rid=rid,
        name=f"trtllm-bench throughput, {Path(model).name if model else path.stem}" + (f", TP{int(tp)}" if tp else ""),
        engine=engine,
        metric="output_tok_s",
        value=tput,
        unit="tok/s",
        value_scope="aggregate",
        scenario="offline",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    C.apply_hardware(rec, kb, options, None, result.findings, path=path, count_from_file=len(gpus) or None)
    stated = C.option_conditions(options)
    if version:
        stated.setdefault("engine_version", version)
    if tp:
        stated.setdefault("tensor_parallel", int(tp))
    if pp:
        stated.setdefault("pipeline_parallel", int(pp))
    if requests:
        stated.setdefault("num_prompts", int(requests))
    rate = _num(world, "Issue Rate (req/sec)", path)
    if rate is not None:
        stated["request_rate"] = "inf" if rate > UNLIMITED_RATE else rate
    checked = ["the trtllm-bench report blocks (ENGINE DETAILS, WORLD + RUNTIME, PERFORMANCE OVERVIEW)", "command-line options"]
    conditions, gaps = build_conditions(stated, FMT, checked, RELEVANT)
    for cond, avg, label in (("input_tokens", avg_in, "input"), ("output_tokens", avg_out, "output")):
        if cond in gaps and avg is not None:
            gaps[cond]["reason"] = (
                f"the report gives only the average {label} length ({avg:g} tokens); whether every request had it is not stated"
            )
    if "concurrency" in gaps:
        batch = world.get("Max Runtime Batch Size")
        gaps["concurrency"]["reason"] = (
            "requests issued without a rate limit" if stated.get("request_rate") == "inf" else "requests issued at the Issue Rate"
        ) + (f"; the engine ran at most {batch} in flight (Max Runtime Batch Size), the achieved number is not reported" if batch else "")
    quant, dtype = engine_block.get("Quantization"), engine_block.get("Dtype")
    stated_format = (
        ("ENGINE DETAILS Quantization", quant)
        if quant and quant.strip().lower() not in ("none", "null")
        else (("ENGINE DETAILS Dtype", dtype) if quant and dtype else None)
    )
    fmt_id, fmt_entry, fmt_gap = weight_format(
        kb,
        stated_format,
        checked[:1],
        "intake-trtllm-bench",
        absent="the report's ENGINE DETAILS states no Quantization line (and so no weight format)",
        recover="the engine directory's config.json (quantization.quant_algo) or the checkpoint's quantization_config",
    )
    rec["format_id"] = fmt_id
    if fmt_gap:
        gaps["format_id"] = fmt_gap
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    C.identity_gaps(rec, FMT, checked[:1], result.findings, path=path, where=path.name)
    rec["metrics"] = metrics
    if fmt_entry:
        rec["provenance"] = [fmt_entry]
    sub: dict[str, Any] = {"harness": "trtllm-bench throughput (text report)"}
    for block, keys in (
        (engine_block, ("Engine Directory", "Dtype", "KV Cache Dtype", "Quantization", "Max Sequence Length")),
        (world, ("Max Runtime Batch Size", "Max Runtime Tokens", "Scheduling Policy", "KV Memory Percentage", "Issue Rate (req/sec)")),
        (perf, ("Average Input Length (tokens)", "Average Output Length (tokens)")),
    ):
        for key in keys:
            if key in block:
                sub[re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")] = block[key]
    if total_ms is not None:
        sub["duration_s"] = total_ms / 1000.0
    if gpus:
        sub["gpus_in_log"] = len(gpus)
    rec["submission"] = sub
    rec["methodology"] = (
        "trtllm-bench throughput report: headline = Token Throughput, output tokens per second over the run (checked against "
        "requests x average output length / Total Latency); every request issued up front at the Issue Rate; device count from "
        "the log's 'Rank N is using GPU M' lines."
    )
    C.attach_env(rec, options.env, engine_package="tensorrt_llm")
    if version:
        rec.setdefault("environment", {})["engine_version"] = version
    return rec


@register
class TrtllmBench(Importer):
    """``trtllm-bench ... throughput`` stdout log -> one benchmark record per log with a report."""

    name = FMT
    description = "TensorRT-LLM `trtllm-bench throughput` text report (stdout log with MPI/INFO noise)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per log with a PERFORMANCE OVERVIEW; an aborted run gives KB1102; never writes."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            text = raw.decode("utf-8", errors="replace")
            report = parse_report(text, path)
            if report is None:
                if not _HEADER.search(text):
                    raise InputError(
                        "not a trtllm-bench log: no '= PERFORMANCE OVERVIEW' block and no TensorRT-LLM log lines", path=str(path)
                    )
                result.findings.append(
                    C.KB1102.finding(
                        "the log has no PERFORMANCE OVERVIEW block: the run did not finish (aborted or truncated); no record",
                        path=str(path),
                    )
                )
                result.stats["skipped"]["no report"] = result.stats["skipped"].get("no report", 0) + 1
                continue
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            bench.append(log_record(text, report, path, options, kb, sources, result))
        return C.finish_batch(result, extra, bench, options, "logs")
