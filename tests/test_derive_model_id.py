"""Derivation ``model-id``: a benchmark's empty model_id from its own model string, through the one resolver."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb import derive
from inferkb.derive.model_id import gguf_model_part
from inferkb.resolve import resolve

TODAY = dt.date(2026, 12, 2)
COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}
MODELS = [
    {
        "id": "llama-2-7b",
        "type": "model",
        "name": "Llama 2 7B",
        "architecture": "dense",
        "params_b": 6.74,
        "aliases": ["meta-llama/Llama-2-7b-hf"],
        **COMMON,
    },
    # Two records sharing one alias: the string cannot pick between them.
    {"id": "twin-a", "type": "model", "name": "Twin A", "architecture": "dense", "params_b": 1, "aliases": ["Twin 7B"], **COMMON},
    {"id": "twin-b", "type": "model", "name": "Twin B", "architecture": "dense", "params_b": 1, "aliases": ["Twin 7B"], **COMMON},
]


def _bench(rid: str, model: object, model_id: object = None) -> dict:
    rec = bench(rid, 100.0, model=model, model_id=model_id)
    if model is ...:
        del rec["model"]
    return rec


@pytest.fixture()
def kb_root(tmp_path: Path) -> Path:
    records = [
        _bench("b-exact", "meta-llama/Llama-2-7b-hf"),
        _bench("b-normalised", "META-LLAMA llama_2_7b_hf"),
        _bench("b-gguf", "llama-2-7b.Q4_0.gguf"),
        _bench("b-ambiguous", "twin 7b"),
        _bench("b-already-set", "meta-llama/Llama-2-7b-hf", model_id="m70"),
        _bench("b-no-model", None),
        _bench("b-no-model-field", ...),
        _bench("b-unknown", "google/gemma-7b"),
        _bench("b-partial", "meta-llama/Llama-2-7b-hf-but-longer"),
    ]
    return make_kb(tmp_path / "kb", records, models=MODELS)


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def _run(root: Path, write: bool = True) -> derive.DeriveResult:
    return derive.run(inferkb.open(root, cache=False), "model-id", write=write, today=TODAY)


def _finding(result: derive.DeriveResult, rid: str):
    [f] = [f for f in result.findings if f.record == f"benchmarks/{rid}"]
    return f


def test_an_exact_alias_fills_model_id_with_its_provenance(kb_root):
    _run(kb_root)
    rec = _rec(kb_root, "b-exact")
    assert rec["model_id"] == "llama-2-7b"
    [entry] = [e for e in rec["provenance"] if e["field"] == "model_id"]
    assert entry["evidence"] == {"field": "model", "quote": "meta-llama/Llama-2-7b-hf"}
    assert entry["action"] == "backfill" and entry["numbers_changed"] is False and entry["tag"] == "derive:model-id"
    assert "exact match" in entry["basis"]


def test_a_normalised_spelling_fills_model_id(kb_root):
    _run(kb_root)
    rec = _rec(kb_root, "b-normalised")
    assert rec["model_id"] == "llama-2-7b"
    assert "normalised match" in next(e for e in rec["provenance"] if e["field"] == "model_id")["basis"]


def test_a_gguf_file_name_resolves_by_its_model_part_and_quotes_it(kb_root):
    _run(kb_root)
    rec = _rec(kb_root, "b-gguf")
    assert rec["model_id"] == "llama-2-7b"
    entry = next(e for e in rec["provenance"] if e["field"] == "model_id")
    assert entry["evidence"] == {"field": "model", "quote": "llama-2-7b"}
    assert "GGUF" in entry["method"]


def test_an_ambiguous_string_fills_nothing_and_lists_the_candidates(kb_root):
    result = _run(kb_root)
    assert _rec(kb_root, "b-ambiguous")["model_id"] is None
    f = _finding(result, "b-ambiguous")
    assert f.code == "KB1001" and f.field == "model_id"
    assert f.extra == {"candidates": ["twin-a", "twin-b"]}


def test_a_model_id_already_set_is_never_touched(kb_root):
    before = (kb_root / "data" / "benchmarks" / "b-already-set.json").read_bytes()
    result = _run(kb_root)
    assert (kb_root / "data" / "benchmarks" / "b-already-set.json").read_bytes() == before
    assert not [c for c in result.changes if c.record == "benchmarks/b-already-set"]
    assert not [f for f in result.findings if f.record == "benchmarks/b-already-set"]


@pytest.mark.parametrize("rid", ["b-no-model", "b-no-model-field"])
def test_no_model_string_is_reported_as_no_evidence(kb_root, rid):
    result = _run(kb_root)
    f = _finding(result, rid)
    assert f.code == "KB1002" and "no model string" in f.message
    assert _rec(kb_root, rid).get("model_id") is None


@pytest.mark.parametrize("rid", ["b-unknown", "b-partial"])
def test_a_string_no_record_names_fills_nothing(kb_root, rid):
    result = _run(kb_root)
    assert _finding(result, rid).code == "KB1002"
    assert _rec(kb_root, rid)["model_id"] is None


def test_the_proof_passes_and_counts_match_the_outcomes(kb_root):
    result = _run(kb_root, write=False)
    assert result.proof.ok and result.proof.changed_fields() == {"model_id": 3, "provenance": 3}
    assert result.counts["model_id"] == {"filled": 3, "ambiguous": 1, "no_evidence": 4, "conflict": 0}


def test_a_second_run_changes_nothing(kb_root):
    _run(kb_root)
    again = _run(kb_root, write=False)
    assert again.changes == [] and again.files == []


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("llama-2-7b.Q4_0.gguf", "llama-2-7b"),
        ("gpt-oss-120b-F16.gguf", "gpt-oss-120b"),
        ("Qwen3-30B-A3B-Q4_K_M.gguf", "Qwen3-30B-A3B"),
        ("model-IQ2_XXS-00001-of-00003.gguf", "model"),
        ("gpt-oss-120b-MXFP4.gguf", "gpt-oss-120b"),
    ],
)
def test_gguf_model_part_strips_the_ggml_type(name, part):
    assert gguf_model_part(name) == part


@pytest.mark.parametrize("text", ["llama-2-7b", "llama-2-7b.gguf", "meta-llama/Llama-2-7b-hf", "llama-2-7b.Q4_0.bin"])
def test_gguf_model_part_ignores_other_text(text):
    assert gguf_model_part(text) is None


# --- the bundled KB, after the data change ---------------------------------------------------------


@pytest.fixture(scope="module")
def bundled():
    return inferkb.open(cache=False)


def test_no_bundled_benchmark_naming_a_model_alias_exactly_has_an_empty_model_id(bundled):
    missed = []
    for rec in bundled.by_type("benchmark"):
        text = rec.data.get("model")
        if rec.data.get("model_id") or not isinstance(text, str):
            continue
        res = resolve(bundled, "model", text)
        if res.how == "exact" and res.resolved:
            missed.append((rec.id, text, res.id))
    assert missed == []


def test_the_bundled_kb_has_nothing_left_for_model_id_to_fill(bundled):
    result = derive.run(bundled, "model-id")
    assert result.changes == []
    assert {f.code for f in result.findings} <= {"KB1002"}


def test_every_bundled_benchmark_with_a_model_string_links_a_model_record(bundled):
    unlinked = [
        (rec.id, rec.data["model"])
        for rec in bundled.by_type("benchmark")
        if isinstance(rec.data.get("model"), str) and rec.data["model"].strip() and not rec.data.get("model_id")
    ]
    assert unlinked == []


def test_open_division_mlperf_records_stay_unlinked_even_when_their_label_names_a_base_model(bundled):
    # Open submissions may prune, retrain or requantise: llama3_1-70b-fp8_dyn is built from Llama 3.1 70B but is not it.
    open_records = [r for r in bundled.by_type("benchmark") if (r.data.get("submission") or {}).get("division") == "open"]
    assert open_records and all(r.data.get("model_id") is None and r.data.get("model") is None for r in open_records)
    labels = {(r.data["submission"] or {}).get("used_model") for r in open_records}
    assert "llama3_1-70b-fp8_dyn" in labels
