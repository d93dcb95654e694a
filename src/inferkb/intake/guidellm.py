"""Importer ``guidellm``: GuideLLM ``benchmarks.json`` (the ``type_``-style schema of about v0.2; FORMATS.md 6).

The file is ``{"benchmarks": [...]}``; each benchmark (one strategy or rate of
a sweep) becomes one benchmark record. Each ``metrics.<name>.successful`` is
a distribution ``{mean, median, std_dev, min, max, count, percentiles{p001,
p01, p05, p10, p25, p75, p90, p95, p99, p999}}`` (no ``p50``: ``median`` is it).

What each metric means, as checked on the corpus sample's own per-request
records (request 0: ``first_token_time`` 0.24327 s after ``start_time``,
128 output tokens, ``(last_token_time - first_token_time) / 127`` =
182.106 ms = its ``inter_token_latency_ms``; the same span / 128 = 180.684 ms
= its ``time_per_output_token_ms``):

- ``time_to_first_token_ms`` -> ``ttft_ms``;
- ``inter_token_latency_ms`` (decode time per token after the first) ->
  ``tpot_ms`` (the vLLM sense of TPOT; GuideLLM's own ``time_per_output_token_ms``
  divides by all output tokens and is not stored);
- ``request_latency`` is in **seconds** -> ``e2e_latency_ms`` (x 1000);
- ``output_tokens_per_second`` / ``requests_per_second`` are distributions over
  time; their ``mean`` is the run's rate (``output_tok_s``, ``request_throughput_rps``),
  cross-checked against total output tokens / ``duration`` (KB1101 beyond 1 %).

Conditions: ``num_prompts`` = requests made; input/output lengths from a
synthetic ``request_loader.data`` spec (``prompt_tokens=512,output_tokens=128``);
``concurrency`` from the strategy (``concurrent``: its streams; ``synchronous``: 1);
``request_rate`` for ``constant``/``poisson`` strategies; warmup false when
``args.warmup_number`` and ``args.warmup_duration`` are both null (no warmup
phase was configured). The server's engine and the hardware are not in the
file (``worker.backend_target`` is only a URL): null with KB1105 / KB1106
unless given as options.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register

if TYPE_CHECKING:
    from ..kb import KB

FMT = "guidellm"
NAMES = {"mean": "mean", "median": "p50", "std_dev": "stdev", "min": "min", "max": "max", "count": "n"}
PERCENTILES = {
    "p001": "0.1",
    "p01": "1",
    "p05": "5",
    "p10": "10",
    "p25": "25",
    "p75": "75",
    "p90": "90",
    "p95": "95",
    "p99": "99",
    "p999": "99.9",
}
# GuideLLM metric -> (registry metric, scale to the registry unit, unit)
LATENCIES = {
    "time_to_first_token_ms": ("ttft_ms", 1.0),
    "inter_token_latency_ms": ("tpot_ms", 1.0),
    "request_latency": ("e2e_latency_ms", 1000.0),
}
RATES = {"output_tokens_per_second": ("output_tok_s", "tok/s"), "requests_per_second": ("request_throughput_rps", "req/s")}
SCENARIO = {
    "synchronous": "single-stream",
    "throughput": "offline",
    "concurrent": "online-serving",
    "constant": "server",
    "poisson": "server",
}
RELEVANT = ("concurrency", "num_prompts", "input_tokens", "output_tokens", "warmup", "engine_version", "dataset")
_SPEC = re.compile(r"\b(prompt_tokens|output_tokens)\s*=\s*(\d+)\b")


def _successful(metrics: dict[str, Any], name: str, path: Path, where: str) -> dict[str, Any] | None:
    entry = metrics.get(name)
    if entry is None:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("successful"), dict):
        raise InputError(f"{where}: metrics.{name} has no 'successful' distribution", path=str(path), field=f"metrics.{name}")
    return entry["successful"]


def benchmark_record(
    bench: dict[str, Any], index: int, many: bool, path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any] | None:
    """One record for one entry of ``benchmarks`` (``None`` with KB1102 when no request succeeded)."""
    where = f"benchmarks[{index}]"
    C.require_keys(bench, ("metrics", "args", "duration"), path, FMT)
    metrics_in = bench["metrics"]
    if not isinstance(metrics_in, dict):
        raise InputError(f"{where}: metrics is not an object", path=str(path), field=f"{where}.metrics")
    totals = bench.get("request_totals") if isinstance(bench.get("request_totals"), dict) else {}
    ok = C.integer(totals.get("successful"))
    if not ok:
        result.findings.append(C.KB1102.finding(f"{where}: no successful request; not imported", path=str(path), field="request_totals"))
        result.stats["skipped"]["no successful requests"] = result.stats["skipped"].get("no successful requests", 0) + 1
        return None
    duration = C.number(bench["duration"], path, f"{where}.duration", positive=True)
    metrics: dict[str, dict[str, Any]] = {}
    for name, (registry, scale) in LATENCIES.items():
        dist = _successful(metrics_in, name, path, where)
        if dist is not None:
            entry = C.distribution(dist, path, f"{where}.metrics.{name}.successful", names=NAMES, percentiles=PERCENTILES, scale=scale)
            metrics[registry] = {**entry, "unit": "ms", "value_scope": "per-request", "basis": f"metrics.{name}.successful"}
    for name, (registry, unit) in RATES.items():
        dist = _successful(metrics_in, name, path, where)
        if dist is not None and dist.get("mean") is not None:
            metrics[registry] = {
                "value": C.number(dist["mean"], path, f"{where}.metrics.{name}.successful.mean", nonneg=True),
                "unit": unit,
                "value_scope": "aggregate",
                "basis": f"mean of metrics.{name}.successful (a rate sampled over the run)",
            }
    if "output_tok_s" not in metrics:
        raise InputError(f"{where}: no metrics.output_tokens_per_second; nothing to import", path=str(path), field="metrics")
    out_dist = _successful(metrics_in, "output_token_count", path, where) or {}
    out_total = out_dist.get("total_sum")
    if (
        isinstance(out_total, (int, float))
        and abs(out_total / duration - metrics["output_tok_s"]["value"]) > 0.01 * metrics["output_tok_s"]["value"]
    ):
        result.findings.append(
            C.KB1101.finding(
                f"{where}: mean output_tokens_per_second {metrics['output_tok_s']['value']:.6g} differs by over 1 % from total output "
                f"tokens / duration ({out_total / duration:.6g})",
                path=str(path),
                field="metrics.output_tokens_per_second",
            )
        )
    args = bench["args"] if isinstance(bench["args"], dict) else {}
    strategy = args.get("strategy") if isinstance(args.get("strategy"), dict) else {}
    kind = strategy.get("type_") if isinstance(strategy.get("type_"), str) else None
    worker = bench.get("worker") if isinstance(bench.get("worker"), dict) else {}
    loader = bench.get("request_loader") if isinstance(bench.get("request_loader"), dict) else {}
    model = options.model or (worker.get("backend_model") if isinstance(worker.get("backend_model"), str) else None)
    engine = C.engine_id(kb, options, None)
    rid = C.make_id(FMT, model, options.hardware_raw or options.accelerator, kind, path.stem, f"benchmark-{index}" if many else None)
    rec = C.skeleton(
        rid=rid,
        name=f"GuideLLM {kind or 'benchmark'}, {model or path.stem}" + (f", benchmark {index}" if many else ""),
        engine=engine,
        metric="output_tok_s",
        value=metrics["output_tok_s"]["value"],
        unit="tok/s",
        value_scope="aggregate",
        scenario=SCENARIO.get(kind or ""),
        sources=sources,
        options=options,
    )
    rec["model"] = model
    if engine is None:
        C.engine_unstated(
            result,
            rec,
            path,
            f"{where}: GuideLLM is a client; the file names only the server URL {worker.get('backend_target')!r}, not the engine "
            "(pass --engine)",
        )
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    stated = C.option_conditions(options)
    made = C.integer(totals.get("total"))
    if made is not None:
        stated.setdefault("num_prompts", made)
    spec = dict(_SPEC.findall(loader["data"])) if isinstance(loader.get("data"), str) else {}
    if "prompt_tokens" in spec:
        stated.setdefault("input_tokens", int(spec["prompt_tokens"]))
    if "output_tokens" in spec:
        stated.setdefault("output_tokens", int(spec["output_tokens"]))
    if spec:
        stated.setdefault("dataset", "synthetic")
    elif isinstance(loader.get("data"), str):
        stated.setdefault("dataset", loader["data"])
    if kind == "synchronous":
        stated.setdefault("concurrency", 1)
    elif kind == "concurrent" and C.integer(strategy.get("streams")) is not None:
        stated.setdefault("concurrency", C.integer(strategy["streams"]))
    elif kind in ("constant", "poisson") and isinstance(strategy.get("rate"), (int, float)):
        stated["request_rate"] = C.number(strategy["rate"], path, f"{where}.args.strategy.rate", nonneg=True)
    warm_keys = ("warmup_number", "warmup_duration")
    if all(k in args for k in warm_keys) and all(args[k] is None for k in warm_keys):
        stated.setdefault("warmup", False)
    checked = [f"the {FMT} benchmarks.json entry (args, request_loader, worker, metrics)", "command-line options"]
    conditions, gaps = build_conditions(stated, FMT, checked, RELEVANT)
    conc = _successful(metrics_in, "request_concurrency", path, where) or {}
    if "concurrency" in gaps and kind == "throughput":
        gaps["concurrency"]["reason"] = (
            f"throughput strategy with max_concurrency {strategy.get('max_concurrency') if strategy.get('max_concurrency') is not None else 'null'}: "
            "requests are sent as fast as GuideLLM's "
            f"own in-flight limit allows; measured in flight: mean {conc.get('mean')}, max {conc.get('max')}"
        )
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    C.identity_gaps(rec, FMT, checked[:1], result.findings, path=path, where=path.name)
    rec["metrics"] = metrics
    sub: dict[str, Any] = {"harness": "GuideLLM benchmarks.json", "benchmark_index": index}
    for key, value in (
        ("strategy", kind),
        ("benchmark_id", bench.get("id_")),
        ("run_id", bench.get("run_id")),
        ("backend_target", worker.get("backend_target")),
        ("backend_type", worker.get("backend_type")),
        ("processor", loader.get("processor")),
        ("data", loader.get("data")),
        ("successful_requests", ok),
        ("errored_requests", totals.get("errored")),
        ("incomplete_requests", totals.get("incomplete")),
        ("duration_s", duration),
        ("start_time_epoch_s", bench.get("start_time")),
        ("mean_requests_in_flight", conc.get("mean")),
        ("max_requests_in_flight", conc.get("max")),
        ("max_number", args.get("max_number")),
        ("max_duration_s", args.get("max_duration")),
    ):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            sub[key] = value
    prompt = _successful(metrics_in, "prompt_token_count", path, where) or {}
    for key, dist in (("prompt_tokens", prompt), ("output_tokens", out_dist)):
        for stat in ("mean", "min", "max"):
            if isinstance(dist.get(stat), (int, float)):
                sub[f"{key}_{stat}"] = dist[stat]
    rec["submission"] = sub
    rec["methodology"] = (
        "GuideLLM benchmarks.json: headline = mean of metrics.output_tokens_per_second (successful requests), the run's "
        "output token rate; TTFT and TPOT (inter_token_latency_ms: decode time per token after the first) in ms, request "
        "latency converted from seconds; median stored as p50, p0.1/p1/p5/p10/p25/p75 under percentiles. The lengths are "
        "the synthetic data spec as requested (observed prompt/output counts in submission)."
    )
    C.attach_env(rec, options.env)
    return rec


@register
class GuideLLM(Importer):
    """GuideLLM ``benchmarks.json`` -> one benchmark record per benchmark (strategy / rate)."""

    name = FMT
    description = "GuideLLM benchmarks.json (type_-style schema, about v0.2): one record per benchmark"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every benchmark of every file; raises InputError for unusable input, never writes."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path, limit=256 * 1048576)
            doc = C.load_json(path, raw)
            C.require_keys(doc, ("benchmarks",), path, FMT)
            entries = doc["benchmarks"]
            if not isinstance(entries, list) or not entries:
                raise InputError("benchmarks is not a non-empty list", path=str(path), field="benchmarks")
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict):
                    raise InputError(f"benchmarks[{i}] is not an object", path=str(path), field=f"benchmarks[{i}]")
                rec = benchmark_record(entry, i, len(entries) > 1, path, options, kb, sources, result)
                if rec is not None:
                    bench.append(rec)
        return C.finish_batch(result, extra, bench, options, "benchmarks")
