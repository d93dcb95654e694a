"""Every validate rule (KB0xx, KB1xx, KB2xx) with a passing and a failing record."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import rules

SRC = {"data/sources/src-a.json": rec("source", "src-a")}
TODAY = dt.date(2026, 11, 29)


def codes(kb_root, **opts):
    report = inferkb.open(kb_root).validate(today=TODAY, **opts)
    return [f.code for f in report.findings], report


def test_clean_kb_has_no_findings(tmp_path):
    write_kb(tmp_path, {**SRC, "data/engines/vllm.json": rec("engine", "vllm", sources=["src-a"])})
    found, _ = codes(tmp_path)
    assert found == []


@pytest.mark.parametrize(
    ("content", "code", "fragment"),
    [
        (b'{"id": "x", "type": "engine",}', "KB001", "line 1"),
        (b'{"id": "x", "id": "y", "type": "engine"}', "KB002", "'id' appears twice"),
        (b'{"id": "x", "type": "engine", "value": NaN}', "KB003", "NaN"),
        (b'{"id": "x", "type": "engine", "value": -Infinity}', "KB003", "Infinity"),
        (b'\xef\xbb\xbf{"id": "x", "type": "engine"}', "KB004", "byte-order mark"),
        (b'{"id": "x", "type": "engine", "name": "Caf\xe9"}', "KB005", "0xe9"),
        (b"", "KB006", "empty"),
        (b"   \n", "KB006", "empty"),
        (b'[{"id": "x"}]', "KB007", "array"),
        (b'"just a string"', "KB007", "string"),
    ],
)
def test_file_level_problems_are_reported_with_their_code(tmp_path, content, code, fragment):
    write_kb(tmp_path, {"data/engines/x.json": content})
    found, report = codes(tmp_path)
    assert found == [code]
    finding = report.findings[0]
    assert finding.path == "data/engines/x.json"
    assert fragment in finding.message


def test_duplicate_key_inside_nested_object_is_found(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": b'{"id": "x", "type": "engine", "name": "x", "a": {"b": 1, "b": 2}}'})
    found, report = codes(tmp_path)
    assert found == ["KB002"] and "line 1" in report.findings[0].message


def test_oversized_record_is_reported_and_not_loaded(tmp_path):
    write_kb(tmp_path, {})
    big = tmp_path / "data" / "engines" / "huge.json"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as fh:  # 50 MB: a sparse file would not exercise the size check honestly
        fh.write(b'{"id": "huge", "type": "engine", "name": "')
        fh.write(b"x" * (50 * 1024 * 1024))
        fh.write(b'"}')
    kb = inferkb.open(tmp_path)
    assert "engines/huge" not in kb.records
    found = [f for f in kb.validate().findings]
    assert [f.code for f in found] == ["KB008"]
    assert "50.0 MiB" in found[0].message


def test_symlink_pointing_outside_the_kb_is_refused(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(rec("engine", "evil")))
    kb_root = write_kb(tmp_path / "kb", {})
    (kb_root / "data" / "engines").mkdir()
    os.symlink(outside, kb_root / "data" / "engines" / "evil.json")
    kb = inferkb.open(kb_root)
    assert kb.records == {}
    assert [f.code for f in kb.validate().findings] == ["KB009"]


def test_symlink_inside_the_kb_is_followed(tmp_path):
    kb_root = write_kb(tmp_path, {"data/engines/real.json": rec("engine", "real")})
    os.symlink(kb_root / "data" / "engines" / "real.json", kb_root / "data" / "engines" / "alias.json")
    kb = inferkb.open(kb_root)
    assert "engines/alias" in kb.records


def test_unknown_directory_and_stray_files_are_reported(tmp_path):
    write_kb(
        tmp_path,
        {
            "data/enginez/vllm.json": rec("engine", "vllm"),
            "data/engines/notes.txt": "hello",
            "data/stray.json": "{}",
            "data/engines/nested/x.json": rec("engine", "x"),
        },
    )
    found, report = codes(tmp_path)
    assert sorted(found) == ["KB010"] * 4
    assert any("enginez" in f.message for f in report.findings)


@pytest.mark.parametrize("name", ["Upper-Case.json", "has space.json", "under_score.json"])
def test_bad_file_names_are_reported(tmp_path, name):
    stem = name[:-5]
    write_kb(tmp_path, {f"data/engines/{name}": rec("engine", stem)})
    found, _ = codes(tmp_path)
    assert "KB011" in found


def test_schema_errors_are_all_reported_with_path_expected_and_found(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": {"id": "x", "type": "engine", "confidence": "high", "sources": [1]}})
    found, report = codes(tmp_path, select=["KB101"])
    messages = sorted(f.message for f in report.findings)
    assert len(found) == 3  # name missing, confidence type, sources[0] type
    fields = sorted(str(f.field) for f in report.findings)
    assert fields == ["None", "confidence", "sources[0]"]
    assert any("'high'" in m and "number" in m for m in messages)


def test_id_must_match_file_stem(tmp_path):
    write_kb(tmp_path, {"data/engines/vllm.json": rec("engine", "vllm-engine")})
    assert codes(tmp_path)[0] == ["KB102"]


def test_id_must_be_kebab_case(tmp_path):
    write_kb(tmp_path, {"data/engines/vllm.json": rec("engine", "vllm") | {"id": "VLLM_x"}})
    assert sorted(codes(tmp_path)[0]) == ["KB102", "KB103"]


def test_type_must_match_directory(tmp_path):
    write_kb(tmp_path, {"data/models/x.json": rec("benchmark", "x")})
    assert codes(tmp_path)[0] == ["KB104"]


@pytest.mark.parametrize(
    ("value", "code"), [("2026-02-30", "KB105"), ("2026-13-01", "KB105"), ("2099-01-01", "KB106"), ("2026-11-29", None)]
)
def test_dates_must_be_real_and_not_in_the_future(tmp_path, value, code):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", updated=value)})
    assert codes(tmp_path)[0] == ([code] if code else [])


def test_a_date_shared_by_many_records_is_judged_in_each_even_past_the_memo_limit(tmp_path, monkeypatch):
    """Parsed dates are remembered per string (validate._day): every record still gets its own finding, and the memo
    starting afresh when full changes no answer."""
    from inferkb import validate as V

    monkeypatch.setattr(V, "_DAYS_MAX", 2)
    prov = [{"date": "2026-02-30"}, {"date": "2099-01-01"}, {"date": "2026-01-01\n"}, {"date": "not a date"}]
    files = {f"data/engines/e{i}.json": rec("engine", f"e{i}", updated="2026-02-30", provenance=prov) for i in range(3)}
    write_kb(tmp_path, files)
    per_record = codes(tmp_path)[0]
    assert per_record == ["KB105", "KB105", "KB106", "KB105"] * 3


def test_future_publication_of_a_release_date_is_allowed_but_not_a_future_updated(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", release_date="2027-03-01")})
    assert codes(tmp_path)[0] == []


@pytest.mark.parametrize(("value", "bad"), [(0.0, False), (1, False), (1.5, True), (-0.1, True), (85, True), (True, True)])
def test_confidence_must_be_in_unit_interval(tmp_path, value, bad):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", confidence=value)})
    assert ("KB107" in codes(tmp_path)[0]) is bad


def test_unresolved_source_is_an_error(tmp_path):
    write_kb(tmp_path, {**SRC, "data/engines/x.json": rec("engine", "x", sources=["src-a", "src-missing"])})
    found, report = codes(tmp_path)
    assert found == ["KB201"] and "src-missing" in report.findings[0].message


def test_unresolved_engine_id_is_an_error_not_budgeted(tmp_path):
    write_kb(tmp_path, {"data/benchmarks/b.json": rec("benchmark", "b", engine_id="no-engine")})
    found, _ = codes(tmp_path, max_dangling_refs=100)
    assert "KB202" in found and "KB204" not in found


def test_dangling_references_are_counted_against_the_budget(tmp_path):
    write_kb(tmp_path, {"data/benchmarks/b.json": rec("benchmark", "b", accelerator_ids=["gpu-a", "gpu-b"], format_id=None)})
    found, report = codes(tmp_path, max_dangling_refs=1)
    assert found.count("KB203") == 2 and "KB204" in found
    assert report.figures["validate"]["dangling_references"] == 2
    found, _ = codes(tmp_path, max_dangling_refs=2)
    assert "KB204" not in found and "KB206" not in found
    found, _ = codes(tmp_path, max_dangling_refs=5)
    assert "KB206" in found


def test_budget_is_read_from_kb_toml(tmp_path):
    toml = '[kb]\nmax_dangling_refs = 0\n[types.benchmark]\ndir = "benchmarks"\nrefs = { accelerator_ids = "accelerator" }\n[types.accelerator]\ndir = "accelerators"\n[types.source]\ndir = "sources"\n'
    write_kb(tmp_path, {"data/benchmarks/b.json": rec("benchmark", "b", accelerator_ids=["gpu-a"])}, toml=toml)
    found, _ = codes(tmp_path)
    assert "KB204" in found


def test_any_type_reference_resolves_against_every_type(tmp_path):
    write_kb(
        tmp_path,
        {"data/engines/vllm.json": rec("engine", "vllm"), "data/gotchas/g.json": rec("gotcha", "g", affects=["vllm", "nothing-here"])},
    )
    found, report = codes(tmp_path, max_dangling_refs=5)
    assert found.count("KB203") == 1 and "nothing-here" in report.findings[0].message


def test_same_bare_id_in_two_types_is_ambiguous(tmp_path):
    write_kb(tmp_path, {"data/engines/vllm.json": rec("engine", "vllm"), "data/sources/vllm.json": rec("source", "vllm")})
    assert codes(tmp_path)[0] == ["KB205"]


def test_kb_without_schemas_is_validated_against_bundled_ones_and_says_so(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")}, schemas=False)
    found, report = codes(tmp_path)
    assert "KB110" in found
    assert report.figures["validate"]["schema_origin"]["engine"] == "bundled"
    assert any("bundled schemas" in n for n in report.notes)


def test_a_broken_schema_is_reported(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")})
    (tmp_path / "schemas" / "engine.schema.json").write_text('{"type": "objekt"}')
    found, _ = codes(tmp_path)
    assert "KB111" in found


def test_select_and_ignore_filter_by_code_prefix(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", confidence=3, updated="2026-02-30")})
    assert sorted(codes(tmp_path)[0]) == ["KB105", "KB107"]
    assert codes(tmp_path, select=["KB105"])[0] == ["KB105"]
    assert codes(tmp_path, ignore=["KB10"])[0] == []


def test_type_option_limits_the_records_checked(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", confidence=3), "data/models/m.json": rec("model", "m", confidence=3)})
    found, report = codes(tmp_path, types=["model"])
    assert found == ["KB107"] and report.findings[0].record == "models/m"


def test_every_validate_rule_has_docs_and_examples():
    import inferkb.validate_rules  # noqa: F401

    validate_rules = [r for r in rules.RULES.values() if r.family == "validate"]
    assert len(validate_rules) >= 25
    for r in validate_rules:
        assert r.summary and r.rationale and r.passing and r.failing, r.code


def test_finding_json_shape_matches_design(tmp_path):
    write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x", confidence=3)})
    report = inferkb.open(tmp_path).validate(today=TODAY)
    doc = report.to_dict()
    assert set(doc) == {"kb", "records", "findings", "summary"}
    assert set(doc["findings"][0]) >= {"code", "rule", "severity", "record", "path", "field", "message", "evidence"}
    assert doc["summary"]["by_code"] == {"KB107": 1}
    assert doc["summary"]["by_severity"]["error"] == 1


@pytest.mark.parametrize("limit", [1000, 65536, 1 << 20])
def test_read_capped_reads_whole_files_and_tells_an_oversized_one(tmp_path, limit):
    from inferkb.store.loader import read_capped

    for size in (0, 1, 999, 1000, 1001, 65535, 65536, 65537, 131072, 200001):
        path = tmp_path / f"f{size}.json"
        body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        path.write_bytes(body)
        got = read_capped(str(path), limit)
        if size <= limit:
            assert got == body, (size, limit)
        else:
            assert len(got) > limit and body.startswith(got), (size, limit)
