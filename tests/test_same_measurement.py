"""same_measurement_as between LLM-Inference-Bench records: one run printed in two dashboard CSVs is linked, and ranked once.

The real pair: the Perplexity table's line 106 prints Throughput 261.9463347,
the Throughput table's line 3532 prints 261.946334709452 for the same H100 /
vLLM / DeciLM-7B / 1024 / batch 1 run. Expected values below are read off
those two CSV lines by hand.
"""

from __future__ import annotations

import copy
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from conftest import CORPUS
from inferkb import derive
from inferkb.analysis.compare import compare
from inferkb.intake import lib_links as L
from inferkb.intake.base import IntakeOptions, stable_view, without_backfills
from inferkb.intake.llm_inference_bench import LLMInferenceBench

LIB = CORPUS / "community" / "argonne-LLM-Inference-Bench" / "gh-pages" / "docs" / "data"
PERPLEXITY_LINE, THROUGHPUT_LINE = 106, 3532
PPL_ID = "lib-perplexity-nvidia-h100-x1-vllm-decilm-7b-in1024-out1024-bs1"
THR_ID = "lib-throughput-nvidia-h100-x1-vllm-decilm-7b-in1024-out1024-bs1"
TODAY = dt.date(2026, 12, 2)


def _lines(table: str, line: int) -> tuple[str, str]:
    path = LIB / table / "All_results.csv"
    if not path.is_file():
        pytest.skip(f"LLM-Inference-Bench corpus not found at {path}")
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    return lines[0], lines[line - 1]


def _write(root: Path, table: str, header: str, row: str) -> Path:
    path = root / table / "All_results.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    return path


def _import(tmp_path: Path, ppl_throughput: str | None = None) -> tuple[dict, dict, object]:
    """The real pair imported from one-row copies of the two CSV lines; ``ppl_throughput`` replaces the Perplexity row's cell."""
    ppl_header, ppl_row = _lines("Perplexity", PERPLEXITY_LINE)
    thr_header, thr_row = _lines("Throughput", THROUGHPUT_LINE)
    if ppl_throughput is not None:
        cells = ppl_row.split(",")
        cells[ppl_header.split(",").index("Throughput")] = ppl_throughput
        ppl_row = ",".join(cells)
    a = _write(tmp_path, "Perplexity", ppl_header, ppl_row)
    b = _write(tmp_path, "Throughput", thr_header, thr_row)
    res = LLMInferenceBench().parse([a, b], IntakeOptions(), inferkb.open())
    recs = {r["id"]: r for r in res.records if r["type"] == "benchmark"}
    return recs[PPL_ID], recs[THR_ID], res


# ---- the rule ---------------------------------------------------------------------------


def test_the_finer_value_inside_the_coarser_ones_rounding_interval_is_the_same():
    assert L.same_printed(Decimal("261.9463347"), Decimal("261.946334709452"))
    # Boundary: 261.94633475 is exactly half a unit of the 7th decimal above 261.9463347.
    assert L.same_printed(Decimal("261.9463347"), Decimal("261.94633475"))


def test_a_value_outside_the_rounding_interval_is_not_the_same():
    assert not L.same_printed(Decimal("261.9463347"), Decimal("261.94633476"))
    assert not L.same_printed(Decimal("261.9463347"), Decimal("261.8463347"))  # 4th significant digit


def test_coarsely_printed_values_are_never_taken_for_one_run():
    # 262 and 262.04 agree at 3 digits, too few to tell one run from two.
    assert not L.same_printed(Decimal("262"), Decimal("262.04"))


# ---- the importer -----------------------------------------------------------------------


def test_the_real_pair_is_linked_at_import(tmp_path):
    ppl, thr, res = _import(tmp_path)
    assert ppl["value"] == 261.9463347 and thr["value"] == 261.946334709452
    assert ppl[L.FIELD] == [THR_ID] and thr[L.FIELD] == [PPL_ID]
    assert res.stats["same_measurement_groups"] == 1
    (entry,) = [e for e in ppl["provenance"] if e["tag"] == L.TAG]
    assert entry["action"] == "backfill" and entry["numbers_changed"] is False
    assert entry["evidence"] == {"field": "provenance[0].evidence.quote", "quote": "261.9463347"}
    assert "this row (Perplexity line 2) printed 261.9463347" in entry["basis"]
    assert "Throughput line 2 printed 261.946334709452" in entry["basis"]
    (other,) = [e for e in thr["provenance"] if e["tag"] == L.TAG]
    assert other["evidence"]["quote"] == "261.946334709452"


def test_rows_differing_in_the_fourth_significant_digit_are_not_linked(tmp_path):
    ppl, thr, res = _import(tmp_path, ppl_throughput="261.8463347")
    assert L.FIELD not in ppl and L.FIELD not in thr
    assert res.stats["same_measurement_groups"] == 0


def test_rows_differing_beyond_the_printed_rounding_are_not_linked(tmp_path):
    # 261.9463348 vs 261.946334709452: 9e-8 apart, more than half a unit (5e-8) of the 7th decimal.
    ppl, thr, _ = _import(tmp_path, ppl_throughput="261.9463348")
    assert L.FIELD not in ppl and L.FIELD not in thr


def test_a_record_whose_printed_cell_cannot_be_read_is_not_linked(tmp_path):
    ppl, thr, _ = _import(tmp_path)
    for r in (ppl, thr):
        r.pop(L.FIELD)
        r["provenance"] = [e for e in r["provenance"] if e["tag"] != L.TAG]
    ppl["provenance"][0]["evidence"]["quote"] = "Nvidia H100 GPU,1,vLLM"
    plan = L.link_groups([ppl, thr])
    assert plan.groups == [] and plan.unread == [PPL_ID]


# ---- the derivation and compare ---------------------------------------------------------


def test_the_derivation_links_what_the_importer_links_and_compare_folds_the_pair(tmp_path):
    ppl, thr, _ = _import(tmp_path / "csv")
    imported = {r["id"]: copy.deepcopy(r) for r in (ppl, thr)}
    for r in (ppl, thr):
        r.pop(L.FIELD)
        r["provenance"] = [e for e in r["provenance"] if e["tag"] != L.TAG]
    kb = inferkb.open(make_kb(tmp_path / "kb", [ppl, thr]))
    before = compare(kb, records=list(kb.by_type("benchmark")), vary=("hardware", "format", "warmup", "engine_version"))
    assert [len(c.rows) for c in before.classes] == [2]
    result = derive.run(kb, "same-measurement", write=True, today=TODAY)
    assert result.written and result.proof.ok and len(result.changes) == 2
    kb = inferkb.open(tmp_path / "kb")
    for rid in (PPL_ID, THR_ID):
        derived = kb.records[f"benchmarks/{rid}"].data
        assert derived[L.FIELD] == imported[rid][L.FIELD]
        # A re-import of the derived record is a no-op: the importer writes the derivation's own entry.
        assert stable_view(without_backfills(derived, imported[rid])) == stable_view(imported[rid])
    after = compare(kb, records=list(kb.by_type("benchmark")), vary=("hardware", "format", "warmup", "engine_version"))
    (cls,) = after.classes
    (row,) = cls.rows
    assert {row.id, *row.same_measurement} == {PPL_ID, THR_ID} and len(row.same_measurement) == 1
    assert derive.run(kb, "same-measurement").changes == []


# ---- the bundled KB ---------------------------------------------------------------------


def test_bundled_kb_pair_is_linked_both_ways_and_no_number_changes():
    kb = inferkb.open()
    res = derive.run(kb, "same-measurement")
    assert res.proof.ok and res.proof.to_dict()
    assert all(c.field == L.FIELD for c in res.changes)
    values = {c.record: c.new for c in res.changes}
    for rid, other in ((PPL_ID, THR_ID), (THR_ID, PPL_ID)):
        # Before the data commit the dry run proposes the link; after it the record carries it.
        got = values.get(f"benchmarks/{rid}", kb.records[f"benchmarks/{rid}"].data.get(L.FIELD))
        assert got == [other]


def _row(rid: str, cell: str) -> dict:
    """A minimal LLM-Inference-Bench record whose import quote prints ``cell`` (the other conditions all absent, so equal)."""
    entry = {"tag": L.IMPORT_TAG, "field": "*", "evidence": {"field": "submission.line", "quote": f"Hw,1,fw,m,1024,1,9.9,{cell}"}}
    return {"id": rid, "type": "benchmark", "submission": {"data_set": L.DATA_SET}, "value": float(cell), "provenance": [entry]}


def test_records_matching_only_along_a_chain_are_reported_and_not_linked():
    # 100.00004 and 99.99996 both round to 100.0000, but are 8e-5 apart at 5 decimals (half unit 5e-6).
    plan = L.link_groups([_row("a", "100.0000"), _row("b", "100.00004"), _row("c", "99.99996")])
    assert plan.groups == [] and plan.chains == [["a", "b", "c"]]
