"""``mlperf``: an MLPerf Inference results table (``summary.csv``) -> one benchmark record per LLM row.

Also accepts a LoadGen ``mlperf_log_summary.txt`` and a v6.x ``result_summary.json``
(see :mod:`inferkb.intake.mlperf_loadgen`); :meth:`MLPerfImporter.parse` sniffs which.

The importer is three modules along the row's way: :mod:`inferkb.intake.mlperf_table`
reads rows (layouts, :data:`REQUIRED_COLUMNS`, :func:`iter_rows`, cell numbers and
ids), :mod:`inferkb.intake.mlperf_hardware` resolves a row's accelerators and
count, :mod:`inferkb.intake.mlperf_submission` builds its ``submission`` block and
submission source; this module builds the record and drives the import. The
reader streams: :func:`iter_rows` consumes lines one at a time and
:func:`iter_records` yields one record per row, so memory does not grow with the
file (only the result list does).

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

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import mlperf_base_models, mlperf_rules, mlperf_weight_formats
from . import mlperf_maps as M
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today
from .common import KB1103
from .mlperf_hardware import row_hardware
from .mlperf_submission import submission_block, submission_source
from .mlperf_table import REQUIRED_COLUMNS, V61_COLUMNS, iter_rows, table_layout
from .mlperf_table import bounded_id as _bounded_id
from .mlperf_table import cell_number as _num
from .table_rules import KB1111, KB1113, KB1114, KB1115

if TYPE_CHECKING:
    from ..kb import KB

FORMAT = "mlperf"


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

    gaps: dict[str, dict[str, Any]] = {}
    hw = row_hardware(ctx, row, key, notes, gaps)
    acc_ids, alternates, hardware_raw, count, nodes = hw.acc_ids, hw.alternates, hw.hardware_raw, hw.count, hw.nodes

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
    sources.append(submission_source(ctx, rnd, division, org, platform))
    if outcome:
        sources.extend(s for s in outcome.source_ids if s not in sources)
    submission, cap = submission_block(ctx, line, row, hw, wdt, outcome, notes)
    confidence = min(confidence, cap)
    used_model = (row.get("UsedModel") or "").strip()
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
    "V61_COLUMNS",
    "iter_rows",
    "iter_records",
    "import_table",
    "build_record",
    "TableContext",
    "table_layout",
    "MLPerfImporter",
    "REQUIRED_COLUMNS",
]
