"""``inferencex``: InferenceX dashboard API benchmark rows -> one benchmark record per row.

Input: a file holding API rows — the client wrapper ``{"metadata", "rows"}``
(``powerx.json``), ``{"sample_rows", ...}`` (``lookup.json``),
``{"strict", "diagnostic"}`` (an empty result), or a bare list of rows.

Units (FORMATS.md section 8; no unit is written in a row): latencies in
**seconds** (converted to ms), ``*_tput_per_gpu`` tok/s per GPU,
``*_intvty`` tok/s per user, ``avg_power_w`` W per GPU,
``avg_total_gpu_power_w`` W summed over GPUs, ``joules_per_*`` J/token.

Headline: ``tput_per_gpu`` as ``total_tok_s`` per device. Traps handled:
the stated GPU count is checked against the count the row's own power figures
imply (``avg_total_gpu_power_w / avg_power_w``); a contradiction leaves
``accelerator_count`` null with a KB1112 finding listing both (trap 1). In
disaggregated rows ``input_tput_per_gpu`` is per prefill GPU and
``output_tput_per_gpu`` per decode GPU, which each metric's ``basis`` says
(trap 2); ``input_tput_per_gpu`` is ``input_tok_s`` (input tokens over the run:
input + output = ``tput_per_gpu``), not ``prefill_tok_s``. Interactivity p90/p99 are reciprocals of TPOT percentiles and its
std is meaningless, so only mean and median are kept (trap 5).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..resolve import resolve
from . import common as C
from . import mlperf_maps as M
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today
from .common import KB1103, load_json, make_id, resolve_sources
from .table_rules import KB1112, KB1113, KB1114, KB1115

if TYPE_CHECKING:
    from ..kb import KB

FORMAT = "inferencex"
ROW_KEYS = ("id", "hardware", "framework", "model", "conc", "isl", "osl", "metrics")
_LAT = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2el", "e2e_latency_ms"))
_STAT_KEYS = (("mean", "mean"), ("median", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99.9", "p999"), ("std", "stdev"))


def extract_rows(doc: Any, path: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(rows, wrapper_metadata)`` from any of the accepted file shapes; :class:`InputError` otherwise."""
    if isinstance(doc, list):
        return doc, {}
    if isinstance(doc, dict):
        if isinstance(doc.get("rows"), list):
            return doc["rows"], C.mapping(doc, "metadata", path)
        if isinstance(doc.get("sample_rows"), list):
            return doc["sample_rows"], {k: v for k, v in doc.items() if k != "sample_rows"}
        if isinstance(doc.get("diagnostic"), dict):
            rows = doc["diagnostic"].get("rows")
            if rows is not None and not isinstance(rows, list):
                raise InputError(f"expected an array of rows, found {C.shown(rows)}", path=path, field="diagnostic.rows")
            return list(rows or []), C.mapping(doc, "strict", path)
    found = ", ".join(list(doc)[:12]) if isinstance(doc, dict) else type(doc).__name__
    raise InputError(
        f"not an InferenceX API file: expected a list of rows or an object with 'rows', 'sample_rows' or 'diagnostic'; found {found}",
        path=path,
    )


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def gpu_count(row: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """``(count, evidence)``: the GPU count when the stated and power-implied counts agree, else ``None``.

    Stated: ``num_prefill_gpu + num_decode_gpu`` for disaggregated rows; for
    aggregated rows prefill and decode describe the same GPUs, so the count
    is their common value (never their sum). Implied: ``avg_total_gpu_power_w
    / avg_power_w`` when ``power_valid`` is 1.
    """
    m = row.get("metrics") or {}
    pre, dec = row.get("num_prefill_gpu"), row.get("num_decode_gpu")
    stated: int | None = None
    if isinstance(pre, int) and isinstance(dec, int):
        stated = pre + dec if row.get("disagg") else (pre if pre == dec else None)
    implied: float | None = None
    total, per = _num(m.get("avg_total_gpu_power_w")), _num(m.get("avg_power_w"))
    if m.get("power_valid") == 1 and total and per:
        implied = total / per
    evidence = {"stated": stated, "num_prefill_gpu": pre, "num_decode_gpu": dec, "power_implied": implied}
    if stated is not None and implied is not None:
        return (stated, evidence) if abs(implied - stated) < 0.05 else (None, evidence)
    return stated if stated is not None else (round(implied) if implied and abs(implied - round(implied)) < 0.05 else None), evidence


def _latency(m: dict[str, Any], short: str) -> dict[str, Any] | None:
    stats = {dst: m[f"{src}_{short}"] * 1000.0 for src, dst in _STAT_KEYS if _num(m.get(f"{src}_{short}")) is not None}
    return {"stats": stats, "unit": "ms", "value_scope": "per-request", "basis": "API row, seconds converted to ms"} if stats else None


def build_record(
    kb: KB,
    row: dict[str, Any],
    meta: dict[str, Any],
    sources: list[str],
    path: str,
    result: IntakeResult,
    engines: list,
    formats: dict,
    models: dict,
) -> dict[str, Any] | None:
    """One benchmark record for an API row (``None`` with a finding when the row has no usable headline)."""
    missing = [k for k in ROW_KEYS if k not in row]
    if missing:
        raise InputError(
            f"not an InferenceX API row: expected keys {', '.join(ROW_KEYS)}; missing {', '.join(missing)}; "
            f"found {', '.join(list(row)[:12])}",
            path=path,
            field=missing[0],
        )
    m = row["metrics"] if isinstance(row["metrics"], dict) else {}
    rid_raw = str(row["id"])
    head = _num(m.get("tput_per_gpu"))
    bad = [k for k, v in m.items() if re.search(r"(ttft|tpot|itl|e2el)$", k) and _num(v) is not None and v <= 0 and not k.startswith("std")]
    if head is None or head <= 0 or bad:
        why = f"non-positive latencies {', '.join(bad)}" if bad else f"tput_per_gpu {m.get('tput_per_gpu')!r}"
        result.findings.append(KB1115.finding(f"row {rid_raw}: {why}; row not imported", path=path))
        result.stats["skipped"]["unusable-row"] = result.stats["skipped"].get("unusable-row", 0) + 1
        return None
    disagg = bool(row.get("disagg"))
    rid = make_id("inferencex", rid_raw, str(row["model"]), str(row["hardware"]), str(row["framework"]), f"c{row['conc']}")
    notes: list[str] = []
    count, ev = gpu_count(row)
    gaps: dict[str, Any] = {}
    if count is None:
        result.findings.append(
            KB1112.finding(
                f"row {rid_raw}: stated GPU count {ev['stated']} (prefill {ev['num_prefill_gpu']}, decode {ev['num_decode_gpu']}, "
                f"is_multinode {row.get('is_multinode')}) but avg_total_gpu_power_w / avg_power_w = {ev['power_implied']:.2f}"
                if ev["power_implied"]
                else f"row {rid_raw}: GPU count not determinable",
                path=path,
                record=f"benchmarks/{rid}",
                field="num_prefill_gpu",
                extra={"candidates": [ev["stated"], ev["power_implied"]]},
            )
        )
        gaps["accelerator_count"] = {
            "reason": "the row's stated GPU count contradicts the count its power figures imply",
            "checked": ["num_prefill_gpu", "num_decode_gpu", "avg_total_gpu_power_w", "avg_power_w"],
            "recover": "the run's workflow log (run_url)",
        }
        notes.append(
            f"GPU count contradiction: stated {ev['stated']}, power-implied {ev['power_implied']}; per-GPU figures "
            "are the API's own and their denominator is uncertain."
        )
    hw = str(row["hardware"])
    found = [resolved.id] if (resolved := resolve(kb, "accelerator", hw)).resolved else []
    if len(found) != 1:
        result.stats["unresolved_hardware"][hw] = result.stats["unresolved_hardware"].get(hw, 0) + 1
    framework = str(row["framework"])
    eid, _, enote = M.match_engine(framework, engines)
    if enote:
        result.stats["engine_notes"][enote] = result.stats["engine_notes"].get(enote, 0) + 1
    env: dict[str, Any] = {"framework": framework, "extra": {"image": row.get("image")}}
    image = str(row.get("image") or "")
    if eid and eid in image.split("/")[0] + image:
        tag = image.rsplit(":", 1)[-1] if ":" in image else ""
        sha = re.search(r"\b[0-9a-f]{40}\b", tag)
        env["engine_commit"] = sha.group(0) if sha else None
        env["engine_version"] = None if sha else tag or None
    format_id, freason = M.match_format(str(row.get("precision") or ""), formats)
    if format_id is None:
        gaps["format_id"] = {"reason": freason, "checked": ["precision"], "recover": "the recipe (recipe_fingerprint) or image"}
    same = not disagg and row.get("prefill_tp") == row.get("decode_tp") and row.get("prefill_ep") == row.get("decode_ep")
    stated = {
        "concurrency": row["conc"] if isinstance(row["conc"], int) and row["conc"] >= 1 else None,
        "input_tokens": row["isl"] if isinstance(row["isl"], int) else None,
        "output_tokens": row["osl"] if isinstance(row["osl"], int) else None,
        "tensor_parallel": row.get("decode_tp") if same else None,
        "expert_parallel": row.get("decode_ep") if same else None,
        "pipeline_parallel": m.get("pp") if isinstance(m.get("pp"), int) else None,
        "engine_version": env.get("engine_version"),
    }
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    if not same:
        for k in ("tensor_parallel", "expert_parallel"):
            gaps[k] = {
                "reason": "prefill and decode workers use different or separate parallel layouts; see submission",
                "checked": ["prefill_tp", "prefill_ep", "decode_tp", "decode_ep"],
            }
    notes.append("isl/osl are the nominal request shape; the energy figures imply different actual lengths (FORMATS.md trap 7).")
    metrics: dict[str, Any] = {}
    out_basis = "per decode GPU (num_decode_gpu)" if disagg else "per GPU"
    in_basis = "per prefill GPU (num_prefill_gpu)" if disagg else "per GPU"
    if _num(m.get("output_tput_per_gpu")) is not None:
        metrics["output_tok_s"] = {
            "value": m["output_tput_per_gpu"],
            "unit": "tok/s",
            "value_scope": "per-device",
            "basis": f"output_tput_per_gpu, {out_basis}",
        }
    if _num(m.get("input_tput_per_gpu")) is not None:
        # Input tokens over the whole run (input + output = tput_per_gpu), not a prefill-phase rate.
        metrics["input_tok_s"] = {
            "value": m["input_tput_per_gpu"],
            "unit": "tok/s",
            "value_scope": "per-device",
            "basis": f"input_tput_per_gpu (input tokens/s), {in_basis}",
        }
    for short, name in _LAT:
        lat = _latency(m, short)
        if lat:
            metrics[name] = lat
    itl, tpot = _num(m.get("mean_itl")), _num(m.get("mean_tpot"))
    if "itl_ms" in metrics and itl and tpot and itl > 5 * tpot:
        # FORMATS.md trap 4: with dp-attention decode ITL spans streamed chunks of many tokens.
        metrics["itl_ms"]["basis"] += f"; mean ITL is {itl / tpot:.0f}x mean TPOT, so it measures gaps between streamed chunks"
    iv = {dst: m[f"{src}_intvty"] for src, dst in (("mean", "mean"), ("median", "p50")) if _num(m.get(f"{src}_intvty")) is not None}
    if iv:
        metrics["tok_s_per_user"] = {
            "stats": iv,
            "unit": "tok/s",
            "value_scope": "per-user",
            "basis": "intvty mean/median; its p90/p99 are reciprocals of TPOT percentiles and are omitted",
        }
    power_ok = m.get("power_valid") == 1
    if power_ok and _num(m.get("joules_per_output_token")) is not None:
        metrics["joules_per_token"] = {
            "value": m["joules_per_output_token"],
            "unit": "J/token",
            "value_scope": "per-system",
            "basis": "joules_per_output_token: GPU energy over the run / output tokens",
        }
    sub: dict[str, Any] = {
        "api": "InferenceX /api/v1/benchmarks",
        "row_id": rid_raw,
        "query_url": meta.get("query_url"),
        "retrieved_at": meta.get("retrieved_at"),
        "power_valid": m.get("power_valid"),
    }
    for k in (
        "date",
        "run_url",
        "recipe_fingerprint",
        "curve_date",
        "curve_workflow_run_id",
        "curve_run_started_at",
        "disagg",
        "is_multinode",
        "num_prefill_gpu",
        "num_decode_gpu",
        "prefill_tp",
        "prefill_ep",
        "prefill_dp_attention",
        "prefill_num_workers",
        "decode_tp",
        "decode_ep",
        "decode_dp_attention",
        "decode_num_workers",
        "spec_method",
        "offload_mode",
        "benchmark_type",
        "precision",
    ):
        if isinstance(row.get(k), (str, int, float, bool)) or row.get(k) is None:
            sub[k] = row.get(k)
    for k, v in m.items():
        if k.startswith(("joules_per", "avg_", "total_gpu", "prefill_", "decode_", "kv_", "router_")) and isinstance(
            v, (str, int, float, bool)
        ):
            sub[k] = v
    model = meta.get("requested_model") if meta.get("raw_model") == row["model"] and meta.get("requested_model") else str(row["model"])
    return {
        "id": rid,
        "type": "benchmark",
        "name": f"InferenceX {model} on {hw} ({framework}, {row.get('precision')}), conc {row['conc']}, ISL {row['isl']}/OSL {row['osl']}",
        "status": "draft",
        "confidence": 0.6 if count is None else 0.75,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes),
        "engine_id": eid,
        "accelerator_ids": found if len(found) == 1 else [],
        "accelerator_count": count,
        "accelerator_alternates": found if len(found) > 1 else [],
        "hardware_raw": hw,
        "model": model,
        "model_id": M.resolve_model(model, models),
        "format_id": format_id,
        "metric": "total_tok_s",
        "value": head,
        "unit": "tok/s",
        "value_scope": "per-device",
        "scenario": "online-serving",
        "conditions": conditions,
        "condition_gaps": gaps,
        "metrics": metrics,
        "environment": env,
        "submission": sub,
        "methodology": "InferenceX CI benchmark point (one serving configuration at one concurrency), read from the public API; "
        "tput_per_gpu = (input + output) tok/s divided by all GPUs of the run.",
        "measured_by": "third_party",
        "power_w": m.get("avg_power_w") if power_ok else None,
        "power_scope": "device" if power_ok else None,
        "energy_basis": f"GPU power averaged over the run, power_metric_schema_version {m.get('power_metric_schema_version')}"
        if power_ok
        else None,
        "provenance": [
            {
                "date": today(),
                "tag": "intake-inferencex",
                "field": "*",
                "action": "import",
                "method": "inferkb.intake.inferencex",
                "evidence": {"field": "id", "quote": rid_raw},
                "basis": "one API row; latencies converted s -> ms",
                "numbers_changed": False,
            }
        ],
    }


@register
class InferenceXImporter(Importer):
    """InferenceX API rows (powerx.json / lookup.json / bare row lists)."""

    name = FORMAT
    description = "InferenceX dashboard API benchmark rows (per-GPU rates, latency percentiles, energy)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per row of every file; contradictions and skips are reported as findings."""
        result = IntakeResult(
            stats={
                "format": FORMAT,
                "imported": 0,
                "rows": 0,
                "skipped": {},
                "unresolved_hardware": {},
                "engine_notes": {},
                "count_contradictions": 0,
            }
        )
        engines, formats, models = M.engine_alias_index(kb), M.format_index(kb), M.model_index(kb)
        for path in paths:
            raw = read_input(path)
            rows, meta = extract_rows(load_json(path, raw), str(path))
            result.stats["rows"] += len(rows)
            if not rows:
                result.findings.append(KB1113.finding("the file holds no API rows (empty result)", path=str(path)))
                continue
            sources = resolve_sources(kb, options, path, raw, FORMAT, result.records)
            for row in rows:
                if not isinstance(row, dict):
                    raise InputError(f"an API row is a JSON {type(row).__name__}, expected an object", path=str(path))
                rec = build_record(kb, row, meta, sources, str(path), result, engines, formats, models)
                if rec is not None:
                    result.records.insert(result.stats["imported"], rec)
                    result.stats["imported"] += 1
        result.stats["count_contradictions"] = sum(1 for f in result.findings if f.code == "KB1112")
        for hw, n in result.stats["unresolved_hardware"].items():
            result.findings.append(
                KB1103.finding(f"hardware {hw!r} ({n} rows) resolves to no single accelerator id", path=str(paths[0]), field="hardware")
            )
        for note, n in result.stats["engine_notes"].items():
            result.findings.append(KB1114.finding(f"{note} ({n} rows)", path=str(paths[0]), field="framework"))
        return result
