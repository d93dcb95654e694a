"""Write the tables of :mod:`inferkb.export.tables` as DuckDB, Parquet, SQLite, CSV or a Frictionless data package.

Every writer builds its output beside the destination and renames it into
place, so an interrupted export leaves no half-written file or folder; an
existing destination is refused unless ``overwrite``.

- ``duckdb``: one database file, a table each (JSON columns as text);
- ``parquet``: a folder of ``<table>.parquet`` written by DuckDB;
- ``sqlite``: one file for Datasette — primary and foreign keys declared, full-text
  search (FTS5, external content, the ``<table>_fts`` naming Datasette detects)
  on ``records`` (name, notes) and ``benchmarks`` (name, model, methodology, notes);
- ``csv``: a folder of ``<table>.csv`` (UTF-8, header row);
- ``datapackage``: the CSV folder plus ``datapackage.json`` (Frictionless
  Tabular Data Package with a Table Schema per resource: field types, primary
  and foreign keys) and ``croissant.json`` (Croissant 1.0 / schema.org JSON-LD).

CSV cells (csv and datapackage) that are text and begin with ``=``, ``+``,
``-``, ``@``, tab or carriage return are prefixed with ``'`` so a spreadsheet
does not run them as formulas (OWASP "CSV Injection"); numbers are written as
numbers and never altered.
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import UsageError
from .tables import BOOLEAN, INTEGER, JSON, REAL, Table

if TYPE_CHECKING:
    from ..kb import KB

FORMATS = ("duckdb", "parquet", "sqlite", "csv", "datapackage")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
DUCK_TYPES = {INTEGER: "BIGINT", REAL: "DOUBLE", BOOLEAN: "BOOLEAN", JSON: "VARCHAR"}
SQLITE_TYPES = {INTEGER: "INTEGER", REAL: "REAL", BOOLEAN: "INTEGER", JSON: "TEXT"}
FRICTIONLESS_TYPES = {INTEGER: "integer", REAL: "number", BOOLEAN: "boolean", JSON: "string"}
CROISSANT_TYPES = {INTEGER: "sc:Integer", REAL: "sc:Float", BOOLEAN: "sc:Boolean", JSON: "sc:Text"}
FTS_COLUMNS = {"records": ("name", "notes"), "benchmarks": ("name", "model", "methodology", "notes")}


def neutralise(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text starting with a spreadsheet formula character; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def export(kb: KB, fmt: str, out: str | os.PathLike, *, overwrite: bool = False, findings: str = "validate") -> Path:
    """Export ``kb`` to ``out`` in ``fmt`` (one of :data:`FORMATS`); returns the path written.

    Raises :class:`UsageError` for an unknown format or an existing ``out``
    without ``overwrite``.
    """
    from .tables import build_tables

    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; one of {', '.join(FORMATS)}")
    dest = Path(out)
    if dest.exists() and not overwrite:
        raise UsageError(f"{dest} exists; refusing to overwrite (pass --overwrite)")
    tables = build_tables(kb, findings=findings)
    writer: Callable[[dict[str, Table], Path, KB], None] = WRITERS[fmt]
    return _atomic(dest, lambda tmp: writer(tables, tmp, kb), directory=fmt in ("parquet", "csv", "datapackage"))


def _atomic(dest: Path, build: Callable[[Path], None], *, directory: bool) -> Path:
    parent = dest.parent if str(dest.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmpdir = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=parent))
    try:
        target = tmpdir if directory else tmpdir / dest.name
        build(target)
        old = None
        if dest.exists():
            old = parent / f".{dest.name}.old-{os.getpid()}"
            os.replace(dest, old)
        os.replace(target, dest)
        if old is not None:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    finally:
        if tmpdir.exists():
            shutil.rmtree(tmpdir, ignore_errors=True)
    return dest


# ---- DuckDB / Parquet -------------------------------------------------------


def load_duckdb(con: Any, tables: dict[str, Table], workdir: Path) -> None:
    """Create and fill every table in the DuckDB connection ``con`` (bulk-loaded from NDJSON files written in ``workdir``)."""
    for t in tables.values():
        cols = ", ".join(f'"{c.name}" {DUCK_TYPES.get(c.type, "VARCHAR")}' for c in t.columns)
        con.execute(f'CREATE TABLE "{t.name}" ({cols})')
        if not t.rows:
            continue
        path = workdir / f"{t.name}.ndjson"
        names = t.column_names
        with open(path, "wb") as fh:
            for row in t.rows:
                fh.write(orjson.dumps(dict(zip(names, row, strict=True))))
                fh.write(b"\n")
        spec = "{" + ", ".join(f"'{c.name}': '{DUCK_TYPES.get(c.type, 'VARCHAR')}'" for c in t.columns) + "}"
        con.execute(f"INSERT INTO \"{t.name}\" SELECT * FROM read_json('{_sql_str(path)}', format='newline_delimited', columns={spec})")
        path.unlink()


def _sql_str(path: Path) -> str:
    return str(path).replace("'", "''")


def write_duckdb(tables: dict[str, Table], dest: Path, kb: KB | None = None) -> None:
    """One DuckDB database file at ``dest`` holding every table."""
    import duckdb

    con = duckdb.connect(str(dest))
    try:
        load_duckdb(con, tables, dest.parent)
        for t in tables.values():
            if t.description:
                con.execute(f"COMMENT ON TABLE \"{t.name}\" IS '{t.description.replace(chr(39), chr(39) * 2)}'")
    finally:
        con.close()


def write_parquet(tables: dict[str, Table], dest: Path, kb: KB | None = None) -> None:
    """A folder ``dest`` of ``<table>.parquet`` files (written by DuckDB)."""
    import duckdb

    dest.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(":memory:")
    try:
        load_duckdb(con, tables, dest)
        for t in tables.values():
            con.execute(f"COPY \"{t.name}\" TO '{_sql_str(dest / (t.name + '.parquet'))}' (FORMAT parquet)")
    finally:
        con.close()


# ---- SQLite -----------------------------------------------------------------


def write_sqlite(tables: dict[str, Table], dest: Path, kb: KB | None = None) -> None:
    """A Datasette-friendly SQLite file: declared keys, foreign keys, FTS5 on records and benchmarks."""
    import sqlite3

    con = sqlite3.connect(str(dest))
    try:
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        for t in tables.values():
            defs = [f'"{c.name}" {SQLITE_TYPES.get(c.type, "TEXT")}' for c in t.columns]
            if t.primary_key:
                defs.append("PRIMARY KEY (" + ", ".join(f'"{k}"' for k in t.primary_key) + ")")
            for c in t.columns:
                if c.fk and c.fk[0] in tables:
                    defs.append(f'FOREIGN KEY ("{c.name}") REFERENCES "{c.fk[0]}"("{c.fk[1]}")')
            con.execute(f'CREATE TABLE "{t.name}" ({", ".join(defs)})')
            marks = ", ".join("?" for _ in t.columns)
            con.executemany(f'INSERT INTO "{t.name}" VALUES ({marks})', _unique_rows(t))
        for name, cols in FTS_COLUMNS.items():
            if name in tables:
                quoted = ", ".join(f'"{c}"' for c in cols)
                con.execute(f'CREATE VIRTUAL TABLE "{name}_fts" USING fts5({quoted}, content="{name}")')
                con.execute(f'INSERT INTO "{name}_fts" (rowid, {quoted}) SELECT rowid, {quoted} FROM "{name}"')
        con.commit()
    finally:
        con.close()


def _unique_rows(t: Table):
    """Rows with a duplicate primary key dropped (a KB with two files of one id must still export)."""
    if not t.primary_key:
        yield from t.rows
        return
    idx = [t.column_names.index(k) for k in t.primary_key]
    seen: set[tuple] = set()
    for row in t.rows:
        key = tuple(row[i] for i in idx)
        if key in seen:
            continue
        seen.add(key)
        yield row


# ---- CSV, data package, Croissant -------------------------------------------


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return neutralise(value)


def write_csv(tables: dict[str, Table], dest: Path, kb: KB | None = None) -> None:
    """A folder ``dest`` of ``<table>.csv`` (header row; empty cell = null; formula cells neutralised)."""
    dest.mkdir(parents=True, exist_ok=True)
    for t in tables.values():
        with open(dest / f"{t.name}.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(t.column_names)
            w.writerows([_csv_cell(v) for v in row] for row in t.rows)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def datapackage_descriptor(tables: dict[str, Table], kb_name: str) -> dict[str, Any]:
    """The Frictionless ``datapackage.json`` for ``tables`` written as ``<name>.csv``."""
    resources = []
    for t in tables.values():
        schema: dict[str, Any] = {
            "fields": [
                {
                    "name": c.name,
                    "type": FRICTIONLESS_TYPES.get(c.type, "string"),
                    **({"description": c.description} if c.description else {}),
                }
                for c in t.columns
            ],
            "missingValues": [""],
        }
        if t.primary_key:
            schema["primaryKey"] = list(t.primary_key)
        fks = [
            {"fields": [c.name], "reference": {"resource": c.fk[0], "fields": [c.fk[1]]}} for c in t.columns if c.fk and c.fk[0] in tables
        ]
        if fks:
            schema["foreignKeys"] = fks
        resources.append(
            {
                "name": t.name,
                "path": f"{t.name}.csv",
                "profile": "tabular-data-resource",
                "format": "csv",
                "mediatype": "text/csv",
                "encoding": "utf-8",
                "description": t.description,
                "schema": schema,
            }
        )
    return {
        "profile": "tabular-data-package",
        "name": "inferkb-export",
        "title": f"inferkb export of {kb_name}",
        "description": "Tables derived from an inferkb knowledge base. Text cells beginning with =, +, -, @, tab or CR carry a leading ' (CSV-injection guard).",
        "resources": resources,
    }


CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "dct": "http://purl.org/dc/terms/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def croissant_descriptor(tables: dict[str, Table], folder: Path, kb_name: str) -> dict[str, Any]:
    """Croissant 1.0 JSON-LD (schema.org Dataset) describing the CSV files in ``folder``: a FileObject and a RecordSet per table."""
    distribution = []
    record_sets = []
    for t in tables.values():
        file_id = f"{t.name}.csv"
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": file_id,
                "name": file_id,
                "contentUrl": file_id,
                "encodingFormat": "text/csv",
                "sha256": _sha256(folder / file_id),
            }
        )
        fields = []
        for c in t.columns:
            f: dict[str, Any] = {
                "@type": "cr:Field",
                "@id": f"{t.name}/{c.name}",
                "name": c.name,
                "dataType": CROISSANT_TYPES.get(c.type, "sc:Text"),
                "source": {"fileObject": {"@id": file_id}, "extract": {"column": c.name}},
            }
            if c.description:
                f["description"] = c.description
            if c.fk and c.fk[0] in tables:
                f["references"] = {"field": {"@id": f"{c.fk[0]}/{c.fk[1]}"}}
            fields.append(f)
        rs: dict[str, Any] = {"@type": "cr:RecordSet", "@id": t.name, "name": t.name, "description": t.description, "field": fields}
        if t.primary_key:
            rs["key"] = [{"@id": f"{t.name}/{k}"} for k in t.primary_key]
        record_sets.append(rs)
    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "name": "inferkb-export",
        "description": f"Tables derived from the inferkb knowledge base {kb_name!r}: records, benchmarks with run conditions, hardware, models, provenance.",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": distribution,
        "recordSet": record_sets,
    }


def write_datapackage(tables: dict[str, Table], dest: Path, kb: KB | None = None) -> None:
    """CSV files plus ``datapackage.json`` (Frictionless) and ``croissant.json`` (Croissant JSON-LD) in folder ``dest``."""
    write_csv(tables, dest)
    name = kb.profile.name if kb is not None and kb.profile.name else (str(kb.root) if kb is not None else "kb")
    (dest / "datapackage.json").write_bytes(orjson.dumps(datapackage_descriptor(tables, name), option=orjson.OPT_INDENT_2) + b"\n")
    (dest / "croissant.json").write_bytes(orjson.dumps(croissant_descriptor(tables, dest, name), option=orjson.OPT_INDENT_2) + b"\n")


WRITERS: dict[str, Callable[[dict[str, Table], Path, Any], None]] = {
    "duckdb": write_duckdb,
    "parquet": write_parquet,
    "sqlite": write_sqlite,
    "csv": write_csv,
    "datapackage": write_datapackage,
}
