"""base_model_id: the published model an open-division MLPerf result was derived from (never its identity).

The expected label -> model pairs below are written by hand from the labels
themselves (the task's list), not computed through the label map.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from conftest import BUNDLED
from inferkb import derive
from inferkb.analysis.compare import compare, select
from inferkb.errors import InputError
from inferkb.intake import mlperf_base_models as B
from inferkb.intake.base import IntakeOptions, stable_view, without_backfills
from inferkb.record_view import summary_lines

REPO = Path(__file__).resolve().parents[1]
MLPERF = REPO.parent / "shared" / "corpus" / "mlperf"
TODAY = dt.date(2026, 12, 2)
COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}

# Every submitter's label in the bundled KB, and the model each was built from (read off the label by hand).
EXPECTED = {
    "llama3_1-70b-fp8_dyn": "llama-3-1-70b",
    "llama3_1-70b-fp8_pre": "llama-3-1-70b",
    "llama3_1-70b-fp8_trtllm": "llama-3-1-70b",
    "llama2-70b-fp8_quark": "llama-2-70b",
    "neuralmagic_Llama-2-7b-chat-hf-FP8": "llama-2-7b",
    "llama3_1-405b_finetuned": "llama-3-1-405b",
    "llama3_1-405b_pruned": "llama-3-1-405b",
    "llama3_1-8b-edge": "llama-3-1-8b",
}


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def _open_rows(kb: inferkb.KB) -> list:
    return [r for r in kb.by_type("benchmark") if (r.data.get("submission") or {}).get("division") == "open"]


# ---- the bundled KB ---------------------------------------------------------------------


def test_every_labelled_open_row_names_the_model_its_label_was_built_from(bundled):
    labelled = [r for r in _open_rows(bundled) if r.data["submission"].get("used_model")]
    assert len(labelled) == 30
    for r in labelled:
        assert r.data.get("base_model_id") == EXPECTED[r.data["submission"]["used_model"]], r.key
        assert r.data.get("model_id") is None, r.key


def test_unlabelled_open_rows_and_closed_rows_carry_no_base_model(bundled):
    rows = [r for r in bundled.by_type("benchmark") if "base_model_id" in r.data]
    assert len(rows) == 30
    assert all(r.data["submission"]["division"] == "open" and r.data["submission"].get("used_model") for r in rows)


def test_the_fill_quotes_the_label_in_provenance(bundled):
    for r in bundled.by_type("benchmark"):
        if not r.data.get("base_model_id"):
            continue
        [entry] = [p for p in r.data["provenance"] if p["field"] == "base_model_id"]
        assert entry["evidence"] == {"field": "submission.used_model", "quote": r.data["submission"]["used_model"]}
        assert entry["action"] == "backfill" and entry["numbers_changed"] is False


def test_every_map_entry_names_a_bundled_model_record_and_states_its_evidence(bundled):
    models = bundled.ids_of_type("model")
    for rule in B.label_map():
        assert rule.model in models, rule.pattern
        assert len(rule.evidence) > 40, rule.pattern


def test_the_derivation_has_nothing_left_to_fill_on_the_bundled_kb(bundled):
    res = derive.run(bundled, "base-model-id")
    assert res.changes == []
    # The 46 open rows with no label stay unfilled, each reported with its reason.
    no_label = [r for r in _open_rows(bundled) if not r.data["submission"].get("used_model")]
    assert len(no_label) == 46
    assert {f.record for f in res.findings if f.code == "KB1002"} == {r.key for r in no_label}


def test_the_bundled_kb_validates_base_model_id_as_a_reference(bundled):
    assert bundled.profile.types["benchmark"].refs["base_model_id"] == "model"
    assert not [f for f in bundled.validate().findings if f.field == "base_model_id"]


def test_where_finds_open_results_by_base_model(bundled):
    from inferkb.query import where

    rows = where(bundled, "base_model_id = llama-3-1-70b")
    labels = {bundled.records[r["key"]].data["submission"]["used_model"] for r in rows}
    assert labels == {k for k, v in EXPECTED.items() if v == "llama-3-1-70b"}
    assert len(rows) == 21


def test_compare_by_model_never_includes_results_derived_from_it(bundled):
    for model in ("llama-3-1-70b", "llama-2-70b", "llama-3-1-405b"):
        recs, _ = select(bundled, model=model)
        assert not [r for r in recs if r.data.get("base_model_id")], model
        assert not [r for r in recs if (r.data.get("submission") or {}).get("division") == "open"], model


def test_compare_by_base_model_selects_them_and_ranks_none_with_closed_rows(bundled):
    res = compare(bundled, base_model="llama-3-1-70b")
    ids = {n.id for n in res.not_comparable} | {row.id for c in res.classes for row in c.rows}
    assert len(ids) == 21
    assert all(bundled.resolve(f"benchmarks/{i}").data["submission"]["division"] == "open" for i in ids)
    # A modified model has no identity: its results are listed, not ranked (model is not stated).
    assert res.classes == []


def test_show_names_the_base_model_as_derived_from(bundled):
    rec = bundled.resolve("benchmarks/mlperf-v5-1-open-krai-xe9680-mi300x-x8-vllm-065-llama2-70b-99-9-offline")
    text = "\n".join(summary_lines(bundled, rec))
    assert "base model       llama-2-70b (Llama 2 70B)  (published model it was derived from" in text
    assert "model_id null" in text


# ---- the label map ----------------------------------------------------------------------


def _rules(*pairs: tuple[str, str]) -> tuple[B.LabelRule, ...]:
    text = "\n".join(f'[[label]]\npattern = \'{p}\'\nmodel = "{m}"\nevidence = "because"\n' for p, m in pairs)
    return B.parse_map(text, path="t.toml")


def test_a_label_matching_two_entries_is_ambiguous_and_names_both():
    m = B.match_label("llama3_1-70b-x", _rules(("llama3_1-70b.*", "a"), ("llama3_1-.*", "b")), {"a", "b"})
    assert (m.kind, m.model_id) == ("ambiguous", None)
    assert "'llama3_1-70b.*' -> a" in m.reason() and "'llama3_1-.*' -> b" in m.reason()


def test_an_entry_naming_a_model_the_kb_lacks_fills_nothing():
    m = B.match_label("llama3_1-70b-x", _rules(("llama3_1-70b.*", "no-such-model")), {"a"})
    assert (m.kind, m.model_id) == ("unknown-model", None)
    assert "'no-such-model' is not a model record" in m.reason()


def test_a_pattern_must_match_the_whole_label():
    rules = _rules(("llama2-7b", "l7"))
    assert B.match_label("llama2-7b", rules, {"l7"}).model_id == "l7"
    assert B.match_label("llama2-70b", rules, {"l7"}).kind == "no-match"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("[[label]]\npattern = '('\nmodel = 'm'\nevidence = 'e'\n", "label[0].pattern"),
        ("[[label]]\npattern = 'x'\nevidence = 'e'\n", "label[0].model"),
        ("[[label]]\npattern = 'x'\nmodel = 'm'\nevidence = ''\n", "label[0].evidence"),
    ],
)
def test_a_broken_map_entry_is_an_input_error_naming_it(text, field):
    with pytest.raises(InputError) as exc:
        B.parse_map(text, path="map.toml")
    assert exc.value.path == "map.toml" and exc.value.field == field


# ---- the derivation on a small KB -------------------------------------------------------


def _open(rid: str, label: str | None, division: str = "open", **fields) -> dict:
    sub = {"suite": "MLPerf Inference", "round": "v5.1", "division": division}
    if label is not None:
        sub["used_model"] = label
    return bench(rid, 100.0, **{"origin": "mlperf-inference", "model": None, "model_id": None, "submission": sub, **fields})


@pytest.fixture()
def kb_root(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setattr(
        B, "label_map", lambda: _rules(("base7b-.*", "base-7b"), ("twin-.*", "m70"), ("twin-x.*", "m70"), ("lost-.*", "gone"))
    )
    models = [{"id": "base-7b", "type": "model", "name": "Base 7B", "architecture": "dense", "params_b": 7, **COMMON}]
    records = [
        _open("b-filled", "base7b-fp8_dyn"),
        _open("b-ambiguous", "twin-x1"),
        _open("b-unknown-model", "lost-1"),
        _open("b-no-match", "other-9b"),
        _open("b-no-label", None),
        _open("b-closed", "base7b-fp8_dyn", division="closed", model="m", model_id="m70"),
        _open("b-already-set", "base7b-fp8_dyn", base_model_id="m70"),
    ]
    return make_kb(tmp_path / "kb", records, models=models)


def _run(root: Path, write: bool = True) -> derive.DeriveResult:
    return derive.run(inferkb.open(root, cache=False), "base-model-id", write=write, today=TODAY)


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_derivation_fills_only_a_single_known_match_and_reports_the_rest(kb_root):
    res = _run(kb_root)
    assert [(c.record, c.new) for c in res.changes] == [("benchmarks/b-filled", "base-7b")]
    assert res.proof.ok
    codes = {f.record.split("/")[1]: f.code for f in res.findings}
    assert codes == {"b-ambiguous": "KB1001", "b-unknown-model": "KB1002", "b-no-match": "KB1002", "b-no-label": "KB1002"}
    [amb] = [f for f in res.findings if f.record == "benchmarks/b-ambiguous"]
    assert amb.extra["candidates"] == ["m70"]
    for rid in ("b-ambiguous", "b-unknown-model", "b-no-match", "b-no-label", "b-closed"):
        assert "base_model_id" not in _rec(kb_root, rid), rid
    assert _rec(kb_root, "b-already-set")["base_model_id"] == "m70"
    filled = _rec(kb_root, "b-filled")
    assert filled["base_model_id"] == "base-7b" and filled["model_id"] is None
    assert filled["provenance"][-1]["evidence"] == {"field": "submission.used_model", "quote": "base7b-fp8_dyn"}


def test_a_second_run_changes_nothing(kb_root):
    _run(kb_root)
    again = _run(kb_root)
    assert again.changes == [] and again.files == []


def test_the_importer_fill_is_the_derivations_entry(kb_root):
    """The importer's fill and the derivation write the same value and the same provenance entry (dates aside)."""
    _run(kb_root)
    derived = _rec(kb_root, "b-filled")
    fresh = _open("b-filled", "base7b-fp8_dyn")
    match = B.fill(fresh, {"base-7b", "m70"}, "2027-01-01")
    assert match.model_id == "base-7b"
    assert fresh["base_model_id"] == derived["base_model_id"]
    assert {k: v for k, v in fresh["provenance"][-1].items() if k != "date"} == {
        k: v for k, v in derived["provenance"][-1].items() if k != "date"
    }
    # A re-import of the same row is then no change, wherever each step appended its entry.
    fresh["provenance"].insert(0, {"tag": "intake-mlperf", "field": "*", "action": "import"})
    derived["provenance"].insert(0, {"tag": "intake-mlperf", "field": "*", "action": "import"})
    derived["provenance"].append({"tag": "derive:per-accelerator", "field": "per_accelerator", "action": "backfill"})
    derived["per_accelerator"] = {"value": 12.5}
    assert stable_view(without_backfills(derived, fresh)) == stable_view(fresh)


def test_the_importer_leaves_closed_and_unlabelled_rows_alone():
    for rec in (_open("c", "base7b-x", division="closed"), _open("n", None)):
        before = json.dumps(rec, sort_keys=True)
        assert B.fill(rec, {"base-7b"}, "2027-01-01") is None
        assert json.dumps(rec, sort_keys=True) == before


# ---- validate ---------------------------------------------------------------------------


def _validate(tmp_path: Path, **fields) -> list:
    root = make_kb(tmp_path / "kb", [_open("b", "x", **fields)])
    return [f for f in inferkb.open(root, cache=False).validate().findings if f.field == "base_model_id"]


def test_kb125_fires_for_two_known_models_that_differ(tmp_path):
    models = [{"id": "base-7b", "type": "model", "name": "Base 7B", "architecture": "dense", "params_b": 7, **COMMON}]
    root = make_kb(tmp_path / "kb", [_open("b", "x", model_id="m70", base_model_id="base-7b")], models=models)
    [f] = [f for f in inferkb.open(root, cache=False).validate().findings if f.field == "base_model_id"]
    assert (f.code, f.severity) == ("KB125", "warning")


def test_the_same_model_in_both_fields_is_no_finding(tmp_path):
    assert _validate(tmp_path, model_id="m70", base_model_id="m70") == []


def test_an_unknown_base_model_is_the_usual_reference_finding(tmp_path):
    found = _validate(tmp_path, base_model_id="no-such-model")
    assert [f.code for f in found] == ["KB203"]


# ---- the importer on the real round tables ----------------------------------------------


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


def test_importing_v51_fills_the_same_values_and_entries_as_the_bundled_records(tmp_path, bundled):
    from inferkb.intake.mlperf_json import import_round_json

    root = tmp_path / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks"))
    res = import_round_json(inferkb.open(root), _need(MLPERF / "inference_results_v5.1/summary_results.json"), IntakeOptions())
    fresh = [r for r in res.records if r["type"] == "benchmark" and r.get("base_model_id")]
    assert len(fresh) == len([r for r in _open_rows(bundled) if r.data.get("base_model_id") and r.data["submission"]["round"] == "v5.1"])
    for data in fresh:
        old = bundled.resolve(f"benchmarks/{data['id']}").data
        assert data["base_model_id"] == old["base_model_id"] == EXPECTED[data["submission"]["used_model"]]
        [new_entry] = [p for p in data["provenance"] if p["field"] == "base_model_id"]
        [old_entry] = [p for p in old["provenance"] if p["field"] == "base_model_id"]
        assert {k: v for k, v in new_entry.items() if k != "date"} == {k: v for k, v in old_entry.items() if k != "date"}


def test_an_ambiguous_map_makes_the_importer_fill_nothing_and_say_so(tmp_path, monkeypatch):
    from inferkb.intake.mlperf_json import import_round_json

    monkeypatch.setattr(B, "label_map", lambda: _rules(("llama3_1-70b.*", "llama-3-1-70b"), ("llama3_1-.*", "llama-3-1-8b")))
    root = tmp_path / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks"))
    res = import_round_json(inferkb.open(root), _need(MLPERF / "inference_results_v6.0/summary_results.json"), IntakeOptions())
    labelled = [r for r in res.records if r["type"] == "benchmark" and (r.get("submission") or {}).get("used_model")]
    assert labelled and not [r for r in labelled if "base_model_id" in r]
    amb = [f for f in res.findings if f.code == "KB1001" and f.field == "UsedModel"]
    assert {f.record for f in amb} == {
        f"benchmarks/{r['id']}" for r in labelled if r["submission"]["used_model"].startswith("llama3_1-70b")
    }
