"""Importer ``llmperf``: Ray LLMPerf ``*_summary.json`` files (the llmperf-leaderboard raw data) -> one record per run.

An LLMPerf summary (``version`` 2023-08-31) holds, per run against one API
endpoint: the requested shape (``mean_input_tokens``, ``mean_output_tokens``,
``num_concurrent_requests``), and per metric the quantiles p25/p50/p75/p90/
p95/p99, mean, min, max and stddev of ``ttft_s``, ``inter_token_latency_s``,
``end_to_end_latency_s`` (all **seconds**, converted to ms) and
``request_output_throughput_token_per_s`` (per request), plus the run's
``results_mean_output_throughput_token_per_s`` (all requests together) and
error counts. Quantiles go to the stats slots (p50/p90/p95/p99) or to
``percentiles`` (p25/p75).

Headline: ``output_tok_s`` = ``results_mean_output_throughput_token_per_s``
(aggregate over the concurrent requests). The endpoint is a hosted API: the
file says nothing of the hardware, engine or engine version; those stay null
with gaps that say so. With a per-request file beside it (same name under
``../individual/``) the mean TTFT and the request count are cross-checked
(KB1101). Input and output lengths are conditions only when their stddev is 0
(every request had the same length).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from . import dataset as D
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, register, today

if TYPE_CHECKING:
    from ..kb import KB

FMT = "llmperf"
ORIGIN = "llmperf-leaderboard"
MARKERS = ("results_ttft_s_mean", "num_concurrent_requests", "mean_input_tokens", "mean_output_tokens")
SERIES = {
    "ttft_s": ("ttft_ms", 1000.0, "ms", "per-request"),
    "inter_token_latency_s": ("itl_ms", 1000.0, "ms", "per-request"),
    "end_to_end_latency_s": ("e2e_latency_ms", 1000.0, "ms", "per-request"),
    "request_output_throughput_token_per_s": ("tok_s_per_user", 1.0, "tok/s", "per-user"),
}
SLOTS = {"p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
CHECKED = ["the LLMPerf summary JSON", "the leaderboard README"]


def _series_value(value: Any, path: Path, key: str) -> float:
    """One ``results_*`` value as a finite float >= 0; LLMPerf writes some as numeric strings. InputError otherwise."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InputError(f"expected a number, found {C.shown(value)}", path=str(path), field=key) from None
    return C.number(value, path, key, nonneg=True)


def series_stats(doc: dict[str, Any], name: str, scale: float, path: Path) -> tuple[dict[str, Any], dict[str, float]]:
    """``(stats, percentiles)`` of one ``results_<name>_*`` series, scaled (s -> ms)."""
    stats: dict[str, Any] = {}
    pct: dict[str, float] = {}
    for key, value in doc.items():
        if not key.startswith(f"results_{name}_") or value is None:
            continue
        tail = key[len(f"results_{name}_") :]
        x = _series_value(value, path, key) * scale
        if tail.startswith("quantiles_"):
            q = tail.removeprefix("quantiles_")
            if q in SLOTS:
                stats[SLOTS[q]] = x
            else:
                pct[q] = x
        elif tail in ("mean", "min", "max"):
            stats[tail] = x
        elif tail == "stddev":
            stats["stdev"] = x
    return stats, pct


def cross_check(summary: dict[str, Any], individual: Path, path: Path) -> list[str]:
    """Disagreements between a summary and its per-request file (mean TTFT, completed count); ``[]`` when they agree."""
    rows = C.load_json(individual)
    if not isinstance(rows, list):
        raise InputError("expected a JSON array of per-request records", path=str(individual))
    ok = [r for r in rows if isinstance(r, dict) and not r.get("error_code") and isinstance(r.get("ttft_s"), (int, float))]
    out = []
    if len(ok) != summary.get("results_num_completed_requests"):
        out.append(f"{len(ok)} successful requests in {individual.name}, summary says {summary.get('results_num_completed_requests')}")
    if ok:
        mean = math.fsum(r["ttft_s"] for r in ok) / len(ok)
        stated = summary.get("results_ttft_s_mean")
        stated = None if stated is None else _series_value(stated, path, "results_ttft_s_mean")
        if stated is not None and not C.close(mean, stated, rel=1e-6):
            out.append(f"mean ttft_s {mean:.6g} from {individual.name}, summary says {stated:.6g}")
    return out


def run_record(doc: dict[str, Any], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult) -> dict[str, Any]:
    """One benchmark record for one summary file."""
    C.require_keys(doc, MARKERS, path, "LLMPerf summary")
    provider = str(doc.get("framework") or path.stem.split("_")[0])
    model = str(doc.get("model") or "")
    metrics: dict[str, Any] = {}
    for name, (metric, scale, unit, scope) in SERIES.items():
        stats, pct = series_stats(doc, name, scale, path)
        if stats:
            entry: dict[str, Any] = {"stats": stats, "unit": unit, "value_scope": scope, "basis": f"results_{name}_* of the summary"}
            if scale != 1.0:
                entry["basis"] += " (seconds x 1000)"
            if pct:
                entry["percentiles"] = pct
            metrics[metric] = entry
    n = C.integer(doc.get("results_num_completed_requests"))
    for entry in metrics.values():
        entry["stats"]["n"] = n
    head = doc.get("results_mean_output_throughput_token_per_s")
    value = C.number(head, path, "results_mean_output_throughput_token_per_s", positive=True) if head is not None else None
    if value is not None:
        metrics["output_tok_s"] = {
            "value": value,
            "unit": "tok/s",
            "value_scope": "aggregate",
            "basis": "results_mean_output_throughput_token_per_s: output tokens of all requests / run time",
        }
    stated: dict[str, Any] = {
        "concurrency": C.integer(doc.get("num_concurrent_requests")),
        "num_prompts": C.integer(doc.get("results_num_requests_started")),
    }
    notes = []
    for key, cond in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens")):
        mean, sd = doc.get(f"mean_{key}"), doc.get(f"stddev_{key}")
        if C.integer(mean) and sd == 0:
            stated[cond] = int(mean)
        elif mean is not None:
            notes.append(f"requested mean {key} {mean} with stddev {sd}: not one fixed length.")
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    hosted = "hosted API endpoint measured over the internet; the provider does not publish the hardware behind it"
    gaps = {
        "accelerator_count": D.gap(hosted, CHECKED, "the provider's own disclosure of the serving hardware"),
        "accelerator_ids": D.gap(hosted, CHECKED, "the provider's own disclosure of the serving hardware"),
        "engine_version": D.gap(
            "the serving engine behind a hosted API is not disclosed", CHECKED, "the provider's own disclosure of its serving stack"
        ),
        "warmup": D.gap(
            "the summary states no warmup and the leaderboard README describes none", CHECKED, "the LLMPerf invocation used for the run"
        ),
        "format_id": D.gap("the provider does not say how the weights are quantized", CHECKED, "the provider's model card"),
    }
    for key in ("concurrency", "input_tokens", "output_tokens"):
        if conditions[key] is None:
            gaps[key] = D.gap(f"{key} is not stated as one value in the summary", CHECKED)
    defaults = D.apply_harness_defaults(conditions, gaps, options.extra.get("harness_defaults"), "intake-llmperf")
    individual = path.parent.parent / "individual" / path.name
    if individual.is_file():
        for problem in cross_check(doc, individual, path):
            result.findings.append(C.KB1101.finding(problem, path=str(path), field="results_ttft_s_mean"))
    if doc.get("results_number_errors"):
        notes.append(f"{doc['results_number_errors']} requests failed (error rate {doc.get('results_error_rate')}).")
    pin = D.pin_for(options, path)
    ts = doc.get("timestamp")
    run_date = dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat() if isinstance(ts, (int, float)) else None
    sub: dict[str, Any] = {
        "harness": f"LLMPerf (summary version {doc.get('version')})",
        "provider": provider,
        "run_name": doc.get("name"),
        "run_date": run_date,
        "timestamp": ts if isinstance(ts, (int, float)) else None,
        "requests_started": doc.get("results_num_requests_started"),
        "requests_completed": doc.get("results_num_completed_requests"),
        "error_rate": doc.get("results_error_rate"),
        "completed_requests_per_min": doc.get("results_num_completed_requests_per_min"),
    }
    sub.update({k: pin[k] for k in ("repo", "path", "commit") if k in pin})
    rid = C.make_id("llmperf", provider, model, run_date)
    return {
        "id": options.record_id or rid,
        "type": "benchmark",
        "name": options.name or f"LLMPerf {model} via the {provider} hosted API, {stated.get('concurrency')} concurrent requests",
        "status": "draft",
        "confidence": 0.6,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes) or None,
        "engine_id": C.engine_id(kb, options, None),
        "accelerator_ids": [],
        "accelerator_count": None,
        "accelerator_alternates": [],
        "hardware_raw": None,
        "model": model,
        "model_id": None,
        "format_id": None,
        "metric": "output_tok_s",
        "value": value,
        "unit": "tok/s",
        "value_scope": "aggregate",
        "origin": D.origin_for(options, ORIGIN),
        "scenario": "online-serving",
        "conditions": conditions,
        "condition_gaps": gaps,
        "metrics": metrics,
        "submission": sub,
        "methodology": "LLMPerf load test of a hosted API endpoint: a fixed number of concurrent streaming requests of a requested "
        "input/output length; TTFT, inter-token and end-to-end latency measured per request by the client (seconds, here ms).",
        "measured_by": "third_party",
        "provenance": [
            D.import_entry(
                "intake-llmperf",
                "inferkb.intake.llmperf",
                "submission.run_name",
                str(doc.get("name")),
                "one LLMPerf summary file; seconds converted to ms",
            ),
            *defaults,
        ],
    }


@register
class LLMPerf(Importer):
    """LLMPerf summary JSON (llmperf-leaderboard ``raw_data/summary``) -> one record per file."""

    name = FMT
    description = "Ray LLMPerf *_summary.json (llmperf-leaderboard raw data; hosted APIs, hardware unknown)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per summary file; a per-request file beside it is cross-checked."""
        return C.one_record_per_json_file(paths, options, kb, FMT, run_record)
