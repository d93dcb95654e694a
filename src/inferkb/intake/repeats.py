"""``repeat_group``: rows of one CSV that measured one configuration more than once.

The LLM-Inference-Bench dashboard CSVs print some configurations twice: two
lines of one ``All_results.csv`` agree in every column but the measured ones
(the ``Weight = fp16, KV Cache = fp16`` batch-64 row of ``KV_Cache_Dtype`` at
lines 38 and 39, with 1485.35 and another throughput). They are repeated
measurements, not two setups; ``distinct_names`` already names them
``repeat k of n, CSV line L``, and this rule links them.

The rule (:func:`repeat_groups`). Benchmark records are repeats of one another when

1. they come from one file of one data set (``submission.path`` and
   ``commit`` when the file was read from a pinned checkout; else the
   ``submission.table`` the importer named it by) and agree on every other
   ``submission`` fact (the CSV's own condition columns) except ``line``;
2. they agree on what was measured and how: ``metric``, ``unit``,
   ``value_scope``, ``model``, ``hardware_raw``, ``accelerator_count``,
   ``engine_id``, ``format_id``, ``scenario``, every ``conditions`` value and
   ``environment``;
3. each has an integer ``submission.line`` and no two share one.

A group's id is the id of its member with the lowest line; every member
(that one included) gets it in ``repeat_group``. Nothing else is read or
changed; the importer and the derivation ``repeat-group`` apply this one rule
and write the same provenance entry (tag :data:`TAG`).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..validate_repeats import FIELD

TAG = "derive:repeat-group"
# Rule 2 of the module docstring.
SHARED = (
    "metric",
    "unit",
    "value_scope",
    "model",
    "hardware_raw",
    "accelerator_count",
    "engine_id",
    "format_id",
    "scenario",
    "conditions",
    "environment",
)
METHOD = (
    "same data set, file, commit and every submission fact but the CSV line; same metric, unit, scope, model, hardware "
    "string, device count, engine, format, scenario, conditions and environment (rule in inferkb.intake.repeats)"
)


def _line(rec: dict[str, Any]) -> int | None:
    line = (rec.get("submission") or {}).get("line")
    return line if isinstance(line, int) and not isinstance(line, bool) else None


def repeat_key(rec: dict[str, Any]) -> str | None:
    """The text two repeats share (rules 1-2), or ``None`` when the record has no file and line to be a CSV row."""
    sub = rec.get("submission")
    if not isinstance(sub, dict) or _line(rec) is None or not (sub.get("path") or sub.get("table")):
        return None
    facts = {"submission": {k: v for k, v in sub.items() if k != "line"}, **{k: rec.get(k) for k in SHARED}}
    return json.dumps(facts, sort_keys=True, ensure_ascii=False)


def repeat_groups(records: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Groups (two or more records, in line order) that the module docstring's rule makes repeats; records are not changed.

    Groups are sorted by their first member's id."""
    buckets: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        if rec.get("type", "benchmark") != "benchmark" or not isinstance(rec.get("id"), str):
            continue
        key = repeat_key(rec)
        if key is not None:
            buckets[key].append(rec)
    groups = []
    for members in buckets.values():
        lines = [_line(m) for m in members]
        if len(members) < 2 or len(set(lines)) != len(lines):
            continue
        groups.append(sorted(members, key=lambda m: _line(m) or 0))
    groups.sort(key=lambda g: g[0]["id"])
    return groups


def repeat_entry(rec: dict[str, Any], group: list[dict[str, Any]]) -> tuple[str, dict[str, str], str]:
    """``(value, evidence, basis)`` of ``repeat_group`` for ``rec`` in ``group``: the first member's id, the CSV line quoted."""
    sub = rec.get("submission") or {}
    others = ", ".join(f"line {_line(m)} ({m['id']}, value {m.get('value')})" for m in group if m is not rec)
    basis = (
        f"line {_line(rec)} of {sub.get('path')} at {str(sub.get('commit'))[:12]} (value {rec.get('value')}) and {others} agree in "
        f"every submission fact but the line and in {', '.join(SHARED)}: {len(group)} measurements of one configuration"
    )
    return group[0]["id"], {"field": "submission.line", "quote": str(_line(rec))}, basis


def link_repeats(records: list[dict[str, Any]], date: _dt.date) -> int:
    """Set ``repeat_group`` (in place) on the records of one import batch that repeat a configuration; returns groups linked.

    Appends the provenance entry the derivation ``repeat-group`` writes (dated ``date``)."""
    from ..derive.base import Proposal, provenance_entry, same_entry

    groups = repeat_groups(records)
    for group in groups:
        for rec in group:
            value, evidence, basis = repeat_entry(rec, group)
            entry = provenance_entry(Proposal(f"benchmarks/{rec['id']}", FIELD, value, METHOD, evidence, basis), TAG, date)
            rec[FIELD] = value
            prov = rec.setdefault("provenance", [])
            if not any(isinstance(e, dict) and same_entry(e, entry) for e in prov):
                prov.append(entry)
    return len(groups)


__all__ = ["FIELD", "TAG", "METHOD", "repeat_key", "repeat_groups", "repeat_entry", "link_repeats"]
