"""Importer ``localscore``: a LocalScore SQLite database (``db.sqlite``) -> one benchmark record per test result.

LocalScore (llamafile's ``localscore`` benchmark) stores, per benchmark run
(``benchmark_runs``: one accelerator x one model variant x one runtime on one
system), nine tests (``test_results``) named like llama-bench's
``pp<N>+tg<M>``, each with ``n_prompt``/``n_gen``, ``prompt_tps`` and
``gen_tps`` (tok/s), ``ttft_ms`` and ``avg_time_ms`` (ms), ``power_watts``
and tokens/s per watt. The database is opened read-only (``mode=ro``,
``immutable=1``) with the standard-library ``sqlite3``.

Record per test result: headline ``decode_tok_s`` = ``gen_tps`` (one
sequence, ``per-request``); ``metrics`` ``prefill_tok_s`` (``prompt_tps``),
``ttft_ms``, ``e2e_latency_ms`` (``avg_time_ms``: the whole test, prompt and
generation), ``power_w`` from ``power_watts`` when it is > 0 (CPU runs store
0.0: not measured, left null with a gap; the scope of the reading is not
stated, so ``power_scope`` stays null). Conditions: ``input_tokens`` =
n_prompt, ``output_tokens`` = n_gen, ``engine_version`` = the runtime's
version (its commit in ``environment``); the batch (concurrent sequences) and
warmup are not in the database: gaps. The accelerator is the run's
``accelerators.name``, resolved by alias (or the orchestrator's
``hardware_map``); a CPU links only to a record one of whose aliases is its
exact name (``amd-epyc-7352``, ``apple-m4-max-cpu``), else stays unattached
with a gap. The
quantization name (``Q4_K - Medium``) maps to a KB format when one exists.
"""

from __future__ import annotations

import math
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..hardware import candidates
from . import common as C
from . import dataset as D
from . import mlperf_maps as M
from .base import CONDITION_KEYS, Importer, IntakeOptions, IntakeResult, read_input, register, today

if TYPE_CHECKING:
    from ..kb import KB

FMT = "localscore"
ORIGIN = "localscore"
TABLES = ("test_results", "benchmark_runs", "accelerators", "model_variants", "models", "runtimes", "benchmark_systems")
QUANTS = {"Q4_K - Medium": "gguf-q4-k-m"}
CHECKED = ["the LocalScore database tables " + ", ".join(TABLES)]
QUERY = """
SELECT t.id AS test_id, t.name AS test, t.n_prompt, t.n_gen, t.avg_time_ms, t.power_watts, t.prompt_tps, t.gen_tps,
       t.prompt_tps_watt, t.gen_tps_watt, t.vram_used_mb, t.ttft_ms, t.created_at,
       r.id AS run_id, r.performance_score,
       a.name AS accelerator, a.type AS accelerator_type, a.memory_gb, a.manufacturer,
       v.quantization, m.name AS model, m.params,
       rt.name AS runtime, rt.version AS runtime_version, rt.commit_hash,
       s.cpu_name, s.cpu_arch, s.ram_gb, s.kernel_type, s.kernel_release, s.system_version
FROM test_results t
JOIN benchmark_runs r ON r.id = t.benchmark_run_id
JOIN accelerators a ON a.id = r.accelerator_id
JOIN model_variants v ON v.id = r.model_variant_id
JOIN models m ON m.id = v.model_id
JOIN runtimes rt ON rt.id = r.runtime_id
LEFT JOIN benchmark_systems s ON s.id = r.system_id
ORDER BY t.id
"""


def read_db(path: Path) -> list[dict[str, Any]]:
    """Every test result joined with its run, accelerator, model, runtime and system; raises InputError when not LocalScore."""
    read_input(path)
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open as SQLite: {exc}", path=str(path)) from None
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in TABLES if t not in names]
        if missing:
            raise InputError(
                f"not a LocalScore database: missing table(s) {', '.join(missing)}; found {', '.join(sorted(names)) or 'none'}",
                path=str(path),
            )
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute(QUERY)]
    except sqlite3.DatabaseError as exc:
        raise InputError(f"not a usable SQLite database: {exc}", path=str(path)) from None
    finally:
        con.close()
    for row in rows:
        _check_cells(row, path)
    return rows


# Columns of QUERY that hold numbers; every other column holds text. SQLite stores any value in any column,
# so each cell's storage class is checked before a value reaches a record.
NUMERIC = frozenset(
    {
        "test_id", "n_prompt", "n_gen", "avg_time_ms", "power_watts", "prompt_tps", "gen_tps", "prompt_tps_watt",
        "gen_tps_watt", "vram_used_mb", "ttft_ms", "run_id", "performance_score", "memory_gb", "params", "ram_gb",
    }
)  # fmt: skip


_ALIASES = dict(re.findall(r"(?:FROM|JOIN) (\w+) (\w+)", QUERY)[i][::-1] for i in range(len(TABLES)))
# result column -> "table.column" it comes from, for messages
SOURCE_COLUMN = {
    (alias or col): f"{_ALIASES[t]}.{col}" for t, col, alias in re.findall(r"\b(\w+)\.(\w+)(?: AS (\w+))?", QUERY.split("FROM")[0])
}


def _check_cells(row: dict[str, Any], path: Path) -> None:
    """Refuse (InputError naming the test result and column) a BLOB anywhere, text or a non-finite number in a
    numeric column; a number in a text column becomes its text (in place)."""
    where = f"test_results.id {row.get('test_id')!r}"
    for name, value in list(row.items()):
        if value is None:
            continue
        numeric, col = name in NUMERIC, SOURCE_COLUMN.get(name, name)
        if isinstance(value, bytes):
            raise InputError(
                f"{where}: a BLOB of {len(value)} bytes; expected {'a number' if numeric else 'text'}",
                path=str(path),
                field=col,
            )
        if numeric and isinstance(value, str):
            raise InputError(f"{where}: {C.shown(value)}; expected a number", path=str(path), field=col)
        if numeric and not math.isfinite(value):
            raise InputError(f"{where}: {value!r}; expected a finite number", path=str(path), field=col)
        if not numeric and not isinstance(value, str):
            row[name] = repr(value) if isinstance(value, float) else str(value)


def _hardware(kb: KB, options: IntakeOptions, row: dict[str, Any]) -> tuple[list[str], list[str], dict[str, Any] | None]:
    entry = D.hardware_from_map(options, row["accelerator"])
    if entry is not None:
        return [entry["id"]], [], entry
    found = candidates(kb, row["accelerator"])
    if row["accelerator_type"] != "GPU":
        # A CPU links only to a record whose alias is its exact name (amd-epyc-7352), never to a same-chip GPU record.
        return (found, [], None) if len(found) == 1 else ([], [], None)
    return (found, [], None) if len(found) == 1 else ([], found, None)


def test_record(
    row: dict[str, Any], path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any]:
    """One benchmark record for one joined test-result row."""
    where = f"test_results.id {row['test_id']}"
    gen = C.number(row["gen_tps"], path, f"{where}.gen_tps", positive=True)
    metrics: dict[str, Any] = {
        "decode_tok_s": {"value": gen, "unit": "tok/s", "value_scope": "per-request", "basis": "test_results.gen_tps"},
    }
    if row["prompt_tps"] is not None:
        metrics["prefill_tok_s"] = {
            "value": C.number(row["prompt_tps"], path, f"{where}.prompt_tps", positive=True),
            "unit": "tok/s",
            "value_scope": "per-request",
            "basis": "test_results.prompt_tps",
        }
    if row["ttft_ms"] is not None:
        metrics["ttft_ms"] = {
            "value": C.number(row["ttft_ms"], path, f"{where}.ttft_ms", positive=True),
            "unit": "ms",
            "value_scope": "per-request",
            "basis": "test_results.ttft_ms",
        }
    if row["avg_time_ms"] is not None:
        metrics["e2e_latency_ms"] = {
            "value": C.number(row["avg_time_ms"], path, f"{where}.avg_time_ms", positive=True),
            "unit": "ms",
            "value_scope": "per-request",
            "basis": "test_results.avg_time_ms: mean time of the whole test (prompt processing and generation)",
        }
    ids, alternates, hw_entry = _hardware(kb, options, row)
    if not ids:
        result.stats["unresolved_hardware"][row["accelerator"]] = result.stats["unresolved_hardware"].get(row["accelerator"], 0) + 1
    stated = {
        "input_tokens": C.integer(row["n_prompt"]),
        "output_tokens": C.integer(row["n_gen"]),
        "engine_version": row["runtime_version"],
    }
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    gaps: dict[str, Any] = {
        "batch_size": D.gap(
            "the database states no count of concurrent sequences for a test", CHECKED, "llamafile's localscore source at that version"
        ),
        "warmup": D.gap("the database states no warmup", CHECKED, "llamafile's localscore source at that version"),
    }
    if row["accelerator_type"] != "GPU" and not ids:
        gaps["accelerator_ids"] = D.gap(
            f"a {row['accelerator_type']} run ({row['accelerator']}); no accelerator record names this CPU", CHECKED
        )
    elif not ids:
        gaps["accelerator_ids"] = D.gap(f"accelerator name {row['accelerator']!r} resolves to no single accelerator record", CHECKED)
    power = row["power_watts"]
    if not isinstance(power, (int, float)) or power <= 0:
        gaps["power_w"] = D.gap(f"power_watts is {power!r}: not measured on this run", CHECKED)
        power = None
    fmt_id = QUANTS.get(row["quantization"])
    if fmt_id not in kb.ids_of_type("quantization"):
        fmt_id = None
        gaps["format_id"] = D.gap(f"quantization {row['quantization']!r} names no format of this KB", CHECKED)
    pin = D.pin_for(options, path)
    sub: dict[str, Any] = {
        "data_set": "LocalScore example database",
        "table": "test_results",
        "test_result_id": row["test_id"],
        "benchmark_run_id": row["run_id"],
        "test": row["test"],
        "performance_score": row["performance_score"],
        "accelerator_memory_gb": row["memory_gb"],
        "vram_used_mb": row["vram_used_mb"],
        "prompt_tps_watt": row["prompt_tps_watt"],
        "gen_tps_watt": row["gen_tps_watt"],
        "created_at": row["created_at"],
        "quantization": row["quantization"],
    }
    sub.update({k: pin[k] for k in ("repo", "path", "commit") if k in pin})
    environment = {
        "engine_version": row["runtime_version"],
        "engine_commit": row["commit_hash"],
        "framework": row["runtime"],
        "host_cpu": row["cpu_name"],
        "os": " ".join(str(x) for x in (row["kernel_type"], row["kernel_release"]) if x) or None,
        "gpu_raw": row["accelerator"],
        "extra": {"system_version": row["system_version"], "ram_gb": row["ram_gb"], "cpu_arch": row["cpu_arch"]},
    }
    provenance = [
        D.import_entry(
            "intake-localscore",
            "inferkb.intake.localscore",
            "submission.test_result_id",
            str(row["test_id"]),
            "one test_results row joined with its run",
        )
    ]
    if hw_entry is not None:
        provenance.append(
            {
                "date": today(),
                "tag": "intake-localscore",
                "field": "accelerator_ids",
                "action": "import",
                "method": f"accelerator name {row['accelerator']!r} narrowed by the database's own columns",
                "evidence": hw_entry.get("evidence"),
                "basis": hw_entry.get("basis", ""),
                "numbers_changed": False,
            }
        )
    eid = C.engine_id(kb, options, "llamafile" if "llamafile" in kb.ids_of_type("engine") and row["runtime"] == "llamafile" else None)
    return {
        "id": C.make_id("localscore", row["accelerator"], row["model"], row["quantization"], row["test"], f"run{row['run_id']}"),
        "type": "benchmark",
        "name": f"LocalScore {row['test']}, {row['model']} {row['quantization']} on {row['accelerator']} ({row['runtime']} {row['runtime_version']})",
        "status": "draft",
        "confidence": 0.65,
        "updated": today(),
        "sources": sources,
        "notes": None,
        "engine_id": eid,
        "accelerator_ids": ids,
        "accelerator_count": 1,
        "accelerator_alternates": alternates,
        "hardware_raw": row["accelerator"],
        "model": row["model"],
        "model_id": M.resolve_model(row["model"], M.model_index(kb)),
        "format_id": fmt_id,
        "metric": "decode_tok_s",
        "value": gen,
        "unit": "tok/s",
        "value_scope": "per-request",
        "origin": D.origin_for(options, ORIGIN),
        "scenario": "single-stream",
        "conditions": conditions,
        "condition_gaps": gaps,
        "metrics": metrics,
        "environment": environment,
        "submission": sub,
        "methodology": f"LocalScore test {row['test']}: one sequence, {row['n_prompt']} prompt tokens then {row['n_gen']} generated "
        "tokens; prompt and generation rates, time to first token and the test's mean time as stored by the runtime.",
        "measured_by": "third_party",
        "power_w": power,
        "power_scope": None,
        "energy_basis": "test_results.power_watts (scope not stated)" if power is not None else None,
        "provenance": provenance,
    }


@register
class LocalScore(Importer):
    """LocalScore SQLite database -> one benchmark record per test result."""

    name = FMT
    description = "LocalScore SQLite database (db.sqlite): llamafile runs on consumer GPUs, Apple silicon and CPUs"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every test result of every database."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}, "unresolved_hardware": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            rows = read_db(path)
            sources = C.resolve_sources(kb, options, path, path.read_bytes(), FMT, extra)
            bench.extend(test_record(row, path, options, kb, sources, result) for row in rows)
        for hw, n in result.stats["unresolved_hardware"].items():
            result.findings.append(
                C.KB1103.finding(f"accelerator {hw!r} ({n} tests) resolves to no single accelerator id", field="accelerators.name")
            )
        return C.finish_batch(result, extra, bench, options, "test results")
