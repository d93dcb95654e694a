"""Importer ``aiperf``: NVIDIA AIPerf ``profile_export_aiperf.json`` (schema_version 1.x; FORMATS.md 5).

One file is one profiling run -> one benchmark record. Every metric is an
object carrying its own ``unit``; the importer checks the unit it expects and
refuses a file whose unit differs (a silent rescale would be a wrong number).

Metric meanings are AIPerf's own, read from ``docs/metrics_reference.md`` in
ai-dynamo/aiperf at commit 3a4b58d508f0b975f84e05684684bd4890037369:

- ``inter_token_latency`` is (request latency - TTFT) / (output sequence length - 1)
  per request: the decode time per token after the first, i.e. ``tpot_ms``
  here (vLLM's TPOT); ``inter_chunk_latency`` is the gap between streamed
  chunks, i.e. ``itl_ms`` (vLLM's ITL);
- ``output_token_throughput`` = total output sequence length / benchmark
  duration -> ``output_tok_s`` (headline, cross-checked against
  ``total_osl`` / ``benchmark_duration``, KB1101);
- ``output_token_throughput_per_user`` = 1 / ITL per request -> ``tok_s_per_user``;
- ``time_to_first_token`` -> ``ttft_ms``; ``request_latency`` -> ``e2e_latency_ms``;
  ``request_throughput`` -> ``request_throughput_rps``.

Distribution metrics give ``avg, p1, p5, p10, p25, p50, p75, p90, p95, p99,
min, max, std, count``. Conditions come from ``input_config``: the profiling
phase's ``concurrency`` (or ``request_rate``), its ``request_count`` when the
run was bounded by count (a ``duration``-bounded run has no prompt count),
the dataset file, and whether a warmup phase is configured (none listed ->
``warmup`` false). The model is ``input_config.models``; engine and hardware
are not in the file (the endpoint is only a URL): KB1105 / KB1106.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, register

if TYPE_CHECKING:
    from ..kb import KB

FMT = "aiperf"
NAMES = {"avg": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "min": "min", "max": "max", "std": "stdev", "count": "n"}
PERCENTILES = {"p1": "1", "p5": "5", "p10": "10", "p25": "25", "p75": "75"}
# AIPerf metric -> (registry metric, unit AIPerf must state, registry unit, value_scope)
DISTRIBUTIONS = {
    "time_to_first_token": ("ttft_ms", "ms", "ms", "per-request"),
    "inter_token_latency": ("tpot_ms", "ms", "ms", "per-request"),
    "inter_chunk_latency": ("itl_ms", "ms", "ms", "per-request"),
    "request_latency": ("e2e_latency_ms", "ms", "ms", "per-request"),
    "output_token_throughput_per_user": ("tok_s_per_user", "tokens/sec/user", "tok/s", "per-user"),
}
SCALARS = {
    "output_token_throughput": ("output_tok_s", "tokens/sec", "tok/s"),
    "request_throughput": ("request_throughput_rps", "requests/sec", "req/s"),
}
RELEVANT = ("concurrency", "request_rate", "num_prompts", "input_tokens", "output_tokens", "warmup", "engine_version", "dataset")


def _metric(doc: dict[str, Any], name: str, unit: str, path: Path) -> dict[str, Any] | None:
    entry = doc.get(name)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise InputError(f"expected a metric object with 'unit', found {type(entry).__name__}", path=str(path), field=name)
    if entry.get("unit") != unit:
        raise InputError(f"unit is {entry.get('unit')!r}, expected {unit!r}; not rescaled", path=str(path), field=f"{name}.unit")
    return entry


def _avg(doc: dict[str, Any], name: str, unit: str, path: Path) -> float | None:
    entry = _metric(doc, name, unit, path)
    return None if entry is None or entry.get("avg") is None else C.number(entry["avg"], path, f"{name}.avg")


def _phase(config: dict[str, Any]) -> dict[str, Any]:
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict)]
    return next((p for p in phases if p.get("name") == "profiling"), phases[-1] if phases else {})


def run_record(doc: dict[str, Any], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult) -> dict[str, Any]:
    """One benchmark record for one ``profile_export_aiperf.json``."""
    C.require_keys(doc, ("aiperf_version", "output_token_throughput", "benchmark_duration"), path, FMT)
    metrics: dict[str, dict[str, Any]] = {}
    for name, (registry, unit, out_unit, scope) in DISTRIBUTIONS.items():
        entry = _metric(doc, name, unit, path)
        if entry is not None:
            dist = C.distribution(entry, path, name, names=NAMES, percentiles=PERCENTILES)
            metrics[registry] = {**dist, "unit": out_unit, "value_scope": scope, "basis": f"`{name}` ({unit})"}
    for name, (registry, unit, out_unit) in SCALARS.items():
        value = _avg(doc, name, unit, path)
        if value is not None:
            metrics[registry] = {"value": value, "unit": out_unit, "value_scope": "aggregate", "basis": f"`{name}.avg` ({unit})"}
    if "output_tok_s" not in metrics:
        raise InputError("output_token_throughput has no avg; nothing to import", path=str(path), field="output_token_throughput")
    duration = _avg(doc, "benchmark_duration", "sec", path)
    total_osl = _avg(doc, "total_osl", "tokens", path)
    if duration and total_osl is not None and not C.close(total_osl / duration, metrics["output_tok_s"]["value"], rel=1e-6):
        result.findings.append(
            C.KB1101.finding(
                f"output_token_throughput {metrics['output_tok_s']['value']:.6g} is not total_osl / benchmark_duration "
                f"({total_osl / duration:.6g})",
                path=str(path),
                field="output_token_throughput",
            )
        )
    config = doc.get("input_config") if isinstance(doc.get("input_config"), dict) else {}
    models = config.get("models") if isinstance(config.get("models"), dict) else {}
    names = [m.get("name") for m in models.get("items") or [] if isinstance(m, dict) and isinstance(m.get("name"), str)]
    model = options.model or (names[0] if len(names) == 1 else None)
    phase = _phase(config)
    run_info = doc.get("run_info") if isinstance(doc.get("run_info"), dict) else {}
    label = run_info.get("variation_label") if isinstance(run_info.get("variation_label"), str) else None
    engine = C.engine_id(kb, options, None)
    rid = C.make_id(
        FMT, model, options.hardware_raw or options.accelerator, label or path.parent.name, str(doc.get("benchmark_id") or "")[:8]
    )
    rec = C.skeleton(
        rid=rid,
        name=f"AIPerf profile, {model or path.stem}" + (f", {label}" if label else ""),
        engine=engine,
        metric="output_tok_s",
        value=metrics["output_tok_s"]["value"],
        unit="tok/s",
        value_scope="aggregate",
        scenario="online-serving",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    endpoint = config.get("endpoint") if isinstance(config.get("endpoint"), dict) else {}
    if engine is None:
        C.engine_unstated(
            result,
            rec,
            path,
            f"AIPerf is a client; the file names only the endpoint {endpoint.get('urls')!r}, not the engine (pass --engine)",
        )
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    stated = C.option_conditions(options)
    if phase.get("type") == "concurrency" and C.integer(phase.get("concurrency")) is not None:
        stated.setdefault("concurrency", C.integer(phase["concurrency"]))
    if isinstance(phase.get("request_rate"), (int, float)) and not isinstance(phase.get("request_rate"), bool):
        stated["request_rate"] = C.number(phase["request_rate"], path, "input_config.phases.request_rate", nonneg=True)
    if C.integer(phase.get("request_count")) is not None:
        stated.setdefault("num_prompts", C.integer(phase["request_count"]))
    datasets = [d for d in config.get("datasets") or [] if isinstance(d, dict)]
    if len(datasets) == 1 and isinstance(datasets[0].get("path") or datasets[0].get("name"), str):
        stated.setdefault("dataset", Path(datasets[0].get("path") or datasets[0]["name"]).name)
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict)]
    if phases and not any("warmup" in str(p.get("name", "")).lower() or "warmup" in str(p.get("type", "")).lower() for p in phases):
        stated.setdefault("warmup", False)
    checked = [f"the {FMT} profile export (metrics, input_config, run_info)", "command-line options"]
    # a concurrency-driven phase has no request rate to state, and a rate-driven one no concurrency
    relevant = tuple(
        c
        for c in RELEVANT
        if c != ("request_rate" if phase.get("type") == "concurrency" else "concurrency" if "request_rate" in stated else "")
    )
    conditions, gaps = build_conditions(stated, FMT, checked, relevant)
    osl = doc.get("output_sequence_length") if isinstance(doc.get("output_sequence_length"), dict) else {}
    if "output_tokens" in gaps and osl:
        gaps["output_tokens"]["reason"] = (
            f"output lengths varied (output_sequence_length min {osl.get('min')}, p50 {osl.get('p50')}, max {osl.get('max')} tokens)"
        )
    if "num_prompts" in gaps and phase.get("duration") is not None:
        gaps["num_prompts"]["reason"] = f"the profiling phase was bounded by duration ({phase['duration']} s), not by a request count"
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    C.identity_gaps(rec, FMT, checked[:1], result.findings, path=path, where=path.name)
    rec["metrics"] = metrics
    sub: dict[str, Any] = {"harness": "aiperf profile (profile_export_aiperf.json)"}
    slos = config.get("slos") if isinstance(config.get("slos"), dict) else {}
    tokenizer = config.get("tokenizer") if isinstance(config.get("tokenizer"), dict) else {}
    for key, value in (
        ("aiperf_version", doc.get("aiperf_version")),
        ("schema_version", doc.get("schema_version")),
        ("benchmark_id", doc.get("benchmark_id")),
        ("start_time", doc.get("start_time")),
        ("end_time", doc.get("end_time")),
        ("duration_s", duration),
        ("request_count", _avg(doc, "request_count", "requests", path)),
        ("total_output_tokens", total_osl),
        ("goodput_rps", _avg(doc, "goodput", "requests/sec", path)),
        ("good_request_fraction", _avg(doc, "good_request_fraction", "ratio", path)),
        ("endpoint_type", endpoint.get("type")),
        ("streaming", endpoint.get("streaming")),
        ("use_server_token_count", endpoint.get("use_server_token_count")),
        ("tokenizer", tokenizer.get("name")),
        ("phase_type", phase.get("type")),
        ("phase_duration_s", phase.get("duration")),
        ("variation_label", label),
        ("cli_command", run_info.get("cli_command")),
        ("was_cancelled", doc.get("was_cancelled")),
        ("errors", len(doc["error_summary"]) if isinstance(doc.get("error_summary"), list) else None),
    ):
        if isinstance(value, (str, int, float, bool)):
            sub[key] = value
    for key, value in slos.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            sub[f"goodput_slo_{key}_ms"] = value
    rec["submission"] = sub
    rec["methodology"] = (
        "AIPerf profile export: headline = output_token_throughput (total output tokens / benchmark duration). AIPerf's "
        "inter_token_latency ((latency - TTFT) / (OSL - 1) per request) is stored as tpot_ms and its inter_chunk_latency "
        "(gaps between streamed chunks) as itl_ms; output tokens are counted by AIPerf's tokenizer unless use_server_token_count."
    )
    C.attach_env(rec, options.env)
    return rec


@register
class AIPerf(Importer):
    """AIPerf ``profile_export_aiperf.json`` -> one benchmark record per file."""

    name = FMT
    description = "NVIDIA AIPerf profile_export_aiperf.json (one record per profiling run)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per file; raises InputError for unusable input (a unit other than expected included), never writes."""
        return C.one_record_per_json_file(paths, options, kb, FMT, run_record)
