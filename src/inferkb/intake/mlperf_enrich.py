"""Enrich MLPerf table records with their LoadGen run summaries and system descriptions (one record, no duplicate).

A LoadGen ``mlperf_log_summary.txt`` saved at
``inference_results_<round>/<division>/<submitter>/results/<platform>/<model>/<scenario>/performance/run_1/``
belongs to the table row with the same round, division, submitter, platform,
model and scenario (:func:`log_key`). :func:`enrich_with_log` adds to that
record, without touching its headline number:

- ``metrics.ttft_ms`` / ``tpot_ms`` / ``e2e_latency_ms``: the summary's
  percentiles, ns converted to ms (Offline has one query, so its "latency" is
  not a per-request figure and is left out);
- ``submission``: ``result_validity``, the LoadGen settings the run used
  (``loadgen_*``: target QPS, samples per query, min duration, min query
  count, performance sample count, the TTFT/TPOT limits it enforced);
- ``conditions.request_rate`` = the Server/Interactive ``target_qps``.

It first checks that the summary's headline equals the table value to the
table's rounding (relative difference <= 5e-6); a mismatch is returned as a
problem and nothing is merged. ``closed/<submitter>/systems/<platform>.json``
(:func:`enrich_with_system`) adds the software stack and memory/interconnect
lines to ``environment.extra`` of every record of that platform in that round.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .base import today
from .mlperf_loadgen import NS_PER_MS, _family_stats, parse_summary_text
from .mlperf_table import bounded_id as _bounded_id

HEADLINE_KEYS = ("Tokens per second", "Tokens per second (inferred)", "Completed tokens per second", "Samples per second")
SETTINGS = {
    "target_qps": "loadgen_target_qps",
    "samples_per_query": "loadgen_samples_per_query",
    "min_duration (ms)": "loadgen_min_duration_ms",
    "min_query_count": "loadgen_min_query_count",
    "performance_sample_count": "loadgen_performance_sample_count",
}
SYSTEM_EXTRA = (
    "framework",
    "other_software_stack",
    "accelerator_memory_capacity",
    "accelerator_host_interconnect",
    "accelerator_interconnect",
    "host_memory_capacity",
    "hw_notes",
    "sw_notes",
)


def log_key(path: Path) -> tuple[str, str, str, str, str, str] | None:
    """``(round, division, submitter, platform, model, scenario)`` from a summary's path, or ``None`` if the path has another shape."""
    parts = path.parts
    try:
        i = next(k for k, p in enumerate(parts) if p.startswith("inference_results_v"))
    except StopIteration:
        return None
    tail = parts[i + 1 :]
    if len(tail) < 7 or tail[2] != "results":
        return None
    return parts[i].removeprefix("inference_results_"), tail[0], tail[1], tail[3], tail[4], tail[5]


def record_id_for(key: tuple[str, ...]) -> str:
    """The benchmark id the table importer gives that (round, division, submitter, platform, model, scenario)."""
    rnd, division, org, platform, model, scenario = key
    return _bounded_id("mlperf", rnd, division, org, platform, model, scenario)


def enrich_with_log(rec: dict[str, Any], path: Path, rel: str) -> str | None:
    """Merge one LoadGen summary into ``rec`` (in place); returns a problem message instead when it does not match."""
    parsed = parse_summary_text(path.read_text(encoding="utf-8"), path=str(path))
    f = parsed["fields"]
    headline_key = next((k for k in HEADLINE_KEYS if isinstance(f.get(k), (int, float))), None)
    value = rec.get("value")
    if headline_key is None or not isinstance(value, (int, float)):
        return f"{rel}: no token/sample rate headline to check against the table value {value!r}"
    logged = float(f[headline_key])
    if rec.get("metric") == "output_tok_s" and "Samples" in headline_key:
        return f"{rel}: the summary's headline is {headline_key!r}, the record is a token rate"
    if abs(logged - value) > 5e-6 * max(abs(logged), abs(value)):
        return f"{rel}: {headline_key} {logged} differs from the table value {value}"
    validity = str(f.get("Result is", "")).strip().upper()
    sub = rec.setdefault("submission", {})
    sub["result_validity"] = validity
    sub["loadgen_scenario"] = str(f.get("Scenario"))
    sub["loadgen_summary"] = rel
    for src, dst in SETTINGS.items():
        if isinstance(f.get(src), (int, float)):
            sub[dst] = f[src]
    for src, dst in (("ttft_latency (ns)", "loadgen_ttft_ms_max"), ("tpot_latency (ns)", "loadgen_tpot_ms_max")):
        if isinstance(f.get(src), int) and f[src] > 0:
            sub[dst] = f[src] / NS_PER_MS
    scenario = (rec.get("scenario") or "").lower()
    metrics = rec.setdefault("metrics", {})
    for name, fam in _family_stats(f).items():
        if name == "e2e_latency_ms" and scenario == "offline":
            continue
        entry: dict[str, Any] = {
            "stats": fam["stats"],
            "unit": "ms",
            "value_scope": "per-request",
            "basis": "LoadGen summary, ns converted to ms",
        }
        if fam["percentiles"]:
            entry["percentiles"] = fam["percentiles"]
        metrics[name] = entry
    sps = f.get("Completed samples per second", f.get("Samples per second"))
    if isinstance(sps, (int, float)):
        metrics["samples_per_s"] = {"value": float(sps), "unit": "samples/s", "value_scope": "per-system", "basis": "LoadGen summary"}
    if scenario in ("server", "interactive") and isinstance(f.get("target_qps"), (int, float)):
        rec.setdefault("conditions", {})["request_rate"] = f["target_qps"]
        rec.get("condition_gaps", {}).pop("request_rate", None)
    rec.setdefault("provenance", []).append(
        {
            "date": today(),
            "tag": "intake-mlperf-loadgen",
            "field": "metrics",
            "action": "import",
            "method": f"inferkb.intake.mlperf_enrich: LoadGen summary {rel}; headline {headline_key} {logged} equals the table value",
            "evidence": {"field": headline_key, "quote": f"Result is : {validity}"},
            "basis": "LoadGen mlperf_log_summary.txt of this result; ns converted to ms; settings copied as printed",
            "numbers_changed": False,
        }
    )
    return None


def system_key(path: Path) -> tuple[str, str, str, str] | None:
    """``(round, division, submitter, platform)`` from ``inference_results_<round>/<division>/<submitter>/systems/<platform>.json``."""
    parts = path.parts
    try:
        i = next(k for k, p in enumerate(parts) if p.startswith("inference_results_v"))
    except StopIteration:
        return None
    tail = parts[i + 1 :]
    if len(tail) != 4 or tail[2] != "systems" or not tail[3].endswith(".json"):
        return None
    return parts[i].removeprefix("inference_results_"), tail[0], tail[1], tail[3][: -len(".json")]


def enrich_with_system(rec: dict[str, Any], doc: dict[str, Any], rel: str) -> None:
    """Copy a system description's software and memory/interconnect lines into ``rec["environment"]["extra"]``."""
    env = rec.setdefault("environment", {})
    extra = {k: doc[k] for k in SYSTEM_EXTRA if doc.get(k) not in (None, "", "N/A")}
    extra["system_description"] = rel
    stack = doc.get("other_software_stack")
    if isinstance(stack, dict):
        if stack.get("cuda_driver_version") and not env.get("driver"):
            env["driver"] = str(stack["cuda_driver_version"])
        if stack.get("cuda_version") and not env.get("cuda"):
            env["cuda"] = str(stack["cuda_version"])
    env["extra"] = extra
    rec.setdefault("provenance", []).append(
        {
            "date": today(),
            "tag": "intake-mlperf-system",
            "field": "environment",
            "action": "import",
            "method": f"inferkb.intake.mlperf_enrich: system description {rel}",
            "evidence": {"field": "system_name", "quote": str(doc.get("system_name", ""))},
            "basis": "the submission's system description JSON (submitter-written); values copied as stated",
            "numbers_changed": False,
        }
    )


def enrich(
    records: dict[str, dict[str, Any]], corpus_mlperf: Path, system_paths: dict[str, tuple[str, str, str, str]] | None = None
) -> dict[str, Any]:
    """Apply every LoadGen summary and system description under ``corpus_mlperf`` to ``records`` (id -> record).

    ``system_paths`` maps a saved path (relative to ``corpus_mlperf``) that
    lacks the division/submitter folders to its (round, division, submitter,
    platform), as the corpus SOURCES.md states it. Returns ``{"logs_merged":
    n, "systems_merged": n, "records_with_system": n, "problems": [...]}``; a
    summary or system file with no matching record is a problem, never a new record.
    """
    stats: dict[str, Any] = {"logs_merged": 0, "systems_merged": 0, "records_with_system": 0, "problems": []}
    for path in sorted(corpus_mlperf.rglob("mlperf_log_summary.txt")):
        rel = str(path.relative_to(corpus_mlperf))
        key = log_key(path)
        rid = record_id_for(key) if key else None
        rec = records.get(rid) if rid else None
        if rec is None:
            stats["problems"].append(f"{rel}: no imported record {rid!r}")
            continue
        problem = enrich_with_log(rec, path, rel)
        if problem:
            stats["problems"].append(problem)
        else:
            stats["logs_merged"] += 1
    by_platform: dict[tuple, list[dict[str, Any]]] = {}
    for rec in records.values():
        sub = rec.get("submission") or {}
        by_platform.setdefault((sub.get("round"), sub.get("division"), sub.get("submitter"), sub.get("platform")), []).append(rec)
    for path in sorted(corpus_mlperf.rglob("systems/*.json")):
        rel = str(path.relative_to(corpus_mlperf))
        key = system_key(path) or (system_paths or {}).get(rel)
        if key is None:
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        matches = by_platform.get(key, [])
        if not matches:
            stats["problems"].append(f"{rel}: no imported record for {key}")
            continue
        for rec in matches:
            enrich_with_system(rec, doc, rel)
        stats["systems_merged"] += 1
        stats["records_with_system"] += len(matches)
    return stats


__all__ = ["enrich", "enrich_with_log", "enrich_with_system", "log_key", "system_key", "record_id_for"]
