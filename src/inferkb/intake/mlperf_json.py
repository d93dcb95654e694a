"""MLPerf round-wide ``summary_results.json`` (v4.1, v5.1, v6.0) -> the same benchmark records as a ``summary.csv`` row.

The file is one JSON array of row objects (corpus ``mlperf/SOURCES.md``):
``Submitter``, ``Category`` (closed/open), ``Suite`` (datacenter/edge),
``System``, ``Platform``, ``UsedModel``, ``Model``, ``Scenario``,
``Accuracy``, ``Nodes``, ``Processor``, ``Accelerator``, ``a#``
(accelerators **per node**: a float in v4.1, an int in v5.1/v6.0, ``""`` for
CPU-only systems), v6.0's ``Total Accelerators``, ``Location``, ``Software``,
``operating_system``, ``Notes``, ``version``, ``inferred``,
``weight_data_types``, ``Performance_Result``, ``Performance_Units`` and, on
power rows, ``Power_Result`` / ``Power_Units``. :func:`as_table_row` renames
them onto the ``summary.csv`` columns so one record builder
(:func:`inferkb.intake.mlperf.build_record`) serves both layouts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InputError
from . import mlperf
from .base import IntakeOptions, IntakeResult

if TYPE_CHECKING:
    from ..kb import KB

LAYOUT = "summary_results.json"
REQUIRED_KEYS = (
    "Submitter",
    "Category",
    "Platform",
    "Model",
    "Scenario",
    "Nodes",
    "Accelerator",
    "a#",
    "Location",
    "version",
    "Performance_Result",
    "Performance_Units",
)
# summary_results.json key -> summary.csv column
RENAME = {
    "Submitter": "Organization",
    "Availability": "Availability",
    "Category": "Division",
    "Suite": "SystemType",
    "System": "SystemName",
    "Platform": "Platform",
    "Model": "Model",
    "Scenario": "Scenario",
    "Performance_Result": "Result",
    "Accuracy": "Accuracy",
    "Nodes": "number_of_nodes",
    "Processor": "host_processor_model_name",
    "Accelerator": "accelerator_model_name",
    "a#": "accelerators_per_node",
    "Total Accelerators": "total_accelerators",
    "Location": "Location",
    "Software": "framework",
    "operating_system": "operating_system",
    "Notes": "notes",
    "version": "version",
    "inferred": "inferred",
    "Performance_Units": "Units",
    "weight_data_types": "weight_data_types",
    "UsedModel": "UsedModel",
    "Power_Result": "Power_Result",
    "Power_Units": "Power_Units",
}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def as_table_row(obj: dict[str, Any]) -> dict[str, str]:
    """One ``summary_results.json`` object as a ``summary.csv`` row (every value a string, ``MlperfModel`` = ``Model``)."""
    row = {dst: _text(obj.get(src)) for src, dst in RENAME.items() if src in obj}
    row["MlperfModel"] = row.get("Model", "")
    for col in mlperf.REQUIRED_COLUMNS:
        row.setdefault(col, "")
    return row


def iter_json_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(index, row)`` (index counted from 1) for each object of a ``summary_results.json`` array.

    Raises :class:`InputError` when the file is not a JSON array of objects or
    an object lacks a key of :data:`REQUIRED_KEYS` (naming the index and key).
    """
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path=str(path)) from None
    if not isinstance(data, list):
        raise InputError(f"expected a JSON array of result rows, found {type(data).__name__}", path=str(path))
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise InputError(f"row {i} is {type(obj).__name__}, expected an object", path=str(path))
        missing = [k for k in REQUIRED_KEYS if k not in obj]
        if missing:
            raise InputError(
                f"row {i} lacks {', '.join(missing)}; expected keys {', '.join(REQUIRED_KEYS)}", path=str(path), field=missing[0]
            )
        yield i, as_table_row(obj)


def import_round_json(kb: KB, path: Path, options: IntakeOptions, *, rel: str | None = None) -> IntakeResult:
    """Benchmark records (then new source records) for every LLM row of a round-wide ``summary_results.json``."""
    ctx = mlperf.TableContext(kb, options, rel or str(path))
    ctx.layout = LAYOUT
    result = IntakeResult()
    for i, row in iter_json_rows(path):
        rec = mlperf.build_record(ctx, i, row)
        if rec is not None:
            rec["provenance"][0]["method"] = f"inferkb.intake.mlperf, {LAYOUT}, row {i}"
            rec["submission"].pop("table_line", None)
            rec["submission"]["table_row"] = i
            result.records.append(rec)
    imported = len(result.records)
    result.records.extend(s for s in ctx.sources.values() if s)
    mlperf.finish(ctx, result, imported)
    return result


__all__ = ["as_table_row", "iter_json_rows", "import_round_json", "LAYOUT", "REQUIRED_KEYS"]
