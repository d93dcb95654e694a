"""MLPerf run files: LoadGen ``mlperf_log_summary.txt`` and the v6.x harness ``result_summary.json``.

LoadGen summary (FORMATS.md 4a): ``====``-framed sections; ``key : value``
lines with inconsistent spacing (split on the first ``:``); every latency an
integer in **ns** (converted to ms here); rng seeds above int64 (kept as
decimal strings, Python ints never overflow). The headline depends on the
scenario: Offline ``Tokens per second`` or ``Tokens per second (inferred)``
(else ``Samples per second``), Server ``Completed tokens per second`` (else
``Completed samples per second``), Single/MultiStream the ``NNth percentile
latency (ns)``. ``Result is : INVALID`` refuses the run (finding KB1110, no
record); a file holding only the two trailer lines (what an AccuracyOnly run
leaves) is an :class:`InputError`.

v6.x ``result_summary.json`` (FORMATS.md 4c): ``tps`` (tok/s) and ``qps``;
``ttft``/``tpot``/``latency`` objects in ns with percentiles keyed by
one-decimal strings (``"99.9"``, ``"50.0"``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..jsonio import MAX_INT_DIGITS
from .base import IntakeOptions, IntakeResult, build_conditions, read_input, resolve_accelerator, today
from .common import KB1103, engine_id, load_json, make_id, option_conditions, require_keys, resolve_sources
from .mlperf_maps import SCENARIOS
from .table_rules import KB1110

if TYPE_CHECKING:
    from ..kb import KB

NS_PER_MS = 1e6
_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile (latency|first token latency|time to output token) \(ns\)$", re.I)
_MINMAX = re.compile(r"^(min|max|mean) (latency|first token latency|time to output token) \(ns\)$", re.I)
_FAMILY = {"latency": "e2e_latency_ms", "first token latency": "ttft_ms", "time to output token": "tpot_ms"}
_STAT_OF_PCT = {50.0: "p50", 90.0: "p90", 95.0: "p95", 99.0: "p99", 99.9: "p999"}
SUMMARY_KEYS = ("SUT name", "Scenario", "Mode", "Result is")


_INT = re.compile(rf"-?\d{{1,{MAX_INT_DIGITS}}}")


def _value(text: str, key: str, path: str) -> int | float | str:
    """A summary value as int, finite float or (not a number) the text; InputError for a number no float can hold."""
    text = text.strip()
    try:
        number: int | float = int(text) if _INT.fullmatch(text) else float(text)
    except ValueError:
        return text
    if isinstance(number, float) and not math.isfinite(number):
        shown = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
        raise InputError(f"{shown} is not a finite number (at most {MAX_INT_DIGITS} digits)", path=path, field=key)
    return number


def parse_summary_text(text: str, *, path: str = "<summary>") -> dict[str, Any]:
    """Parse a LoadGen summary into ``{"fields": {key: value}, "constraints": {...}, "sections": [...]}``.

    Keys are stripped of surrounding spaces; values are ints (any size),
    floats or strings. Raises :class:`InputError` for a trailer-only file and
    for text that is not a LoadGen summary (naming expected and found keys).
    """
    fields: dict[str, Any] = {}
    constraints: dict[str, str] = {}
    sections: list[str] = []
    prev_frame = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("===="):
            prev_frame = True
            continue
        if prev_frame and line.strip() and ":" not in line:
            sections.append(line.strip())
            prev_frame = False
            continue
        prev_frame = False
        if ":" not in line or line.lstrip().startswith("*"):
            continue
        key, _, val = line.partition(":")
        key = key.strip()
        if "satisfied" in key:
            constraints[key] = val.strip()
        elif key and key not in fields:
            fields[key] = _value(val, key, path)
    if not fields and not sections:
        if "No errors encountered" in text or "No warnings encountered" in text:
            raise InputError(
                "the summary holds only LoadGen's trailer lines and no result (what an AccuracyOnly run "
                "leaves); use the PerformanceOnly run's mlperf_log_summary.txt",
                path=path,
            )
        raise InputError(
            f"not a LoadGen mlperf_log_summary.txt: expected keys {', '.join(SUMMARY_KEYS)}; found no 'key : value' lines"
            + _table_hint(text),
            path=path,
        )
    missing = [k for k in SUMMARY_KEYS if k not in fields]
    if missing:
        raise InputError(
            f"not a LoadGen mlperf_log_summary.txt: expected keys {', '.join(SUMMARY_KEYS)}; missing "
            f"{', '.join(missing)}; found {', '.join(list(fields)[:12])}" + _table_hint(text),
            path=path,
            field=missing[0],
        )
    return {"fields": fields, "constraints": constraints, "sections": sections}


def _table_hint(text: str) -> str:
    """A pointer to the round-table import when ``text`` looks like JSON or a CSV table rather than a LoadGen summary, else ""."""
    head = text.lstrip()[:1]
    first = text.lstrip().split("\n", 1)[0]
    if head in ("[", "{") or "Submitter" in first:
        return (
            "; this looks like JSON or a results table, not a LoadGen summary: MLPerf's round-wide "
            "summary_results.json tables (v4.1, v5.1, v6.0) are imported by `.venv/bin/python scripts/import_mlperf.py`"
        )
    return ""


def _family_stats(fields: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{metric: {"stats": {...}, "percentiles": {...}}}`` in ms from the ns latency lines."""
    out: dict[str, dict[str, Any]] = {}
    for key, val in fields.items():
        if not isinstance(val, (int, float)):
            continue
        m = _PCT.match(key)
        if m:
            fam = out.setdefault(_FAMILY[m.group(2).lower()], {"stats": {}, "percentiles": {}})
            pct = float(m.group(1))
            slot = _STAT_OF_PCT.get(pct)
            if slot:
                fam["stats"][slot] = val / NS_PER_MS
            else:
                fam["percentiles"][f"p{pct:g}"] = val / NS_PER_MS
            continue
        m = _MINMAX.match(key)
        if m:
            fam = out.setdefault(_FAMILY[m.group(2).lower()], {"stats": {}, "percentiles": {}})
            fam["stats"][m.group(1).lower()] = val / NS_PER_MS
    return out


def _base_record(kb: KB, options: IntakeOptions, rid: str, name: str, sources: list[str]) -> dict[str, Any]:
    ids, alts, raw, notes = resolve_accelerator(kb, options, None)
    return {
        "id": rid,
        "type": "benchmark",
        "name": name,
        "status": "draft",
        "confidence": 0.8,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes) or None,
        "engine_id": engine_id(kb, options, None),
        "accelerator_ids": ids,
        "accelerator_count": options.count,
        "accelerator_alternates": alts,
        "hardware_raw": raw,
        "model": options.model,
        "model_id": options.model_id,
    }


def import_summary_text(kb: KB, path: Path, options: IntakeOptions) -> IntakeResult:
    """One record from a LoadGen summary (none, with a KB1110 finding, for an INVALID run)."""
    raw = read_input(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path=str(path)) from None
    parsed = parse_summary_text(text, path=str(path))
    f = parsed["fields"]
    result = IntakeResult(stats={"format": "mlperf", "kind": "loadgen-summary", "imported": 0, "skipped": {}})
    validity = str(f["Result is"]).strip().upper()
    if validity != "VALID":
        failed = [k for k, v in parsed["constraints"].items() if v.upper() != "YES"]
        result.findings.append(
            KB1110.finding(
                f"LoadGen reports 'Result is : {validity}' (failed: {', '.join(failed) or 'not stated'}); not imported",
                path=str(path),
                field="Result is",
                evidence={"field": "Result is", "quote": f"Result is : {f['Result is']}"},
            )
        )
        result.stats["skipped"] = {"invalid-result": 1}
        return result
    scenario_raw = str(f["Scenario"])
    scenario = SCENARIOS.get(scenario_raw.lower())
    metric, value, scope, tokens_inferred = None, None, "per-system", False
    if "Tokens per second" in f or "Tokens per second (inferred)" in f:
        tokens_inferred = "Tokens per second" not in f
        metric, value = "output_tok_s", f.get("Tokens per second", f.get("Tokens per second (inferred)"))
    elif "Completed tokens per second" in f:
        metric, value = "output_tok_s", f["Completed tokens per second"]
    elif "Samples per second" in f or "Completed samples per second" in f:
        metric, value = "samples_per_s", f.get("Samples per second", f.get("Completed samples per second"))
    else:
        for key, val in f.items():
            if re.match(r"^\d+(th|st|nd|rd) percentile latency \(ns\)$", key) and isinstance(val, int):
                metric, value, scope = "e2e_latency_ms", val / NS_PER_MS, "per-request"
                break
    if metric is None or not isinstance(value, (int, float)) or value <= 0:
        raise InputError("LoadGen summary has no usable headline (tokens/samples per second or percentile latency)", path=str(path))
    unit = {"output_tok_s": "tok/s", "samples_per_s": "samples/s", "e2e_latency_ms": "ms"}[metric]
    sources = resolve_sources(kb, options, path, raw, "mlperf", result.records)
    sut = str(f["SUT name"])
    rid = options.record_id or make_id("mlperf-loadgen", sut, scenario_raw, options.model)
    rec = _base_record(kb, options, rid, options.name or f"MLPerf LoadGen {scenario_raw} run of {sut}", sources)
    metrics: dict[str, Any] = {}
    for name, fam in _family_stats(f).items():
        if name == "e2e_latency_ms" and scenario == "offline":
            continue  # Offline "latency" is time since the one query was issued, not a per-request latency
        entry: dict[str, Any] = {
            "stats": fam["stats"],
            "unit": "ms",
            "value_scope": "per-request",
            "basis": "LoadGen Additional Stats, ns converted to ms",
        }
        if fam["percentiles"]:
            entry["percentiles"] = fam["percentiles"]
        metrics[name] = entry
    stated = option_conditions(options)
    if scenario == "server" and isinstance(f.get("target_qps"), (int, float)):
        stated["request_rate"] = f["target_qps"]
    if scenario == "offline" and isinstance(f.get("samples_per_query"), int) and f["samples_per_query"] >= 1:
        stated["num_prompts"] = f["samples_per_query"]
    conditions, gaps = build_conditions(
        stated,
        "LoadGen summary",
        ["mlperf_log_summary.txt"],
        ("input_tokens", "output_tokens", "engine_version", "dataset", "tensor_parallel"),
    )
    seeds = {k: str(v) for k, v in f.items() if k.endswith("rng_seed")}
    submission: dict[str, Any] = {
        "suite": "MLPerf Inference",
        "harness": "LoadGen",
        "sut_name": sut,
        "mode": str(f["Mode"]),
        "result_validity": validity,
        "tokens_inferred": tokens_inferred,
        **seeds,
    }
    for key, out in (
        ("ttft_latency (ns)", "ttft_constraint_ms"),
        ("tpot_latency (ns)", "tpot_constraint_ms"),
        ("target_latency (ns)", "target_latency_ms"),
    ):
        if isinstance(f.get(key), int) and f[key] > 0:
            submission[out] = f[key] / NS_PER_MS
    for key in (
        "Samples per second",
        "Completed samples per second",
        "Scheduled samples per second",
        "target_qps",
        "min_duration (ms)",
        "performance_sample_count",
    ):
        if isinstance(f.get(key), (int, float)):
            submission[re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")] = f[key]
    rec.update(
        {
            "metric": metric,
            "value": float(value),
            "unit": unit,
            "value_scope": scope,
            "scenario": scenario,
            "conditions": conditions,
            "condition_gaps": gaps,
            "metrics": metrics,
            "submission": submission,
            "methodology": f"MLPerf LoadGen {scenario_raw} run, {f['Mode']}; headline as LoadGen printed it"
            + (" (tokens inferred from samples x an assumed output length)" if tokens_inferred else ""),
            "provenance": [
                {
                    "date": today(),
                    "tag": "intake-mlperf",
                    "field": "*",
                    "action": "import",
                    "method": "inferkb.intake.mlperf_loadgen summary text",
                    "evidence": {"field": "Result is", "quote": "VALID"},
                    "basis": "LoadGen mlperf_log_summary.txt; ns converted to ms",
                    "numbers_changed": False,
                }
            ],
        }
    )
    if tokens_inferred:
        rec["confidence"] = 0.6
    if rec["hardware_raw"] is None and not rec["accelerator_ids"]:
        result.findings.append(
            KB1103.finding(
                "the summary names no hardware; pass --accelerator or --hardware-raw", path=str(path), record=f"benchmarks/{rid}"
            )
        )
    result.records.insert(0, rec)
    result.stats["imported"] = 1
    return result


_RS_KEYS = ("version", "n_samples_completed", "duration_ns", "tps", "qps", "ttft", "tpot")
_RS_PCT = {"50.0": "p50", "90.0": "p90", "95.0": "p95", "99.0": "p99", "99.9": "p999"}


def _ns_block(block: Any, n: int | None) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    stats: dict[str, Any] = {}
    for src, dst in (("avg", "mean"), ("min", "min"), ("max", "max"), ("std_dev", "stdev"), ("median", "p50")):
        if isinstance(block.get(src), (int, float)):
            stats[dst] = block[src] / NS_PER_MS
    extra: dict[str, float] = {}
    pcts = block.get("percentiles")
    for key, val in pcts.items() if isinstance(pcts, dict) else ():  # not an object: no percentiles to read
        if isinstance(val, (int, float)):
            slot = _RS_PCT.get(key)
            if slot:
                stats[slot] = val / NS_PER_MS
            else:
                extra[f"p{float(key):g}"] = val / NS_PER_MS
    if n:
        stats["n"] = n
    out: dict[str, Any] = {"stats": stats, "unit": "ms", "value_scope": "per-request", "basis": "result_summary.json, ns converted to ms"}
    if extra:
        out["percentiles"] = extra
    return out


def import_result_summary(kb: KB, path: Path, options: IntakeOptions) -> IntakeResult:
    """One record from a v6.x harness ``result_summary.json`` (tps headline; TTFT/TPOT/latency in ``metrics``)."""
    raw = read_input(path)
    doc = load_json(path, raw)
    require_keys(doc, _RS_KEYS, path, "MLPerf v6.x result_summary.json")
    result = IntakeResult(stats={"format": "mlperf", "kind": "result-summary-json", "imported": 0, "skipped": {}})
    if doc.get("complete") is not True or doc.get("state") != "complete":
        result.findings.append(
            KB1110.finding(f"run state {doc.get('state')!r}, complete={doc.get('complete')!r}; not imported", path=str(path), field="state")
        )
        result.stats["skipped"] = {"incomplete-run": 1}
        return result
    tps = doc["tps"]
    if isinstance(tps, bool) or not isinstance(tps, (int, float)) or tps <= 0:
        raise InputError(f"tps {tps!r} is not a positive number", path=str(path), field="tps")
    n = doc.get("n_samples_completed") if isinstance(doc.get("n_samples_completed"), int) else None
    sources = resolve_sources(kb, options, path, raw, "mlperf", result.records)
    rid = options.record_id or make_id("mlperf-run", options.model, str(doc.get("version")), str(doc.get("duration_ns")))
    rec = _base_record(kb, options, rid, options.name or "MLPerf v6.x harness run", sources)
    metrics: dict[str, Any] = {}
    for key, name in (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("latency", "e2e_latency_ms")):
        block = _ns_block(doc.get(key), n)
        if block:
            metrics[name] = block
    if isinstance(doc.get("qps"), (int, float)):
        metrics["request_throughput_rps"] = {
            "value": float(doc["qps"]),
            "unit": "req/s",
            "value_scope": "per-system",
            "basis": "result_summary.json qps",
        }
    run = doc.get("run_config") or {}
    load, warm = run.get("load_pattern") or {}, run.get("warmup") or {}
    stated = option_conditions(options)
    if isinstance(load.get("target_qps"), (int, float)):
        stated["request_rate"] = load["target_qps"]
    if isinstance(load.get("target_concurrency"), int) and load["target_concurrency"] >= 1:
        stated["concurrency"] = load["target_concurrency"]
    if warm.get("enabled") is False:
        stated["warmup"] = False
    if isinstance(doc.get("n_samples_issued"), int) and doc["n_samples_issued"] >= 1:
        stated["num_prompts"] = doc["n_samples_issued"]
    conditions, gaps = build_conditions(
        stated, "result_summary.json", ["result_summary.json"], ("input_tokens", "output_tokens", "engine_version", "dataset")
    )
    scenario = options.extra.get("scenario")
    if scenario is None:
        gaps["scenario"] = {
            "reason": "result_summary.json does not name the MLPerf scenario",
            "checked": ["run_config.load_pattern"],
            "recover": "the results path (Offline/Server/Interactive)",
        }
    submission = {
        "suite": "MLPerf Inference",
        "harness": "v6.x result_summary",
        "harness_version": str(doc.get("version")),
        "load_pattern": load.get("type"),
        "n_samples_failed": doc.get("n_samples_failed"),
        "duration_ms": doc["duration_ns"] / NS_PER_MS if isinstance(doc.get("duration_ns"), int) else None,
    }
    submission.update({k: str(v) for k, v in run.items() if k.endswith("random_seed")})
    rec.update(
        {
            "metric": "output_tok_s",
            "value": float(tps),
            "unit": "tok/s",
            "value_scope": "per-system",
            "scenario": scenario,
            "conditions": conditions,
            "condition_gaps": gaps,
            "metrics": metrics,
            "submission": submission,
            "methodology": "MLPerf v6.x harness run summary; tps as written, latencies converted from ns",
            "provenance": [
                {
                    "date": today(),
                    "tag": "intake-mlperf",
                    "field": "*",
                    "action": "import",
                    "method": "inferkb.intake.mlperf_loadgen result_summary.json",
                    "evidence": None,
                    "basis": "result_summary.json; ns converted to ms",
                    "numbers_changed": False,
                }
            ],
        }
    )
    result.records.insert(0, rec)
    result.stats["imported"] = 1
    return result
