"""``mlperf``: an MLPerf Inference results table (``summary.csv``) -> one benchmark record per LLM row.

Also accepts a LoadGen ``mlperf_log_summary.txt`` and a v6.x ``result_summary.json``
(see :mod:`inferkb.intake.mlperf_loadgen`); :meth:`MLPerfImporter.parse` sniffs which.

Table layouts (FORMATS.md section 4, corpus ``mlperf/SOURCES.md``): the v6.1
round-wide table has 31 columns including ``total_accelerators`` and
``weight_data_types``; the v4.1 per-submitter table has 27 and lacks them.
Both share :data:`REQUIRED_COLUMNS`. The reader streams: :func:`iter_rows`
consumes lines one at a time and :func:`iter_records` yields one record per
row, so memory does not grow with the file (only the result list does).

Record shape per row: metric from the ``Units`` column (Tokens/s ->
``output_tok_s``; Samples/s -> ``samples_per_s``; Queries/s ->
``request_throughput_rps``; Latency (ms|s) -> ``e2e_latency_ms``), value as
stated (latency in s converted to ms), ``value_scope`` per-system for rates and
per-request for latencies, ``accelerator_count`` = number_of_nodes x
accelerators_per_node, accuracy pairs from the ``Accuracy`` column, the MLPerf
context in ``submission``, and two sources: the table and the submission
directory (``<division>/<org>/results/<platform>``) in the results repository.
``format_id`` is the table's ``weight_data_types``, except where the evidence
map of :mod:`inferkb.intake.mlperf_weight_formats` says the submission's own
harness config contradicts it (v4.1 TensorRT ``fp16`` rows whose config sets
``use_fp8 = True``): those get what ``derive mlperf-weight-format`` writes
(null with a ``condition_gaps.format_id`` reason, and its provenance entries).
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..resolve import resolve
from . import mlperf_base_models, mlperf_rules, mlperf_weight_formats
from . import mlperf_maps as M
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today
from .common import KB1103
from .table_rules import KB1111, KB1112, KB1113, KB1114, KB1115

if TYPE_CHECKING:
    from ..kb import KB

FORMAT = "mlperf"
REQUIRED_COLUMNS = (
    "Organization",
    "Availability",
    "Division",
    "SystemType",
    "SystemName",
    "Platform",
    "Model",
    "MlperfModel",
    "Scenario",
    "Result",
    "Accuracy",
    "number_of_nodes",
    "host_processor_model_name",
    "accelerator_model_name",
    "accelerators_per_node",
    "Location",
    "framework",
    "operating_system",
    "version",
    "inferred",
    "Units",
)
V61_COLUMNS = ("total_accelerators", "weight_data_types")
REPO_URL = "https://github.com/mlcommons/inference_results_{round}"


def iter_rows(lines: Iterable[str], *, path: str = "<table>") -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, row)`` for each data row of a summary.csv text stream.

    ``lines`` is any iterator of text lines (a file opened with ``newline=""``);
    quoted newlines inside a field are joined by the csv module. Raises
    :class:`InputError` when the header lacks a required column (naming the
    expected and found columns), when a row has more or fewer fields than the
    header, or when the text is not UTF-8 (the decode error surfaces here).
    """
    reader = csv.reader(lines)
    try:
        header = next(reader, None)
        if header is None:
            raise InputError("file is empty", path=path)
        header = [h.strip().lstrip("\ufeff") for h in header]
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise InputError(
                f"not an MLPerf summary.csv: missing columns {', '.join(missing)}; expected {', '.join(REQUIRED_COLUMNS)}; "
                f"found {', '.join(header[:40]) or 'no columns'}",
                path=path,
                field=missing[0],
            )
        width = len(header)
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != width:
                raise InputError(f"row at line {reader.line_num} has {len(fields)} fields, the header has {width}", path=path)
            yield reader.line_num, dict(zip(header, fields, strict=True))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} near line {reader.line_num + 1})", path=path) from None
    except csv.Error as exc:
        raise InputError(f"CSV syntax error near line {reader.line_num}: {exc}", path=path) from None


def table_layout(header: list[str]) -> str:
    """``"v6.1"`` when the header has the v6.x-only columns, else ``"v4.1"`` (the older 27-column layout)."""
    return "v6.1" if all(c in header for c in V61_COLUMNS) else "v4.1"


def _num(text: str) -> float | None:
    try:
        value = float(text.strip())
    except (ValueError, AttributeError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def _int(text: str) -> int | None:
    value = _num(text)
    return int(value) if value is not None and value.is_integer() else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _bounded_id(*parts: str) -> str:
    """Kebab id from ``parts``; ids over 120 chars are cut and get a hash suffix so they stay unique."""
    rid = "-".join(p for p in (_slug(x) for x in parts) if p)
    if len(rid) > 120:
        rid = rid[:110].strip("-") + "-" + hashlib.sha1(rid.encode()).hexdigest()[:8]
    return rid


class TableContext:
    """Per-import state: the KB, round, commit, caches, counters and findings."""

    def __init__(self, kb: KB, options: IntakeOptions, path: str) -> None:
        self.kb = kb
        self.options = options
        self.path = path
        self.commit: str | None = options.extra.get("mlperf_commit")
        self.table_source: str | None = options.source
        self.findings: list = []
        self.skipped: dict[str, int] = {}
        self.unresolved: dict[str, int] = {}
        self.cpu_only = 0
        self.engine_notes: dict[str, int] = {}
        self.sources: dict[str, dict[str, Any]] = {}
        self.engine_index = M.engine_alias_index(kb)
        self.format_index = M.format_index(kb)
        self.format_ids = frozenset(kb.ids_of_type("quantization"))
        self.model_index = M.model_index(kb)
        self.model_ids = kb.ids_of_type("model")
        self.ids: set[str] = set()
        self.layout = "v6.1"
        self.repo_url: str | None = options.extra.get("mlperf_repo_url")


def _skip(ctx: TableContext, reason: str) -> None:
    ctx.skipped[reason] = ctx.skipped.get(reason, 0) + 1


def system_label(org: str, system: str) -> str:
    """``"<submitter> <system name>"`` for a record name, without repeating the submitter when the system name
    already starts with it: (``"NVIDIA"``, ``"NVIDIA DGX H100"``) -> ``"NVIDIA DGX H100"``; (``"Krai"``,
    ``"xe9680_mi300x"``) -> ``"Krai xe9680_mi300x"``. Case-insensitive, whole words only."""
    org, system = org.strip(), system.strip()
    if not org or system.lower() == org.lower() or system.lower().startswith(org.lower() + " "):
        return system
    return f"{org} {system}"


def _submission_source(ctx: TableContext, rnd: str, division: str, org: str, platform: str) -> str:
    sid = _bounded_id("mlperf", rnd, division, org, platform)
    if sid in ctx.sources or sid in ctx.kb.ids_of_type("source"):
        ctx.sources.setdefault(sid, {})
        return sid
    rel = f"{division}/{org}/results/{platform}"
    base = REPO_URL.format(round=rnd)
    ctx.sources[sid] = {
        "id": sid,
        "type": "source",
        "name": f"MLPerf Inference {rnd} {division} submission: {org} {platform}",
        "url": f"{base}/tree/{ctx.commit or 'main'}/{rel}",
        "publisher": f"MLCommons / {org}",
        "kind": "benchmark",
        "published": None,
        "accessed": today(),
        "archived_url": None,
        "status": "verified",
        "confidence": 0.9,
        "updated": today(),
        "sources": [],
        "notes": f"Results directory of one MLPerf Inference {rnd} submission (system {platform}); "
        f"one subdirectory per model and scenario with the LoadGen logs behind each summary.csv row.",
    }
    return sid


def build_record(ctx: TableContext, line: int, row: dict[str, str]) -> dict[str, Any] | None:
    """One benchmark record for an LLM row, or ``None`` (the skip is counted in ``ctx.skipped``)."""
    kind = M.model_kind(row["MlperfModel"], row["Model"])
    if kind != "llm":
        _skip(ctx, kind)
        return None
    rnd = (row.get("version") or "").strip() or "unknown"
    division, org, platform = row["Division"].strip(), row["Organization"].strip(), row["Platform"].strip()
    scenario = M.SCENARIOS.get(row["Scenario"].strip().lower())
    value = _num(row["Result"])
    key = f"row {line}" if ctx.layout == "summary_results.json" else f"summary.csv line {line}"
    if value is None or value <= 0:
        _skip(ctx, "unusable-result-value")
        ctx.findings.append(
            KB1115.finding(f"{key}: Result {row['Result']!r} is not a positive number; row not imported", path=ctx.path, field="Result")
        )
        return None
    units = row["Units"].strip()
    metric, unit, scope, value, unit_note = M.metric_for(units, value)
    status, confidence = "verified", 0.9
    notes: list[str] = []
    if metric in ("samples_per_s", "request_throughput_rps") and M.is_text_llm(row["MlperfModel"]):
        ctx.findings.append(
            KB1111.finding(
                f"{key}: {row['Model']} {row['Scenario']} states Units {units!r} but MLPerf reports LLM throughput in tokens/s; "
                f"metric left null",
                path=ctx.path,
                field="Units",
                extra={"candidates": [metric, "output_tok_s"], "value": value},
            )
        )
        notes.append(
            f"The table states Units {units!r} for an LLM result that MLPerf reports in tokens/s; the metric "
            f"is undetermined (candidates: {metric}, output_tok_s)."
        )
        metric, unit, status, confidence = None, units, "contested", 0.5
    elif metric in ("samples_per_s", "request_throughput_rps"):
        notes.append(f"A vision-language result in {units}: a sample/query rate, not a token rate.")
    if unit_note:
        notes.append(unit_note)
    rid = _bounded_id("mlperf", rnd, division, org, platform, row["Model"], row["Scenario"])
    if rid in ctx.ids:
        rid = _bounded_id(rid, str(line))
    ctx.ids.add(rid)
    rules = mlperf_rules.load(rnd)
    outcome = mlperf_rules.apply(rules, row["MlperfModel"], row["Scenario"]) if rules else None

    # Hardware: exact string, then (heterogeneous systems) every part must resolve.
    raw_acc = row["accelerator_model_name"].strip()
    nodes, per_node = _int(row["number_of_nodes"]), _int(row["accelerators_per_node"])
    total = _int(row.get("total_accelerators") or "")
    acc_ids: list[str] = []
    alternates: list[str] = []
    hardware_raw: str | None = raw_acc
    count = nodes * per_node if nodes and per_node else None
    gaps: dict[str, dict[str, Any]] = {}
    if raw_acc.upper() in ("N/A", "") or not per_node:
        ctx.cpu_only += 1
        hardware_raw, count = None, None
        notes.append(f"CPU-only system: accelerator_model_name {raw_acc!r}, accelerators_per_node {row['accelerators_per_node']!r}.")
        gaps["accelerator_count"] = {
            "reason": "CPU-only system: the table names no accelerator",
            "checked": ["accelerator_model_name", "accelerators_per_node"],
        }
    else:
        res = resolve(ctx.kb, "accelerator", raw_acc)
        found = list(res.ids) if res.how != "parts" else []
        if res.resolved:
            acc_ids = found
        elif not found:
            parts = M.split_heterogeneous(raw_acc)
            per_part = [resolve(ctx.kb, "accelerator", p) for p in parts] if len(parts) > 1 else []
            if len(parts) == 1 and parts[0] != raw_acc:
                # one part with a stated device count, "... (x87)": look the part up without it
                part = resolve(ctx.kb, "accelerator", parts[0])
                found = list(part.ids) if part.how != "parts" else []
                acc_ids = [part.id] if part.resolved else []
            elif per_part and all(r.resolved for r in per_part):
                acc_ids = list(dict.fromkeys(r.id for r in per_part))
                notes.append(
                    f"Heterogeneous system: {raw_acc!r} names {len(parts)} accelerator types; "
                    f"accelerator_count is the total over all of them."
                )
        if not acc_ids:
            alternates = found
            ctx.unresolved[raw_acc] = ctx.unresolved.get(raw_acc, 0) + 1
            gaps["accelerator_count"] = {
                "reason": f"accelerator string {raw_acc!r} resolves to "
                + (f"several parts ({', '.join(found)})" if found else "no accelerator id of this KB"),
                "checked": ["accelerator_model_name"],
            }
        stated = M.stated_part_count(raw_acc)
        if total is not None and count is not None and total != count:
            ctx.findings.append(
                KB1112.finding(
                    f"{key}: number_of_nodes x accelerators_per_node = {count} but total_accelerators = {total}; count left null",
                    path=ctx.path,
                    field="total_accelerators",
                    extra={"candidates": [count, total]},
                )
            )
            gaps["accelerator_count"] = {
                "reason": f"nodes x per-node ({count}) contradicts total_accelerators ({total})",
                "checked": ["number_of_nodes", "accelerators_per_node", "total_accelerators"],
            }
            count = None
        elif stated is not None and count is not None and stated != count:
            ctx.findings.append(
                KB1112.finding(
                    f"{key}: number_of_nodes x accelerators_per_node = {count} but accelerator_model_name says x{stated}; count left null",
                    path=ctx.path,
                    field="accelerator_model_name",
                    extra={"candidates": [count, stated]},
                )
            )
            gaps["accelerator_count"] = {
                "reason": f"nodes x per-node ({count}) contradicts the '(x{stated})' in accelerator_model_name",
                "checked": ["number_of_nodes", "accelerators_per_node", "accelerator_model_name"],
            }
            count = None

    framework = row["framework"].strip()
    engine_id, engine_version, engine_note = M.match_engine(framework, ctx.engine_index)
    if engine_note:
        ctx.engine_notes[engine_note] = ctx.engine_notes.get(engine_note, 0) + 1
        notes.append(engine_note[0].upper() + engine_note[1:] + ".")

    wdt = (row.get("weight_data_types") or "").strip()
    format_id, format_reason = M.match_format(wdt, ctx.format_index)
    if format_id is None:
        gaps["format_id"] = {"reason": format_reason, "checked": ["weight_data_types"] if "weight_data_types" in row else []}

    stated_conditions: dict[str, Any] = {"engine_version": engine_version}
    if outcome:
        stated_conditions.update(outcome.conditions)
    conditions = {k: stated_conditions.get(k) for k in CONDITION_KEYS}
    for cond, gap in mlperf_rules.condition_gaps(rules, row["MlperfModel"], row["Scenario"], outcome).items():
        if conditions.get(cond) is None:
            gaps[cond] = gap
    if engine_version is None:
        gaps["engine_version"] = {"reason": "the framework column names no version for a single engine", "checked": ["framework"]}

    sources = [ctx.table_source] if ctx.table_source else []
    sources.append(_submission_source(ctx, rnd, division, org, platform))
    if outcome:
        sources.extend(s for s in outcome.source_ids if s not in sources)
    location = row["Location"].strip().lstrip("./")
    base = ctx.repo_url or REPO_URL.format(round=rnd)
    scenario_inferred = row["inferred"].strip() in ("1", "True", "true")
    tokens_inferred = bool(outcome and outcome.constraints.get("token_latencies") == "inferred")
    submission = {
        "suite": "MLPerf Inference",
        "round": rnd,
        "division": division,
        "availability": row["Availability"].strip(),
        "system_type": row["SystemType"].strip(),
        "submitter": org,
        "system_name": row["SystemName"].strip(),
        "platform": platform,
        "mlperf_model": row["MlperfModel"].strip(),
        "scenario_raw": row["Scenario"].strip(),
        "result_raw": row["Result"].strip(),
        "units_raw": units,
        "scenario_inferred": scenario_inferred,
        "tokens_inferred": tokens_inferred,
        "results_path": location,
        "results_url": f"{base}/tree/{ctx.commit or 'main'}/{location}",
        "number_of_nodes": nodes,
        "accelerators_per_node": per_node,
        "total_accelerators": total,
        "weight_data_types": wdt or None,
        "table_line": line,
        "table_layout": ctx.layout,
    }
    used_model = (row.get("UsedModel") or "").strip()
    if used_model and used_model != row["MlperfModel"].strip():
        submission["used_model"] = used_model
    if scenario_inferred:
        # submission_checker.py @0009b1e3: 'inferred' is True when the result is computed from a LoadGen run of another
        # scenario (Offline from SingleStream/MultiStream, MultiStream from SingleStream), never about token counts.
        if row["Scenario"].strip().lower() == "interactive":
            notes.append(
                "The table's 'inferred' flag is 1, as on every Interactive row: the results folder's scenario (Interactive) "
                "differs from the one LoadGen ran (a Server run under the Interactive limits); the value is that run's own "
                "rate. The checker version that sets the flag for this pair was not read."
            )
        else:
            notes.append(
                "The table's 'inferred' flag is 1: in the submission checker this means the result was computed from a "
                "LoadGen run of another scenario (which one is in the run's mlperf_log_detail.txt), not that tokens were inferred."
            )
            confidence = min(confidence, 0.8)
    if tokens_inferred:
        notes.append(
            "LoadGen infers this benchmark's token counts (infer_token_latencies) instead of counting the tokens the system returned."
        )
        confidence = min(confidence, 0.8)
    # Open division may change the model (retrain, prune, quantise freely): the benchmark name does not identify it.
    model_id = M.resolve_model(row["Model"], ctx.model_index) if division == "closed" else None
    if division != "closed":
        notes.append(
            f"{division.capitalize()} division: the model may differ from the {row['Model']} reference"
            + (f" (used: {used_model})" if used_model and used_model != row["MlperfModel"].strip() else "")
            + "; never ranked with closed results."
        )
        gaps["model"] = {
            "reason": f"{division} division allows a modified model (pruned, retrained, requantised); the table names only the "
            f"benchmark ({row['Model']!r}) and the submitter's model label",
            "checked": ["Model", "UsedModel"] if used_model else ["Model"],
        }
    rec: dict[str, Any] = {
        "id": rid,
        "type": "benchmark",
        "name": f"MLPerf Inference {rnd} {division}: {system_label(org, row['SystemName'])}, {row['Model']} {row['Scenario']}",
        "status": status,
        "confidence": confidence,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes) or None,
        "origin": "mlperf-inference",
        "engine_id": engine_id,
        "accelerator_ids": acc_ids,
        "accelerator_count": count,
        "accelerator_alternates": alternates,
        "hardware_raw": hardware_raw,
        "model": row["Model"].strip() if division == "closed" else None,
        "model_id": model_id,
        "format_id": format_id,
        "metric": metric,
        "value": value,
        "unit": unit,
        "value_scope": scope,
        "scenario": scenario,
        "conditions": conditions,
        "condition_gaps": gaps,
        "constraints": outcome.constraints if outcome else {"basis": "benchmark rules", "rules": None},
        "environment": M.environment(framework, row["operating_system"], row["host_processor_model_name"], engine_version),
        "accuracy": M.parse_accuracy(row["Accuracy"]),
        "submission": submission,
        "methodology": f"MLPerf Inference {rnd} {division} division, {row['Scenario']} scenario, run under LoadGen and "
        f"published in the round's results table; value copied as stated ({units}).",
        "measured_by": None,
        "reproducible": None,
        "provenance": [
            {
                "date": today(),
                "tag": "intake-mlperf",
                "field": "*",
                "action": "import",
                "method": f"inferkb.intake.mlperf, {ctx.layout} table layout, line {line}",
                "evidence": {"field": "Location", "quote": row["Location"].strip()},
                "basis": "one results-table row; numbers copied, units normalised only where stated",
                "numbers_changed": False,
            }
        ],
    }
    if outcome:
        rec["provenance"].extend({**p, "date": today()} for p in outcome.provenance)
    # Open division: the submitter's label may name the published model the result was derived from (base_model_id).
    match = mlperf_base_models.fill(rec, ctx.model_ids, today())
    if match is not None and match.model_id is None:
        ctx.findings.append(mlperf_base_models.finding(match, record=f"benchmarks/{rid}", path=ctx.path, field="UsedModel"))
    # The table's weight type where the submission's own harness config contradicts it (the derivation's map and rule).
    mlperf_weight_formats.fill(rec, ctx.format_ids, today())
    power, power_units = _num(row.get("Power_Result") or ""), (row.get("Power_Units") or "").strip()
    if power is not None and power_units.lower() == "watts" and nodes == 1:
        rec["power_w"] = power
        rec["power_scope"] = "node"
        rec["energy_basis"] = "MLPerf Power: average system power over the run, measured at the wall (Power_Result, Watts)"
    elif power is not None:
        submission["power_result"] = power
        submission["power_units"] = power_units or None
    return rec


def iter_records(lines: Iterable[str], ctx: TableContext) -> Iterator[dict[str, Any]]:
    """Stream benchmark records (sources are collected in ``ctx.sources``) from summary.csv lines."""
    first = True
    for line, row in iter_rows(lines, path=ctx.path):
        if first:
            ctx.layout = table_layout(list(row))
            first = False
        rec = build_record(ctx, line, row)
        if rec is not None:
            yield rec


def finish(ctx: TableContext, result: IntakeResult, imported: int, rows: int | None = None) -> None:
    """Fill ``result.stats`` and the summary findings after a table import."""
    for raw, n in sorted(ctx.unresolved.items()):
        result.findings.append(
            KB1103.finding(
                f"accelerator string {raw!r} ({n} rows) resolves to no single accelerator id; kept in hardware_raw",
                path=ctx.path,
                field="accelerator_model_name",
            )
        )
    for note, n in sorted(ctx.engine_notes.items()):
        result.findings.append(KB1114.finding(f"{note} ({n} rows)", path=ctx.path, field="framework"))
    if ctx.skipped:
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(ctx.skipped.items()))
        result.findings.append(
            KB1113.finding(f"{sum(ctx.skipped.values())} rows not imported ({detail})", path=ctx.path, extra={"skipped": dict(ctx.skipped)})
        )
    result.findings.extend(ctx.findings)
    result.stats = {
        "format": FORMAT,
        "layout": ctx.layout,
        "imported": imported,
        "skipped": dict(sorted(ctx.skipped.items())),
        "unresolved_hardware": dict(sorted(ctx.unresolved.items())),
        "unresolved_hardware_rows": sum(ctx.unresolved.values()),
        "cpu_only_rows": ctx.cpu_only,
        "engine_unresolved_rows": sum(ctx.engine_notes.values()),
        "sources_created": sum(1 for s in ctx.sources.values() if s),
    }


def import_table(kb: KB, lines: Iterable[str], options: IntakeOptions, *, path: str = "<table>") -> IntakeResult:
    """Build records from summary.csv ``lines``; returns benchmark records followed by new source records."""
    ctx = TableContext(kb, options, path)
    result = IntakeResult()
    result.records = list(iter_records(lines, ctx))
    imported = len(result.records)
    result.records.extend(s for s in ctx.sources.values() if s)
    finish(ctx, result, imported)
    return result


@register
class MLPerfImporter(Importer):
    """MLPerf Inference: a round's ``summary.csv``, a LoadGen ``mlperf_log_summary.txt`` or a v6.x ``result_summary.json``."""

    name = FORMAT
    description = "MLPerf Inference summary.csv (v4.1/v6.1 layouts), LoadGen mlperf_log_summary.txt, v6.x result_summary.json"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Sniff each file's kind from its first bytes and import it; results of several files are concatenated."""
        from . import mlperf_loadgen

        total = IntakeResult()
        for path in paths:
            head = _head(path)
            if head.lstrip().startswith(b"{"):
                res = mlperf_loadgen.import_result_summary(kb, path, options)
            elif b"," in head.split(b"\n", 1)[0] and b"Organization" in head.split(b"\n", 1)[0]:
                with open(path, encoding="utf-8", newline="") as fh:
                    res = import_table(kb, fh, options, path=str(path))
            else:
                res = mlperf_loadgen.import_summary_text(kb, path, options)
            total.records.extend(r for r in res.records if r["id"] not in {x["id"] for x in total.records})
            total.findings.extend(res.findings)
            total.stats = res.stats if len(paths) == 1 else {**total.stats, str(path): res.stats}
        from .distinct_names import apply_to

        apply_to([r for r in total.records if r.get("type") == "benchmark"])
        return total


def _head(path: Path) -> bytes:
    """The first 4 KiB of ``path``, read through :func:`read_input` (missing, empty, directory, FIFO: InputError)."""
    return read_input(path)[:4096]


__all__ = [
    "iter_rows",
    "iter_records",
    "import_table",
    "build_record",
    "TableContext",
    "table_layout",
    "MLPerfImporter",
    "REQUIRED_COLUMNS",
]
