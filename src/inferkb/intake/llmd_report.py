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
"""

from __future__ import annotations

import math
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, UsageError
from ..export import exporter
from . import common as C
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, resolve_accelerator, today
from .common import KB1105, load_json, make_id, resolve_sources, unique_ids
from .common import engine_id as option_engine
from .mlperf_maps import engine_alias_index, match_engine
from .yamlsafe import MAX_BYTES as MAX_YAML_BYTES
from .yamlsafe import load_yaml

if TYPE_CHECKING:
    from ..kb import KB

FORMAT = "llmd-report"
REPORT_KEYS = ("version", "run", "results")
# BR name -> (registry metric, registry unit, value_scope)
LATENCY = {
    "time_to_first_token": ("ttft_ms", "ms", "per-request"),
    "time_per_output_token": ("tpot_ms", "ms", "per-request"),
    "inter_token_latency": ("itl_ms", "ms", "per-request"),
    "request_latency": ("e2e_latency_ms", "ms", "per-request"),
}
THROUGHPUT = {
    "output_token_rate": ("output_tok_s", "tok/s", "aggregate"),
    "total_token_rate": ("total_tok_s", "tok/s", "aggregate"),
    # input + output = total_token_rate: input tokens over the whole run, not a prefill-phase rate
    "input_token_rate": ("input_tok_s", "tok/s", "aggregate"),
    "request_rate": ("request_throughput_rps", "req/s", "aggregate"),
}
FACTOR = {
    ("s", "ms"): 1000.0,
    ("ms", "ms"): 1.0,
    ("s/token", "ms"): 1000.0,
    ("ms/token", "ms"): 1.0,
    ("tokens/s", "tok/s"): 1.0,
    ("queries/s", "req/s"): 1.0,
}
STAT_SLOTS = {
    "mean": "mean",
    "p50": "p50",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "p99p9": "p999",
    "min": "min",
    "max": "max",
    "stddev": "stdev",
}


def _jsonable(value: Any) -> Any:
    """Copy ``value`` with non-finite floats as strings (``"inf"``) so it can be stored as JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def load_reports(path: Path) -> list[dict[str, Any]]:
    """Parse a report file (JSON strictly, else YAML with :func:`~inferkb.intake.yamlsafe.load_yaml`: bounded
    aliases, JSON-compatible scalars) into a list of report dicts; :class:`InputError` otherwise."""
    raw = read_input(path, limit=MAX_YAML_BYTES)
    if raw.lstrip()[:1] in (b"{", b"["):
        doc = load_json(path, raw)
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path=str(path)) from None
        doc = load_yaml(text, str(path))
    reports = doc if isinstance(doc, list) else [doc]
    for rep in reports:
        if not isinstance(rep, dict) or any(k not in rep for k in REPORT_KEYS):
            found = ", ".join(list(rep)[:12]) if isinstance(rep, dict) else type(rep).__name__
            missing = [k for k in REPORT_KEYS if not isinstance(rep, dict) or k not in rep]
            raise InputError(
                f"not an llm-d Benchmark Report: expected keys {', '.join(REPORT_KEYS)}; missing {', '.join(missing)}; found {found}",
                path=str(path),
                field=missing[0],
            )
        if not str(rep.get("version", "")).startswith("0.2"):
            raise InputError(f"Benchmark Report version {rep.get('version')!r} is not 0.2.x", path=str(path), field="version")
    return reports


def convert_stats(block: dict[str, Any], unit: str, n: int | None) -> tuple[dict[str, Any], dict[str, float]]:
    """``(stats, percentiles)`` in ``unit`` from a BR Statistics object; :class:`ValueError` for an unknown unit."""
    units = block.get("units")
    factor = FACTOR.get((units, unit)) if isinstance(units, str) else None
    if factor is None:
        raise ValueError(f"units {block.get('units')!r} cannot be converted to {unit}")
    stats: dict[str, Any] = {}
    extra: dict[str, float] = {}
    for key, val in block.items():
        if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
            continue
        if key in STAT_SLOTS:
            stats[STAT_SLOTS[key]] = val * factor
        elif key.startswith("p") and key[1:].replace("p", "").isdigit():
            extra["p" + key[1:].replace("p", ".")] = val * factor
    if n:
        stats["n"] = n
    return stats, extra


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


# ---- export -------------------------------------------------------------------

# registry metric -> (BR group, BR name, BR units, factor from registry unit)
EXPORT = {
    "ttft_ms": ("latency", "time_to_first_token", "ms", 1.0),
    "tpot_ms": ("latency", "time_per_output_token", "ms/token", 1.0),
    "itl_ms": ("latency", "inter_token_latency", "ms/token", 1.0),
    "e2e_latency_ms": ("latency", "request_latency", "ms", 1.0),
    "output_tok_s": ("throughput", "output_token_rate", "tokens/s", 1.0),
    "total_tok_s": ("throughput", "total_token_rate", "tokens/s", 1.0),
    "input_tok_s": ("throughput", "input_token_rate", "tokens/s", 1.0),
    "request_throughput_rps": ("throughput", "request_rate", "queries/s", 1.0),
}
_BACK = {v: k for k, v in STAT_SLOTS.items()}
_RATE_SCOPES = {"aggregate", "per-system", None}


def _chosen_arm(d: dict[str, Any], arm: str | None) -> dict[str, Any] | None:
    arms = [a for a in d.get("arms") or [] if isinstance(a, dict)]
    if not arms:
        if arm is not None:
            raise UsageError(f"--arm {arm!r}: this record has no arms")
        return None
    wanted = arm or d.get("baseline_arm") or arms[0].get("id")
    for a in arms:
        if a.get("id") == wanted:
            return a
    raise UsageError(f"--arm {wanted!r} is not one of the record's arms ({', '.join(str(a.get('id')) for a in arms)})")


def export_omissions(kb: KB, record_id: str, arm: str | None = None) -> list[str]:
    """Human notes on what :func:`export_report` leaves out for this record (other arms, metrics with no BR slot).

    Returns a list of sentences (empty when nothing is dropped).
    """
    d = kb.get(record_id).data
    notes = []
    chosen = _chosen_arm(d, arm)
    if chosen is not None:
        others = [a.get("id") for a in d.get("arms") or [] if a.get("id") != chosen.get("id")]
        if others:
            notes.append(f"exported arm {chosen['id']!r} only; export the others with --arm {' / --arm '.join(map(str, others))}")
    names = set(d.get("metrics") or {}) | ({d["metric"]} if d.get("metric") else set())
    dropped = sorted(n for n in names if n not in EXPORT)
    if dropped:
        notes.append(f"metrics with no Benchmark Report statistic were not exported: {', '.join(dropped)}")
    return notes


def _statistics(entry: dict[str, Any], units: str, factor: float) -> dict[str, Any] | None:
    stats = dict(entry.get("stats") or {})
    if "mean" not in stats and isinstance(entry.get("value"), (int, float)):
        stats["mean"] = entry["value"]
    if not isinstance(stats.get("mean"), (int, float)):
        return None
    out: dict[str, Any] = {"units": units}
    for slot, val in stats.items():
        if slot in _BACK and isinstance(val, (int, float)):
            out[_BACK[slot]] = val * factor
    for key, val in (entry.get("percentiles") or {}).items():
        out["p" + key[1:].replace(".", "p")] = val * factor
    return out


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
    rec = kb.get(record_id)
    if rec.type != "benchmark":
        raise UsageError(
            f"{record_id!r} is {'an' if rec.type[:1] in 'aeiou' else 'a'} {rec.type} record; only benchmark records can be exported as a Benchmark Report"
        )
    d = rec.data
    metrics = dict(d.get("metrics") or {})
    chosen = _chosen_arm(d, arm)
    if chosen is not None and d.get("metric"):
        metrics[d["metric"]] = {
            "stats": chosen.get("stats") or {},
            "unit": chosen.get("unit") or d.get("unit"),
            "value_scope": d.get("value_scope"),
        }
    elif d.get("metric") and d.get("metric") not in metrics and d.get("value") is not None:
        metrics[d["metric"]] = {"value": d["value"], "unit": d.get("unit"), "value_scope": d.get("value_scope")}
    aggregate: dict[str, Any] = {}
    for name, entry in metrics.items():
        if name not in EXPORT or not isinstance(entry, dict):
            continue
        group, br_name, units, factor = EXPORT[name]
        if group == "throughput" and entry.get("value_scope") not in _RATE_SCOPES:
            continue
        stat = _statistics(entry, units, factor)
        if stat:
            aggregate.setdefault(group, {})[br_name] = stat
    cond = d.get("conditions") or {}
    if isinstance(cond.get("num_prompts"), int):
        aggregate["requests"] = {"total": cond["num_prompts"]}
    label = f"inferkb:{rec.key}" + (f"#{chosen['id']}" if chosen is not None else "")
    description = d.get("name") or rec.id
    if chosen is not None:
        description = f"{description} [arm {chosen['id']}: {chosen.get('label') or ''}]"
    run: dict[str, Any] = {
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, label)),
        "description": description,
        "keywords": ["inferkb", rec.key] + ([f"arm:{chosen['id']}"] if chosen is not None else []),
    }
    scenario: dict[str, Any] = {}
    hw = d.get("hardware_raw") or ", ".join(d.get("accelerator_ids") or [])
    if d.get("model") and hw and d.get("accelerator_count"):
        par = {
            k: cond[c]
            for k, c in (("tp", "tensor_parallel"), ("pp", "pipeline_parallel"), ("ep", "expert_parallel"), ("dp", "data_parallel"))
            if isinstance(cond.get(c), int)
        }
        scenario["stack"] = [
            {
                "metadata": {"label": f"{d.get('engine_id') or 'engine'}-0", "cfg_id": rec.id},
                "standardized": {
                    "kind": "inference_engine",
                    "tool": d.get("engine_id") or "unknown",
                    "tool_version": cond.get("engine_version") or "",
                    "role": "replica",
                    "replicas": 1,
                    "model": {"name": d["model"]},
                    "accelerator": {"model": hw, "count": d["accelerator_count"], "parallelism": par},
                },
                "native": {"args": None, "envars": None, "config": (chosen or {}).get("config") or None},
            }
        ]
    if isinstance(cond.get("input_tokens"), int):
        std: dict[str, Any] = {
            "tool": (d.get("submission") or {}).get("load_tool") or "unknown",
            "tool_version": "",
            "source": "unknown",
            "input_seq_len": {"distribution": "fixed", "value": cond["input_tokens"]},
        }
        if isinstance(cond.get("output_tokens"), int):
            std["output_seq_len"] = {"distribution": "fixed", "value": cond["output_tokens"]}
        if isinstance(cond.get("concurrency"), int):
            std["concurrency"] = cond["concurrency"]
        if isinstance(cond.get("request_rate"), (int, float)):
            std["rate_qps"] = cond["request_rate"]
        scenario["load"] = {
            "metadata": {"schema_version": "0.0.1", "description": f"exported from inferkb {rec.key}"},
            "standardized": std,
            "native": {"args": None, "envars": None, "config": None},
        }
    doc: dict[str, Any] = {"version": "0.2.1", "run": run}
    if scenario:
        doc["scenario"] = scenario
    doc["results"] = {"request_performance": {"aggregate": aggregate}} if aggregate else {}
    return doc
