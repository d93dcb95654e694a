"""The tables every export and ``inferkb sql`` share, derived from a loaded KB.

Entity tables (one per record type) take their columns from that type's JSON
Schema — the contract — in schema order: scalar properties become typed
columns, arrays and objects JSON text. Tables (README lists the columns):

- ``records``: every record's common fields, keyed by ``key`` ("dir/id");
- one table per type: ``accelerators``, ``benchmarks``, ``engines``, ``models``,
  ``formats`` (quantization), ``interconnects``, ``sources``, ``supply``, ... keyed by ``id``;
  ``benchmarks`` adds derived columns: ``token_basis``, ``per_accelerator_value``,
  ``per_accelerator_divisor``, ``per_accelerator_basis``, ``division``, ``round``,
  ``submitter`` and the shared-contract fields ``system_series``, ``experimental``,
  ``same_measurement_as`` when the schema does not define them;
- ``conditions``: one row per benchmark, a column per ``conditions`` property, plus ``gaps`` (JSON);
- ``arms``: one row per arm with its statistics and computed deltas vs the baseline arm;
- ``accelerator_flops``: one row per accelerator ``flops`` entry;
- link tables for list references (``benchmark_accelerator_ids``, ...) and ``record_sources`` (with each source's
  role where derivable, :mod:`inferkb.source_roles`);
- ``provenance``: one row per provenance entry (record, field path, current value, sources, quote, method, date);
- ``findings``: validate (or check) findings.

Single-valued reference fields (``kb.toml`` refs) become foreign keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..analysis.common import mlperf_division, mlperf_round, per_accelerator, token_basis
from ..arms import DELTA_STATS, arm_deltas
from ..source_roles import source_roles

if TYPE_CHECKING:
    from ..kb import KB

TEXT, INTEGER, REAL, BOOLEAN, JSON = "TEXT", "INTEGER", "REAL", "BOOLEAN", "JSON"
TABLE_NAMES = {"quantization": "formats", "interconnect": "interconnects", "supply": "supply"}
COMMON = ("id", "type", "name", "status", "confidence", "updated", "notes")
ARM_STATS = (*DELTA_STATS, "stdev", "n")


@dataclass
class Column:
    """A table column: SQL-ish ``type`` (TEXT, INTEGER, REAL, BOOLEAN, JSON = JSON text), ``description``, ``fk`` (table, column)."""

    name: str
    type: str
    description: str = ""
    fk: tuple[str, str] | None = None


@dataclass
class Table:
    """A table: ``columns``, ``rows`` (tuples in column order), ``primary_key`` (column names) and a ``description``."""

    name: str
    description: str
    columns: list[Column]
    rows: list[tuple] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)

    @property
    def column_names(self) -> list[str]:
        """Column names in order."""
        return [c.name for c in self.columns]


def table_name(type_name: str, dir_name: str) -> str:
    """SQL table name of a record type: ``formats`` for quantization, else the directory with ``-`` -> ``_``."""
    return TABLE_NAMES.get(type_name, dir_name.replace("-", "_"))


def _sql_type(prop: dict[str, Any]) -> str:
    types = prop.get("type")
    if isinstance(types, str):
        types = [types]
    if types is None and "enum" in prop:
        kinds = {type(v).__name__ for v in prop["enum"] if v is not None}
        types = ["string"] if kinds <= {"str"} else ["integer"] if kinds <= {"int"} else ["number"] if kinds <= {"int", "float"} else []
    kinds = [t for t in (types or []) if t != "null"]
    if kinds == ["integer"]:
        return INTEGER
    if kinds in (["number"], ["number", "integer"], ["integer", "number"]):
        return REAL
    if kinds == ["boolean"]:
        return BOOLEAN
    if kinds == ["string"]:
        return TEXT
    return JSON


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _cell(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == JSON:
        return _json(value)
    if kind == INTEGER:
        # A value of the wrong type is a validation finding; the typed column holds null rather than failing the export.
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == REAL:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == BOOLEAN:
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else _json(value)


def _schema_props(kb: KB, type_name: str, records: list) -> list[tuple[str, dict[str, Any]]]:
    from ..schemas import schema_doc

    doc = schema_doc(kb, type_name) or {}
    props = doc.get("properties") if isinstance(doc.get("properties"), dict) else None
    if props:
        return list(props.items())
    seen: dict[str, None] = {}
    for rec in records:
        for k in rec.data:
            seen.setdefault(k, None)
    return [(k, {}) for k in seen]


def build_tables(kb: KB, *, findings: str = "validate") -> dict[str, Table]:
    """All tables of ``kb`` as :class:`Table` objects keyed by name.

    ``findings`` is ``"validate"`` (run :meth:`KB.validate`), ``"check"``
    (validate + every audit; slow on large KBs) or ``"none"`` (empty findings table).
    """
    from ..store import gc_paused

    with gc_paused():
        return _build(kb, findings)


def _build(kb: KB, findings: str) -> dict[str, Table]:
    by_type: dict[str, list] = {}
    for rec in kb.records.values():
        by_type.setdefault(rec.type, []).append(rec)
    names = {t: table_name(t, spec.dir) for t, spec in kb.profile.types.items()}
    tables: dict[str, Table] = {}
    records = Table(
        "records",
        "Every record's common fields; key is dir/id.",
        [Column("key", TEXT, "dir/id"), Column("path", TEXT, "file path relative to the KB root")],
        primary_key=["key"],
    )
    records.columns += [Column(c, REAL if c == "confidence" else TEXT) for c in COMMON]
    records.rows = [
        (r.key, r.path, *(_cell(r.data.get(c), REAL if c == "confidence" else TEXT) for c in COMMON)) for r in kb.records.values()
    ]
    tables["records"] = records
    record_sources = Table(
        "record_sources",
        "Which source records each record cites.",
        [
            Column("record", TEXT, "dir/id", ("records", "key")),
            Column("source_id", TEXT, "", (names.get("source", "sources"), "id")),
            Column("position", INTEGER),
            Column(
                "role",
                TEXT,
                "why it is cited, where derivable: result (the record's own) | results-table (its numbers' table) | rules-evidence (the round's rules file)",
            ),
            Column("role_note", TEXT, "the role in words: rules file, rules-file keys and the fields of the record it backs"),
        ],
    )
    provenance = Table(
        "provenance",
        "One row per provenance entry: what was derived or corrected, from which quote, by which method, when.",
        [
            Column("record", TEXT, "dir/id", ("records", "key")),
            Column("position", INTEGER, "index in the record's provenance list"),
            Column("field_path", TEXT, "dotted field path the entry is about ('*' = whole record)"),
            Column("value", JSON, "the field's current value"),
            Column("sources", JSON, "the record's source ids"),
            Column("evidence_field", TEXT, "field the quote was read from"),
            Column("quote", TEXT, "exact quote"),
            Column("method", TEXT),
            Column("basis", TEXT),
            Column("action", TEXT, "backfill | correction | audit | import"),
            Column("tag", TEXT),
            Column("date", TEXT),
            Column("numbers_changed", BOOLEAN),
        ],
    )
    for type_name, spec in kb.profile.types.items():
        recs = by_type.get(type_name, [])
        tname = names[type_name]
        props = _schema_props(kb, type_name, recs)
        cols = [Column("id", TEXT, "record id (file stem)")]
        for prop, schema in props:
            if prop == "id":
                continue
            kind = _sql_type(schema)
            target = spec.refs.get(prop)
            fk = (names[target], "id") if target and target in names and kind == TEXT else None
            cols.append(Column(prop, kind, str(schema.get("description") or ""), fk))
        getters: list[tuple[str, str]] = [(c.name, c.type) for c in cols]
        extra: list[tuple[Column, Any]] = []
        if type_name == "benchmark":
            extra = _benchmark_extras({c.name for c in cols})
            cols += [c for c, _ in extra]
        table = Table(tname, f"{type_name} records (columns from schemas/{type_name}.schema.json)", cols, primary_key=["id"])
        for rec in recs:
            d = rec.data
            row = [rec.id] + [_cell(d.get(n), k) for n, k in getters[1:]]
            if extra:
                row += [fn(d) for _, fn in extra]
            table.rows.append(tuple(row))
            roles = source_roles(kb, d)
            for pos, sid in enumerate(d.get("sources") or []):
                if isinstance(sid, str):
                    role = roles.get(sid)
                    record_sources.rows.append((rec.key, sid, pos, role.role if role else None, role.describe() if role else None))
            for pos, entry in enumerate(d.get("provenance") or []):
                if isinstance(entry, dict):
                    provenance.rows.append(_provenance_row(rec.key, pos, entry, d))
        tables[tname] = table
        for ref_field, target in spec.refs.items():
            kind = dict(props).get(ref_field, {})
            if _sql_type(kind) != JSON or target not in names:
                continue
            ref_col = _link_column(type_name, ref_field, target)
            link = Table(
                f"{type_name}_{ref_field}",
                f"{type_name}.{ref_field}: one row per referenced {target if target != '*' else 'record'} id",
                [
                    Column(f"{type_name}_id", TEXT, "", (tname, "id")),
                    Column(ref_col, TEXT, "", (names[target], "id") if target != "*" else None),
                    Column("position", INTEGER),
                ],
            )
            for rec in recs:
                values = rec.data.get(ref_field)
                for pos, v in enumerate(values if isinstance(values, list) else []):
                    if isinstance(v, str):
                        link.rows.append((rec.id, v, pos))
            tables[link.name] = link
    tables["record_sources"] = record_sources
    if "benchmark" in kb.profile.types:
        btable = names["benchmark"]
        tables["conditions"] = _conditions(kb, by_type.get("benchmark", []), btable)
        tables["arms"] = _arms(by_type.get("benchmark", []), btable)
    if "accelerator" in kb.profile.types:
        tables["accelerator_flops"] = _flops(kb, by_type.get("accelerator", []), names["accelerator"])
    tables["provenance"] = provenance
    tables["findings"] = _findings(kb, findings)
    return tables


def _link_column(type_name: str, field_name: str, target: str) -> str:
    """Column of a link table holding the referenced id: ``accelerator_id`` for ``accelerator_ids``, else ``<target>_id``.

    When that would repeat the owner column (``benchmark_id`` for ``same_measurement_as``), ``<field>_id``.
    """
    if field_name.endswith("_ids"):
        col = field_name[:-1]
    else:
        col = f"{target}_id" if target != "*" else "record_id"
    return f"{field_name}_id" if col == f"{type_name}_id" else col


def _benchmark_extras(existing: set[str]) -> list[tuple[Column, Any]]:
    def pa(part: str):
        def get(d: dict[str, Any]) -> Any:
            fig, _ = per_accelerator(d)
            return None if fig is None else getattr(fig, part)

        return get

    def sub(name: str):
        return lambda d: (d.get("submission") or {}).get(name) if isinstance(d.get("submission"), dict) else None

    extras = [
        (
            Column("token_basis", TEXT, "what the headline counts: output tokens, input + output tokens, ... (from the metric name)"),
            lambda d: token_basis(d.get("metric")),
        ),
        (
            Column("per_accelerator_value", REAL, "headline divided down to one accelerator (record's per_accelerator, else computed)"),
            pa("value"),
        ),
        (Column("per_accelerator_divisor", INTEGER, "devices divided by"), pa("divisor")),
        (Column("per_accelerator_basis", TEXT, "which fields gave the divisor"), pa("divisor_basis")),
        (Column("division", TEXT, "MLPerf division (closed/open)"), mlperf_division),
        (Column("round", TEXT, "MLPerf round"), mlperf_round),
        (Column("submitter", TEXT, "MLPerf submitter"), sub("submitter")),
        (Column("system_series", TEXT, "same system across rounds (shared contract)"), lambda d: d.get("system_series")),
        (
            Column("experimental", BOOLEAN, "publisher calls the result experimental"),
            lambda d: d.get("experimental") if isinstance(d.get("experimental"), bool) else None,
        ),
        (Column("same_measurement_as", JSON, "benchmark ids repeating this measurement"), lambda d: _json(d.get("same_measurement_as"))),
    ]
    return [(c, fn) for c, fn in extras if c.name not in existing]


def _value_at(data: dict[str, Any], path: str) -> Any:
    if not path or path == "*":
        return None
    cur: Any = data
    for part in path.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.rstrip("]").split("[")[-1].isdigit():
            idx = int(part.rstrip("]").split("[")[-1])
            cur = cur[idx] if idx < len(cur) else None
        else:
            return None
    return cur


def _provenance_row(key: str, pos: int, e: dict[str, Any], data: dict[str, Any]) -> tuple:
    ev = e.get("evidence") if isinstance(e.get("evidence"), dict) else {}
    path = e.get("field") if isinstance(e.get("field"), str) else ""
    base = path.split("[", 1)[0]
    value = _value_at(data, base) if base else None
    return (
        key,
        pos,
        path,
        _json(value),
        _json(data.get("sources")),
        ev.get("field"),
        ev.get("quote"),
        e.get("method"),
        e.get("basis"),
        e.get("action"),
        e.get("tag"),
        e.get("date"),
        e.get("numbers_changed") if isinstance(e.get("numbers_changed"), bool) else None,
    )


def _conditions(kb: KB, recs: list, btable: str) -> Table:
    from ..schemas import schema_doc

    props = ((schema_doc(kb, "benchmark") or {}).get("properties") or {}).get("conditions", {}).get("properties") or {}
    names = list(props) or sorted({k for r in recs for k in (r.data.get("conditions") or {}) if isinstance(r.data.get("conditions"), dict)})
    cols = [Column("benchmark_id", TEXT, "", (btable, "id"))]
    cols += [Column(n, _sql_type(props.get(n, {})), str(props.get(n, {}).get("description") or "")) for n in names]
    cols.append(Column("gaps", JSON, "condition_gaps: why each null condition is null and what would recover it"))
    table = Table("conditions", "Run conditions of each benchmark (null = not stated by the evidence).", cols, primary_key=["benchmark_id"])
    kinds = [c.type for c in cols[1:-1]]
    for rec in recs:
        c = rec.data.get("conditions") if isinstance(rec.data.get("conditions"), dict) else {}
        table.rows.append((rec.id, *(_cell(c.get(n), k) for n, k in zip(names, kinds, strict=True)), _json(rec.data.get("condition_gaps"))))
    return table


def _arms(recs: list, btable: str) -> Table:
    cols = [
        Column("benchmark_id", TEXT, "", (btable, "id")),
        Column("arm_id", TEXT),
        Column("label", TEXT),
        Column("is_baseline", BOOLEAN),
        Column("unit", TEXT),
    ]
    cols += [Column(s, INTEGER if s == "n" else REAL) for s in ARM_STATS]
    cols += [Column("config", JSON, "flags that differ from the baseline arm")]
    cols += [Column(f"{s}_delta_pct", REAL, f"computed: (arm {s} - baseline {s}) / baseline {s} x 100") for s in ("mean", "p50", "p99")]
    table = Table(
        "arms",
        "One row per arm of a benchmark; deltas vs the baseline arm are computed, never typed in.",
        cols,
        primary_key=["benchmark_id", "arm_id"],
    )
    for rec in recs:
        arms = rec.data.get("arms")
        if not isinstance(arms, list):
            continue
        deltas = arm_deltas(rec.data)
        for arm in arms:
            if not isinstance(arm, dict):
                continue
            stats = arm.get("stats") if isinstance(arm.get("stats"), dict) else {}
            dl = deltas.get(arm.get("id"), {})
            table.rows.append(
                (
                    rec.id,
                    arm.get("id"),
                    arm.get("label"),
                    arm.get("id") == rec.data.get("baseline_arm"),
                    arm.get("unit"),
                    *(_cell(stats.get(s), INTEGER if s == "n" else REAL) for s in ARM_STATS),
                    _json(arm.get("config")),
                    *(dl.get(f"{s}_delta_pct") for s in ("mean", "p50", "p99")),
                )
            )
    return table


def _flops(kb: KB, recs: list, atable: str) -> Table:
    from ..schemas import schema_doc

    item = (((schema_doc(kb, "accelerator") or {}).get("properties") or {}).get("flops") or {}).get("items") or {}
    props = item.get("properties") or {"precision": {"type": "string"}, "tflops": {"type": "number"}, "dense": {"type": "boolean"}}
    cols = [Column("accelerator_id", TEXT, "", (atable, "id")), Column("position", INTEGER)]
    cols += [Column(n, _sql_type(p), str(p.get("description") or "")) for n, p in props.items()]
    table = Table(
        "accelerator_flops",
        "Peak compute rows of each accelerator (TFLOPS per precision; dense or sparse).",
        cols,
        primary_key=["accelerator_id", "position"],
    )
    kinds = [(n, _sql_type(p)) for n, p in props.items()]
    for rec in recs:
        for pos, row in enumerate(rec.data.get("flops") or []):
            if isinstance(row, dict):
                table.rows.append((rec.id, pos, *(_cell(row.get(n), k) for n, k in kinds)))
    return table


def _findings(kb: KB, mode: str) -> Table:
    cols = [
        Column("code", TEXT),
        Column("rule", TEXT),
        Column("severity", TEXT),
        Column("record", TEXT, "dir/id"),
        Column("path", TEXT),
        Column("field", TEXT),
        Column("message", TEXT),
        Column("evidence", JSON),
    ]
    table = Table(
        "findings", f"Findings of `inferkb {mode}` on this KB." if mode != "none" else "Findings (not computed for this export).", cols
    )
    if mode == "none":
        return table
    if mode not in ("validate", "check"):
        raise ValueError(f"findings mode {mode!r}: expected validate, check or none")
    report = kb.validate() if mode == "validate" else kb.check()
    for f in report.findings:
        table.rows.append((f.code, f.rule, f.severity, f.record, f.path, f.field, f.message, _json(f.evidence)))
    return table
