"""Reading llm-d Benchmark Report v0.2 files: a JSON or YAML file (one report or a list of them) checked for the
report's keys and version, and a report's Statistics object converted to the metric registry's unit.

:mod:`inferkb.intake.llmd_report` builds the records; :mod:`inferkb.intake.llmd_export` writes reports back.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import InputError
from .base import read_input
from .common import load_json
from .yamlsafe import MAX_BYTES as MAX_YAML_BYTES
from .yamlsafe import load_yaml

__all__ = ["FACTOR", "LATENCY", "REPORT_KEYS", "STAT_SLOTS", "THROUGHPUT", "convert_stats", "load_reports"]

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
