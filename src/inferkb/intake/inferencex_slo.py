"""Importer ``inferencex-decode-slo``: InferenceX's experimental token-position decode-SLO results -> one record per run.

Input: ``experimental/token_position_decode_slo/<model>/results/*.json``, the
summary a modified vLLM ``benchmark_serving`` writes: ``num_prompts``,
``max_concurrency``, ``request_rate`` (``"inf"``), ``completed``, total
input/output tokens, ``request_throughput`` (req/s), ``input_throughput`` and
``output_throughput`` (tok/s), and ``median_``/``p99_`` of ``ttft``, ``tpot``
and ``e2el`` — in **seconds** (unlike vLLM's own ``*_ms`` keys), converted to ms.

The file name states the run's shape, ``<model>_vllm_<layout><n>_isl<I>_osl<O>_conc<C>.json``;
each part is cross-checked against the file (ISL x prompts = total input
tokens, OSL likewise, ``max_concurrency`` = C) and a disagreement is a KB1101
finding with the file's own value kept. Layout ``tp<n>`` is TP n, ``tep<n>`` is
TP n with expert parallelism over the same n GPUs, ``dep<n>`` is data-parallel
n. What no result file states — the GPUs, their count, the engine build, the
dataset — comes from the publisher's sbatch scripts through the options (the
orchestrator passes them, with their evidence); unstated, it stays a gap.

Every record is ``experimental: true`` and ``draft``: the publisher calls the
study work in progress that likely contains errors.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from . import dataset as D
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today
from .vllm_serve import request_rate

if TYPE_CHECKING:
    from ..kb import KB

FMT = "inferencex-decode-slo"
ORIGIN = "inferencex"
MARKERS = ("num_prompts", "max_concurrency", "completed", "output_throughput", "median_ttft", "p99_ttft")
_NAME = re.compile(r"^(?P<model>.+?)_vllm_(?P<layout>tp|tep|dep)(?P<n>\d+)_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)$")
_LAT = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("e2el", "e2e_latency_ms"))
CHECKED = ["the result JSON", "the result file name", "the publisher's sbatch scripts (via options)"]


def parse_name(stem: str) -> dict[str, Any]:
    """``{"model", "layout", "n", "isl", "osl", "conc"}`` from a result file stem; ``{}`` when it does not follow the pattern."""
    m = _NAME.match(stem)
    if not m:
        return {}
    d = m.groupdict()
    return {"model": d["model"], "layout": d["layout"], **{k: int(d[k]) for k in ("n", "isl", "osl", "conc")}}


def layout_conditions(layout: str, n: int) -> dict[str, int]:
    """Parallel sizes a file-name layout states (``tp8`` -> TP 8; ``tep8`` -> TP 8 + EP 8; ``dep8`` -> DP 8)."""
    return {"tp": {"tensor_parallel": n}, "tep": {"tensor_parallel": n, "expert_parallel": n}, "dep": {"data_parallel": n}}[layout]


def script_warmup(rule: dict[str, Any] | None, conc: int | None, prompts: int | None) -> tuple[int, dict[str, Any]] | None:
    """``(warmup requests, provenance entry)`` from the publisher's run-script rule, or None.

    ``rule`` (manifest ``warmup_rule``): ``warmups_per_concurrency`` and
    ``prompts_per_concurrency`` (the script's ``NUM_WARMUPS=$((MAX_CONC * 2))``
    and ``NUM_PROMPTS=$((MAX_CONC * 10))``), ``evidence`` {field, quote} and
    ``commit``. The rule applies only to a file whose ``num_prompts`` equals
    ``prompts_per_concurrency x max_concurrency``: that the script's second rule
    reproduces the file is what ties the file to the script.
    """
    if not rule or conc is None or prompts is None or prompts != rule["prompts_per_concurrency"] * conc:
        return None
    n = rule["warmups_per_concurrency"] * conc
    entry = {
        "date": today(),
        "tag": "intake-inferencex-decode-slo",
        "field": "conditions.warmup",
        "action": "import",
        "method": f"--num-warmups of the publisher's benchmark client command: {rule['warmups_per_concurrency']} x max_concurrency {conc}",
        "evidence": rule["evidence"],
        "basis": (
            f"publisher's run script at commit {rule['commit']}, not the result file; it applies to this file because the "
            f"script's NUM_PROMPTS = {rule['prompts_per_concurrency']} x MAX_CONC reproduces its num_prompts {prompts}"
        ),
        "numbers_changed": False,
    }
    return n, entry


def run_record(
    doc: dict[str, Any], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any] | None:
    """One benchmark record for one result file (``None`` with KB1102 when no request completed)."""
    C.require_keys(doc, MARKERS, path, "InferenceX decode-SLO result")
    completed = C.integer(doc.get("completed"))
    if not completed:
        result.findings.append(C.KB1102.finding(f"completed is {doc.get('completed')!r}; not imported", path=str(path), field="completed"))
        result.stats["skipped"]["no-completed-request"] = result.stats["skipped"].get("no-completed-request", 0) + 1
        return None
    shape = parse_name(path.stem)
    prompts = C.integer(doc.get("num_prompts"))
    isl = osl = None
    for key, total_key in (("isl", "total_input_tokens"), ("osl", "total_output_tokens")):
        total = doc.get(total_key)
        per = total / prompts if isinstance(total, int) and prompts else None
        value = int(per) if per is not None and float(per).is_integer() else None
        if shape and value is not None and value != shape[key]:
            result.findings.append(
                C.KB1101.finding(
                    f"file name says {key} {shape[key]} but {total_key} / num_prompts = {per:g}", path=str(path), field=total_key
                )
            )
        if key == "isl":
            isl = value
        else:
            osl = value
    conc = C.integer(doc.get("max_concurrency"))
    if shape and conc is not None and conc != shape["conc"]:
        result.findings.append(C.KB1101.finding(f"file name says conc {shape['conc']} but max_concurrency is {conc}", path=str(path)))
    stated: dict[str, Any] = C.option_conditions(options)
    stated.update(
        {
            "concurrency": conc,
            "num_prompts": prompts,
            "input_tokens": isl,
            "output_tokens": osl,
            "request_rate": request_rate(doc.get("request_rate"), path),
        }
    )
    if shape:
        stated.update(layout_conditions(shape["layout"], shape["n"]))
    warmup_entry = script_warmup(options.extra.get("warmup_rule"), conc, prompts)
    if warmup_entry is not None:
        stated["warmup"] = warmup_entry[0]
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    metrics: dict[str, Any] = {}
    for short, name in _LAT:
        stats = {
            dst: C.number(doc[f"{src}_{short}"], path, f"{src}_{short}", nonneg=True) * 1000.0
            for src, dst in (("median", "p50"), ("p99", "p99"))
            if doc.get(f"{src}_{short}") is not None
        }
        if stats:
            stats["n"] = completed
            metrics[name] = {
                "stats": stats,
                "unit": "ms",
                "value_scope": "per-request",
                "basis": f"median_{short} / p99_{short} (seconds) x 1000",
            }
    out = C.number(doc["output_throughput"], path, "output_throughput", positive=True)
    metrics["output_tok_s"] = {
        "value": out,
        "unit": "tok/s",
        "value_scope": "aggregate",
        "basis": "output_throughput: output tokens of all requests / duration",
    }
    if doc.get("input_throughput") is not None:
        # input tokens over the whole run, not a prefill-phase rate: prefill_tok_s would misstate it
        metrics["input_tok_s"] = {
            "value": C.number(doc["input_throughput"], path, "input_throughput", nonneg=True),
            "unit": "tok/s",
            "value_scope": "aggregate",
            "basis": "input_throughput: input tokens of all requests / duration (not a prefill-phase rate)",
        }
    if doc.get("request_throughput") is not None:
        metrics["request_throughput_rps"] = {
            "value": C.number(doc["request_throughput"], path, "request_throughput", nonneg=True),
            "unit": "req/s",
            "value_scope": "aggregate",
            "basis": "request_throughput",
        }
    rec = C.skeleton(
        rid=C.make_id("inferencex-slo", path.stem),
        name=f"InferenceX decode-SLO (experimental) {doc.get('model_id')}, vLLM "
        + (f"{shape['layout']}{shape['n']}, ISL {shape['isl']}/OSL {shape['osl']}, conc {shape['conc']}" if shape else path.stem),
        engine=C.engine_id(kb, options, "vllm"),
        metric="output_tok_s",
        value=out,
        unit="tok/s",
        value_scope="aggregate",
        scenario="online-serving",
        sources=sources,
        options=options,
    )
    rec["model"] = options.model or doc.get("model_id")
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    gaps: dict[str, Any] = {}
    if not rec["accelerator_ids"]:
        gaps["accelerator_ids"] = D.gap(
            "the result file names no GPU; "
            + (
                f"the sbatch scripts give {options.hardware_raw!r}, which does not identify one part"
                if options.hardware_raw
                else "the sbatch scripts name no GPU type"
            ),
            CHECKED,
            "the cluster's node description or an nvidia-smi log of the run",
        )
    if rec["accelerator_count"] is None:
        gaps["accelerator_count"] = D.gap("the result file does not state the GPU count", CHECKED, "the sbatch --gres line")
    for key, reason in (
        ("engine_version", "the sbatch scripts run a vLLM nightly container without a date or commit"),
        ("warmup", "the result file and the sbatch scripts state no warmup requests"),
        ("dataset", "the result file does not name the prompt dataset"),
    ):
        if conditions[key] is None:
            gaps[key] = D.gap(reason, CHECKED, "the benchmark client's command line in the sbatch script")
    model_id = str(doc.get("model_id") or "")
    gaps["format_id"] = D.gap(
        f"the result file states no weight precision; {model_id!r} "
        + ("names FP8 without saying E4M3, E5M2 or block-scaled" if "FP8" in model_id.upper() else "names no precision"),
        CHECKED,
        "the checkpoint's quantization_config or the server's --dtype/--quantization flags",
    )
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    rec["origin"] = D.origin_for(options, ORIGIN)
    rec["experimental"] = True
    rec["confidence"] = 0.5
    rec["metrics"] = metrics
    env: dict[str, Any] = {"framework": "vLLM"}
    if options.env:
        C.attach_env(env, options.env)
        env = env.get("environment", env)
    rec["environment"] = env
    pin = D.pin_for(options, path)
    sub: dict[str, Any] = {
        "harness": "vLLM benchmark_serving (InferenceX experimental token-position decode SLO)",
        "run_date": doc.get("date"),
        "model_id": doc.get("model_id"),
        "tokenizer_id": doc.get("tokenizer_id"),
        "burstiness": doc.get("burstiness"),
        "duration_s": doc.get("duration"),
        "completed": completed,
        "good_completed": doc.get("good_completed"),
        "request_goodput_rps": doc.get("request_goodput"),
        "total_input_tokens": doc.get("total_input_tokens"),
        "total_output_tokens": doc.get("total_output_tokens"),
        "layout": f"{shape['layout']}{shape['n']}" if shape else None,
    }
    sub.update({k: pin[k] for k in ("repo", "path", "commit") if k in pin})
    rec["submission"] = sub
    rec["methodology"] = (
        "vLLM serving benchmark against one vLLM server: random prompts of a fixed input length, a fixed output length, "
        "a client concurrency cap and no request-rate limit; medians and P99 of TTFT, TPOT and E2E latency per request. "
        "Experimental study, self-described as work in progress."
    )
    rec["measured_by"] = "third_party"
    rec["notes"] = (
        "Publisher's warning: experimental work-in-progress code, mostly generated, likely to contain errors; not official InferenceX results."
    )
    rec["provenance"] = [
        D.import_entry(
            "intake-inferencex-decode-slo",
            "inferkb.intake.inferencex_slo",
            "submission.run_date",
            str(doc.get("date")),
            "one result file; seconds converted to ms; shape from the file name cross-checked against the totals",
        )
    ]
    for item in options.extra.get("option_evidence") or []:
        rec["provenance"].append(
            {
                "date": today(),
                "tag": "intake-inferencex-decode-slo",
                "field": item["field"],
                "action": "import",
                "method": "stated by the publisher's run scripts, passed as an option",
                "evidence": item["evidence"],
                "basis": item.get("basis", "publisher's run script, not the result file"),
                "numbers_changed": False,
            }
        )
    if warmup_entry is not None:
        rec["provenance"].append(warmup_entry[1])
    extra_ev = options.extra.get("hardware_evidence")
    if isinstance(extra_ev, dict):
        rec["provenance"].append(
            {
                "date": today(),
                "tag": "intake-inferencex-decode-slo",
                "field": "hardware_raw",
                "action": "import",
                "method": "GPU partition and count read from the publisher's sbatch script",
                "evidence": extra_ev,
                "basis": "publisher's run script, not the result file",
                "numbers_changed": False,
            }
        )
    return rec


@register
class InferenceXDecodeSLO(Importer):
    """InferenceX experimental decode-SLO vLLM result JSON -> one record per file (experimental, draft)."""

    name = FMT
    description = "InferenceX experimental token-position decode-SLO vLLM results (latencies in seconds)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per result file; file-name shape cross-checked (KB1101)."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            doc = C.load_json(path, raw)
            if not isinstance(doc, dict):
                raise InputError("expected one JSON object per result file", path=str(path))
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            rec = run_record(doc, path, options, kb, sources, result)
            if rec is not None:
                bench.append(rec)
        return C.finish_batch(result, extra, bench, options, "runs")
