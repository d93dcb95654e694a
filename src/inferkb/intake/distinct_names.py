"""Names a reader can tell apart: suffixes for benchmark records that share a ``name``.

One rule, used by the ``distinct-names`` derivation (and meant for importers):
within a group of records with the same ``name``, the first fact of
:data:`FACTS` whose value is present in every member and not the same in all
of them splits the group; each member's name gains that fact (``Perplexity
dashboard``, ``run 2025-08-04T12:22:08Z``, ``platform ...``, ``units Samples/s``), and a part that
still collides is split again by the next fact. Members that no fact tells
apart but that come from different lines of one CSV (LLM-Inference-Bench rows
printed twice with identical conditions and different values) are repeats:
each becomes ``repeat k of n, CSV line L`` in line order. Only facts the record
already holds are used; a group nothing separates is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# (dotted path, label format) in the order tried.
FACTS: tuple[tuple[str, str], ...] = (
    ("submission.table", "{} dashboard"),
    ("submission.test_time", "run {}"),
    ("submission.platform", "platform {}"),
    ("submission.used_model", "model {}"),
    ("metric", "metric {}"),
    ("submission.units_raw", "units {}"),
)
LINE = "submission.line"


def get_path(data: Any, dotted: str) -> Any:
    """Value at a dotted path of nested objects (``submission.table``); ``None`` when absent."""
    cur = data
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def _split(members: list[dict[str, Any]], facts: tuple[tuple[str, str], ...], parts: dict[str, list[tuple[str, str]]]) -> None:
    if len(members) < 2:
        return
    for i, (path, label) in enumerate(facts):
        values = [get_path(m, path) for m in members]
        if any(v is None or isinstance(v, (dict, list)) for v in values) or len({str(v) for v in values}) < 2:
            continue
        groups: dict[str, list[dict[str, Any]]] = {}
        for m, v in zip(members, values, strict=True):
            parts[m["id"]].append((path, label.format(v)))
            groups.setdefault(str(v), []).append(m)
        for sub in groups.values():
            _split(sub, facts[i + 1 :], parts)
        return
    lines = [get_path(m, LINE) for m in members]
    paths = {str(get_path(m, "submission.path")) for m in members}
    if len(paths) == 1 and all(isinstance(n, int) for n in lines) and len(set(lines)) == len(lines):
        ordered = sorted(members, key=lambda m: get_path(m, LINE))
        for k, m in enumerate(ordered, 1):
            parts[m["id"]].append((LINE, f"repeat {k} of {len(ordered)}, CSV line {get_path(m, LINE)}"))


def distinct_names(records: Iterable[dict[str, Any]]) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """``{id: (new name, [(path, suffix part), ...])}`` for every record whose name collides and can be told apart."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for data in records:
        if isinstance(data.get("name"), str) and isinstance(data.get("id"), str):
            by_name.setdefault(data["name"], []).append(data)
    out: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for name, members in by_name.items():
        if len(members) < 2:
            continue
        parts: dict[str, list[tuple[str, str]]] = {m["id"]: [] for m in members}
        _split(members, FACTS, parts)
        for rid, ps in parts.items():
            if ps:
                out[rid] = (f"{name} ({', '.join(p for _, p in ps)})", ps)
    return out


def apply_to(records: list[dict[str, Any]]) -> int:
    """Rename colliding records of one import batch in place; returns how many were renamed."""
    plan = distinct_names(records)
    for data in records:
        if data.get("id") in plan:
            data["name"] = plan[data["id"]][0]
    return len(plan)
