"""citations audit (KB601-KB604): tiny KBs per behaviour, then findings checked by hand on the real corpus."""

from __future__ import annotations

import json

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb.audit.citations import placeholder_hits

AUDIT = "citations"


def src(rid: str, url: str = "https://arxiv.org/abs/2306.00978") -> dict:
    return rec("source", rid, url=url, kind="paper", accessed="2026-01-01")


def run(tmp_path, *records: dict, docs: dict[str, str] | None = None, code: str | None = None):
    files: dict[str, object] = {f"data/{'sources' if r['type'] == 'source' else r['type'] + 's'}/{r['id']}.json": r for r in records}
    for name, text in (docs or {}).items():
        files[f"docs/{name}"] = text
    kb = inferkb.open(write_kb(tmp_path / "kb", files))
    report = kb.audit(AUDIT)
    return [f for f in report.findings if code is None or f.code == code]


# ---- KB601 citation-undeclared ------------------------------------------------------------


def test_source_id_in_notes_but_not_in_sources_is_reported(tmp_path):
    hits = run(
        tmp_path,
        src("nv-h100-datasheet"),
        src("other-source"),
        rec("model", "m", notes="bandwidth per nv-h100-datasheet, p. 2", sources=["other-source"]),
        code="KB601",
    )
    assert [(f.record, f.extra["source_id"], f.field) for f in hits] == [("models/m", "nv-h100-datasheet", "notes")]
    assert "nv-h100-datasheet" in hits[0].evidence["quote"]


def test_source_id_declared_in_sources_is_not_reported(tmp_path):
    assert (
        run(
            tmp_path,
            src("nv-h100-datasheet"),
            rec("model", "m", notes="per nv-h100-datasheet", sources=["nv-h100-datasheet"]),
            code="KB601",
        )
        == []
    )


def test_id_that_is_a_prefix_of_a_longer_id_is_not_a_false_hit(tmp_path):
    hits = run(
        tmp_path,
        src("bench-mlperf-v6-1-summary-csv"),
        src("bench-mlperf-v6-1-summary-csv-2"),
        rec("model", "m", notes="see bench-mlperf-v6-1-summary-csv-2.", sources=["bench-mlperf-v6-1-summary-csv-2"]),
        code="KB601",
    )
    assert hits == []


def test_shorter_id_cited_on_its_own_is_still_found_next_to_the_longer_one(tmp_path):
    hits = run(
        tmp_path,
        src("bench-mlperf-v6-1-summary-csv"),
        src("bench-mlperf-v6-1-summary-csv-2"),
        rec(
            "model",
            "m",
            notes="bench-mlperf-v6-1-summary-csv-2 and (bench-mlperf-v6-1-summary-csv)",
            sources=["bench-mlperf-v6-1-summary-csv-2"],
        ),
        code="KB601",
    )
    assert [f.extra["source_id"] for f in hits] == ["bench-mlperf-v6-1-summary-csv"]


@pytest.mark.parametrize("text", ["pre-nv-h100-datasheet", "nv-h100-datasheet-derived figure", "Xnv-h100-datasheet"])
def test_id_glued_to_other_letters_digits_or_hyphens_is_not_a_hit(tmp_path, text):
    assert run(tmp_path, src("nv-h100-datasheet"), rec("model", "m", notes=text), code="KB601") == []


def test_id_inside_a_url_is_not_a_citation(tmp_path):
    notes = "mirrored at https://example.org/archive/nv-h100-datasheet/index.html"
    assert run(tmp_path, src("nv-h100-datasheet"), rec("model", "m", notes=notes), code="KB601") == []


def test_flops_row_source_id_counts_as_a_citation(tmp_path):
    acc = rec("accelerator", "a", sources=["x-product-page"], flops=[{"precision": "fp8", "tflops": 1979, "source_id": "x-datasheet"}])
    hits = run(tmp_path, src("x-product-page"), src("x-datasheet"), acc, code="KB601")
    assert [(f.field, f.extra["source_id"]) for f in hits] == [("flops[0].source_id", "x-datasheet")]


def test_id_cited_by_other_records_counts_even_without_a_source_record(tmp_path):
    hits = run(
        tmp_path,
        rec("model", "a", sources=["mdl2-vllm-supported-models"]),
        rec("model", "b", notes="[[mdl2-vllm-supported-models]] lists it"),
        code="KB601",
    )
    assert [(f.record, f.extra["source_record_exists"]) for f in hits] == [("models/b", False)]


def test_single_word_ids_are_not_matched_in_prose(tmp_path):
    assert run(tmp_path, src("wikipedia"), rec("model", "m", notes="as wikipedia says"), code="KB601") == []


# ---- KB602 / KB603 docs -------------------------------------------------------------------


def test_doc_link_to_a_missing_record_is_an_error(tmp_path):
    hits = run(tmp_path, src("nv-h100-datasheet"), docs={"a.md": "intro\nsee [[sources/nv-h100-datasheeet]]\n"}, code="KB602")
    assert [(f.path, f.field, f.severity) for f in hits] == [("docs/a.md", "line 2", "error")]


def test_doc_link_to_an_existing_record_passes(tmp_path):
    assert run(tmp_path, src("nv-h100-datasheet"), docs={"a.md": "see [[sources/nv-h100-datasheet]]"}, code="KB602") == []


def test_doc_naming_a_source_without_linking_it_is_info(tmp_path):
    hits = run(tmp_path, src("nv-h100-datasheet"), docs={"a.md": "per nv-h100-datasheet the bandwidth is..."}, code="KB603")
    assert [(f.severity, f.extra["source_id"]) for f in hits] == [("info", "nv-h100-datasheet")]


def test_doc_that_links_the_source_somewhere_may_also_name_it_bare(tmp_path):
    text = "per nv-h100-datasheet ([[sources/nv-h100-datasheet]])"
    assert run(tmp_path, src("nv-h100-datasheet"), docs={"a.md": text}, code="KB603") == []


# ---- KB604 placeholder-artefact -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, kind",
    [
        ("(2026-10-04). %s NO FIGURE WAS BACK-COMPUTED", "printf"),
        ("value for {0} at batch {1}", "format-index"),
        ("model path ${MODEL_DIR}/weights", "shell-var"),
        ("served {{ model_name }} on vLLM", "template-var"),
        ("TODO: fill in the clock", "todo-marker"),
        ("https://docs.example.invalid/h100", "reserved-host"),
        ("see https://example.com/spec", "reserved-host"),
        ("Lorem ipsum dolor sit amet", "lorem-ipsum"),
    ],
)
def test_placeholder_outside_quotes_is_found(text, kind):
    assert kind in {h[0] for h in placeholder_hits(text)}


@pytest.mark.parametrize(
    "text",
    [
        "50% faster, 3%-5% variance",
        "the log line 'Failed core proc(s): {}' misdirects",
        "previously read '(2026-10-04). %s NO FIGURE' before the repair",
        "the Makefile says 'nvidia-smi -pl 300 # TODO: Find the right power limit'",
        'config was "{0}" in the template',
        "a to-do item; todos; TODOS",
        'json: {"tp": 4, "pp": 1}',
    ],
)
def test_quoted_or_ordinary_text_is_not_a_placeholder(text):
    assert placeholder_hits(text) == []


def test_whole_value_none_is_a_stringified_null():
    assert [h[0] for h in placeholder_hits("None")] == ["stringified-null"]


def test_placeholder_in_a_record_field_is_reported_with_its_field(tmp_path):
    hits = run(
        tmp_path, rec("model", "m", notes="fine"), rec("engine", "e", notes="x", docs_url="https://vllm.example.invalid/"), code="KB604"
    )
    assert [(f.record, f.field) for f in hits] == [("engines/e", "docs_url")]


def test_record_without_placeholders_passes(tmp_path):
    assert run(tmp_path, rec("model", "m", notes="8.02B parameters; 36 layers; 50% of peak"), code="KB604") == []


# ---- the real corpus ----------------------------------------------------------------------


def test_corpus_benchmark_citing_the_amd_repro_guide_in_notes_is_found(research_kb):
    rid = "mi355x-mlperf-v6-0-llama2-70b-wmxfp4-offline-tokens"
    data = json.loads((research_kb / "data" / "benchmarks" / f"{rid}.json").read_text())
    # read by hand: notes say "AMD's repro guide (bench-amd-mlperf-v6-0-repro-guide)", sources omit it
    assert "(bench-amd-mlperf-v6-0-repro-guide)" in data["notes"]
    assert "bench-amd-mlperf-v6-0-repro-guide" not in data["sources"]
    hits = [f for f in inferkb.open(research_kb).audit(AUDIT).findings if f.code == "KB601" and f.record == f"benchmarks/{rid}"]
    assert [f.extra["source_id"] for f in hits] == ["bench-amd-mlperf-v6-0-repro-guide"]


def test_corpus_model_notes_citing_engine_support_tables_are_found(research_kb):
    # models/ministral-8b: notes cite [[mdl2-vllm-supported-models-2026-10]] and two more; sources list only configs
    hits = {
        f.extra["source_id"]
        for f in inferkb.open(research_kb).audit(AUDIT).findings
        if f.code == "KB601" and f.record == "models/ministral-8b"
    }
    assert hits == {"mdl2-vllm-supported-models-2026-10", "mdl2-trtllm-supported-models", "mdl2-sglang-generative-models"}


def test_corpus_quoted_placeholders_are_not_reported(research_kb):
    # aws-trainium2 quotes the repaired '%s' artefact; the power Makefile source quotes a '# TODO' line
    placeholders = [f for f in inferkb.open(research_kb).audit(AUDIT).findings if f.code == "KB604"]
    assert placeholders == []
