"""``inferkb show``: which record a text names, and the record as a readable summary or a JSON document.

:func:`find_record` accepts what a user has in hand: a bare id or ``dir/id``,
the ``data/<dir>/<id>.json`` path that ``check`` prints (or any path ending
so), an id in another letter case, or an exact name or alias; names go through
the one resolver (:func:`inferkb.resolve.resolve`), so a text that names
several records lists them and picks none.

:func:`summary_lines` is plain text (identity, metric and value with unit,
hardware, arms with percentiles and computed deltas, conditions with gaps
marked, sources with the role of each where it can be derived, findings, then every other field; nothing cropped).
:func:`record_document` is the JSON: the record untouched under ``record``
and what inferkb computes from it under ``computed``. Both name the record's
known traps (gotcha records whose ``affects`` names it, :mod:`inferkb.traps`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .arms import DELTA_STATS, arm_deltas
from .condition_notes import absent_note
from .errors import UsageError
from .source_roles import source_roles
from .traps import known_traps

if TYPE_CHECKING:
    from .kb import KB
    from .store import Record

__all__ = ["find_record", "candidates", "record_document", "summary_lines"]

_PATH = re.compile(r"(?:^|[/\\])data[/\\]([^/\\]+)[/\\]([^/\\]+)\.json$")
_STAT_ORDER = ("mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "stdev", "n")
# Fields the summary shows in its own sections; every other field follows under "other fields".
_SHOWN = {
    "id", "type", "name", "status", "confidence", "updated", "sources", "metric", "value", "unit", "value_scope",
    "model", "model_id", "base_model_id", "format_id", "engine_id", "scenario", "origin", "hardware_raw", "accelerator_ids",
    "accelerator_count", "accelerator_alternates", "arms", "baseline_arm", "conditions", "condition_gaps",
}  # fmt: skip


def _safe(text: str) -> bool:
    return "\x00" not in text and "\\" not in text and ".." not in text and text.count("/") <= 1


def candidates(kb: KB, text: str) -> list[str]:
    """Keys of the records ``text`` names by id, name or alias through the resolver, across every type (exact or
    normalised matches; an accelerator's bare model number gives each part). Empty when nothing is named."""
    from .resolve import resolve

    out: list[str] = []
    for type_name, spec in kb.profile.types.items():
        res = resolve(kb, type_name, text)
        if res.resolved or res.ambiguous or res.how == "family":
            out.extend(f"{spec.dir}/{rid}" for rid in res.ids if f"{spec.dir}/{rid}" in kb.records)
    return list(dict.fromkeys(out))


def find_record(kb: KB, text: str) -> Record:
    """The record ``text`` names (see the module docstring).

    Raises :class:`UsageError` for an unsafe reference (``..``, ``\\``, NUL), a path or name that names no record (with
    near matches), or a text that names several records (listing them: none is chosen).
    """
    ref = text.strip()
    m = _PATH.search(ref)
    if m:
        rec = kb.records.get(f"{m.group(1)}/{m.group(2)}")
        if rec is None:
            raise UsageError(f"no record file data/{m.group(1)}/{m.group(2)}.json in {kb.root}")
        return rec
    try:
        return kb.get(ref)
    except UsageError as exc:
        if not _safe(ref):
            raise
        missing = exc
    hits = candidates(kb, ref)
    if not hits and ref != ref.lower():
        lower = kb.resolve(ref.lower())
        if lower is not None:
            return lower
    if len(hits) == 1:
        return kb.records[hits[0]]
    if hits:
        listed = "; ".join(f"{k} ({kb.records[k].data.get('name')})" for k in hits[:20])
        more = f" and {len(hits) - 20} more" if len(hits) > 20 else ""
        raise UsageError(f"{ref!r} names {len(hits)} records: {listed}{more}; give one id")
    raise missing


def record_document(kb: KB, rec: Record, *, audits: bool = False) -> dict[str, Any]:
    """``{"key", "path", "record": <the record as stored>, "computed": {"arm_deltas": {...}}, "findings": [...]}``.

    ``arm_deltas`` is :func:`inferkb.arms.arm_deltas` (percent change of each stat of each non-baseline arm versus the
    baseline arm); ``known_traps`` the keys of the gotcha records whose ``affects`` names this record; ``source_roles``
    why some sources are cited (:func:`inferkb.source_roles.source_roles`: the record's own ``result``, or
    ``rules-evidence`` for the round's rules file, with the fields it backs); ``findings`` are the validation findings
    of this record, plus, with ``audits``, every audit's findings about it.
    """
    return {
        "key": rec.key,
        "path": rec.path,
        "record": rec.data,
        "computed": {
            "arm_deltas": arm_deltas(rec.data) if rec.type == "benchmark" else {},
            "known_traps": [g.key for g in known_traps(kb, rec)],
            "source_roles": {sid: role.to_dict() for sid, role in source_roles(kb, rec.data).items()},
        },
        "findings": [f.to_dict() for f in record_findings(kb, rec, audits=audits)],
    }


def record_findings(kb: KB, rec: Record, *, audits: bool = False) -> list:
    """Validation findings of ``rec`` (schema, rules, references), and with ``audits`` those of every audit about it."""
    from .findings import Finding
    from .validate import validate_records

    found = list(validate_records(kb, [rec]))
    if audits:
        found.extend(f for f in kb.audit().findings if f.record == rec.key)
    return sorted(found, key=Finding.sort_key)


# ---- text ------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e15 else repr(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _with_field(field: str | None, message: str) -> str:
    """``"field: message"``, or ``message`` alone when there is no field or the message already starts with it."""
    if not field or message.startswith(f"{field}:"):
        return message
    return f"{field}: {message}"


def _pairs(pairs: list[tuple[str, str]], indent: str = "  ") -> list[str]:
    """``name  value`` lines aligned on the value; a value's further lines are indented under its first."""
    width = max((len(k) for k, _ in pairs), default=0)
    out = []
    for k, v in pairs:
        first, *more = str(v).split("\n")
        out.append(f"{indent}{k:<{width}}  {first}".rstrip())
        out.extend(f"{indent}{'':<{width}}  {m}".rstrip() for m in more)
    return out


def _grid(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    return [line(header).rstrip(), *(line(r).rstrip() for r in rows)]


def _identity(kb: KB, rec: Record) -> list[str]:
    d = rec.data
    lines = [f"{rec.key}  ({rec.path})", f"  {d.get('name') or '(no name)'}"]
    facts = [f"type {rec.type}", f"status {d.get('status')}", f"confidence {_text(d.get('confidence'))}", f"updated {d.get('updated')}"]
    if d.get("origin"):
        facts.append(f"origin {d['origin']}")
    lines.append("  " + " · ".join(facts))
    return lines


def _named(kb: KB, ref: Any, type_name: str) -> str:
    if not isinstance(ref, str) or not ref:
        return "null"
    hit = kb.resolve(ref, type_name)
    return f"{ref} ({hit.data.get('name')})" if hit is not None and hit.data.get("name") else (ref if hit else f"{ref} (NOT IN THIS KB)")


def _benchmark_head(kb: KB, d: dict[str, Any]) -> list[str]:
    pairs = [("metric", f"{d.get('metric')} = {_text(d.get('value'))} {d.get('unit') or ''}".rstrip())]
    if d.get("value_scope"):
        pairs[0] = (pairs[0][0], pairs[0][1] + f"  ({d['value_scope']})")
    per = d.get("per_accelerator")
    if isinstance(per, dict) and per.get("value") is not None:
        pairs.append(("per accelerator", f"{_text(per.get('value'))} {per.get('unit') or ''} (value / {per.get('divisor')}; computed)"))
    pairs.append(("scenario", _text(d.get("scenario"))))
    model = d.get("model")
    pairs.append(("model", f"{_text(model)} -> model_id {_named(kb, d.get('model_id'), 'model')}"))
    if d.get("base_model_id"):
        pairs.append(
            (
                "base model",
                f"{_named(kb, d['base_model_id'], 'model')}  (published model it was derived from; may be pruned, retrained or requantised)",
            )
        )
    count = d.get("accelerator_count")
    ids = d.get("accelerator_ids") or []
    hardware = ", ".join(_named(kb, a, "accelerator") for a in ids) if ids else "no accelerator id"
    pairs.append(("hardware", f"{_text(count) + ' x ' if count is not None else 'count unknown, '}{hardware}"))
    if d.get("hardware_raw"):
        pairs.append(("hardware_raw", repr(d["hardware_raw"])))
    if d.get("accelerator_alternates"):
        pairs.append(("alternates", ", ".join(map(str, d["accelerator_alternates"])) + "  (candidates; none chosen)"))
    pairs.append(("engine", _named(kb, d.get("engine_id"), "engine")))
    pairs.append(("format", _named(kb, d.get("format_id"), "quantization")))
    return ["", "measurement", *_pairs(pairs)]


def _arms(d: dict[str, Any]) -> list[str]:
    arms = [a for a in d.get("arms") or [] if isinstance(a, dict)]
    if not arms:
        return []
    base = d.get("baseline_arm")
    deltas = arm_deltas(d)
    stats = [s for s in _STAT_ORDER if any(isinstance(a.get("stats"), dict) and s in a["stats"] for a in arms)]
    delta_cols = [s for s in DELTA_STATS if any(f"{s}_delta_pct" in x for x in deltas.values())]
    header = ["arm", "unit", *stats, *(f"Δ{s} %" for s in delta_cols)]
    rows = []
    for a in arms:
        st = a.get("stats") if isinstance(a.get("stats"), dict) else {}
        mark = " (baseline)" if a.get("id") == base else ""
        cells = [f"{a.get('id')}{mark}", str(a.get("unit") or "")]
        cells += [_text(st[s]) if s in st else "" for s in stats]
        for s in delta_cols:
            v = deltas.get(a.get("id"), {}).get(f"{s}_delta_pct")
            cells.append("" if v is None else f"{v:+.1f}")
        rows.append(cells)
    lines = ["", f"arms (baseline {base or 'not named'}; Δ = (arm - baseline) / baseline x 100, computed)", *_grid(header, rows)]
    for a in arms:
        label = a.get("label")
        config = a.get("config")
        if label or config:
            lines.append(f"  {a.get('id')}: {label or ''}{'  config ' + _text(config) if config else ''}")
    return lines


def _conditions(kb: KB, d: dict[str, Any]) -> list[str]:
    conds = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
    gaps = d.get("condition_gaps") if isinstance(d.get("condition_gaps"), dict) else {}
    pairs = []
    for name, value in conds.items():
        gap = gaps.get(name)
        if value is not None:
            pairs.append((name, _text(value)))
        elif isinstance(gap, dict) and gap.get("reason"):
            checked = gap.get("checked") or []
            extra = f" [checked: {', '.join(map(str, checked))}]" if checked else " [no evidence listed as checked]"
            recover = f" (recover: {gap['recover']})" if gap.get("recover") else ""
            pairs.append((name, f"— GAP: {gap['reason']}{extra}{recover}"))
        else:
            pairs.append((name, f"— {absent_note(kb, d, name).text}"))
    for name, gap in gaps.items():
        if name not in conds and isinstance(gap, dict):
            pairs.append((name, f"— GAP: {gap.get('reason')}"))
    return ["", "conditions (— = absent)", *_pairs(pairs)] if pairs else []


def _sources(kb: KB, d: dict[str, Any]) -> list[str]:
    ids = d.get("sources") or []
    if not isinstance(ids, list) or not ids:
        return ["", "sources", "  (none)"]
    lines = ["", "sources"]
    roles = source_roles(kb, d)
    for sid in ids:
        src = kb.resolve(str(sid), "source")
        if src is None:
            lines.append(f"  {sid}  (NOT IN THIS KB)")
        else:
            url = src.data.get("url")
            lines.append(f"  {sid}  {src.data.get('name') or ''}" + (f"  <{url}>" if url else ""))
        if sid in roles:
            lines.append(f"    role: {roles[sid].describe()}")
    return lines


def _traps(kb: KB, rec: Record) -> list[str]:
    traps = known_traps(kb, rec)
    if not traps:
        return []
    lines = ["", "known traps (gotcha records that name this one in affects)"]
    for g in traps:
        lines.append(f"  [{g.data.get('severity') or 'severity not stated'}] {g.key}  {g.data.get('name') or ''}".rstrip())
    return lines


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(f"{prefix}[{i}]", v, out)
    elif isinstance(value, list):
        out.append((prefix, ", ".join(_text(v) for v in value) if value else "[]"))
    else:
        out.append((prefix, _text(value)))


def summary_lines(kb: KB, rec: Record, *, audits: bool = False) -> list[str]:
    """The readable summary of ``rec`` as lines of plain text (see the module docstring); nothing is cropped."""
    d = rec.data
    lines = _identity(kb, rec)
    if rec.type == "benchmark":
        lines += _benchmark_head(kb, d) + _arms(d) + _conditions(kb, d)
    lines += _sources(kb, d) + _traps(kb, rec)
    findings = record_findings(kb, rec, audits=audits)
    lines += ["", "findings" + ("" if audits else " (validation; add --audits for every audit)")]
    lines += [f"  {f.severity:7} {f.code} {f.rule}: {_with_field(f.field, f.message)}" for f in findings] or ["  (none)"]
    shown = _SHOWN if rec.type == "benchmark" else {"id", "type", "name", "status", "confidence", "updated", "sources", "origin"}
    rest: list[tuple[str, str]] = []
    for k, v in d.items():
        if k not in shown and k != "provenance":
            _flatten(k, v, rest)
    if rest:
        lines += ["", "other fields", *_pairs(rest)]
    return lines + _provenance(d)


def _provenance(d: dict[str, Any]) -> list[str]:
    entries = [p for p in d.get("provenance") or [] if isinstance(p, dict)]
    if not entries:
        return []
    lines = ["", "provenance (what changed, how, on which evidence)"]
    for p in entries:
        head = f"  {p.get('date')} {p.get('action')} {p.get('field')}: {p.get('method') or ''}".rstrip()
        lines.append(head + ("" if p.get("numbers_changed") is False else f"  [numbers_changed: {_text(p.get('numbers_changed'))}]"))
        ev = p.get("evidence")
        if isinstance(ev, dict) and (ev.get("field") or ev.get("quote")):
            lines.extend(
                _pairs([("evidence", f"{ev.get('field')}: {ev.get('quote')!r}" if ev.get("quote") else str(ev.get("field")))], "    ")
            )
        if p.get("basis"):
            lines.extend(_pairs([("basis", str(p["basis"]))], "    "))
    return lines
