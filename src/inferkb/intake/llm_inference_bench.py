"""Importer ``llm-inference-bench``: Argonne's LLM-Inference-Bench dashboard CSVs -> one benchmark record per row.

Input: the ``All_results.csv`` files of the dashboard (``Throughput``,
``Best_Hardware_and_Framework``, ``KV_Cache``, ``KV_Cache_Block_Size``,
``KV_Cache_Dtype``, ``Parallelism``, ``Perplexity``, ``Power``,
``Speculative_Decoding``) and the paper's ``Plots/Fig_22/all_results_TTFT_ITL.csv``
(paper arXiv:2411.00136). Header names are stripped (Fig 22 has
``"end_latency "``) and blank lines skipped.

What a row says and how it is read (corpus ``community/SOURCES.md``):

- ``Input Output Length``: one value used as both input and output length
  (``conditions.input_tokens`` = ``output_tokens``); Fig 22 has separate columns;
- ``Latency``: seconds, end to end for the whole batch -> ``e2e_latency_ms``
  (x1000), ``value_scope`` ``aggregate``;
- ``Throughput``: tokens/s with no stated basis. The importer proves the basis
  row by row: when ``Batch Size x 2 x length / Latency`` reproduces it within
  1 % it is input + output tokens of the batch (``total_tok_s``, aggregate);
  when ``2 x length / Latency`` does (every llama.cpp row) it counts one
  sequence's tokens (``total_tok_s``, ``per-request``) whatever the batch
  size; otherwise it stays ``tps_aggregate`` with a KB1132 finding and a gap;
- ``avg_power``: no unit; values of the same column differ by 1000x. Where a
  ``Throughput_per_watt_avg`` column exists, the scale (W or mW) is the one
  that reproduces it; otherwise a physical bound decides (the value must fit
  under 1.5 x the device count x the largest TDP of the candidate parts); a
  value neither proves stays null (KB1130). The power's scope (device, node)
  is not stated, so ``power_scope`` stays null;
- ``Perplexity`` -> ``accuracy``; the variant columns (KV cache on/off, block
  size, weight/KV dtypes, parallelism type, speculative model) -> the arm's
  ``config``; ``Parallelism Type`` sets TP/PP/EP to the device count it names.

Rows that repeat a row of an earlier file in the same call (same key
columns, same Latency and Throughput text) are skipped (KB1131): the dashboard
views re-publish the main table. Rows that repeat one run at another printed
precision (``261.9463347`` vs ``261.946334709452``) are imported and linked by
``same_measurement_as`` (rule in :mod:`inferkb.intake.lib_links`, the one the
derivation ``same-measurement`` applies). Rows of one file that agree in every
column but the measured ones are repeated measurements of one configuration:
each gets ``repeat_group`` (rule in :mod:`inferkb.intake.repeats`, the one the
derivation ``repeat-group`` applies). Engine versions and warmup are not stated
anywhere in these files: gaps. Hardware names are generic (``Nvidia A100 GPU``
does not say 40/80 GB or SXM/PCIe): they resolve through aliases or the
orchestrator's ``hardware_map``; an ambiguous name lists the candidates.

Weight format: the ``KV Cache Dtype`` column's ``Weight = ...`` first; else the
run script of the row's (table, framework, hardware) group, through the map of
:mod:`inferkb.intake.llm_inference_bench_formats` (the one the derivation
``llm-inference-bench-format`` uses), and only for a row inside that script's
loops; a row outside them keeps null with a gap naming the script checked.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from . import dataset as D
from . import lib_links, repeats
from . import llm_inference_bench_formats as F
from . import mlperf_maps as M
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today

if TYPE_CHECKING:
    from ..kb import KB

FMT = "llm-inference-bench"
ORIGIN = "llm-inference-bench"
BASE_COLUMNS = ("Hardware", "Num of Hardware", "Framework", "Model", "Batch Size")
FRAMEWORKS = {
    "vLLM": "vllm",
    "TensorRT-LLM": "tensorrt-llm",
    "llama.cpp": "llama-cpp",
    "Deepspeed": "deepspeed",
    "Deepspeed-MII": "deepspeed-mii",
    "sambaflow": "sambaflow",
}
VARIANT_COLUMNS = {
    "KV Cache": "kv_cache",
    "KV Cache Block_size": "kv_cache_block_size",
    "KV Cache Dtype": "weight_and_kv_cache_dtype",
    "Parallelism Type": "parallelism",
    "speculative model": "speculative_model",
    "num speculative tokens": "num_speculative_tokens",
    "speculative_decoding": "speculative_decoding",
}
PARALLELISM = {
    "Tensor Parallelism": {"tensor_parallel": None},
    "Pipeline Parallelism": {"pipeline_parallel": None},
    "Expert Parallelism": {"expert_parallel": None},
    "Tensor (2) and Expert (2) Parallelism": {"tensor_parallel": 2, "expert_parallel": 2},
}
WEIGHT_FORMATS = {"fp16": "fp16", "int8_sq": "int8-w8a8"}
REL_TOL = 0.01
CHECKED = ["the CSV row", "the CSV header", "community/SOURCES.md"]


def read_table(raw: bytes, path: Path) -> tuple[str, list[dict[str, str]]]:
    """``(kind, rows)``: kind ``"throughput"`` (one length column) or ``"ttft"`` (Fig 22); raises InputError otherwise."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"byte at offset {exc.start} is not UTF-8", path=str(path)) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError("empty CSV", path=str(path)) from None
    missing = [c for c in BASE_COLUMNS if c not in header]
    if "Input Output Length" in header and "Latency" in header:
        kind = "throughput"
    elif {"Input Length", "Output Length", "TTFT Latency"} <= set(header):
        kind = "ttft"
    else:
        missing.append("Input Output Length + Latency (or Input Length, Output Length, TTFT Latency)")
        kind = ""
    if missing:
        raise InputError(
            f"not an LLM-Inference-Bench CSV: missing column(s) {', '.join(missing)}; header is {', '.join(header)}",
            path=str(path),
            field=missing[0],
        )
    rows = []
    for values in reader:
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) > len(header):
            raise InputError(f"line {reader.line_num}: {len(values)} values for {len(header)} columns", path=str(path))
        # A row cut short (Fig 22's GH200 rows lack end_latency) leaves its trailing columns empty.
        values = values + [""] * (len(header) - len(values))
        row = dict(zip(header, (v.strip() for v in values), strict=True))
        row["_line"] = str(reader.line_num)
        rows.append(row)
    if not rows:
        raise InputError("the CSV has a header but no data rows", path=str(path))
    return kind, rows


def _num(row: dict[str, str], col: str, path: Path, *, required: bool = True) -> float | None:
    text = row.get(col, "")
    if text == "" or text == "None":
        if required:
            raise InputError(f"line {row['_line']}: column {col!r} is empty", path=str(path), field=col)
        return None
    try:
        return C.number(float(text), path, f"line {row['_line']}.{col}", positive=True)
    except ValueError:
        raise InputError(f"line {row['_line']}: {text!r} is not a number", path=str(path), field=col) from None


def _int(row: dict[str, str], col: str, path: Path) -> int:
    x = _num(row, col, path)
    if x is None or not float(x).is_integer():
        raise InputError(f"line {row['_line']}: {row.get(col)!r} is not a whole number", path=str(path), field=col)
    return int(x)


def token_basis(thr: float, latency: float, batch: int, isl: int, osl: int) -> tuple[str, str | None, str]:
    """``(metric, value_scope, basis)`` of a Throughput value, proven from the row (see the module docstring)."""
    per_seq = (isl + osl) / latency
    if abs(batch * per_seq - thr) <= REL_TOL * thr:
        return "total_tok_s", "aggregate", "Throughput = Batch Size x (input + output length) / Latency holds for this row (within 1 %)"
    if abs(per_seq - thr) <= REL_TOL * thr:
        return (
            "total_tok_s",
            "per-request",
            "Throughput = (input + output length) / Latency holds for this row (within 1 %): it counts one sequence's tokens, "
            "not the batch's",
        )
    return "tps_aggregate", None, f"Throughput is {thr / (batch * per_seq):.3g}x Batch Size x (input + output length) / Latency"


def power_watts(row: dict[str, str], thr: float | None, path: Path, tdp_max: float | None, count: int) -> tuple[float | None, str, str]:
    """``(watts or None, how the unit was decided, short verdict)`` for the row's ``avg_power`` (see the module docstring)."""
    raw = _num(row, "avg_power", path, required=False)
    if raw is None:
        return None, "avg_power is empty", "empty"
    tpw = _num(row, "Throughput_per_watt_avg", path, required=False) if "Throughput_per_watt_avg" in row else None
    if tpw is not None and thr:
        for scale, unit in ((1.0, "W"), (1000.0, "mW")):
            if abs(thr / (raw / scale) - tpw) <= 1e-3 * tpw:
                return (
                    raw / scale,
                    f"avg_power {row['avg_power']} read as {unit}: Throughput / (avg_power in W) = Throughput_per_watt_avg",
                    f"{unit}, by Throughput_per_watt_avg",
                )
        return (
            None,
            f"avg_power {row['avg_power']}: neither W nor mW reproduces Throughput_per_watt_avg {row['Throughput_per_watt_avg']}",
            "null, per-watt column fits neither",
        )
    if tdp_max is None:
        return None, f"avg_power {row['avg_power']}: no TDP of the candidate parts bounds its unit", "null, no TDP to bound it"
    bound = 1.5 * tdp_max * count
    if raw > 10 * bound and raw / 1000 <= bound:
        return (
            raw / 1000,
            f"avg_power {row['avg_power']} read as mW: as W it exceeds {count} x {tdp_max:g} W TDP by >10x; /1000 fits under 1.5x",
            "mW, by the TDP bound",
        )
    if raw <= bound:
        return raw, f"avg_power {row['avg_power']} read as W: it fits under 1.5 x {count} x {tdp_max:g} W TDP", "W, by the TDP bound"
    return (
        None,
        f"avg_power {row['avg_power']}: fits neither as W nor as mW under 1.5 x {count} x {tdp_max:g} W TDP",
        "null, fits neither W nor mW",
    )


def _tdp_max(kb: KB, ids: list[str]) -> float | None:
    tdps = []
    for aid in ids:
        rec = kb.resolve(f"accelerators/{aid}")
        tdp = rec.data.get("tdp_w") if rec is not None else None
        if isinstance(tdp, (int, float)) and not isinstance(tdp, bool):
            tdps.append(float(tdp))
    return max(tdps) if tdps else None


class _Context:
    """What every row of one parse call shares: indexes, seen rows, the stats being counted."""

    def __init__(self, kb: KB, options: IntakeOptions, result: IntakeResult) -> None:
        self.kb, self.options, self.result = kb, options, result
        self.models = M.model_index(kb)
        self.engines = set(kb.ids_of_type("engine"))
        self.quant_ids = set(kb.ids_of_type("quantization"))
        self.seen: dict[tuple[str, ...], str] = {}
        self.hardware: dict[str, tuple[list[str], list[str]]] = {}


def _hardware(ctx: _Context, raw: str) -> tuple[list[str], list[str], dict[str, Any] | None]:
    from .base import resolve_accelerator

    entry = D.hardware_from_map(ctx.options, raw)
    if entry is not None:
        return [entry["id"]], [], entry
    if raw not in ctx.hardware:
        ids, alternates, _, _ = resolve_accelerator(ctx.kb, IntakeOptions(), raw)
        ctx.hardware[raw] = (ids, alternates)
    ids, alternates = ctx.hardware[raw]
    if not ids:
        stats = ctx.result.stats["unresolved_hardware"]
        stats[raw] = stats.get(raw, 0) + 1
    return list(ids), list(alternates), None


def row_record(row: dict[str, str], kind: str, path: Path, ctx: _Context, sources: list[str], set_name: str) -> dict[str, Any] | None:
    """One benchmark record for one CSV row, or ``None`` when the row repeats an earlier one (counted)."""
    hw, fw, model = row["Hardware"], row["Framework"], row["Model"]
    count, batch = _int(row, "Num of Hardware", path), _int(row, "Batch Size", path)
    variants = {VARIANT_COLUMNS[c]: row[c] for c in VARIANT_COLUMNS if c in row and row[c] not in ("", "None")}
    if kind == "throughput":
        isl = osl = _int(row, "Input Output Length", path)
        latency = _num(row, "Latency", path)
        thr = _num(row, "Throughput", path, required=False)
        key = (
            hw,
            row["Num of Hardware"],
            fw,
            model,
            row["Input Output Length"],
            row["Batch Size"],
            row["Latency"],
            row.get("Throughput", ""),
        )
    else:
        isl, osl = _int(row, "Input Length", path), _int(row, "Output Length", path)
        latency = _num(row, "end_latency", path, required=False)
        thr = None
        key = ("ttft", hw, row["Num of Hardware"], fw, model, str(isl), str(osl), row["Batch Size"], row["TTFT Latency"])
    where = f"{set_name} line {row['_line']}"
    if key in ctx.seen:
        ctx.result.stats["skipped"]["repeats-earlier-row"] = ctx.result.stats["skipped"].get("repeats-earlier-row", 0) + 1
        ctx.result.findings.append(
            D.KB1131.finding(f"{path.parent.name}/{path.name} rows repeating an earlier file's row; not imported again", path=str(path))
        )
        return None
    ctx.seen[key] = where
    pin = D.pin_for(ctx.options, path)
    ids, alternates, hw_entry = _hardware(ctx, hw)
    gaps: dict[str, Any] = {}
    notes: list[str] = []
    metrics: dict[str, Any] = {}
    if latency is not None:
        metrics["e2e_latency_ms"] = {
            "value": latency * 1000.0,
            "unit": "ms",
            "value_scope": "aggregate",
            "basis": f"{'Latency' if kind == 'throughput' else 'end_latency'} column (s, end to end for the whole batch) x 1000",
        }
    if kind == "ttft":
        ttft = _num(row, "TTFT Latency", path)
        metrics["ttft_ms"] = {"value": ttft * 1000.0, "unit": "ms", "value_scope": "aggregate", "basis": "TTFT Latency column (s) x 1000"}
        metric, value, scope, unit = "ttft_ms", ttft * 1000.0, "aggregate", "ms"
    elif thr is not None and latency is not None:
        metric, scope, basis = token_basis(thr, latency, batch, isl, osl)
        value, unit = thr, "tok/s"
        metrics[metric] = {"value": thr, "unit": "tok/s", "value_scope": scope, "basis": f"Throughput column; {basis}"}
        if metric == "tps_aggregate":
            ctx.result.findings.append(
                D.KB1132.finding(f"{hw} {fw}: Throughput matches neither the batch's nor one sequence's tokens / Latency", path=str(path))
            )
            gaps["token_basis"] = D.gap(
                f"the file does not say which tokens Throughput counts and the row does not reproduce it ({basis})",
                CHECKED,
                "the benchmark scripts of the repository for this framework",
            )
        elif scope == "per-request" and batch > 1:
            notes.append(f"Throughput counts one sequence although Batch Size is {batch}.")
    else:
        metric, value, scope, unit = "e2e_latency_ms", latency * 1000.0 if latency else None, "aggregate", "ms"
        notes.append("The Throughput cell of this row is empty.")
    stated: dict[str, Any] = {"batch_size": batch, "input_tokens": isl, "output_tokens": osl}
    par = PARALLELISM.get(row.get("Parallelism Type", ""))
    if par:
        for k, v in par.items():
            stated[k] = v if v is not None else count
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    gaps["engine_version"] = D.gap(
        "no framework version or commit is given in the data set's CSVs", CHECKED, "the framework's requirements file in the repository"
    )
    gaps["warmup"] = D.gap("the CSVs and the dashboard state no warmup", CHECKED, "the repository's benchmark scripts for this framework")
    gaps["dataset"] = D.gap("the CSVs do not name the prompts used", CHECKED, "the repository's benchmark scripts")
    if count > 1 and not par:
        gaps["tensor_parallel"] = D.gap(
            f"{count} devices are used but the file does not say how the model is split", CHECKED, "the run scripts"
        )
    if not ids:
        gaps["accelerator_ids"] = D.gap(
            f"hardware name {hw!r} does not identify one part"
            + (f" (candidates: {', '.join(alternates)})" if alternates else " and no accelerator record matches it"),
            CHECKED + ["accelerator aliases"],
            "the paper's hardware table (arXiv:2411.00136) or the cluster's node description",
        )
    fmt_id = None
    dtype = row.get("KV Cache Dtype", "")
    if dtype.startswith("Weight = "):
        weight = dtype.split(",")[0].removeprefix("Weight = ").strip()
        fmt_id = WEIGHT_FORMATS.get(weight) if WEIGHT_FORMATS.get(weight) in ctx.kb.ids_of_type("quantization") else None
    if fmt_id is None:
        gaps["format_id"] = D.gap(
            "the weight precision is not stated" if not dtype else f"{dtype!r} does not name one quantization format of this KB",
            CHECKED,
            "the run scripts (dtype / quantization flags)",
        )
    tdp = _tdp_max(ctx.kb, ids or alternates)
    power, power_note = (None, "")
    if "avg_power" in row:
        power, power_note, verdict = power_watts(row, thr, path, tdp, count)
        ctx.result.findings.append(D.KB1130.finding(f"{set_name}: avg_power read as {verdict}", path=str(path)))
        if power is None:
            gaps["power_w"] = D.gap(power_note, CHECKED, "the data set's power-measurement script")
    accuracy = []
    ppl = _num(row, "Perplexity", path, required=False) if "Perplexity" in row else None
    if ppl is not None:
        accuracy.append({"metric": "perplexity", "value": ppl, "target": None, "unit": None})
    eid = FRAMEWORKS.get(fw)
    if eid not in ctx.engines:
        eid = None
        ctx.result.stats["engine_unresolved"][fw] = ctx.result.stats["engine_unresolved"].get(fw, 0) + 1
    short = model.split("/")[-1]
    variant_text = ", ".join(f"{k} {v}" for k, v in variants.items())
    rid = C.make_id(
        "lib", set_name, hw.replace("GPU", ""), f"x{count}", fw, short, f"in{isl}", f"out{osl}", f"bs{batch}", *variants.values()
    )
    sub: dict[str, Any] = {"data_set": "LLM-Inference-Bench (Argonne)", "table": set_name, "line": int(row["_line"])}
    sub.update({k: pin[k] for k in ("repo", "path", "commit") if k in pin})
    sub.update({f"csv_{k}": v for k, v in variants.items()})
    quote = ",".join(v for k, v in row.items() if k != "_line")
    provenance = [
        D.import_entry(
            "intake-llm-inference-bench",
            "inferkb.intake.llm_inference_bench",
            "submission.line",
            quote[:300],
            f"one row of {set_name}; seconds converted to ms; token basis and power unit proven from the row",
        )
    ]
    if hw_entry is not None:
        provenance.append(
            {
                "date": today(),
                "tag": "intake-llm-inference-bench",
                "field": "accelerator_ids",
                "action": "import",
                "method": f"hardware name {hw!r} mapped by the data set's documentation",
                "evidence": hw_entry.get("evidence"),
                "basis": hw_entry.get("basis", "publisher documentation"),
                "numbers_changed": False,
            }
        )
    rec: dict[str, Any] = {
        "id": rid,
        "type": "benchmark",
        "name": f"LLM-Inference-Bench {short} on {count}x {hw}, {fw}, in/out {isl}/{osl}, batch {batch}"
        + (f" ({variant_text})" if variant_text else ""),
        "status": "draft",
        "confidence": 0.6 if metric == "tps_aggregate" or not ids else 0.7,
        "updated": today(),
        "sources": sources,
        "notes": " ".join(notes) or None,
        "engine_id": eid,
        "accelerator_ids": ids,
        "accelerator_count": count,
        "accelerator_alternates": alternates,
        "hardware_raw": hw,
        "model": model,
        "model_id": M.resolve_model(model, ctx.models),
        "format_id": fmt_id,
        "metric": metric,
        "value": value,
        "unit": unit,
        "value_scope": scope,
        "origin": D.origin_for(ctx.options, ORIGIN),
        "scenario": "batch-sweep",
        "conditions": conditions,
        "condition_gaps": gaps,
        "metrics": metrics,
        "environment": {"framework": fw},
        "submission": sub,
        "methodology": "LLM-Inference-Bench (Argonne, arXiv:2411.00136) dashboard row: one batch of synthetic prompts processed to completion; "
        "Latency is the batch's end-to-end time in seconds; the one length column is used for both the input and the output length.",
        "measured_by": "third_party",
        "power_w": power,
        "power_scope": None,
        "energy_basis": f"avg_power of the run, scope not stated; {power_note}" if power is not None else None,
        "provenance": provenance,
    }
    if accuracy:
        rec["accuracy"] = accuracy
    # No weight format in the row: the group's run script may state it (the map the derivation uses too).
    F.fill(rec, ctx.quant_ids, today())
    return rec


@register
class LLMInferenceBench(Importer):
    """Argonne LLM-Inference-Bench dashboard CSVs (and the Fig 22 TTFT CSV) -> one record per row."""

    name = FMT
    description = "Argonne LLM-Inference-Bench dashboard CSVs (All_results.csv, Fig 22 TTFT CSV)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every row of every file, in order; later files' exact repeats are skipped (KB1131)."""
        result = IntakeResult(stats={"imported": 0, "rows": 0, "skipped": {}, "unresolved_hardware": {}, "engine_unresolved": {}})
        ctx = _Context(kb, options, result)
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            kind, rows = read_table(raw, path)
            result.stats["rows"] += len(rows)
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            set_name = path.parent.name if path.stem == "All_results" else path.stem
            for row in rows:
                rec = row_record(row, kind, path, ctx, sources, set_name)
                if rec is not None:
                    bench.append(rec)
        for hw, n in result.stats["unresolved_hardware"].items():
            result.findings.append(C.KB1103.finding(f"hardware {hw!r} ({n} rows) resolves to no single accelerator id", field="Hardware"))
        for fw, n in result.stats["engine_unresolved"].items():
            result.findings.append(C.KB1105.finding(f"framework {fw!r} ({n} rows) is no engine record of this KB; engine_id null"))
        result = C.finish_batch(result, extra, bench, options, "rows")
        # After finish_batch: ids are final only once unique_ids has run.
        result.stats["same_measurement_groups"] = lib_links.link_records(bench, _dt.date.fromisoformat(today()))
        result.stats["repeat_groups"] = repeats.link_repeats(bench, _dt.date.fromisoformat(today()))
        return result
