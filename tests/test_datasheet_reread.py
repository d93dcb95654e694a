"""Issue 7 datasheet re-read: the bundled accelerator figures match what the pages read state.

The expected figures are typed in by hand in ``tests/data/datasheet_reread.json``
from the pages as read (value and unit as printed, with the row or sentence
quoted); nothing there is computed by inferkb.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS

TABLE = json.loads((Path(__file__).parent / "data" / "datasheet_reread.json").read_text(encoding="utf-8"))
FIGURES = [(page, fig) for page in TABLE["pages"] for fig in page["figures"]]
# The KB stores bandwidth in GB/s and peaks in TFLOPS (TOPS for integer rows). AMD's ROCm table prints
# VRAM in GiB; vram_gb keeps the vendor's capacity number, which is the same number (binary-sized HBM),
# so GiB and GB figures compare as stated.
TO_KB_UNIT = {"TB/s": 1000.0, "GB/s": 1.0, "GB": 1.0, "GiB": 1.0, "TFLOPS": 1.0, "TOPS": 1.0}
FLOPS_FIELD = re.compile(r"^flops\[(?P<precision>[a-z0-9_]+)(?:,(?P<unit>[a-z0-9-]+))?\]$")


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def value_in_record(data: dict, field: str) -> list[float]:
    """The record's value(s) for ``field``: a scalar field, or the tflops of matching flops rows."""
    m = FLOPS_FIELD.match(field)
    if m is None:
        return [data[field]]
    return [
        row["tflops"]
        for row in data["flops"]
        if row["precision"] == m["precision"] and (m["unit"] is None or row.get("unit") == m["unit"]) and row.get("dense", True)
    ]


@pytest.mark.parametrize(("page", "fig"), FIGURES, ids=[f"{f['record']}:{f['field']}" for _, f in FIGURES])
def test_figure_matches_the_page_read(kb, page, fig):
    data = kb.get(fig["record"]).data
    assert fig["stated"] * TO_KB_UNIT[fig["unit"]] in value_in_record(data, fig["field"])


@pytest.mark.parametrize(("page", "fig"), FIGURES, ids=[f"{f['record']}:{f['field']}" for _, f in FIGURES])
def test_figure_carries_the_quote_of_the_page_it_was_read_on(kb, page, fig):
    data = kb.get(fig["record"]).data
    quotes = [
        p["evidence"]["quote"]
        for p in data.get("provenance", [])
        if p["field"] == fig["field"] and p.get("evidence") and p["evidence"]["field"] == page["source"]
    ]
    assert fig["quote"] in quotes
    assert page["source"] in data["sources"]


@pytest.mark.parametrize("page", TABLE["pages"], ids=[p["source"] for p in TABLE["pages"]])
def test_source_record_names_the_page_that_was_read(kb, page):
    src = kb.get(page["source"]).data
    assert src["url"] == page["url"] and src["accessed"] == "2026-12-01"
    assert "not re-read" not in (src.get("notes") or "")


@pytest.mark.parametrize("die", TABLE["dies"], ids=[d["record"] for d in TABLE["dies"]])
def test_die_named_by_the_mig_guide_is_in_the_architecture(kb, die):
    data = kb.get(die["record"]).data
    assert die["die"] in data["architecture"]
    fixes = [p for p in data["provenance"] if p["field"] == "architecture" and p.get("evidence")]
    assert any(p["evidence"] == {"field": die["source"], "quote": die["quote"]} for p in fixes)


def test_mi250_rows_added_from_the_rocm_page_are_corrections_that_changed_numbers(kb):
    data = kb.get("amd-instinct-mi250").data
    added = [p for p in data["provenance"] if p["field"].startswith("flops[") and p["action"] == "correction"]
    assert len(added) == len(data["flops"]) == 5
    assert all(p["numbers_changed"] is True and p["evidence"]["field"] == "rocm-mi250-microarchitecture-089d751" for p in added)


def test_tdp_taken_from_mlperf_notes_is_labelled_and_stays_a_spec_gap(kb):
    # The v6.1 results table's notes column (../shared/corpus/mlperf/inference_results_v6.1/summary.csv)
    # prints these TGP figures; they are consortium-tier statements, not datasheet figures.
    expected = {
        "nvidia-gb300": (1400, "NVIDIA GB300 NVL72, 1400W TGP Per GPU"),
        "nvidia-rtx-pro-6000-blackwell-server": (600, "NVIDIA RTX PRO 6000 Blackwell Server Edition TGP 600W"),
        "nvidia-vr200": (2300, "NVIDIA VR200 NVL72, 2300W TGP Per GPU"),
        "nvidia-b300": (1100, "B300 TGP 1100W"),
    }
    for rid, (watts, quote) in expected.items():
        data = kb.get(rid).data
        assert data["tdp_w"] == watts
        (fix,) = [p for p in data["provenance"] if p["field"] == "tdp_w" and p["action"] == "correction"]
        assert fix["numbers_changed"] is True and fix["evidence"] == {"field": "mlperf-inference-v6-1-summary", "quote": quote}
        assert "tier C" in data["spec_gaps"]["tdp_w"]["reason"] and data["status"] == "draft"


def test_mlperf_tgp_quotes_are_in_the_raw_results_table():
    table = CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv"
    if not table.is_file():
        pytest.skip(f"shared corpus not found at {table}")
    text = table.read_text(encoding="utf-8")
    for quote in (
        "NVIDIA GB300 NVL72, 1400W TGP Per GPU",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition TGP 600W",
        "NVIDIA VR200 NVL72, 2300W TGP Per GPU",
        "B300 TGP 1100W",
    ):
        assert quote in text


def test_every_accelerator_citing_an_unread_source_says_what_stays_unconfirmed(kb):
    for rec in kb.by_type("accelerator"):
        unread = [s for s in rec.data["sources"] if "not re-read" in (kb.get(s).data.get("notes") or "")]
        if unread:
            assert rec.data["status"] != "verified", rec.id
            assert rec.data.get("spec_gaps"), rec.id


def test_spec_gaps_name_what_was_checked_and_what_would_confirm(kb):
    gapped = [rec for rec in kb.by_type("accelerator") if rec.data.get("spec_gaps")]
    assert len(gapped) >= 48
    for rec in gapped:
        for field, gap in rec.data["spec_gaps"].items():
            assert gap["reason"] and gap["checked"] and gap["recover"], (rec.id, field)
