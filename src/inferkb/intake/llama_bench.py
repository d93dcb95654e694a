"""Importer ``llama-bench``: llama.cpp ``llama-bench`` output as ``-o json``, ``-o jsonl``, ``-o csv`` or the default Markdown table.

The form is sniffed from content, not the file name: ``[`` -> JSON array;
``{`` -> one object per line (JSONL) or one object; a header line holding
``build_commit`` -> CSV (every value double-quoted, RFC 4180 quoting, so a
quoted newline stays inside its field); lines starting ``|`` with a ``t/s``
column -> Markdown, where stderr noise (``ggml_vulkan: ...``) and script
banners are skipped and each table takes the ``build: <commit> (<number>)``
line printed after it, or a ``llama.cpp build <commit> (<number>)`` line
printed before it. Test labels ``pp512``, ``pp 512`` (2023 style),
``tg128``, ``pp512+tg128`` and ``... @ d4096`` are all read.

An *A/B table* (``scripts/compare-llama-bench.py`` and hand-made ones: a
``test`` column, two or more ``t/s <arm>`` columns such as ``t/s master`` /
``t/s PR`` or ``t/s b5606`` / ``t/s b6000``, and ``speedup`` columns) gives one
record per row with one arm per ``t/s`` column, the first the baseline; the
speed-up is computed from the arms (:mod:`inferkb.arms`) and the table's own
column only cross-checked (KB1101 beyond its two-decimal rounding);
``engine_version`` is a reasoned gap, since the arms are different builds.

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

import csv
import io
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..hardware import candidates
from . import common as C
from . import dataset as D
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register, sample_stats

if TYPE_CHECKING:
    from ..kb import KB

FMT = "llama-bench"
REQUIRED = ("build_commit", "n_prompt", "n_gen", "avg_ts")
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
_TEST = re.compile(r"^(?:pp\s*(\d+))?\s*(?:\+?\s*tg\s*(\d+))?\s*(?:@\s*d\s*(\d+))?$")
_BUILD = re.compile(r"^build:\s*([0-9a-f]+)\s*\((\d+)\)\s*$")
# The form some wrappers and older builds print before the table: "llama.cpp build 66906cd8 (5606)", "llama.cpp build: ...".
_BUILD_HEADER = re.compile(r"^llama\.cpp\s+build:?\s*([0-9a-f]{6,40})\s*\((?:b)?(\d+)\)\s*$", re.I)
# An A/B table (scripts/compare-llama-bench.py and hand-made ones): one "t/s <arm>" column per build, a "speedup" column.
_AB_RATE = re.compile(r"^t/s\s*\(?\s*(.+?)\s*\)?$", re.I)
_SPEEDUP = re.compile(r"^speed[- ]?up\b\s*(.*)$", re.I)
_DEVICE = re.compile(r"^(?:ggml_\w+:\s*(?:\d+\s*=|Device\s+\d+:)|Device\s+\d+:)\s*(.+?)(?:\s*\|.*|,\s*compute capability.*)?$")


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


def read_rows(raw: bytes, path: Path) -> tuple[str, list[dict[str, Any]]]:
    """Sniff the form and return ``(form, rows)``; Markdown rows carry ``_label``/``_ts``/``_build``/``_devices`` keys."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line}) is not UTF-8", path=str(path)) from None
    text = text.lstrip("\ufeff")
    head = text.lstrip()[:1]
    if head == "[":
        rows = C.load_json(path, raw)
        if not isinstance(rows, list) or not rows:
            raise InputError("expected a non-empty JSON array of test rows", path=str(path))
        return "json", rows
    if head == "{":
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if all(ln.lstrip().startswith("{") and ln.rstrip().endswith("}") for ln in lines):
            rows = []
            for i, ln in enumerate(lines, 1):
                try:
                    rows.append(C.load_json(path, ln.encode()))
                except InputError as exc:
                    raise InputError(f"JSONL line {i}: {exc}", path=str(path)) from None
            if rows and all(isinstance(r, dict) and "bench_raw" in r for r in rows):
                return "jsonl-sweep", [_unwrap_sweep(r) for r in rows]
            return "jsonl", rows
        return "json", [C.load_json(path, raw)]
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if "build_commit" in first and "," in first:
        return "csv", _csv_rows(text, path)
    if any(ln.lstrip().startswith("|") and "t/s" in ln for ln in text.splitlines()):
        return "md", _md_rows(text, path)
    raise InputError(
        "not a llama-bench file: no JSON array/JSONL, no CSV header with build_commit and no Markdown "
        f"table with a 't/s' column (expected fields {', '.join(REQUIRED)})",
        path=str(path),
    )


SWEEP_KEYS = (
    "build",
    "fa",
    "b",
    "hipblaslt",
    "mode",
    "value",
    "tokens_per_sec",
    "duration_s",
    "vram_peak_mib",
    "gtt_peak_mib",
    "system_ram_peak_mib",
    "max_power_w",
    "avg_power_w",
    "median_power_w",
    "max_temp_c",
)


def _unwrap_sweep(line: dict[str, Any]) -> dict[str, Any]:
    """A sweep-script line ``{mode, value, tokens_per_sec, bench_raw: <llama-bench JSON row>, power, memory...}`` as a test row.

    The llama-bench row is ``bench_raw``; the wrapper's own fields go under
    ``_sweep``. A line whose ``bench_raw`` is null (the test did not finish)
    becomes ``{"_failed": ...}`` and is not imported.
    """
    sweep = {k: line.get(k) for k in SWEEP_KEYS if k in line}
    inner = line.get("bench_raw")
    if not isinstance(inner, dict):
        return {"_failed": sweep}
    row = dict(inner)
    row["_sweep"] = sweep
    return row


def _csv_rows(text: str, path: Path) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
        rows = []
        for values in reader:
            if not values:
                continue
            if len(values) != len(header):
                raise InputError(
                    f"CSV record ending on line {reader.line_num} has {len(values)} values but the header has {len(header)} columns",
                    path=str(path),
                )
            rows.append(dict(zip(header, values, strict=True)))
    except csv.Error as exc:
        raise InputError(f"CSV does not parse near line {reader.line_num}: {exc}", path=str(path)) from None
    if not rows:
        raise InputError("CSV has a header but no test rows", path=str(path))
    return rows


def _md_rows(text: str, path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    header: list[str] | None = None
    ab: dict[str, Any] | None = None  # for an A/B header: {"rates": [(column, arm label)], "speedups": [(column, label)]}
    table: list[dict[str, Any]] = []
    devices: list[str] = []
    header_build: tuple[str, int] | None = None
    for line in re.split(r"\r\n|\r|\n", text):
        stripped = line.strip()
        dev = _DEVICE.match(stripped)
        if dev:
            devices.append(dev.group(1).strip())
            continue
        build = _BUILD.match(stripped)
        if build:
            for row in table:
                row["build_commit"], row["build_number"] = build.group(1), int(build.group(2))
            table, devices, header_build = [], [], None
            continue
        head = _BUILD_HEADER.match(stripped)
        if head:
            header_build = (head.group(1), int(head.group(2)))
            table = []
            continue
        if not stripped.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        lowered = [c.lower() for c in cells]
        if "t/s" in lowered and "test" in lowered:
            header, ab = lowered, None
            continue
        rates = [(i, m.group(1)) for i, c in enumerate(cells) if (m := _AB_RATE.match(c)) and c.lower() != "t/s"]
        if "test" in lowered and len(rates) >= 2:
            header = lowered
            ab = {"rates": rates, "speedups": [(i, _SPEEDUP.match(c).group(1)) for i, c in enumerate(cells) if _SPEEDUP.match(c)]}
            continue
        if header is None or all(set(c) <= set("-: ") for c in cells):
            continue
        if len(cells) != len(header):
            raise InputError(f"Markdown row has {len(cells)} cells but its header has {len(header)}: {stripped[:80]}", path=str(path))
        row = dict(zip(header, cells, strict=True))
        if ab is None:
            mean, _, stdev = row["t/s"].partition("±")
            try:
                row["avg_ts"] = float(mean)
                row["stddev_ts"] = float(stdev) if stdev.strip() else None
            except ValueError:
                raise InputError(f"t/s cell {row['t/s']!r} is not 'mean ± stddev'", path=str(path), field="t/s") from None
        else:
            row["_ab"] = [_ab_cell(cells[i], label, path) for i, label in ab["rates"]]
            row["_speedups"] = [(label, _number_cell(cells[i], f"speedup {label}".strip(), path)) for i, label in ab["speedups"]]
            row["avg_ts"] = row["_ab"][0]["mean"]
            row["stddev_ts"] = row["_ab"][0].get("stdev")
        m = _TEST.match(row["test"])
        if not m or not (m.group(1) or m.group(2)):
            raise InputError(f"test label {row['test']!r} is not pp<N>, tg<N>, pp<N>+tg<M> or ... @ d<D>", path=str(path), field="test")
        row["n_prompt"], row["n_gen"] = int(m.group(1) or 0), int(m.group(2) or 0)
        row["n_depth"] = int(m.group(3) or 0)
        row["build_commit"], row["_devices"] = None, list(devices)
        if header_build:
            row["build_commit"], row["build_number"] = header_build
        table.append(row)
        rows.append(row)
    if not rows:
        raise InputError("Markdown table with a 't/s' column has no test rows", path=str(path))
    return rows


def _number_cell(cell: str, what: str, path: Path) -> float | None:
    """A numeric table cell (``1.06``, ``1.06x``); ``None`` for an empty or ``-`` cell; InputError otherwise."""
    text = cell.strip().rstrip("x×").strip()
    if text in ("", "-", "?", "n/a", "N/A"):
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{what} cell {cell!r} is not a number", path=str(path), field=what) from None


def _ab_cell(cell: str, label: str, path: Path) -> dict[str, Any]:
    """One arm's ``t/s`` cell of an A/B table: ``{"label", "mean"[, "stdev"]}`` (``mean ± stddev`` or a bare mean)."""
    mean, _, stdev = cell.partition("±")
    value = _number_cell(mean, f"t/s {label}", path)
    if value is None or value <= 0:
        raise InputError(f"t/s {label} cell {cell!r} is not a positive rate", path=str(path), field=f"t/s {label}")
    out: dict[str, Any] = {"label": label, "mean": value}
    if stdev.strip():
        out["stdev"] = _number_cell(stdev, f"t/s {label} stddev", path)
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
        _apply_sweep(rec, sweep, row, label, index, path, result)
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
        _ab_arms(rec, row, label, config, index, path, result)
    env: dict[str, Any] = {}
    if options.env:
        C.attach_env(env, options.env)
    file_env = {"engine_version": version, "engine_commit": commit, "host_cpu": cpu or None, "gpu_raw": gpu or None}
    environment = dict(env.get("environment", {}))
    environment.update({k: v for k, v in file_env.items() if v})
    if environment:
        rec["environment"] = environment
    return rec


def _ab_arms(
    rec: dict[str, Any], row: dict[str, Any], label: str, config: dict[str, Any], index: int, path: Path, result: IntakeResult
) -> None:
    """An A/B table row as one arm per ``t/s <arm>`` column, the first column the baseline (in place).

    Deltas are computed from the arms (:mod:`inferkb.arms`), never taken from
    the table; its ``speedup`` cell is only cross-checked against arm / baseline
    (the table prints two decimals, so a difference over 0.006 is KB1101).
    """
    arms = []
    seen: set[str] = set()
    for cell in row["_ab"]:
        arm_id = C.slug(cell["label"]) or f"arm-{len(arms) + 1}"
        while arm_id in seen:
            arm_id += "-2"
        seen.add(arm_id)
        stats = {"mean": cell["mean"], "n": None}
        if cell.get("stdev") is not None:
            stats["stdev"] = cell["stdev"]
        arms.append(
            {
                "id": arm_id,
                "label": f"{label}, {cell['label']}",
                "config": {**config, "build": cell["label"]},
                "stats": stats,
                "unit": "tok/s",
            }
        )
    rec["arms"], rec["baseline_arm"] = arms, arms[0]["id"]
    base = arms[0]["stats"]["mean"]
    speedups = [v for _, v in row.get("_speedups") or [] if v is not None]
    for arm, typed in zip(arms[1:], speedups, strict=False):
        computed = arm["stats"]["mean"] / base
        if abs(computed - typed) > 0.006:
            result.findings.append(
                C.KB1101.finding(
                    f"row {index} ({label}): speedup column says {typed:g} but t/s {arm['id']} / t/s {arms[0]['id']} is {computed:.3f}",
                    path=str(path),
                    field="speedup",
                    extra={"row": index, "file": typed, "recomputed": computed},
                )
            )
    versions = [a["config"]["build"] for a in arms]
    rec["conditions"]["engine_version"] = None
    rec["condition_gaps"]["engine_version"] = {
        "reason": f"an A/B table: each arm is a different build ({', '.join(versions)}); see arms[].config.build",
        "checked": ["the llama-bench Markdown A/B table header"],
    }
    rec["name"] += f" ({' vs '.join(versions)})"
    rec["methodology"] = (
        f"llama-bench A/B table ({' vs '.join(versions)}), test {label}: one arm per 't/s' column, baseline = the first; "
        "the table's speedup column is not stored (deltas are computed from the arms) but cross-checked; "
        "each cell is a mean over repetitions, their number not shown."
    )


def _apply_sweep(
    rec: dict[str, Any], sweep: dict[str, Any], row: dict[str, Any], label: str, index: int, path: Path, result: IntakeResult
) -> None:
    """Fold a sweep wrapper's fields into the record: build variant into the arm config, peaks into ``submission``, power.

    The wrapper's ``tokens_per_sec`` and ``value`` must repeat llama-bench's
    ``avg_ts`` and n_prompt/n_gen (KB1101 otherwise; llama-bench's own values are kept).
    """
    config = rec["arms"][0]["config"]
    for key, name in (("build", "sweep_build"), ("fa", "sweep_fa_flag"), ("b", "sweep_b_flag"), ("hipblaslt", "sweep_hipblaslt")):
        if sweep.get(key) not in (None, ""):
            config[name] = sweep[key]
    tps, n = sweep.get("tokens_per_sec"), sweep.get("value")
    expected_n = row.get("n_prompt") if sweep.get("mode") == "pp" else row.get("n_gen")
    if isinstance(tps, (int, float)) and not C.close(float(tps), float(row["avg_ts"]), rel=1e-6):
        result.findings.append(
            C.KB1101.finding(f"line {index}: tokens_per_sec {tps} differs from bench_raw.avg_ts {row['avg_ts']}", path=str(path))
        )
    if n is not None and n != expected_n:
        result.findings.append(
            C.KB1101.finding(f"line {index}: value {n} differs from the llama-bench token count {expected_n}", path=str(path))
        )
    sub = rec.setdefault("submission", {})
    for key in ("vram_peak_mib", "gtt_peak_mib", "system_ram_peak_mib", "max_power_w", "median_power_w", "max_temp_c", "duration_s"):
        if isinstance(sweep.get(key), (int, float)):
            sub[f"sweep_{key}"] = sweep[key]
    power = sweep.get("avg_power_w")
    if isinstance(power, (int, float)) and power > 0:
        rec["power_w"] = float(power)
        rec["power_scope"] = None
        rec["energy_basis"] = "avg_power_w of the sweep script over the test (sensor and scope not stated)"
    rec["name"] += f" [{', '.join(str(config[k]) for k in ('sweep_build', 'sweep_fa_flag', 'sweep_b_flag') if k in config)}" + (
        ", hipBLASLt]" if config.get("sweep_hipblaslt") else "]"
    )


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
