"""Importer ``llama-bench``: llama.cpp ``llama-bench`` output as ``-o json``, ``-o jsonl``, ``-o csv`` or the default Markdown table.

The file is read into test rows by :mod:`inferkb.intake.llama_bench_forms` (the form sniffed from content; Markdown
stderr noise and script banners skipped; build lines before or after a table; test labels ``pp512``, ``pp 512``,
``tg128``, ``pp512+tg128``, ``... @ d4096``); this module turns each row into a record.

An *A/B table* (``scripts/compare-llama-bench.py`` and hand-made ones: a
``test`` column, two or more ``t/s <arm>`` columns such as ``t/s master`` /
``t/s PR`` or ``t/s b5606`` / ``t/s b6000``, and ``speedup`` columns) gives one
record per row with one arm per ``t/s`` column, the first the baseline; the
speed-up is computed from the arms (:mod:`inferkb.arms`) and the table's own
column only cross-checked (KB1101 beyond its two-decimal rounding);
``engine_version`` is a reasoned gap, since the arms are different builds
(:mod:`inferkb.intake.llama_bench_variants`, which also folds in a sweep script's fields).

One benchmark record per test row (FORMATS.md 2):

- ``pp`` test (n_prompt > 0, n_gen = 0) -> ``prefill_tok_s``; ``tg`` -> ``decode_tok_s``;
  ``pp+tg`` -> ``total_tok_s`` (llama-bench divides n_prompt + n_gen by the time of the whole test);
- value = ``avg_ts`` (tok/s, mean of per-repetition rates); one arm ``run`` with
  stats ``mean`` = avg_ts, ``stdev`` = stddev_ts and, from ``samples_ts`` when
  present, ``n``, ``min``, ``max``, ``p50``/``p90``/``p99``; the mean of the samples
  is cross-checked against ``avg_ts`` (KB1101, tolerance 1e-4 for the %g-rounded samples);
  the Markdown form gives ``mean ± stdev`` only (n unknown);
- ``conditions``: ``input_tokens`` = n_prompt, ``output_tokens`` = n_gen (when > 0),
  ``engine_version`` = ``b<build_number>`` (llama.cpp release tags) or the commit;
- ``hardware_raw`` = ``gpu_info`` (``cpu_info`` for CPU-only rows; Markdown: the
  ``ggml_*: N = <device>`` lines before the table), resolved by alias;
  ``accelerator_count`` = the ``gpu_info`` device list length when the row splits
  layers/rows over all devices (``devices`` auto), 1 for ``split_mode`` none, else null;
- run settings (n_batch, n_ubatch, flash_attn normalised from bool or int -1/0/1 to
  true/false/"auto", type_k/v, ngl, threads, n_depth, backends) in the arm's ``config``.
  ``n_batch`` is a prompt-processing chunk size, not concurrent requests, so
  ``conditions.batch_size`` stays null with that reason.

Sources: ``--source`` or a local-file source record.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..hardware import candidates
from . import common as C
from . import dataset as D
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register, sample_stats
from .llama_bench_forms import REQUIRED, read_rows
from .llama_bench_variants import ab_arms, apply_sweep

if TYPE_CHECKING:
    from ..kb import KB

FMT = "llama-bench"
INT_FIELDS = (
    "build_number",
    "model_size",
    "model_n_params",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "n_gpu_layers",
    "n_prompt",
    "n_gen",
    "n_depth",
    "avg_ns",
    "stddev_ns",
    "poll",
    "main_gpu",
    "n_cpu_moe",
    "no_op_offload",
)
FLOAT_FIELDS = ("avg_ts", "stddev_ts", "defrag_thold")
CONFIG_FIELDS = (
    "backends",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "n_gpu_layers",
    "flash_attn",
    "type_k",
    "type_v",
    "split_mode",
    "n_depth",
    "ngl",
    "threads",
    "fa",
    "tensor_split",
    "n_cpu_moe",
)


def _flash_attn(value: Any) -> bool | str | None:
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    return {"-1": "auto", "auto": "auto", "0": False, "false": False, "off": False, "1": True, "true": True, "on": True}.get(
        text, str(value)
    )


def _typed(row: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    """Coerce CSV strings (and JSON values) of known fields to int/float; raises InputError on non-numbers."""
    out = dict(row)
    for key in INT_FIELDS:
        if key in out and isinstance(out[key], str):
            try:
                out[key] = int(out[key])
            except ValueError:
                raise InputError(f"{where}: expected a whole number, found {out[key]!r}", path=str(path), field=key) from None
    for key in FLOAT_FIELDS:
        if key in out and isinstance(out[key], str):
            try:
                out[key] = float(out[key])
            except ValueError:
                raise InputError(f"{where}: expected a number, found {out[key]!r}", path=str(path), field=key) from None
    return out


def _device_count(row: dict[str, Any], gpu: str) -> int | None:
    """Devices the row ran on, when the file states it: ``split_mode`` none -> 1; layer/row split over
    all devices (``devices`` absent or ``auto``) -> the number of comma-separated ``gpu_info`` entries."""
    if not gpu:
        return None
    split = row.get("split_mode")
    if split == "none":
        return 1
    if split in ("layer", "row") and row.get("devices") in (None, "auto"):
        return len([d for d in gpu.split(",") if d.strip()])
    return None


def _label(n_prompt: int, n_gen: int, depth: int) -> tuple[str, str]:
    if n_prompt > 0 and n_gen > 0:
        label, metric = f"pp{n_prompt}+tg{n_gen}", "total_tok_s"
    elif n_prompt > 0:
        label, metric = f"pp{n_prompt}", "prefill_tok_s"
    else:
        label, metric = f"tg{n_gen}", "decode_tok_s"
    return (f"{label} @ d{depth}" if depth else label), metric


def row_record(
    row: dict[str, Any], form: str, index: int, path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any]:
    """One benchmark record for one test row (see the module docstring)."""
    where = f"row {index}"
    if form != "md":
        C.require_keys(row, REQUIRED, path, FMT)
        row = _typed(row, path, where)
    n_prompt = int(C.number(row["n_prompt"], path, f"{where}.n_prompt", nonneg=True))
    n_gen = int(C.number(row["n_gen"], path, f"{where}.n_gen", nonneg=True))
    depth = int(C.number(row.get("n_depth") or 0, path, f"{where}.n_depth", nonneg=True))
    if n_prompt == 0 and n_gen == 0:
        raise InputError(f"{where}: n_prompt and n_gen are both 0; not a pp or tg test", path=str(path), field="n_prompt")
    label, metric = _label(n_prompt, n_gen, depth)
    avg = C.number(row["avg_ts"], path, f"{where}.avg_ts", positive=True)
    stats: dict[str, Any] = {"mean": avg}
    if row.get("stddev_ts") is not None:
        stats["stdev"] = C.number(row["stddev_ts"], path, f"{where}.stddev_ts", nonneg=True)
    samples = row.get("samples_ts")
    if isinstance(samples, list) and samples:
        xs = [C.number(v, path, f"{where}.samples_ts[{i}]", positive=True) for i, v in enumerate(samples)]
        s = sample_stats(xs)
        stats.update({k: s[k] for k in ("p50", "p90", "p99", "min", "max", "n")})
        if not C.close(s["mean"], avg, rel=1e-4):
            result.findings.append(
                C.KB1101.finding(
                    f"{where} ({label}): avg_ts is {avg:.6g} tok/s but the mean of samples_ts is {s['mean']:.6g}",
                    path=str(path),
                    field="avg_ts",
                    extra={"row": index, "file": avg, "recomputed": s["mean"]},
                )
            )
    else:
        stats["n"] = None
    commit = row.get("build_commit") or None
    build_no = C.integer(row.get("build_number"))
    version = f"b{build_no}" if build_no else commit
    gpu = (row.get("gpu_info") or "").strip() if isinstance(row.get("gpu_info"), str) else ""
    cpu = (row.get("cpu_info") or "").strip() if isinstance(row.get("cpu_info"), str) else ""
    devices = row.get("_devices") or []
    hw_raw = gpu or (", ".join(devices) if devices else None) or cpu or None
    if gpu and cpu and not options.hardware_raw and not options.accelerator and not candidates(kb, gpu) and len(candidates(kb, cpu)) == 1:
        # An APU's GPU reports a generic name ("AMD Radeon Graphics"); its CPU string names the GPU ("... w/ Radeon 8060S").
        hw_raw = cpu
    model_file = row.get("model_filename")
    model = options.model or (re.split(r"[\\/]", model_file)[-1] if isinstance(model_file, str) and model_file else row.get("model"))
    config: dict[str, Any] = {}
    for key in CONFIG_FIELDS:
        if key in row and row[key] not in (None, ""):
            value = row[key]
            if form == "md" and isinstance(value, str) and re.fullmatch(r"-?\d+", value):
                value = int(value)
            config[key] = _flash_attn(value) if key in ("flash_attn", "fa") else value
    if "backend" in row and "backends" not in config:
        config["backends"] = row["backend"]
    stated = C.option_conditions(options)
    if n_prompt:
        stated.setdefault("input_tokens", n_prompt)
    if n_gen:
        stated.setdefault("output_tokens", n_gen)
    if version:
        stated.setdefault("engine_version", version)
    if C.integer(row.get("n_gen_warmup")) is not None or row.get("n_gen_warmup") == 0:
        stated.setdefault("warmup", row["n_gen_warmup"] if row["n_gen_warmup"] else False)
    relevant = ("batch_size", "warmup", "engine_version") + (("input_tokens",) if n_prompt else ()) + (("output_tokens",) if n_gen else ())
    conditions, gaps = build_conditions(stated, FMT, [f"the llama-bench {form} row", "command-line options"], relevant)
    # A pp test generates nothing and a tg test starts from an empty prompt: the length is 0, which the
    # schema's minimum of 1 cannot hold, so it is stated as a reasoned gap rather than left unexplained.
    checked = [f"the llama-bench {form} row"]
    if n_gen == 0 and conditions.get("output_tokens") is None:
        gaps["output_tokens"] = {"reason": "pp test: n_gen is 0, no token is generated; the rate counts prompt tokens", "checked": checked}
    if n_prompt == 0 and conditions.get("input_tokens") is None:
        ctx = f" with {depth} tokens already in the KV cache (n_depth)" if depth else ""
        gaps["input_tokens"] = {"reason": f"tg test: n_prompt is 0, generation starts from an empty prompt{ctx}", "checked": checked}
    if "batch_size" in gaps:
        gaps["batch_size"]["reason"] = (
            "llama-bench states no count of concurrent sequences; n_batch/n_ubatch are "
            "prompt-processing chunk sizes (in the arm config), not a batch of requests"
        )
    rid = C.make_id(
        FMT,
        Path(model).stem if model else None,
        options.hardware_raw or options.accelerator or hw_raw,
        row.get("test_time") or version or path.stem,
        label,
    )
    rec = C.skeleton(
        rid=rid,
        name=f"llama-bench {label}, {model or path.stem}" + (f", {hw_raw}" if hw_raw else ""),
        engine=C.engine_id(kb, options, "llama-cpp"),
        metric=metric,
        value=avg,
        unit="tok/s",
        value_scope="per-request",
        scenario="single-stream",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    entry = D.hardware_from_map(options, hw_raw) if hw_raw else None
    hw_options = replace(options, accelerator=entry["id"]) if entry else options
    C.apply_hardware(rec, kb, hw_options, hw_raw, result.findings, path=path, count_from_file=_device_count(row, gpu))
    if entry:
        rec["provenance"] = [
            {
                "date": rec["updated"],
                "tag": "intake-llama-bench",
                "field": "accelerator_ids",
                "action": "import",
                "method": f"hardware string {hw_raw!r} identified by the run's own system description",
                "evidence": entry.get("evidence"),
                "basis": entry.get("basis", ""),
                "numbers_changed": False,
            }
        ]
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    rec["arms"] = [{"id": "run", "label": label, "config": config, "stats": stats, "unit": "tok/s"}]
    rec["baseline_arm"] = "run"
    harness = "llama-bench -o json rows (bench_raw) in a sweep script's JSONL" if form == "jsonl-sweep" else f"llama-bench -o {form}"
    sub: dict[str, Any] = {"harness": harness, "test": label}
    for key in ("test_time", "model_type", "model_size", "model_n_params", "size", "params", "build_number", "build_commit"):
        if row.get(key) not in (None, ""):
            sub[key] = row[key]
    sweep = row.get("_sweep")
    if isinstance(sweep, dict):
        apply_sweep(rec, sweep, row, label, index, path, result)
    sub.update({k: v for k, v in D.pin_for(options, path).items() if k in ("repo", "path", "commit")})
    rec["origin"] = D.origin_for(options, "harness-intake")
    rec["submission"] = sub
    rec["methodology"] = (
        f"llama-bench {label}: {'prompt tokens' if metric == 'prefill_tok_s' else 'generated tokens' if metric == 'decode_tok_s' else 'prompt + generated tokens'}"
        " per second of one sequence; value = avg_ts, the mean of the per-repetition rates; stats from samples_ts when present"
        + ("; Markdown table: mean ± stddev only, repetitions not shown" if form == "md" else "")
        + (f"; KV cache prefilled with {depth} tokens before the test" if depth else "")
        + "."
    )
    if row.get("_ab"):
        ab_arms(rec, row, label, config, index, path, result)
    env: dict[str, Any] = {}
    if options.env:
        C.attach_env(env, options.env)
    file_env = {"engine_version": version, "engine_commit": commit, "host_cpu": cpu or None, "gpu_raw": gpu or None}
    environment = dict(env.get("environment", {}))
    environment.update({k: v for k, v in file_env.items() if v})
    if environment:
        rec["environment"] = environment
    return rec


@register
class LlamaBench(Importer):
    """llama.cpp ``llama-bench`` json/jsonl/csv/markdown -> one benchmark record per test row."""

    name = FMT
    description = "llama.cpp `llama-bench` -o json | jsonl | csv | md (default table, stderr noise allowed)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every test row of every file; raises InputError for unusable input."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}, "forms": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            form, rows = read_rows(raw, path)
            result.stats["forms"][str(path)] = form
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            for i, row in enumerate(rows, 1):
                if not isinstance(row, dict):
                    raise InputError(f"row {i} is not an object", path=str(path), field=f"[{i - 1}]")
                if "_failed" in row:
                    sweep = row["_failed"]
                    result.stats["skipped"]["test-not-finished"] = result.stats["skipped"].get("test-not-finished", 0) + 1
                    result.findings.append(
                        C.KB1102.finding(
                            "sweep lines with bench_raw null (the llama-bench test did not finish); not imported",
                            path=str(path),
                            extra={"example": {k: sweep.get(k) for k in ("build", "fa", "b", "hipblaslt", "mode", "value")}},
                        )
                    )
                    continue
                bench.append(row_record(row, form, i, path, options, kb, sources, result))
        return C.finish_batch(result, extra, bench, options, "test rows")
