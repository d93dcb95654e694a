"""``llmd-report``: the llm-d "Benchmark Report" v0.2 (YAML or JSON), read and written.

Reading (:class:`LlmdReportImporter`): one benchmark record per report (a
file holds one report or a YAML list of them). The headline is
``throughput.output_token_rate`` (else total token rate, else request rate);
every other aggregate statistic goes to ``metrics`` under its registry name,
converted to the registry unit (s, s/token -> ms; ``p99p9`` -> ``p999``,
``p0p1`` -> ``percentiles["p0.1"]``). ``normalized_time_per_output_token``
(request latency / output tokens) has no registry metric and is not imported.
Stack components and the load generator are kept verbatim in
``environment.extra`` (standardized and native args); run ids go to
``submission``. A YAML ``.inf`` concurrency or rate is unbounded: the
concurrency stays null with a gap, the rate becomes the string ``"inf"``.

Writing (:func:`export_report`): one of our benchmark records as a v0.2.1
document that validates against the published JSON Schema
(``br_v0_2_1_json_schema.json``, llm-d/llm-d-benchmark).

The file is read by :mod:`inferkb.intake.llmd_read` and the document written by
:mod:`inferkb.intake.llmd_export`; this module builds the records and registers the importer and the exporter.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..export import exporter
from . import common as C
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, resolve_accelerator, today
from .common import KB1105, make_id, resolve_sources, unique_ids
from .common import engine_id as option_engine
from .llmd_export import export_omissions, report_document
from .llmd_read import LATENCY, THROUGHPUT, convert_stats, load_reports
from .mlperf_maps import engine_alias_index, match_engine

if TYPE_CHECKING:
    from ..kb import KB

FORMAT = "llmd-report"


def _jsonable(value: Any) -> Any:
    """Copy ``value`` with non-finite floats as strings (``"inf"``) so it can be stored as JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _engine_component(stack: Any) -> dict[str, Any] | None:
    comps = [
        c
        for c in (stack or [])
        if isinstance(c, dict) and isinstance(c.get("standardized"), dict) and c["standardized"].get("kind") == "inference_engine"
    ]
    return comps[0]["standardized"] if comps else None


def build_record(
    kb: KB, rep: dict[str, Any], options: IntakeOptions, sources: list[str], path: str, result: IntakeResult, engines: list
) -> dict[str, Any]:
    """One benchmark record from one report (see the module docstring for the mapping)."""
    where = "results.request_performance"
    agg = C.mapping(C.mapping(C.mapping(rep, "results", path), "request_performance", path, "results"), "aggregate", path, where)
    where += ".aggregate"
    requests = C.mapping(agg, "requests", path, where)
    n = requests.get("total") if isinstance(requests.get("total"), int) and requests.get("total") >= 1 else None
    metrics: dict[str, Any] = {}
    for group, table in (("latency", LATENCY), ("throughput", THROUGHPUT)):
        for name, block in C.mapping(agg, group, path, where).items():
            if name not in table or not isinstance(block, dict):
                continue
            metric, unit, scope = table[name]
            try:
                stats, extra = convert_stats(block, unit, n if group == "latency" else None)
            except ValueError as exc:
                raise InputError(str(exc), path=path, field=f"results.request_performance.aggregate.{group}.{name}") from None
            entry: dict[str, Any] = {"stats": stats, "unit": unit, "value_scope": scope, "basis": f"{group}.{name}"}
            if group == "throughput" and "mean" in stats:
                entry["value"] = stats["mean"]
            if extra:
                entry["percentiles"] = extra
            metrics[metric] = entry
    head = next((m for m in ("output_tok_s", "total_tok_s", "request_throughput_rps") if metrics.get(m, {}).get("value")), None)
    if head is None:
        raise InputError(
            "the report has no aggregate throughput (output_token_rate, total_token_rate or request_rate)",
            path=path,
            field="results.request_performance.aggregate.throughput",
        )
    scen = C.mapping(rep, "scenario", path)
    load = C.mapping(scen, "load", path, "scenario")
    std = C.mapping(load, "standardized", path, "scenario.load")
    stack = scen.get("stack")
    if stack is not None and not isinstance(stack, list):
        raise InputError(f"expected an array of stack components, found {C.shown(stack)}", path=path, field="scenario.stack")
    eng = _engine_component(stack) or {}
    acc = C.mapping(eng, "accelerator", path, "scenario.stack[].standardized")
    par = C.mapping(acc, "parallelism", path, "scenario.stack[].standardized.accelerator")
    gaps: dict[str, Any] = {}
    stated: dict[str, Any] = {"num_prompts": n}
    conc = std.get("concurrency")
    if isinstance(conc, int) and conc >= 1:
        stated["concurrency"] = conc
    elif isinstance(conc, float) and math.isinf(conc):
        gaps["concurrency"] = {
            "reason": "the report states unbounded concurrency (.inf)",
            "checked": ["scenario.load.standardized.concurrency"],
        }
    rate = std.get("rate_qps")
    if isinstance(rate, (int, float)) and not isinstance(rate, bool):
        stated["request_rate"] = "inf" if math.isinf(rate) else rate
    for key, cond in (("input_seq_len", "input_tokens"), ("output_seq_len", "output_tokens")):
        seq = C.mapping(std, key, path, "scenario.load.standardized")
        val = seq.get("value")
        if seq.get("distribution") == "fixed" and isinstance(val, (int, float)) and float(val).is_integer() and val >= 1:
            stated[cond] = int(val)
        elif seq:
            gaps[cond] = {
                "reason": f"{key} is a {seq.get('distribution')} distribution (value {val}), not one length",
                "checked": [f"scenario.load.standardized.{key}"],
            }
    for key, cond in (("tp", "tensor_parallel"), ("pp", "pipeline_parallel"), ("ep", "expert_parallel"), ("dp", "data_parallel")):
        if isinstance(par.get(key), int) and par[key] >= 1:
            stated[cond] = par[key]
    eid = option_engine(kb, options, None)
    tool = str(eng.get("tool") or "")
    if eid is None and tool:
        eid, _, _ = match_engine(tool, engines)
    if eid is None:
        result.findings.append(
            KB1105.finding(f"stack engine tool {tool or '(none)'!r} names no engine of this KB; engine_id null", path=path)
        )
    version = options.engine_version or (str(eng.get("tool_version")) if eid and eng.get("tool_version") else None)
    stated["engine_version"] = version
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    opts = IntakeOptions(**{**options.__dict__, "hardware_raw": options.hardware_raw or acc.get("model")})
    ids, alts, raw, notes = resolve_accelerator(kb, opts, None)
    count = options.count
    replicas = eng.get("replicas")
    if count is None and isinstance(acc.get("count"), int) and acc["count"] >= 1:
        if replicas in (None, 1):
            count = acc["count"]
        else:
            gaps["accelerator_count"] = {
                "reason": f"accelerator.count {acc['count']} with replicas {replicas}: the report "
                "does not say whether the count is per replica or in total",
                "checked": ["scenario.stack[].standardized.accelerator.count", "replicas"],
            }
    run = C.mapping(rep, "run", path)
    time = C.mapping(run, "time", path, "run")
    uid = str(run.get("uid") or "")
    sub = {
        "report_version": str(rep.get("version")),
        "run_uid": uid or None,
        "run_eid": run.get("eid"),
        "run_cid": run.get("cid"),
        "run_pid": run.get("pid"),
        "user": run.get("user"),
        "description": run.get("description"),
        "keywords": ", ".join(map(str, run.get("keywords") or [])) or None,
        "start": _s(time.get("start")),
        "end": _s(time.get("end")),
        "duration": _s(time.get("duration")),
        "load_tool": std.get("tool"),
        "load_tool_version": std.get("tool_version"),
        "load_stage": std.get("stage"),
        "load_source": std.get("source"),
        "failures": requests.get("failures"),
        "incomplete": requests.get("incomplete"),
    }
    key = uid.strip("0-") and uid or C.mapping(load, "metadata", path, "scenario.load").get("cfg_id") or "report"
    rid = options.record_id or make_id("llmd", str(key)[:16], f"stage{std.get('stage', 0)}", f"rate{rate}" if rate is not None else None)
    hm = metrics[head]
    return {
        "id": rid,
        "type": "benchmark",
        "name": options.name
        or f"llm-d Benchmark Report: {run.get('description') or C.mapping(eng, 'model', path, 'scenario.stack[].standardized').get('name') or rid}",
        "status": "draft",
        "confidence": 0.7,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes) or None,
        "engine_id": eid,
        "accelerator_ids": ids,
        "accelerator_count": count,
        "accelerator_alternates": alts,
        "hardware_raw": raw,
        "model": options.model or C.mapping(eng, "model", path, "scenario.stack[].standardized").get("name"),
        "model_id": options.model_id,
        "metric": head,
        "value": hm["value"],
        "unit": hm["unit"],
        "value_scope": "aggregate",
        "scenario": "online-serving",
        "conditions": conditions,
        "condition_gaps": gaps,
        "metrics": metrics,
        "environment": {
            "engine_version": version,
            "framework": tool or None,
            "extra": _jsonable({"stack": scen.get("stack") or [], "load": load}),
        },
        "submission": {k: v for k, v in sub.items() if v is None or isinstance(v, (str, int, float, bool))},
        "methodology": f"llm-d Benchmark Report {rep.get('version')}; load generator {std.get('tool')} {std.get('tool_version') or ''}".strip(),
        "provenance": [
            {
                "date": today(),
                "tag": "intake-llmd-report",
                "field": "*",
                "action": "import",
                "method": "inferkb.intake.llmd_report",
                "evidence": None,
                "basis": "Benchmark Report aggregate statistics, units converted to the metric registry's",
                "numbers_changed": False,
            }
        ],
    }


def _s(value: Any) -> str | None:
    return None if value is None else str(value)


@register
class LlmdReportImporter(Importer):
    """llm-d Benchmark Report v0.2 / v0.2.1 (YAML or JSON; one report or a list)."""

    name = FORMAT
    description = "llm-d Benchmark Report v0.2 (YAML or JSON)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One benchmark record per report in every file."""
        result = IntakeResult(stats={"format": FORMAT, "imported": 0, "skipped": {}})
        engines = engine_alias_index(kb)
        for path in paths:
            reports = load_reports(path)
            sources = resolve_sources(kb, options, path, read_input(path), FORMAT, result.records)
            built = [build_record(kb, rep, options, sources, str(path), result, engines) for rep in reports]
            unique_ids(built)
            result.records[0:0] = built
            result.stats["imported"] += len(built)
        return result


@exporter(
    "llmd-report", "A benchmark record as an llm-d Benchmark Report v0.2.1 document (one arm per document).", omissions=export_omissions
)
def export_report(kb: KB, record_id: str, arm: str | None = None) -> dict[str, Any]:
    """Write benchmark record ``record_id`` as an llm-d Benchmark Report v0.2.1 document (a dict).

    Exported: the headline and ``metrics`` that have a BR statistic (latencies
    in ms or ms/token, rates in tokens/s or queries/s; per-device rates are left
    out because BR rates are aggregates), the request count, the engine
    component (when model, hardware and count are known) and the load shape
    (when the input length is known). ``run.uid`` is a UUID5 of the record id,
    so re-exporting gives the same document. The schema requires an engine
    component's ``role`` and ``replicas``; our records do not state them, so
    they are written as ``replica`` / ``1`` and the tool version as ``""`` when
    unknown (the convention of llm-d's own golden files). A record with
    ``arms`` exports one arm per document (``arm``, default the baseline arm):
    its stats become the headline statistic and its config the engine's native
    config. Raises :class:`UsageError` when the id names no benchmark record or
    ``arm`` is not one of its arms. :func:`export_omissions` lists what a
    document leaves out.
    """
    return report_document(kb, record_id, arm)
