"""Strict reading of a harness file's values for the importers: the JSON itself, the keys a format needs, numbers,
nested objects, whole counts and distribution objects, each refusing bad input with an
:class:`~inferkb.errors.InputError` that names the file and field.

- **Reading.** :func:`load_json` parses strictly (:mod:`inferkb.jsonio`): a
  truncated file, NaN/Infinity, a duplicate key or a non-UTF-8 byte is an
  :class:`~inferkb.errors.InputError` naming the file, line and column.
- **Wrong harness.** :func:`require_keys` raises an ``InputError`` that names
  the keys the format expects and the keys the file has, so a file of another
  harness given to the wrong importer says what it is not.

Every name here is also importable from :mod:`inferkb.intake.common`, where the importers reach them (``C.number``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonio import parse_bytes
from .base import read_input

__all__ = ["PERCENTILE_SLOTS", "close", "distribution", "integer", "load_json", "mapping", "number", "require_keys", "shown"]


def load_json(path: Path, raw: bytes | None = None) -> Any:
    """Parse ``path`` strictly; any JSON value may be on top. Raises :class:`InputError` with line/column."""
    raw = read_input(path) if raw is None else raw
    value, problem = parse_bytes(raw, require_object=False)
    if problem is not None:
        where = f" (line {problem.line}, column {problem.col})" if problem.line else ""
        hint = " — the file may be truncated" if problem.code == "invalid-json" and raw.rstrip()[-1:] not in (b"}", b"]") else ""
        raise InputError(f"not usable JSON: {problem.message}{where}{hint}", path=str(path))
    return value


def require_keys(doc: Any, expected: Iterable[str], path: Path, fmt: str, *, any_of: bool = False) -> None:
    """Raise :class:`InputError` unless ``doc`` is an object holding every key of ``expected`` (or one, ``any_of``).

    The message names the format, the keys expected and (up to 12 of) the keys found.
    """
    expected = list(expected)
    if not isinstance(doc, dict):
        kind = {"list": "array", "str": "string"}.get(type(doc).__name__, type(doc).__name__)
        raise InputError(
            f"not a {fmt} file: top level is a JSON {kind}; expected an object with keys {', '.join(expected)}", path=str(path)
        )
    missing = [k for k in expected if k not in doc]
    if (any_of and len(missing) == len(expected)) or (not any_of and missing):
        found = list(doc)[:12]
        more = f" (+{len(doc) - 12} more)" if len(doc) > 12 else ""
        need = "one of" if any_of else "keys"
        raise InputError(
            f"not a {fmt} file: expected {need} {', '.join(expected)}; missing {', '.join(missing)}; "
            f"found {', '.join(found) or 'no keys'}{more}",
            path=str(path),
            field=missing[0],
        )


def number(value: Any, path: Path, field: str, *, positive: bool = False, nonneg: bool = False) -> float:
    """Return ``value`` as a finite float or raise :class:`InputError` (bools and strings are not numbers).

    ``positive`` refuses <= 0 (latencies, durations); ``nonneg`` refuses < 0 (counts, rates).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected a number, found {value!r}", path=str(path), field=field)
    try:
        x = float(value)
    except OverflowError:  # an int of more than ~308 digits
        raise InputError(f"{shown(value)} is beyond the range of a float", path=str(path), field=field) from None
    if not math.isfinite(x):
        raise InputError(f"{value!r} is not a finite number", path=str(path), field=field)
    if positive and x <= 0:
        raise InputError(f"{value!r} is not positive; a latency or duration must be > 0", path=str(path), field=field)
    if nonneg and x < 0:
        raise InputError(f"{value!r} is negative", path=str(path), field=field)
    return x


def mapping(parent: Any, key: str, path: Path | str, where: str = "") -> dict[str, Any]:
    """``parent[key]`` when it is an object (``{}`` when absent or null); :class:`InputError` naming the field otherwise.

    For nested harness documents read with chained lookups: a value of the wrong
    type (``requests: inf`` where an object of counts belongs) is bad input, not a crash.
    """
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        field = f"{where}.{key}" if where else key
        raise InputError(f"expected an object, found {shown(value)}", path=str(path), field=field)
    return value


def shown(value: Any, limit: int = 40) -> str:
    """``value``'s type and a repr cut to ``limit`` characters, for messages; safe for any size of int."""
    kind = {"str": "a string", "list": "an array", "int": "a number", "float": "a number", "bool": "a boolean"}.get(
        type(value).__name__, type(value).__name__
    )
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"{kind} of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return f"{kind} {text[:limit] + '...' if len(text) > limit else text}"


def integer(value: Any) -> int | None:
    """``value`` as an int when it is a whole number >= 1 (bool excluded), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if value >= 1 else None


def close(a: float, b: float, *, rel: float = 1e-6, abs_: float = 1e-9) -> bool:
    """True when ``a`` and ``b`` agree within rounding (relative ``rel`` or absolute ``abs_``)."""
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# Percentile number (as the harnesses spell it) -> the stats slot the record model has for it; others go under "percentiles".
PERCENTILE_SLOTS = {"50": "p50", "90": "p90", "95": "p95", "99": "p99", "99.9": "p999"}


def distribution(
    value: Any, path: Path, field: str, *, names: dict[str, str], percentiles: dict[str, str] | None = None, scale: float = 1.0
) -> dict[str, Any]:
    """A metric entry ``{"stats": {...}[, "percentiles": {...}]}`` from a harness's distribution object.

    ``names`` maps the harness's keys to stats slots (``{"avg": "mean", "std": "stdev", "count": "n", ...}``);
    ``percentiles`` maps its percentile keys to percentile numbers as text (``{"p001": "0.1", "p99": "99"}``):
    those with a stats slot (50, 90, 95, 99, 99.9) go there, the rest under ``percentiles`` as ``p<N>``.
    Every value is multiplied by ``scale`` except the count. Raises :class:`InputError` for a non-number.
    """
    if not isinstance(value, dict):
        raise InputError(f"expected an object of statistics, found {type(value).__name__}", path=str(path), field=field)
    stats: dict[str, Any] = {}
    extra: dict[str, float] = {}
    for key, slot in names.items():
        if value.get(key) is None:
            continue
        if slot == "n":
            count = integer(value[key])
            if count is not None:
                stats["n"] = count
            continue
        stats[slot] = number(value[key], path, f"{field}.{key}") * scale
    for key, pct in (percentiles or {}).items():
        raw = value.get(key)
        if raw is None and isinstance(value.get("percentiles"), dict):
            raw = value["percentiles"].get(key)
        if raw is None:
            continue
        x = number(raw, path, f"{field}.{key}") * scale
        if pct in PERCENTILE_SLOTS:
            stats.setdefault(PERCENTILE_SLOTS[pct], x)
        else:
            extra[f"p{pct}"] = x
    out: dict[str, Any] = {"stats": stats}
    if extra:
        out["percentiles"] = extra
    return out
