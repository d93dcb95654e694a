"""truth12 datasheet pass 2: the figures added to accelerator records match the pages read, and say how good the page is.

The expected figures, quotes and tiers are typed in by hand in ``tests/data/datasheet_reread_pass2.json``
from the stored copies of the pages as read; nothing there is computed by inferkb.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import inferkb
from inferkb.audit.provenance_tiers import classify_sources

TABLE = json.loads((Path(__file__).parent / "data" / "datasheet_reread_pass2.json").read_text(encoding="utf-8"))
FIGURES = [(page, fig) for page in TABLE["pages"] for fig in page["figures"]]
IDS = [f"{f['record']}:{f['field']}:{'dense' if f.get('dense', True) else 'sparse'}" for _, f in FIGURES]
# The KB stores bandwidth in GB/s and peaks in TFLOPS.
TO_KB_UNIT = {"TB/s": 1000.0, "GB/s": 1.0, "GB": 1.0, "TFLOPS": 1.0, "PFLOPS": 1000.0}
FLOPS_FIELD = re.compile(r"^flops\[(?P<precision>[a-z0-9_]+)\]$")


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def values(data: dict, fig: dict) -> list[float]:
    m = FLOPS_FIELD.match(fig["field"])
    if m is None:
        return [data[fig["field"]]]
    dense = fig.get("dense", True)
    return [r["tflops"] for r in data["flops"] if r["precision"] == m["precision"] and r.get("dense", True) is dense]


@pytest.mark.parametrize(("page", "fig"), FIGURES, ids=IDS)
def test_figure_matches_the_page_read(kb, page, fig):
    assert values(kb.get(fig["record"]).data, fig) == [pytest.approx(fig["stated"] * TO_KB_UNIT[fig["unit"]])]


@pytest.mark.parametrize(("page", "fig"), FIGURES, ids=IDS)
def test_figure_carries_the_quote_and_cites_the_page(kb, page, fig):
    data = kb.get(fig["record"]).data
    entries = [
        p for p in data["provenance"] if p["field"] == fig["field"] and p.get("evidence", {}) and p["evidence"]["field"] == page["source"]
    ]
    assert fig["quote"] in [p["evidence"]["quote"] for p in entries]
    assert page["source"] in data["sources"]
    row_sources = {r["source_id"] for r in data["flops"] if FLOPS_FIELD.match(fig["field"])}
    assert not FLOPS_FIELD.match(fig["field"]) or page["source"] in row_sources


@pytest.mark.parametrize(("page", "fig"), FIGURES, ids=IDS)
def test_figure_not_read_on_a_datasheet_stays_a_spec_gap(kb, page, fig):
    # None of these pages is the part's datasheet, so each field keeps a spec_gaps entry and the record stays draft.
    data = kb.get(fig["record"]).data
    m = FLOPS_FIELD.match(fig["field"])
    keys = {"flops", f"flops.{m['precision']}"} if m else {fig["field"]}
    assert keys & set(data["spec_gaps"]), (fig["record"], fig["field"])
    assert data["status"] == "draft"


@pytest.mark.parametrize("page", TABLE["pages"], ids=[p["source"] for p in TABLE["pages"]])
def test_source_record_names_the_page_read_and_its_tier(kb, page):
    src = kb.get(page["source"]).data
    assert src["url"] == page["url"] and src["accessed"] == TABLE["accessed"]
    assert "not re-read" not in (src.get("notes") or "")
    assert classify_sources(kb)[page["source"]].tier == page["tier"]


def test_rows_from_secondary_pages_are_labelled_secondary(kb):
    tiers = classify_sources(kb)
    for page, fig in FIGURES:
        if page["tier"] in ("D", "E") and FLOPS_FIELD.match(fig["field"]):
            rows = [r for r in kb.get(fig["record"]).data["flops"] if r["source_id"] == page["source"]]
            assert rows and all(r["basis"] == "secondary-aggregator" for r in rows), fig
    assert tiers["sambanova-sn40l-hot-chips-2024-slides-copy"].rule == "aggregator-news-mirror"


def test_sn40l_bandwidth_stays_null_because_the_slide_copy_does_not_say_which_tier_each_figure_is(kb):
    data = kb.get("sambanova-sn40l").data
    assert data["memory_bandwidth_gbps"] is None
    reason = data["spec_gaps"]["memory_bandwidth_gbps"]["reason"]
    assert "'1600 GB/s'" in reason and "'25.6 TB/s'" in reason and "candidates" in reason


def test_b300_fp4_row_says_it_is_the_chip_figure_not_the_hgx_sku_figure(kb):
    (row,) = kb.get("nvidia-b300").data["flops"]
    assert "upper bound" in row["basis_detail"] and "HGX B300" in row["basis_detail"]


def test_bundled_gh200_rows_of_unknown_format_wait_for_the_fp8_peak(kb):
    # truth12: GH200 has a BF16 row (989) and spec_gaps.flops.fp8. The 2048/2048 vLLM rows of 2,048-token models
    # (e.g. Aquila-7B bs1: 85,635 tok/s from a 0.048 s "latency") would be 126% of the BF16 peak; they stay unchecked
    # with the reason named rather than judged against an incomplete ceiling.
    found = {f.record: f for f in kb.audit("physical-plausibility").findings}
    f = found["benchmarks/lib-throughput-nvidia-gh200-x1-vllm-aquila-7b-in2048-out2048-bs1"]
    assert f.code == "KB504" and "spec_gaps.flops.fp8 says its fp8 peak is not recorded" in f.message
    assert not any(x.code == "KB503" for x in found.values())
