"""Writing one benchmark record as an llm-d Benchmark Report v0.2.1 document (one arm per document), and saying
what such a document leaves out. The ``llmd-report`` exporter (:func:`inferkb.intake.llmd_report.export_report`)
calls :func:`report_document`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .llmd_read import STAT_SLOTS

if TYPE_CHECKING:
    from ..kb import KB

__all__ = ["EXPORT", "export_omissions", "report_document"]

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
    """Human notes on what :func:`report_document` leaves out for this record (other arms, metrics with no BR slot).

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


def report_document(kb: KB, record_id: str, arm: str | None = None) -> dict[str, Any]:
    """Benchmark record ``record_id`` as an llm-d Benchmark Report v0.2.1 document (a dict): see
    :func:`inferkb.intake.llmd_report.export_report` for what is exported and the errors raised."""
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
