"""Derivations on a copy of the real inference-research corpus (its schema allows no `provenance` field)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

import inferkb
from inferkb import derive
from inferkb.derive.base import Proposal, entry_errors, get_path
from inferkb.store import batch as store_batch

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "inference-research"
NAMES = ("interconnect-ids", "format-id", "accelerator-alternates")
TARGETS = {"interconnect_ids", "interconnect_exercised", "format_id", "accelerator_alternates"}
TODAY = dt.date(2026, 11, 29)


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    dest = tmp_path / "kb"
    shutil.copytree(CORPUS, dest)
    return dest


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.json"))}


def _write_all(root: Path) -> None:
    for name in NAMES:
        derive.run(inferkb.open(root), name, write=True, today=TODAY)


def test_dry_run_writes_nothing(corpus):
    before = _tree(corpus)
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    assert result.changes and not result.written
    assert _tree(corpus) == before


def test_dry_run_diff_is_a_unified_diff_per_file_plus_a_table(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    for rel in result.files:
        assert f"+++ b/{rel}" in result.diff_text
    assert "record" in result.diff_text.splitlines()[-len(result.changes) - 2]


def test_write_changes_no_field_but_the_targets_in_records(corpus):
    _write_all(corpus)
    for path in sorted((CORPUS / "data").rglob("*.json")):
        old = json.loads(path.read_text(encoding="utf-8"))
        new = json.loads((corpus / path.relative_to(CORPUS)).read_text(encoding="utf-8"))
        assert {k: v for k, v in old.items() if k not in TARGETS} == {k: v for k, v in new.items() if k not in TARGETS}, path.name


def test_record_never_gains_a_provenance_field_its_schema_rejects(corpus):
    _write_all(corpus)
    for path in (corpus / "data" / "benchmarks").glob("*.json"):
        assert "provenance" not in json.loads(path.read_text(encoding="utf-8"))


def test_provenance_goes_to_a_sidecar_outside_data(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", write=True, today=TODAY)
    for change in result.changes:
        rid = change.record.split("/")[1]
        side = json.loads((corpus / "provenance" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))
        assert [e["field"] for e in side["provenance"]] == ["format_id"]
    assert not any(k.code == "KB010" for k in inferkb.open(corpus).load_findings)


def test_every_sidecar_entry_is_a_valid_provenance_entry_quoting_its_record(corpus):
    _write_all(corpus)
    sidecars = list((corpus / "provenance").rglob("*.json"))
    assert sidecars
    for side_path in sidecars:
        side = json.loads(side_path.read_text(encoding="utf-8"))
        record = json.loads((CORPUS / "data" / f"{side['record']}.json").read_text(encoding="utf-8"))
        for entry in side["provenance"]:
            assert entry_errors(entry) == []
            assert entry["action"] == "backfill" and entry["numbers_changed"] is False and entry["date"] == "2026-11-29"
            value = get_path(record, entry["evidence"]["field"])
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            assert entry["evidence"]["quote"] in text


def test_write_adds_no_validation_error(corpus):
    before = {(f.code, f.record, f.field) for f in inferkb.open(corpus).validate().findings if f.severity == "error"}
    _write_all(corpus)
    after = {(f.code, f.record, f.field) for f in inferkb.open(corpus).validate().findings if f.severity == "error"}
    assert after - before == set()


def test_second_run_changes_nothing(corpus):
    _write_all(corpus)
    before = _tree(corpus)
    for name in NAMES:
        result = derive.run(inferkb.open(corpus), name, write=True, today=TODAY + dt.timedelta(days=1))
        assert result.changes == [] and result.files == []
    assert _tree(corpus) == before


def test_interrupted_write_leaves_every_file_old_or_new(corpus, monkeypatch):
    planned = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    assert len(planned.files) >= 3
    old = _tree(corpus)
    real = store_batch._apply
    calls = []

    def flaky(staged):  # the fourth file fails as it is put in place (three are already renamed into place)
        if len(calls) == 3:
            raise OSError("disk full (simulated)")
        calls.append(staged.job.path)
        real(staged)

    monkeypatch.setattr(store_batch, "_apply", flaky)
    with pytest.raises(OSError):
        derive.run(inferkb.open(corpus), "format-id", write=True, today=TODAY)
    monkeypatch.setattr(store_batch, "_apply", real)
    shutil.copytree(corpus, corpus.parent / "full")
    derive.run(inferkb.open(corpus.parent / "full"), "format-id", write=True, today=TODAY)
    new = _tree(corpus.parent / "full")
    for rel, text in _tree(corpus).items():
        json.loads(text)
        assert text in (old.get(rel), new.get(rel)), rel
    assert not list(corpus.rglob("*.tmp"))


def test_rerun_after_interruption_completes_without_duplicate_provenance(corpus, monkeypatch):
    real = store_batch._apply
    calls = []

    def flaky(staged):
        if len(calls) == 1:  # the first sidecar is put in place, its record is not
            raise OSError("killed")
        calls.append(staged.job.path)
        real(staged)

    monkeypatch.setattr(store_batch, "_apply", flaky)
    with pytest.raises(OSError):
        derive.run(inferkb.open(corpus), "format-id", write=True, today=TODAY)
    monkeypatch.setattr(store_batch, "_apply", real)
    derive.run(inferkb.open(corpus), "format-id", write=True, today=TODAY)
    for side in (corpus / "provenance").rglob("*.json"):
        assert len(json.loads(side.read_text(encoding="utf-8"))["provenance"]) == 1


def test_write_is_refused_when_a_derivation_would_change_a_number(corpus, monkeypatch):
    spec = derive.load_all()["format-id"]
    rogue = derive.DerivationOutput([Proposal("benchmarks/comm-mi50-16x-deepseek-v32-awq-reported", "format_id", 7, "m", None, "b")])
    monkeypatch.setitem(derive.DERIVATIONS, "format-id", spec.__class__(spec.name, spec.description, spec.fields, lambda kb: rogue))
    before = _tree(corpus)
    with pytest.raises(derive.DeriveRefused) as exc:
        derive.run(inferkb.open(corpus), "format-id", write=True, today=TODAY)
    assert not exc.value.result.proof.ok
    assert _tree(corpus) == before


# Hand-labelled from the files themselves.
def test_awq_4bit_in_the_records_own_name_fills_awq(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    assert ("benchmarks/comm-mi50-16x-deepseek-v32-awq-reported", "awq") in {(c.record, c.new) for c in result.changes}


def test_fp8_alone_is_ambiguous_and_lists_the_three_fp8_formats(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    [f] = [f for f in result.findings if f.record == "benchmarks/mi300x-vs-h100-vllm-llama31-70b-fp8-tp8-output-throughput"]
    assert f.code == "KB1001"
    assert f.extra["candidates"] == ["fp8-blockwise", "fp8-e4m3", "fp8-e5m2"]
    assert "FP8" in f.evidence["quote"]


def test_target_and_draft_model_formats_together_are_ambiguous(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    rec = "benchmarks/ev-llamacpp-spec-bench-replay-inflates"  # Qwen3-8B Q4_K_M + Qwen3-0.6B Q8_0 draft
    assert rec not in {c.record for c in result.changes}
    assert [f.code for f in result.findings if f.record == rec] == ["KB1001"]


def test_a_format_the_text_says_was_never_stated_is_not_filled(corpus):
    result = derive.run(inferkb.open(corpus), "format-id", today=TODAY)
    assert "benchmarks/ryzen-ai-max-8060s-qwen35-35b-a3b-decode-tok-s" not in {c.record for c in result.changes}


def test_interconnects_are_copied_only_from_accelerators_that_list_them(corpus):
    result = derive.run(inferkb.open(corpus), "interconnect-ids", today=TODAY)
    for change in (c for c in result.changes if c.field == "interconnect_ids"):
        rec = json.loads((CORPUS / "data" / f"{change.record}.json").read_text(encoding="utf-8"))
        expected: list[str] = []
        for acc in rec["accelerator_ids"]:
            listed = json.loads((CORPUS / "data" / "accelerators" / f"{acc}.json").read_text(encoding="utf-8"))["interconnect"]
            expected += [i for i in listed if i not in expected]
        assert change.new == expected
    assert "benchmarks/comm-5090-wsl2-qwen3-14b-awq-decode-tok-s" not in {c.record for c in result.changes}  # rtx-5090 lists none


def test_corpus_records_get_no_interconnect_exercised_without_count_or_parallel_sizes(corpus):
    result = derive.run(inferkb.open(corpus), "interconnect-ids", today=TODAY)
    assert not [c for c in result.changes if c.field == "interconnect_exercised"]
