"""Reading an MLPerf Inference results table: ``summary.csv`` rows, the table layout, cell numbers and record ids.

The row-reading half of the ``mlperf`` importer (:mod:`inferkb.intake.mlperf` builds the records). Table layouts
(FORMATS.md section 4, corpus ``mlperf/SOURCES.md``): the v6.1 round-wide table has 31 columns including
``total_accelerators`` and ``weight_data_types``; the v4.1 per-submitter table has 27 and lacks them. Both share
:data:`REQUIRED_COLUMNS`. :func:`iter_rows` consumes lines one at a time, so memory does not grow with the file.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterable, Iterator

from ..errors import InputError

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


def cell_number(text: str) -> float | None:
    """The finite number a cell states (``" 1747.67 "`` -> 1747.67), else ``None`` (text, blank, NaN, infinity)."""
    try:
        value = float(text.strip())
    except (ValueError, AttributeError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def cell_int(text: str) -> int | None:
    """The whole number a cell states (``"2"`` or ``"2.0"``), else ``None``."""
    value = cell_number(text)
    return int(value) if value is not None and value.is_integer() else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def bounded_id(*parts: str) -> str:
    """Kebab id from ``parts``; ids over 120 chars are cut and get a hash suffix so they stay unique."""
    rid = "-".join(p for p in (_slug(x) for x in parts) if p)
    if len(rid) > 120:
        rid = rid[:110].strip("-") + "-" + hashlib.sha1(rid.encode()).hexdigest()[:8]
    return rid


__all__ = ["REQUIRED_COLUMNS", "V61_COLUMNS", "iter_rows", "table_layout", "cell_number", "cell_int", "bounded_id"]
