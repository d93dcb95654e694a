"""Reading llama-bench files into test rows: the form is sniffed from content (``-o json``, ``-o jsonl``, a sweep
script's JSONL, ``-o csv`` or the Markdown table, plain or A/B), and each form becomes a list of row dicts.

The form is sniffed from content, not the file name: ``[`` -> JSON array;
``{`` -> one object per line (JSONL) or one object; a header line holding
``build_commit`` -> CSV (every value double-quoted, RFC 4180 quoting, so a
quoted newline stays inside its field); lines starting ``|`` with a ``t/s``
column -> Markdown, where stderr noise (``ggml_vulkan: ...``) and script
banners are skipped and each table takes the ``build: <commit> (<number>)``
line printed after it, or a ``llama.cpp build <commit> (<number>)`` line
printed before it. Test labels ``pp512``, ``pp 512`` (2023 style),
``tg128``, ``pp512+tg128`` and ``... @ d4096`` are all read.

An A/B table row (a ``test`` column and two or more ``t/s <arm>`` columns)
carries ``_ab`` (one ``{label, mean[, stdev]}`` per arm column) and
``_speedups``; a Markdown row carries ``_devices`` (the ``ggml_*: N = <device>``
lines before its table); a sweep line carries ``_sweep`` (the wrapper's own
fields) or is ``{"_failed": ...}``. Turning a row into a record is
:mod:`inferkb.intake.llama_bench`'s job.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import common as C

__all__ = ["REQUIRED", "SWEEP_KEYS", "read_rows"]

REQUIRED = ("build_commit", "n_prompt", "n_gen", "avg_ts")
_TEST = re.compile(r"^(?:pp\s*(\d+))?\s*(?:\+?\s*tg\s*(\d+))?\s*(?:@\s*d\s*(\d+))?$")
_BUILD = re.compile(r"^build:\s*([0-9a-f]+)\s*\((\d+)\)\s*$")
# The form some wrappers and older builds print before the table: "llama.cpp build 66906cd8 (5606)", "llama.cpp build: ...".
_BUILD_HEADER = re.compile(r"^llama\.cpp\s+build:?\s*([0-9a-f]{6,40})\s*\((?:b)?(\d+)\)\s*$", re.I)
# An A/B table (scripts/compare-llama-bench.py and hand-made ones): one "t/s <arm>" column per build, a "speedup" column.
_AB_RATE = re.compile(r"^t/s\s*\(?\s*(.+?)\s*\)?$", re.I)
_SPEEDUP = re.compile(r"^speed[- ]?up\b\s*(.*)$", re.I)
_DEVICE = re.compile(r"^(?:ggml_\w+:\s*(?:\d+\s*=|Device\s+\d+:)|Device\s+\d+:)\s*(.+?)(?:\s*\|.*|,\s*compute capability.*)?$")


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
