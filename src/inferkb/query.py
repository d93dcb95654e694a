"""Read-only queries over a loaded KB: list, search, where, refs, stats, gaps.

Every function returns plain data (lists/dicts) that the CLI renders as a
table or prints as JSON; nothing here prints.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .profile import ANY_TYPE
from .schemas import schema_doc
from .validate import _ref_values

if TYPE_CHECKING:
    from .kb import KB
    from .store import Record

OPS = ("!=", ">=", "<=", "=", "<", ">", "~")
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def list_records(kb: KB, type_name: str) -> list[dict[str, Any]]:
    """Rows ``{key, id, name, status, confidence, updated}`` of one type, sorted by id. Raises UsageError for an unknown type."""
    return sorted(
        (
            {
                "key": r.key,
                "id": r.id,
                "name": r.data.get("name"),
                "status": r.data.get("status"),
                "confidence": r.data.get("confidence"),
                "updated": r.data.get("updated"),
            }
            for r in kb.by_type(type_name)
        ),
        key=lambda row: row["id"],
    )


# ---- search ----------------------------------------------------------------


def _flatten_text(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _flatten_text(v, out)
    elif isinstance(value, list):
        for v in value:
            _flatten_text(v, out)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))


_TOKEN = re.compile(r"[\w.+]+", re.UNICODE)


def search(kb: KB, text: str, *, limit: int = 20, type_name: str | None = None) -> list[dict[str, Any]]:
    """Full-text search over every field, ranked by BM25 (SQLite FTS5).

    Matches in ``id`` and ``name`` weigh 10x and 5x a match in the body. Every
    word of ``text`` must occur (prefix match). Returns rows ``{key, name,
    type, score, snippet}``, best first. Raises UsageError for empty text.
    """
    words = _TOKEN.findall(text)
    if not words:
        raise UsageError("search text is empty; give at least one word")
    if type_name:
        type_name = kb.type_spec(type_name).name
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE r USING fts5(key UNINDEXED, type UNINDEXED, rid, name, body, tokenize='unicode61 tokenchars ''-.''')")
    rows = []
    for rec in kb.records.values():
        if type_name and rec.type != type_name:
            continue
        parts: list[str] = []
        _flatten_text(rec.data, parts)
        rows.append((rec.key, rec.type, rec.id, str(rec.data.get("name") or ""), "\n".join(parts)))
    con.executemany("INSERT INTO r VALUES (?,?,?,?,?)", rows)
    query = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
    cur = con.execute(
        "SELECT key, type, name, bm25(r, 10.0, 5.0, 1.0) AS score, snippet(r, 4, '[', ']', '…', 12) "
        "FROM r WHERE r MATCH ? ORDER BY score LIMIT ?",
        (query, limit),
    )
    return [{"key": k, "type": t, "name": n, "score": round(-s, 3), "snippet": snip.replace("\n", " ")} for k, t, n, s, snip in cur]


# ---- where -------------------------------------------------------------------


def parse_condition(expr: list[str]) -> tuple[str, str, str]:
    """Split ``["conditions.batch_size", ">", "8"]`` or ``["metric=ttft_ms"]`` into (field, op, value).

    Raises UsageError when no operator from ``= != < > <= >= ~`` is found.
    """
    joined = " ".join(expr)
    m = re.match(r"^\s*([^\s=!<>~]+)\s*(!=|>=|<=|=|<|>|~)\s*(.*?)\s*$", joined, re.S)
    if not m:
        raise UsageError(f"cannot read condition {joined!r}; expected FIELD OP VALUE with OP one of {' '.join(OPS)}")
    return m.group(1), m.group(2), m.group(3)


def _walk(value: Any, parts: list[str]) -> Iterator[Any]:
    if not parts:
        if isinstance(value, list):
            yield from value
        yield value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, list):
        if head.isdigit() and int(head) < len(value):
            yield from _walk(value[int(head)], rest)
            return
        for item in value:
            yield from _walk(item, parts)
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest)


def _coerce(text: str) -> Any:
    low = text.lower()
    if low in ("null", "none"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _matches(actual: Any, op: str, wanted: Any, raw: str) -> bool:
    if op == "~":
        return actual is not None and not isinstance(actual, (dict, list)) and raw.lower() in str(actual).lower()
    if isinstance(actual, (dict, list)):
        return False
    if op in ("=", "!="):
        if isinstance(actual, (int, float)) and not isinstance(actual, bool) and isinstance(wanted, (int, float)):
            same = float(actual) == float(wanted)
        elif isinstance(actual, str):
            same = actual == raw
        else:
            same = actual == wanted
        return same if op == "=" else not same
    num_a = isinstance(actual, (int, float)) and not isinstance(actual, bool)
    num_w = isinstance(wanted, (int, float)) and not isinstance(wanted, bool)
    if num_a and num_w:
        a, w = float(actual), float(wanted)
    elif isinstance(actual, str) and not num_w:
        a, w = actual, raw  # type: ignore[assignment]
    else:
        return False
    return {"<": a < w, ">": a > w, "<=": a <= w, ">=": a >= w}[op]


def where(kb: KB, field: str, op: str, value: str, *, type_name: str | None = None) -> list[dict[str, Any]]:
    """Records where the dotted ``field`` compares true with ``value``.

    Dotted paths descend into objects; a list matches if ANY element matches
    (``accelerator_ids = nvidia-h100-sxm``, ``arms.stats.p99 > 1000``; a
    numeric segment indexes: ``arms.0.id``). ``=``/``!=`` compare numbers
    numerically and strings exactly (``null`` matches a null or absent
    field for ``=``); ``<``/``>``/``<=``/``>=`` compare numbers numerically
    and strings lexically (so ISO dates work); ``~`` is a case-insensitive
    substring. ``!=`` is true when no value equals. Returns rows ``{key,
    name, values}``. Raises UsageError for an unknown operator.
    """
    if op not in OPS:
        raise UsageError(f"unknown operator {op!r}; use one of {' '.join(OPS)}")
    parts = field.split(".")
    if not all(parts):
        raise UsageError(f"field {field!r} has an empty path segment")
    if value == "" and op != "=":
        raise UsageError(f"condition {field} {op} has no value")
    wanted = _coerce(value)
    if op in ("<", ">", "<=", ">=") and not isinstance(wanted, (int, float)) and not _DATE_LIKE.match(value):
        raise UsageError(f"{op} compares numbers or ISO dates (YYYY-MM-DD); {value!r} is neither")
    rows = []
    seen = False
    recs = kb.by_type(type_name) if type_name else kb.records.values()
    for rec in recs:
        found = list(_walk(rec.data, parts))
        seen = seen or bool(found)
        scalars = [v for v in found if not isinstance(v, (dict, list))]
        if op == "=" and wanted is None:
            hit = not scalars or any(v is None for v in scalars)
        elif op == "!=":
            hit = bool(found) and not any(_matches(v, "=", wanted, value) for v in scalars)
        else:
            hit = any(_matches(v, op, wanted, value) for v in scalars)
        if hit:
            rows.append({"key": rec.key, "name": rec.data.get("name"), "values": scalars[:5]})
    if not seen and not (op == "=" and wanted is None):
        scope = f"{type_name} record" if type_name else "record"
        raise UsageError(f"no {scope} has a field {field!r}; check the spelling (`inferkb show ID` shows a record's fields)")
    return rows


# ---- refs, stats, gaps ---------------------------------------------------------


def _outgoing(kb: KB, rec: Record) -> list[dict[str, Any]]:
    spec = kb.profile.types[rec.type]
    fields = [("sources", "source")] + list(spec.refs.items())
    out = []
    for fld, target in fields:
        for ref in _ref_values(rec.data.get(fld)):
            hit = kb.resolve(ref, None if target == ANY_TYPE else target)
            out.append({"field": fld, "id": ref, "key": hit.key if hit else None, "resolved": hit is not None})
    return out


def refs(kb: KB, ref: str) -> dict[str, Any]:
    """What record ``ref`` cites and what cites it.

    Returns ``{"key", "cites": [{field, id, key, resolved}], "cited_by": [{key, field}]}``.
    Raises UsageError when the record does not exist.
    """
    rec = kb.get(ref)
    cited_by = []
    for other in kb.records.values():
        spec = kb.profile.types[other.type]
        fields = [("sources", "source")] + list(spec.refs.items())
        for fld, target in fields:
            if target not in (ANY_TYPE, rec.type):
                continue
            if rec.id in _ref_values(other.data.get(fld)) or rec.key in _ref_values(other.data.get(fld)):
                cited_by.append({"key": other.key, "field": fld})
    return {"key": rec.key, "cites": _outgoing(kb, rec), "cited_by": cited_by}


def stats(kb: KB) -> dict[str, Any]:
    """Counts by type and status, mean confidence per type, and benchmark records per origin.

    Returns ``{"records": n, "types": {type: {"count", "by_status": {...},
    "mean_confidence"}}, "benchmark_origins": {origin: n}}``; a benchmark
    record without an ``origin`` is counted under ``"(none)"``. Origins are
    sorted by count, largest first (the shared ``benchmark.origin`` contract:
    how many independent data sets the benchmark evidence comes from).
    """
    by_type: dict[str, list[Record]] = defaultdict(list)
    for rec in kb.records.values():
        by_type[rec.type].append(rec)
    types = {}
    for name in kb.profile.types:
        recs = by_type.get(name, [])
        confs = [
            r.data["confidence"]
            for r in recs
            if isinstance(r.data.get("confidence"), (int, float)) and not isinstance(r.data.get("confidence"), bool)
        ]
        types[name] = {
            "count": len(recs),
            "by_status": dict(Counter(str(r.data.get("status")) for r in recs)),
            "mean_confidence": round(sum(confs) / len(confs), 3) if confs else None,
        }
    origins = Counter(
        r.data["origin"] if isinstance(r.data.get("origin"), str) and r.data["origin"] else "(none)" for r in by_type.get("benchmark", [])
    )
    return {"records": len(kb.records), "types": types, "benchmark_origins": dict(sorted(origins.items(), key=lambda kv: (-kv[1], kv[0])))}


def gaps(kb: KB) -> dict[str, Any]:
    """Types with no records, and per type the schema fields no record fills (all null/absent/empty).

    Returns ``{"empty_types": [...], "unfilled_fields": {type: [field, ...]}}``.
    """
    empty, unfilled = [], {}
    for name in kb.profile.types:
        recs = list(kb.by_type(name))
        if not recs:
            empty.append(name)
            continue
        schema = schema_doc(kb, name)
        if schema is None or not isinstance(schema.get("properties"), dict):
            continue
        filled = set()
        for rec in recs:
            for k, v in rec.data.items():
                if v not in (None, "", [], {}):
                    filled.add(k)
        missing = [f for f in schema["properties"] if f not in filled]
        if missing:
            unfilled[name] = missing
    return {"empty_types": empty, "unfilled_fields": unfilled}
