"""Exports (DuckDB, Parquet, SQLite, CSV, data package + Croissant) and the read-only SQL command."""

from __future__ import annotations

import csv
import json
import sqlite3

import duckdb
import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.errors import UsageError
from inferkb.export.sql import Database, QueryError
from inferkb.export.tables import build_tables
from inferkb.export.writers import export, neutralise


@pytest.fixture
def kb(tmp_path):
    arms = [{"id": "base", "stats": {"mean": 100.0}, "unit": "tok/s"}, {"id": "t", "stats": {"mean": 150.0}, "unit": "tok/s"}]
    prov = [
        {
            "date": "2026-01-01",
            "tag": "x",
            "field": "conditions.warmup",
            "action": "backfill",
            "method": "read it",
            "basis": "b",
            "evidence": {"field": "methodology", "quote": "10 warmup requests"},
            "numbers_changed": False,
        }
    ]
    recs = [
        bench("a", 1000.0, name='=HYPERLINK("http://x")', notes="@SUM(A1)", arms=arms, baseline_arm="base", provenance=prov),
        bench("b", -5.0, notes="plain"),
    ]
    return inferkb.open(make_kb(tmp_path / "kb", recs))


def test_tables_take_columns_from_the_schema_and_add_derived_ones(kb):
    t = build_tables(kb, findings="none")
    cols = t["benchmarks"].column_names
    assert cols[0] == "id" and "value_scope" in cols and "token_basis" in cols and "per_accelerator_value" in cols
    fks = {c.name: c.fk for c in t["benchmarks"].columns if c.fk}
    assert fks["model_id"] == ("models", "id") and fks["engine_id"] == ("engines", "id")
    arms = {r[1]: r for r in t["arms"].rows}
    mean_delta = t["arms"].column_names.index("mean_delta_pct")
    assert arms["t"][mean_delta] == pytest.approx(50.0) and arms["base"][mean_delta] is None
    (p,) = t["provenance"].rows
    names = t["provenance"].column_names
    assert p[names.index("field_path")] == "conditions.warmup" and p[names.index("value")] == "10"
    assert p[names.index("quote")] == "10 warmup requests"


def test_sql_reads_and_refuses_writes_attach_copy_and_file_reads(kb, tmp_path):
    with Database.build(kb, findings="none") as db:
        res = db.query("SELECT id, value FROM benchmarks ORDER BY value DESC")
        assert res.columns == ["id", "value"] and res.rows == [("a", 1000.0), ("b", -5.0)]
        j = db.query("SELECT c.input_tokens FROM benchmarks b JOIN conditions c ON c.benchmark_id = b.id WHERE b.id = 'a'")
        assert j.rows == [(1024,)]
        for bad in (
            "CREATE TABLE x (a INT)",
            "INSERT INTO benchmarks (id) VALUES ('z')",
            f"ATTACH '{tmp_path / 'other.db'}' AS o",
            f"COPY benchmarks TO '{tmp_path / 'leak.csv'}'",
            "SELECT * FROM read_csv('/etc/hostname')",
            "SET enable_external_access = true",
        ):
            with pytest.raises(QueryError):
                db.query(bad)
        assert not (tmp_path / "leak.csv").exists() and not (tmp_path / "other.db").exists()


def test_sql_timeout_interrupts_a_long_query(kb):
    with Database.build(kb, findings="none") as db:
        with pytest.raises(QueryError, match="timeout"):
            db.query("SELECT count(*) FROM range(100000000000) a, range(1000) b", timeout=0.3)
        with pytest.raises(UsageError):
            db.query("SELECT 1", timeout=0)


def test_sqlite_export_declares_foreign_keys_and_full_text_search(kb, tmp_path):
    out = export(kb, "sqlite", tmp_path / "kb.sqlite", findings="none")
    con = sqlite3.connect(out)
    fks = {(r[3], r[2]) for r in con.execute("PRAGMA foreign_key_list(benchmarks)")}
    assert ("model_id", "models") in fks and ("engine_id", "engines") in fks
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    hits = con.execute(
        "SELECT b.id FROM benchmarks_fts JOIN benchmarks b ON b.rowid = benchmarks_fts.rowid WHERE benchmarks_fts MATCH 'plain'"
    ).fetchall()
    assert hits == [("b",)]
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name = 'records_fts'")] == ["records_fts"]


def test_csv_neutralises_formula_cells_but_not_numbers(kb, tmp_path):
    out = export(kb, "csv", tmp_path / "csv", findings="none")
    rows = {r["id"]: r for r in csv.DictReader(open(out / "benchmarks.csv", encoding="utf-8"))}
    assert rows["a"]["name"] == '\'=HYPERLINK("http://x")' and rows["a"]["notes"] == "'@SUM(A1)"
    assert rows["b"]["value"] == "-5.0"
    assert neutralise("+1") == "'+1" and neutralise("-x") == "'-x" and neutralise(-1) == -1 and neutralise("ok") == "ok"


def test_datapackage_has_table_schemas_keys_and_croissant(kb, tmp_path):
    out = export(kb, "datapackage", tmp_path / "dp", findings="none")
    dp = json.loads((out / "datapackage.json").read_text())
    assert dp["profile"] == "tabular-data-package"
    res = {r["name"]: r for r in dp["resources"]}
    schema = res["benchmarks"]["schema"]
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["value"] == "number" and types["accelerator_count"] == "integer" and schema["primaryKey"] == ["id"]
    assert {"fields": ["model_id"], "reference": {"resource": "models", "fields": ["id"]}} in schema["foreignKeys"]
    for r in dp["resources"]:
        assert (out / r["path"]).is_file()
        with open(out / r["path"], encoding="utf-8") as fh:
            assert next(csv.reader(fh)) == [f["name"] for f in r["schema"]["fields"]]
    cr = json.loads((out / "croissant.json").read_text())
    assert cr["@type"] == "sc:Dataset" and cr["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    files = {d["@id"] for d in cr["distribution"]}
    assert "benchmarks.csv" in files and all(len(d["sha256"]) == 64 for d in cr["distribution"])
    bench_rs = next(r for r in cr["recordSet"] if r["@id"] == "benchmarks")
    model_field = next(f for f in bench_rs["field"] if f["name"] == "model_id")
    assert model_field["references"] == {"field": {"@id": "models/id"}}
    assert model_field["source"] == {"fileObject": {"@id": "benchmarks.csv"}, "extract": {"column": "model_id"}}


def test_duckdb_and_parquet_exports_read_back(kb, tmp_path):
    db = export(kb, "duckdb", tmp_path / "kb.duckdb", findings="none")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM benchmarks").fetchone() == (2,)
    con.close()
    pq = export(kb, "parquet", tmp_path / "pq", findings="none")
    assert duckdb.connect().execute(f"SELECT max(value) FROM '{pq / 'benchmarks.parquet'}'").fetchall() == [(1000.0,)]
    with Database.open(db) as ro:
        assert ro.query("SELECT count(*) FROM arms").rows == [(2,)]


def test_export_refuses_an_existing_path_and_replaces_it_only_with_overwrite(kb, tmp_path):
    dest = tmp_path / "out.sqlite"
    dest.write_text("keep me")
    with pytest.raises(UsageError, match="refusing to overwrite"):
        export(kb, "sqlite", dest, findings="none")
    assert dest.read_text() == "keep me"
    export(kb, "sqlite", dest, findings="none", overwrite=True)
    assert sqlite3.connect(dest).execute("SELECT count(*) FROM benchmarks").fetchone() == (2,)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_findings_table_holds_validate_findings(kb):
    t = build_tables(kb, findings="validate")
    assert t["findings"].rows, "the fixture records miss required schema fields, so validate reports findings"
    assert {r[2] for r in t["findings"].rows} <= {"error", "warning", "info"}


def test_bundled_kb_exports_every_format(tmp_path):
    kb = inferkb.open()
    for fmt, name in (("sqlite", "kb.sqlite"), ("datapackage", "dp")):
        export(kb, fmt, tmp_path / name, findings="none")
    con = sqlite3.connect(tmp_path / "kb.sqlite")
    assert con.execute("SELECT count(*) FROM benchmarks").fetchone()[0] == len(list(kb.by_type("benchmark")))
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []


def test_frictionless_validates_the_bundled_data_package_and_catches_a_broken_foreign_key(tmp_path):
    frictionless = pytest.importorskip("frictionless")
    out = export(inferkb.open(), "datapackage", tmp_path / "dp", findings="none")
    report = frictionless.validate(str(out / "datapackage.json"))
    assert report.valid, [(t.name, [e.note for e in t.errors[:3]]) for t in report.tasks if not t.valid]
    broken = inferkb.open(make_kb(tmp_path / "kb2", [bench("a", 1.0, model_id="no-such-model")]))
    bad = export(broken, "datapackage", tmp_path / "dp2", findings="none")
    errors = [e.type for t in frictionless.validate(str(bad / "datapackage.json")).tasks for e in t.errors]
    assert "foreign-key" in errors


def test_csv_sqlite_and_duckdb_sql_carry_repeat_group(tmp_path):
    recs = [bench("r", 100.0, repeat_group="r"), bench("r-2", 300.0, repeat_group="r"), bench("alone", 150.0)]
    kb = inferkb.open(make_kb(tmp_path / "kb", recs))
    expected = {"r": "r", "r-2": "r", "alone": None}
    out = export(kb, "csv", tmp_path / "csv", findings="none")
    rows = {r["id"]: r["repeat_group"] or None for r in csv.DictReader(open(out / "benchmarks.csv", encoding="utf-8"))}
    assert rows == expected
    db = export(kb, "sqlite", tmp_path / "kb.sqlite", findings="none")
    con = sqlite3.connect(db)
    assert dict(con.execute("SELECT id, repeat_group FROM benchmarks")) == expected
    assert con.execute("SELECT type FROM pragma_table_info('benchmarks') WHERE name = 'repeat_group'").fetchone() == ("TEXT",)
    con.close()
    duck = export(kb, "duckdb", tmp_path / "kb.duckdb", findings="none")
    with Database.open(duck) as ro:
        assert ro.query("SELECT repeat_group, count(*) FROM benchmarks WHERE repeat_group IS NOT NULL GROUP BY 1").rows == [("r", 2)]


def test_bundled_sqlite_export_holds_the_64_repeat_pairs(tmp_path):
    kb = inferkb.open()
    db = export(kb, "sqlite", tmp_path / "kb.sqlite", findings="none")
    con = sqlite3.connect(db)
    sizes = con.execute("SELECT count(*) FROM benchmarks WHERE repeat_group IS NOT NULL GROUP BY repeat_group").fetchall()
    con.close()
    stored = {}
    for r in kb.by_type("benchmark"):
        if r.data.get("repeat_group"):
            stored[r.data["repeat_group"]] = stored.get(r.data["repeat_group"], 0) + 1
    assert sorted(n for (n,) in sizes) == sorted(stored.values())
    assert sum(1 for (n,) in sizes if n == 2) == 64
