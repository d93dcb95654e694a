"""Importer ``vllm-serve``: ``vllm bench serve --save-result`` JSON and the console "Serving Benchmark Result" block.

Inputs (FORMATS.md 1c), sniffed from content, not from the file name:

- one JSON object per run (v0.7/v0.8 ``benchmark_serving.py``, v0.25 ``bench serve``,
  sweep ``run=N.json``, vllm-ascend metrics-only files);
- a JSON list of run objects (sweep ``summary.json``) -> one record per run;
- console text holding one or more ``Serving Benchmark Result`` blocks (tqdm
  ``\\r`` noise and warnings allowed); the ``Namespace(...)`` line printed before
  a block supplies what the command line stated (model, num_prompts, rate, dataset) (read by
  :mod:`inferkb.intake.vllm_serve_console`).

Traps handled as classes: keys with trailing punctuation (``"request_goodput:"``)
are normalised; ``request_rate`` may be the string ``"inf"`` or a float;
percentile keys ``pNN`` and ``pNN.N`` map to stats slots (``p50``/``p90``/``p95``/
``p99``/``p999``) or to ``percentiles``; summary keys are ms while the
per-request ``ttfts``/``itls`` arrays are seconds — the arrays are never mixed
into the ms summary, they only cross-check it (KB1101) and give TTFT min/max
(converted to ms). A run with ``completed == 0`` is not a measurement: no record,
a KB1102 finding.

Record shape, one benchmark record per run:

- headline ``metric`` ``output_tok_s`` (``value_scope`` ``aggregate``) =
  ``output_throughput``; a metrics-only file without throughput gets
  ``ttft_ms`` mean (``per-request``) as headline instead;
- ``metrics``: every measured metric: ``ttft_ms``, ``tpot_ms``, ``itl_ms``,
  ``e2e_latency_ms`` as stats (mean, p50 = median, stdev, pNN) in ms, and the
  rates ``output_tok_s``, ``total_tok_s``, ``request_throughput_rps`` as values;
- ``conditions``: ``num_prompts``, ``request_rate``, ``concurrency`` (the
  ``max_concurrency`` cap), input/output tokens only when every request had the
  same length (from ``input_lens``/``output_lens``) or the random dataset's
  requested lengths in the console Namespace;
- ``submission``: run context (date as written, backend, counts, duration,
  goodput, peaks, sweep/metadata keys).

``engine_id`` is ``vllm`` only when the file's backend/endpoint type is
``vllm`` (a client harness can drive any server), else null with KB1105,
unless ``--engine``. Sources: ``--source`` or a local-file source record.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register
from .vllm_serve_console import _namespace_pairs as _namespace_pairs  # re-exported for tests/test_hostile_input.py
from .vllm_serve_console import parse_console

if TYPE_CHECKING:
    from ..kb import KB

FMT = "vllm-serve"
MARKERS = ("mean_ttft_ms", "output_throughput", "request_throughput", "completed")
METRIC_NAMES = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_latency_ms"}
RATE_KEYS = {
    "output_throughput": "output_tok_s",
    "input_throughput": "input_tok_s",
    "total_token_throughput": "total_tok_s",
    "request_throughput": "request_throughput_rps",
}
_STAT_KEY = re.compile(r"^(mean|median|std|p(\d+(?:\.\d+)?))_([a-z0-9]+)_ms$")
RELEVANT = (
    "concurrency",
    "request_rate",
    "num_prompts",
    "input_tokens",
    "output_tokens",
    "dataset",
    "warmup",
    "engine_version",
    "tensor_parallel",
)
CONSUMED = {
    "date",
    "model_id",
    "num_prompts",
    "request_rate",
    "max_concurrency",
    "ttfts",
    "itls",
    "input_lens",
    "output_lens",
    "generated_texts",
    "errors",
    "start_times",
    "tokenizer_id",
    *RATE_KEYS,
}
SUBMISSION_RENAME = {"duration": "duration_s", "request_goodput": "request_goodput_rps", "max_output_tokens_per_s": "peak_output_tok_s"}


def normalise_keys(doc: dict[str, Any]) -> dict[str, Any]:
    """Strip trailing ``:``/spaces from keys (v0.8's ``"request_goodput:"``); the first non-null value wins on a clash."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        k = key.rstrip(": ") if isinstance(key, str) else key
        if k not in out or out[k] is None:
            out[k] = value
    return out


def request_rate(value: Any, path: Path) -> float | str | None:
    """``"inf"``/``"Infinity"``/``inf`` -> ``"inf"``; a finite non-negative number -> float; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip().lower() in ("inf", "infinity", "+inf"):
            return "inf"
        try:
            value = float(value)
        except ValueError:
            raise InputError(f"{value!r} is neither a number nor 'inf'", path=str(path), field="request_rate") from None
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return "inf"
    return C.number(value, path, "request_rate", nonneg=True)


def latency_metrics(doc: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    """``{registry metric: {"stats": {...}, "percentiles": {...}, "unit": "ms"}}`` from the ``*_ms`` summary keys."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in doc.items():
        m = _STAT_KEY.match(key) if isinstance(key, str) else None
        if not m or m.group(3) not in METRIC_NAMES or value is None:
            continue
        x = C.number(value, path, key, nonneg=True)
        entry = out.setdefault(METRIC_NAMES[m.group(3)], {"stats": {}, "unit": "ms", "value_scope": "per-request"})
        kind, pct = m.group(1), m.group(2)
        if kind == "mean":
            entry["stats"]["mean"] = x
        elif kind == "median":
            entry["stats"]["p50"] = x
        elif kind == "std":
            entry["stats"]["stdev"] = x
        else:
            pct = pct.rstrip("0").rstrip(".") if "." in pct else pct
            if pct in C.PERCENTILE_SLOTS:
                entry["stats"][C.PERCENTILE_SLOTS[pct]] = x
            else:
                entry.setdefault("percentiles", {})[f"p{pct}"] = x
    return out


def _ok_indices(doc: dict[str, Any], n: int) -> list[int]:
    errors = doc.get("errors")
    if isinstance(errors, list) and len(errors) == n:
        return [i for i, e in enumerate(errors) if not e]
    return list(range(n))


def cross_check(doc: dict[str, Any], metrics: dict[str, dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Compare second-valued ``ttfts``/``itls`` arrays with the ms summary; add TTFT min/max. Returns disagreements."""
    out = []
    ttfts = doc.get("ttfts")
    if isinstance(ttfts, list) and ttfts and "ttft_ms" in metrics:
        ok = _ok_indices(doc, len(ttfts))
        xs = [C.number(ttfts[i], path, f"ttfts[{i}]", nonneg=True) * 1000.0 for i in ok]
        if xs:
            st = metrics["ttft_ms"]["stats"]
            st["min"], st["max"] = min(xs), max(xs)
            mean = math.fsum(xs) / len(xs)
            if "mean" in st and not C.close(st["mean"], mean, rel=1e-6):
                out.append({"field": "mean_ttft_ms", "file_ms": st["mean"], "recomputed_ms": mean, "from": "ttfts (s)"})
    itls = doc.get("itls")
    if isinstance(itls, list) and itls and "itl_ms" in metrics:
        ok = _ok_indices(doc, len(itls))
        flat = [C.number(v, path, f"itls[{i}]", nonneg=True) * 1000.0 for i in ok if isinstance(itls[i], list) for v in itls[i]]
        st = metrics["itl_ms"]["stats"]
        if flat and "mean" in st:
            mean = math.fsum(flat) / len(flat)
            if not C.close(st["mean"], mean, rel=1e-6):
                out.append({"field": "mean_itl_ms", "file_ms": st["mean"], "recomputed_ms": mean, "from": "itls (s)"})
    return out


def _same_length(doc: dict[str, Any], key: str) -> int | None:
    lens = doc.get(key)
    if isinstance(lens, list) and lens and all(isinstance(v, int) and not isinstance(v, bool) for v in lens):
        first = lens[0]
        if first >= 1 and all(v == first for v in lens):
            return first
    return None


# ---- records -------------------------------------------------------------


def run_record(
    doc: dict[str, Any], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult, *, console: bool, index: int
) -> dict[str, Any] | None:
    """One benchmark record for one run dict, or ``None`` (with a KB1102 finding) when nothing completed."""
    doc = normalise_keys(doc)
    C.require_keys(doc, MARKERS, path, FMT, any_of=True)
    where = f"run {index}" if index else "run"
    completed = doc.get("completed")
    if completed is not None and C.number(completed, path, "completed", nonneg=True) == 0:
        result.findings.append(
            C.KB1102.finding(
                f"{where}: completed is 0 (failed: {doc.get('failed')}); every metric is a placeholder 0.0, so no record was made",
                path=str(path),
                field="completed",
                extra={"run": index, "failed": doc.get("failed")},
            )
        )
        result.stats.setdefault("skipped", {}).setdefault("no completed requests", 0)
        result.stats["skipped"]["no completed requests"] += 1
        return None
    metrics = latency_metrics(doc, path)
    for d in cross_check(doc, metrics, path):
        result.findings.append(
            C.KB1101.finding(
                f"{where}: {d['field']} is {d['file_ms']:.6g} ms but the per-request {d['from']} give {d['recomputed_ms']:.6g} ms",
                path=str(path),
                field=d["field"],
                extra={"run": index, **d},
            )
        )
    for key, name in RATE_KEYS.items():
        if doc.get(key) is not None:
            metrics[name] = {
                "value": C.number(doc[key], path, key, nonneg=True),
                "unit": "req/s" if name.endswith("rps") else "tok/s",
                "value_scope": "aggregate",
                "basis": f"`{key}` of the run",
            }
    if completed is not None:
        for name in ("ttft_ms", "e2e_latency_ms"):
            if name in metrics:
                metrics[name]["stats"]["n"] = int(completed)
    if "output_tok_s" in metrics:
        metric, value, unit, scope = "output_tok_s", metrics["output_tok_s"]["value"], "tok/s", "aggregate"
    elif "ttft_ms" in metrics and "mean" in metrics["ttft_ms"]["stats"]:
        metric, value, unit, scope = "ttft_ms", metrics["ttft_ms"]["stats"]["mean"], "ms", "per-request"
    else:
        raise InputError(
            "the run has neither output_throughput nor mean_ttft_ms; nothing to import", path=str(path), field="output_throughput"
        )
    model = options.model or (doc.get("model_id") if isinstance(doc.get("model_id"), str) else None)
    backend = doc.get("backend") if isinstance(doc.get("backend"), str) else None
    endpoint_type = doc.get("endpoint_type") if isinstance(doc.get("endpoint_type"), str) else None
    engine = C.engine_id(kb, options, "vllm" if "vllm" in (backend, endpoint_type) else None)
    date = doc.get("date") if isinstance(doc.get("date"), str) else None
    run_no = doc.get("run_number")
    rid = C.make_id(
        FMT,
        Path(model).name if model else None,
        options.hardware_raw or options.accelerator,
        date or path.stem,
        f"run-{run_no}" if run_no is not None else (f"block-{index}" if console and index else None),
    )
    rec = C.skeleton(
        rid=rid,
        name=f"vLLM bench serve, {Path(model).name if model else path.stem}"
        + (f", {date}" if date else "")
        + (f", run {run_no}" if run_no is not None else ""),
        engine=engine,
        metric=metric,
        value=value,
        unit=unit,
        value_scope=scope,
        scenario="online-serving",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    if engine is None:
        C.engine_unstated(
            result,
            rec,
            path,
            f"{where}: backend {backend!r} does not say which engine served the requests; engine_id left null (pass --engine)",
        )
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    stated = C.option_conditions(options)
    if doc.get("num_prompts") is not None:
        stated.setdefault("num_prompts", C.integer(doc["num_prompts"]))
    rate = request_rate(doc.get("request_rate"), path)
    if rate is not None:
        stated["request_rate"] = rate
    if C.integer(doc.get("max_concurrency")) is not None:
        stated.setdefault("concurrency", C.integer(doc["max_concurrency"]))
    for cond, key, alt in (("input_tokens", "input_lens", "_input_len"), ("output_tokens", "output_lens", "_output_len")):
        same = _same_length(doc, key) or C.integer(doc.get(alt))
        if same is not None:
            stated.setdefault(cond, same)
    if isinstance(doc.get("_dataset"), str):
        stated.setdefault("dataset", doc["_dataset"])
    stated = {k: v for k, v in stated.items() if v is not None}
    checked = ["the console log (Namespace line and result block)"] if console else [f"the {FMT} result JSON header and summary"]
    conditions, gaps = build_conditions(stated, FMT, checked + ["command-line options"], RELEVANT)
    if "concurrency" in gaps and "max_concurrency" in doc and doc["max_concurrency"] is None:
        gaps["concurrency"]["reason"] = "the run had no concurrency cap (max_concurrency null); load was set by request_rate"
    for cond, key in (("input_tokens", "input_lens"), ("output_tokens", "output_lens")):
        if cond in gaps and isinstance(doc.get(key), list) and doc[key]:
            gaps[cond]["reason"] = f"requests had different lengths ({key} varies); totals are in submission"
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    if console:  # a console block carries no model or hardware unless its Namespace line (or an option) says so
        C.identity_gaps(rec, FMT, checked, result.findings, path=path, where=where)
    rec["metrics"] = metrics
    submission: dict[str, Any] = {"harness": "vllm bench serve (console)" if console else "vllm bench serve --save-result"}
    if date:
        submission["run_date"] = date
    for key, value in doc.items():
        if key in CONSUMED or key.startswith("_") or _STAT_KEY.match(key) or isinstance(value, (list, dict)):
            continue
        submission[SUBMISSION_RENAME.get(key, key)] = value
    rec["submission"] = submission
    rec["methodology"] = (
        f"{submission['harness']}: headline = {metric} ({'output tokens / benchmark duration' if metric == 'output_tok_s' else 'mean TTFT; the file has no throughput keys'}). "
        "Latency distributions from the summary *_ms keys (median stored as p50, std as stdev)"
        + ("; per-request ttfts/itls arrays (seconds) used only to cross-check and for TTFT min/max" if "ttfts" in doc else "")
        + ("; console values are rounded to 2 decimals" if console else "")
        + "."
    )
    C.attach_env(rec, options.env, engine_package="vllm")
    return rec


@register
class VllmServe(Importer):
    """``vllm bench serve`` result JSON (object or list of runs) or console text -> one record per run."""

    name = FMT
    description = "vLLM `bench serve --save-result` JSON / sweep summary / console 'Serving Benchmark Result' block"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every run in every file; runs with no completed request are skipped with a finding."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            head = raw.lstrip()[:1]
            console = head not in (b"{", b"[")
            if console:
                docs = parse_console(raw.decode("utf-8", errors="replace"), path)
            else:
                value = C.load_json(path, raw)
                docs = value if isinstance(value, list) else [value]
                if not docs:
                    raise InputError("an empty JSON list: no runs", path=str(path))
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            many = len(docs) > 1
            for i, doc in enumerate(docs):
                if not isinstance(doc, dict):
                    raise InputError(f"list item {i} is not a run object", path=str(path), field=f"[{i}]")
                rec = run_record(doc, path, options, kb, sources, result, console=console, index=i + 1 if many else 0)
                if rec is not None:
                    bench.append(rec)
        return C.finish_batch(result, extra, bench, options, "runs")
