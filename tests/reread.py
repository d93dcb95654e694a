"""An independent re-reader: every number and condition of a bundled record, read again from its raw corpus file.

This module shares no code with the importers (``inferkb.intake``). Each
``expect_*`` function opens the raw file the record's ``submission`` points at
(repository path, line, row or id), reads the cells with the standard library
only, and returns what the record must say as ``{dotted field: value}``;
:func:`compare` returns the differences. Conversions are the ones the raw
files' own documentation states (corpus ``mlperf/SOURCES.md`` and
``community/SOURCES.md``): seconds x 1000 = ms, ``a#`` is accelerators per
node, Argonne's one length column is both ISL and OSL.

A field is expected only where the raw file determines it. Where the first
pass decided something by rule (a unit fix with evidence, an inferred
scenario), the rule is restated here from the raw text, not imported.
"""

from __future__ import annotations

import csv
import json
import math
import random
import re
import sqlite3
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

ROUNDS = {"v4.1": "inference_results_v4.1", "v5.1": "inference_results_v5.1", "v6.0": "inference_results_v6.0"}
LIB_ROOTS = {
    "docs/data/": ("argonne-LLM-Inference-Bench", "gh-pages"),
    "Plots/Fig_22/": ("argonne-LLM-Inference-Bench", "main"),
}


def stratum(rec: dict[str, Any]) -> tuple[str, ...]:
    """The stratum of a benchmark record: origin plus round/table/file/provider and scenario."""
    sub = rec.get("submission") or {}
    origin = rec.get("origin") or "?"
    if origin == "mlperf-inference":
        return (origin, sub.get("round", "?"), sub.get("division", "?"), rec.get("scenario") or "?")
    if origin == "llm-inference-bench":
        return (origin, sub.get("table", "?"))
    if origin == "llmperf-leaderboard":
        return (origin, sub.get("provider", "?"))
    if origin in ("inferencex", "strix-halo-llama-bench"):
        return (origin, str(sub.get("path", "?")).split("/")[-3 if origin == "inferencex" else -2], rec.get("metric") or "?")
    if origin == "localscore":
        return (origin, rec.get("hardware_raw") or "?")
    return (origin,)


def sample(records: list[dict[str, Any]], *, seed: int, per_stratum: int, minimum: int) -> list[dict[str, Any]]:
    """A seeded stratified sample: ``per_stratum`` records of every stratum (all when fewer), topped up at random to ``minimum``."""
    rng = random.Random(seed)
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["id"]):
        groups[stratum(r)].append(r)
    picked: list[dict[str, Any]] = []
    for key in sorted(groups):
        members = groups[key]
        picked.extend(rng.sample(members, min(per_stratum, len(members))))
    rest = sorted({r["id"] for r in records} - {r["id"] for r in picked})
    by_id = {r["id"]: r for r in records}
    if len(picked) < minimum:
        picked.extend(by_id[i] for i in rng.sample(rest, minimum - len(picked)))
    return picked


class OneOf:
    """An expectation met by any of several values (where the raw file allows two readings)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __repr__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Approx:
    """A number expected within a relative tolerance (a derived figure stored rounded)."""

    def __init__(self, value: float, rel: float) -> None:
        self.value, self.rel = value, rel

    def __repr__(self) -> str:
        return f"{self.value!r} (rel. tol. {self.rel:g})"


class AtMost:
    """A number expected not to exceed a bound."""

    def __init__(self, bound: float) -> None:
        self.bound = bound

    def __repr__(self) -> str:
        return f"<= {self.bound!r}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(b, AtMost):
        return isinstance(a, (int, float)) and a <= b.bound
    if isinstance(b, OneOf):
        return any(_same(a, v) for v in b.values)
    if isinstance(b, Approx):
        return isinstance(a, (int, float)) and math.isclose(a, b.value, rel_tol=b.rel)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


# ---------------------------------------------------------------- MLPerf


@cache
def _round_rows(corpus: Path, rnd: str) -> list[dict[str, Any]]:
    return json.loads((corpus / "mlperf" / ROUNDS[rnd] / "summary_results.json").read_text(encoding="utf-8"))


@cache
def _v61_rows(corpus: Path) -> list[dict[str, str]]:
    with (corpus / "mlperf" / "inference_results_v6.1" / "summary.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


UNIT_METRIC = {"Tokens/s": ("output_tok_s", "tok/s"), "Latency (ms)": ("e2e_latency_ms", "ms")}


def _count_from_name(accel: str) -> int | None:
    """The sum of the ``(xN)`` counts in an accelerator string (a mixed system names one per part), or None."""
    counts = [int(n) for n in re.findall(r"\(x(\d+)\)", accel)]
    return sum(counts) if counts else None


def loadgen_summary(path: Path) -> dict[str, float]:
    """``{label: number}`` of every ``label : number`` line of a LoadGen ``mlperf_log_summary.txt``."""
    out: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"\s*([^:]+?)\s*:\s*(-?\d+(?:\.\d+)?)\s*", line)
        if m:
            out.setdefault(m.group(1), float(m.group(2)))
    return out


def expect_loadgen(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """Percentiles (ns -> ms) and the settings LoadGen printed, for a record whose run summary is in the corpus."""
    sub = rec["submission"]
    rel = sub["results_path"].removeprefix("./")
    if not rel.endswith("run_1"):
        rel += "/performance/run_1"
    path = corpus / "mlperf" / ROUNDS.get(sub["round"], "inference_results_v6.1") / rel / "mlperf_log_summary.txt"
    if not path.is_file():
        return {}
    lg = loadgen_summary(path)
    # the rules fix a minimum run time; a submitter may run longer (the log prints the setting used)
    exp: dict[str, Any] = {
        "submission.loadgen_min_duration_ms": lg["min_duration (ms)"],
        "constraints.min_duration_ms": AtMost(lg["min_duration (ms)"]),
    }
    if "performance_sample_count" in lg:
        exp["submission.loadgen_performance_sample_count"] = lg["performance_sample_count"]
    if "99.00 percentile first token latency (ns)" in lg:
        exp["metrics.ttft_ms.stats.p99"] = lg["99.00 percentile first token latency (ns)"] / 1e6
        exp["metrics.tpot_ms.stats.p99"] = lg["99.00 percentile time to output token (ns)"] / 1e6
        exp["metrics.ttft_ms.stats.p50"] = lg["50.00 percentile first token latency (ns)"] / 1e6
    if lg.get("ttft_latency (ns)") and rec.get("scenario") in ("server", "interactive"):
        exp["constraints.ttft_ms_max"] = lg["ttft_latency (ns)"] / 1e6
        exp["constraints.tpot_ms_max"] = lg["tpot_latency (ns)"] / 1e6
    if "target_qps" in lg and rec.get("scenario") in ("server", "interactive"):
        exp["conditions.request_rate"] = lg["target_qps"]
    return exp


def expect_mlperf(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """What the round table's row says: value, unit, scenario, submitter, division, count, hardware, model."""
    sub = rec["submission"]
    rnd = sub["round"]
    if rnd == "v6.1":
        rows = _v61_rows(corpus)
        # csv line numbers count the header as line 1
        row = rows[sub["table_line"] - 2]
        raw = {
            "submitter": row["Organization"],
            "division": row["Division"],
            "platform": row["Platform"],
            "model": row["MlperfModel"],
            "model_name": row["Model"],
            "scenario": row["Scenario"],
            "result": float(row["Result"]),
            "units": row["Units"],
            "nodes": int(row["number_of_nodes"]),
            "per_node": int(row["accelerators_per_node"]) if row["accelerators_per_node"] not in ("", "0") else None,
            "total": int(row["total_accelerators"]) if row["total_accelerators"] not in ("", "0", "None") else None,
            "accelerator": row["accelerator_model_name"],
        }
    else:
        row = _round_rows(corpus, rnd)[sub["table_row"] - 1]
        apn = row.get("a#")
        total = row.get("Total Accelerators")
        raw = {
            "submitter": row["Submitter"],
            "division": row["Category"],
            "platform": row["Platform"],
            "model": row["Model"],
            "scenario": row["Scenario"],
            "result": float(row["Performance_Result"]),
            "units": row["Performance_Units"],
            "nodes": int(row["Nodes"]),
            "per_node": int(float(apn)) if apn not in ("", None) and float(apn) > 0 else None,
            "total": int(total) if isinstance(total, int) and total > 0 else None,
            "accelerator": row["Accelerator"],
        }
    exp: dict[str, Any] = {
        "value": raw["result"],
        "submission.submitter": raw["submitter"],
        "submission.division": raw["division"],
        "submission.platform": raw["platform"],
        "submission.mlperf_model": raw["model"],
        "scenario": raw["scenario"].lower().replace("singlestream", "single-stream"),
        "hardware_raw": None if raw["accelerator"] in ("", "N/A") else raw["accelerator"],
    }
    exp.update(expect_loadgen(rec, corpus))
    if raw["units"] in UNIT_METRIC:
        exp["metric"], exp["unit"] = UNIT_METRIC[raw["units"]]
    # accelerator total: Nodes x a#, unless the table contradicts itself (Total Accelerators or "(xN)" in the name)
    if raw["per_node"] is not None:
        n = raw["nodes"] * raw["per_node"]
        named = _count_from_name(raw["accelerator"])
        contradicted = (raw["total"] is not None and raw["total"] != n) or (named is not None and named != n)
        exp["accelerator_count"] = None if contradicted else n
    exp["model"] = None if raw["division"] == "open" else raw.get("model_name", raw["model"])
    if rec.get("per_accelerator") and exp.get("accelerator_count"):
        exp["per_accelerator.value"] = Approx(raw["result"] / exp["accelerator_count"], 1e-6)
        exp["per_accelerator.divisor"] = exp["accelerator_count"]
    if raw["scenario"] == "Offline":
        exp["conditions.concurrency"] = "unbounded"
    if raw["scenario"] == "SingleStream":
        exp["conditions.concurrency"] = 1
    return exp


# ---------------------------------------------------------------- Argonne LLM-Inference-Bench


def _lib_file(corpus: Path, repo_path: str) -> Path:
    for prefix, (folder, branch) in LIB_ROOTS.items():
        if repo_path.startswith(prefix):
            return corpus / "community" / folder / branch / repo_path
    raise KeyError(repo_path)


@cache
def _csv_lines(path: Path) -> dict[int, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader)]
        out = {}
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                cells = cells + [""] * (len(header) - len(cells))
                out[reader.line_num] = {h: c.strip() for h, c in zip(header, cells, strict=True)}
        return out


def expect_lib(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The CSV row: hardware, count, framework, model, batch, lengths, and the headline number in its unit."""
    sub = rec["submission"]
    row = _csv_lines(_lib_file(corpus, sub["path"]))[sub["line"]]
    exp: dict[str, Any] = {
        "hardware_raw": row["Hardware"],
        "accelerator_count": int(row["Num of Hardware"]),
        "environment.framework": row["Framework"],
        "model": row["Model"],
        "conditions.batch_size": int(row["Batch Size"]),
    }
    if "TTFT Latency" in row:
        exp["conditions.input_tokens"] = int(row["Input Length"])
        exp["conditions.output_tokens"] = int(row["Output Length"])
        exp["metric"], exp["unit"] = "ttft_ms", "ms"
        exp["value"] = float(row["TTFT Latency"]) * 1000
        if row.get("end_latency"):
            exp["metrics.e2e_latency_ms.value"] = float(row["end_latency"]) * 1000
        return exp
    length = int(row["Input Output Length"])
    exp["conditions.input_tokens"] = exp["conditions.output_tokens"] = length
    lat = float(row["Latency"])
    exp["metrics.e2e_latency_ms.value"] = lat * 1000
    thr = row.get("Throughput", "")
    if thr not in ("", "None"):
        thr_v = float(thr)
        exp["value"] = thr_v
        batch = int(row["Batch Size"])
        # which tokens Throughput counts, worked out here from the row itself
        if math.isclose(thr_v, batch * 2 * length / lat, rel_tol=0.01):
            exp["metric"], exp["value_scope"] = "total_tok_s", "aggregate"
        elif math.isclose(thr_v, 2 * length / lat, rel_tol=0.01):
            exp["metric"], exp["value_scope"] = "total_tok_s", "per-request"
        else:
            exp["metric"] = "tps_aggregate"
    if row.get("Perplexity") not in (None, "", "None"):
        exp["accuracy"] = [{"metric": "perplexity", "value": float(row["Perplexity"]), "target": None, "unit": None}]
    return exp


# ---------------------------------------------------------------- LocalScore (SQLite)


def expect_localscore(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The test_results row (joined to its run, accelerator, runtime and model) by the record's test_result_id."""
    db = sqlite3.connect(f"file:{corpus / 'community' / 'localscore' / 'db.sqlite'}?mode=ro", uri=True)
    try:
        row = db.execute(
            "SELECT t.name, t.n_prompt, t.n_gen, t.prompt_tps, t.gen_tps, t.ttft_ms, t.avg_time_ms, a.name, r.version, m.name,"
            " v.quantization FROM test_results t JOIN benchmark_runs b ON b.id = t.benchmark_run_id"
            " JOIN accelerators a ON a.id = b.accelerator_id JOIN runtimes r ON r.id = b.runtime_id"
            " JOIN model_variants v ON v.id = b.model_variant_id JOIN models m ON m.id = v.model_id WHERE t.id = ?",
            (rec["submission"]["test_result_id"],),
        ).fetchone()
    finally:
        db.close()
    name, n_prompt, n_gen, prompt_tps, gen_tps, ttft, avg_ms, accel, version, model, quant = row
    return {
        "submission.test": name,
        "conditions.input_tokens": n_prompt,
        "conditions.output_tokens": n_gen,
        "value": gen_tps,
        "metric": "decode_tok_s",
        "metrics.prefill_tok_s.value": prompt_tps,
        "metrics.ttft_ms.value": ttft,
        "metrics.e2e_latency_ms.value": avg_ms,
        "conditions.engine_version": version,
        "model": model,
        "submission.quantization": quant,
        "hardware_raw": accel,
    }


# ---------------------------------------------------------------- LLMPerf leaderboard


def expect_llmperf(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The summary JSON: aggregate output rate, concurrency, lengths, request count, TTFT/ITL quantiles (s -> ms)."""
    sub = rec["submission"]
    doc = json.loads((corpus / "community" / "llmperf-leaderboard" / sub["path"]).read_text(encoding="utf-8"))
    return {
        "model": doc["model"],
        "value": doc["results_mean_output_throughput_token_per_s"],
        "metric": "output_tok_s",
        "conditions.concurrency": doc["num_concurrent_requests"],
        "conditions.input_tokens": doc["mean_input_tokens"],
        "conditions.output_tokens": doc["mean_output_tokens"],
        "submission.requests_started": doc["results_num_requests_started"],
        "metrics.ttft_ms.stats.p50": doc["results_ttft_s_quantiles_p50"] * 1000,
        "metrics.ttft_ms.stats.p99": doc["results_ttft_s_quantiles_p99"] * 1000,
        "metrics.itl_ms.stats.mean": doc["results_inter_token_latency_s_mean"] * 1000,
        "metrics.e2e_latency_ms.stats.p90": doc["results_end_to_end_latency_s_quantiles_p90"] * 1000,
        "accelerator_ids": [],
        # token_benchmark_ray.py times every request it sends; it has no warmup option
        "conditions.warmup": False,
    }


# ---------------------------------------------------------------- InferenceX decode-SLO (vLLM benchmark_serving)


def expect_inferencex(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The result JSON and its file name (layout, ISL, OSL, concurrency); latencies are seconds in the file."""
    sub = rec["submission"]
    path = corpus / "community" / "InferenceX" / sub["path"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    m = re.search(r"_(tp|tep|dep)(\d+)_isl(\d+)_osl(\d+)_conc(\d+)\.json$", path.name)
    assert m, path.name
    layout, n, isl, osl, conc = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    exp = {
        "value": doc["output_throughput"],
        "metric": "output_tok_s",
        "model": doc["model_id"],
        "conditions.concurrency": doc["max_concurrency"],
        "conditions.num_prompts": doc["num_prompts"],
        "conditions.input_tokens": isl,
        "conditions.output_tokens": osl,
        "conditions.request_rate": doc["request_rate"],
        "metrics.ttft_ms.stats.p50": doc["median_ttft"] * 1000,
        "metrics.ttft_ms.stats.p99": doc["p99_ttft"] * 1000,
        "metrics.tpot_ms.stats.p50": doc["median_tpot"] * 1000,
        "metrics.e2e_latency_ms.stats.p99": doc["p99_e2el"] * 1000,
        "metrics.request_throughput_rps.value": doc["request_throughput"],
        "submission.total_input_tokens": doc["total_input_tokens"],
        "experimental": True,
        # the publisher's client script (bmk_*_sbatch.sh at de75941): NUM_WARMUPS=$((MAX_CONC * 2)), NUM_PROMPTS=$((MAX_CONC * 10))
        "conditions.warmup": 2 * conc if doc["num_prompts"] == 10 * conc else None,
    }
    assert conc == doc["max_concurrency"] and isl * doc["num_prompts"] == doc["total_input_tokens"], path.name
    # input_throughput is input tokens over the whole run: not a prefill-phase rate
    exp["metrics.input_tok_s.value"] = doc["input_throughput"]
    exp["metrics.prefill_tok_s"] = None
    if layout == "tp":
        exp["conditions.tensor_parallel"] = n
    elif layout == "dep":
        exp["conditions.data_parallel"] = n
    else:
        exp["conditions.tensor_parallel"] = n
    return exp


# ---------------------------------------------------------------- llama-bench sweeps (Strix Halo)


@cache
def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def expect_strix(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The JSONL line with the record's test time, test and sweep build: rate, lengths, build, repetitions, power."""
    sub = rec["submission"]
    path = corpus / "community" / "lhl-strix-halo-testing" / sub["path"]
    mode, n = re.fullmatch(r"(pp|tg)(\d+)", sub["test"]).groups()
    build = (rec.get("arms") or [{}])[0].get("config", {}).get("sweep_build")
    hits = [
        d
        for d in _jsonl(path)
        if isinstance(d.get("bench_raw"), dict)
        and d["bench_raw"]["test_time"] == sub["test_time"]
        and d["mode"] == mode
        and d["value"] == int(n)
        and d["build"] == build
    ]
    assert len(hits) == 1, (rec["id"], len(hits))
    d = hits[0]
    b = d["bench_raw"]
    samples = b.get("samples_ts") or []
    exp: dict[str, Any] = {
        "value": b["avg_ts"],
        "metric": "prefill_tok_s" if mode == "pp" else "decode_tok_s",
        "conditions.engine_version": f"b{b['build_number']}",
        "submission.build_commit": b["build_commit"],
        # an APU's generic GPU name ("AMD Radeon Graphics") may be replaced by its CPU string, which names the GPU
        "hardware_raw": OneOf(b["gpu_info"], b["cpu_info"]),
        "power_w": d.get("avg_power_w"),
        "arms.0.stats.n": len(samples),
        "arms.0.config.n_gpu_layers": b["n_gpu_layers"],
        "arms.0.config.flash_attn": b["flash_attn"],
    }
    if mode == "pp":
        exp["conditions.input_tokens"] = b["n_prompt"]
    else:
        exp["conditions.output_tokens"] = b["n_gen"]
    if samples:
        exp["arms.0.stats.min"] = min(samples)
        exp["arms.0.stats.max"] = max(samples)
    return exp


# ---------------------------------------------------------------- the seed case (inference-research sample)


def expect_seed(rec: dict[str, Any], corpus: Path) -> dict[str, Any]:
    """The seed record against the inference-research sample record it started from.

    The sample's ``value`` is the baseline mean end-to-end latency (ms) and its
    ``unit`` text states the MTP arm's mean in seconds; the sample labels the
    metric ``ttft_ms``, which its own unit text contradicts (a known, corrected error).
    """
    doc = json.loads(
        (corpus / "inference-research" / "data" / "benchmarks" / "ev-vllm-mtp-regression-qwen3-next-80b-a3b.json").read_text(
            encoding="utf-8"
        )
    )
    mtp = re.search(r"MTP-enabled figure is (\d+(?:\.\d+)?) s", doc["unit"])
    assert mtp, doc["unit"]
    return {
        "model": doc["model"],
        "value": doc["value"],
        "metric": "e2e_latency_ms",
        "arms.0.stats.mean": doc["value"],
        "arms.1.stats.mean": float(mtp.group(1)) * 1000,
    }


READERS = {
    "mlperf-inference": expect_mlperf,
    "llm-inference-bench": expect_lib,
    "localscore": expect_localscore,
    "llmperf-leaderboard": expect_llmperf,
    "inferencex": expect_inferencex,
    "strix-halo-llama-bench": expect_strix,
    "harness-intake": expect_seed,
}


def get_indexed(rec: dict[str, Any], dotted: str) -> Any:
    """Like :func:`get`, but a numeric part indexes a list (``arms.0.stats.n``)."""
    cur: Any = rec
    for part in dotted.split("."):
        if isinstance(cur, list) and part.isdigit():
            idx = int(part)
            cur = cur[idx] if idx < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def discrepancies(rec: dict[str, Any], corpus: Path) -> list[str]:
    """Every difference between ``rec`` and its raw file, as ``"field: record X, raw file says Y"``."""
    expected = READERS[rec["origin"]](rec, corpus)
    out = []
    for dotted, want in expected.items():
        have = get_indexed(rec, dotted)
        if not _same(have, want):
            out.append(f"{dotted}: record {have!r}, raw file says {want!r}")
    return out
