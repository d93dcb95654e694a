"""identity audit (KB801-KB805) and the hardware text scanner: own fixtures, then the real corpus."""

from __future__ import annotations

import json

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb.audit.identity import raw_candidates
from inferkb.hardware import candidates, find_mentions

AUDIT = "identity"

ACCELERATORS = [
    rec("accelerator", "nvidia-h100-sxm", name="NVIDIA H100 SXM", aliases=["NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"]),
    rec("accelerator", "nvidia-h100-pcie", name="NVIDIA H100 PCIe", aliases=["NVIDIA H100 PCIe"]),
    rec("accelerator", "nvidia-h100-nvl", name="NVIDIA H100 NVL", aliases=["NVIDIA H100 NVL"]),
    rec("accelerator", "nvidia-rtx-4090", name="NVIDIA GeForce RTX 4090"),
    rec("accelerator", "nvidia-rtx-5090", name="NVIDIA GeForce RTX 5090"),
    rec("accelerator", "amd-instinct-mi300x", name="AMD Instinct MI300X"),
]

# A profile that, like the bundled KB's, declares accelerator_alternates.
TOML = """
[types.accelerator]
dir = "accelerators"
[types.benchmark]
dir = "benchmarks"
refs = { accelerator_ids = "accelerator", accelerator_alternates = "accelerator" }
[types.source]
dir = "sources"
"""


def make_kb(tmp_path, *benchmarks: dict, toml: str | None = None):
    files = {f"data/accelerators/{a['id']}.json": a for a in ACCELERATORS}
    files.update({f"data/benchmarks/{b['id']}.json": b for b in benchmarks})
    return inferkb.open(write_kb(tmp_path / "kb", files, toml=toml))


def bench(rid: str = "b", **fields) -> dict:
    return rec("benchmark", rid, **{"value": 1.0, "methodology": "", **fields})


def hits(tmp_path, *benchmarks: dict, code: str, toml: str | None = None):
    return [f for f in make_kb(tmp_path, *benchmarks, toml=toml).audit(AUDIT).findings if f.code == code]


# ---- matching -----------------------------------------------------------------------------


def test_nvidia_smi_name_identifies_the_sxm_part(tmp_path):
    assert candidates(make_kb(tmp_path), "NVIDIA H100 80GB HBM3") == ["nvidia-h100-sxm"]


def test_bare_h100_matches_every_h100_variant(tmp_path):
    ids, _ = raw_candidates(make_kb(tmp_path), "H100")
    assert sorted(ids) == ["nvidia-h100-nvl", "nvidia-h100-pcie", "nvidia-h100-sxm"]


def test_device_count_prefix_is_ignored(tmp_path):
    ids, _ = raw_candidates(make_kb(tmp_path), "8x NVIDIA H100 80GB HBM3")
    assert ids == ["nvidia-h100-sxm"]


def test_longest_alias_wins_inside_prose(tmp_path):
    found = find_mentions(make_kb(tmp_path), "ran on 4x NVIDIA H100 80GB HBM3 with TP=4")
    assert [(m.phrase, m.ids) for m in found] == [("nvidia h100 80gb hbm3", ("nvidia-h100-sxm",))]


def test_brand_words_may_be_left_out_in_prose(tmp_path):
    found = find_mentions(make_kb(tmp_path), "RTX 4090 vs 2xMI300X")
    assert [m.ids for m in found] == [("nvidia-rtx-4090",), ("amd-instinct-mi300x",)]


@pytest.mark.parametrize("text", ["H1000 board", "MH100", "RTX 40900", "the 4090s"])
def test_model_numbers_only_match_whole_tokens(tmp_path, text):
    assert find_mentions(make_kb(tmp_path), text) == []


# ---- KB801 accelerator-not-candidate ------------------------------------------------------


def test_pick_that_hardware_raw_cannot_mean_is_an_error(tmp_path):
    found = hits(tmp_path, bench(hardware_raw="NVIDIA H100 80GB HBM3", accelerator_ids=["nvidia-h100-pcie"]), code="KB801")
    assert [(f.severity, f.extra["candidates"]) for f in found] == [("error", ["nvidia-h100-sxm"])]


def test_pick_that_hardware_raw_identifies_passes(tmp_path):
    assert hits(tmp_path, bench(hardware_raw="NVIDIA H100 80GB HBM3", accelerator_ids=["nvidia-h100-sxm"]), code="KB801") == []


# ---- KB802 hardware-ambiguous-no-alternates -----------------------------------------------


def test_ambiguous_hardware_raw_without_alternates_is_a_warning(tmp_path):
    found = hits(tmp_path, bench(hardware_raw="8x H100", accelerator_ids=["nvidia-h100-sxm"], accelerator_alternates=[]), code="KB802")
    assert [f.severity for f in found] == ["warning"]
    assert sorted(found[0].extra["candidates"]) == ["nvidia-h100-nvl", "nvidia-h100-pcie", "nvidia-h100-sxm"]


def test_ambiguous_hardware_raw_with_alternates_passes(tmp_path):
    b = bench(hardware_raw="8x H100", accelerator_ids=["nvidia-h100-sxm"], accelerator_alternates=["nvidia-h100-pcie", "nvidia-h100-nvl"])
    assert hits(tmp_path, b, code="KB802") == []


def test_system_of_two_different_parts_is_not_ambiguity(tmp_path):
    b = bench(hardware_raw="NVIDIA H100 PCIe + AMD Instinct MI300X", accelerator_ids=["nvidia-h100-pcie", "amd-instinct-mi300x"])
    assert hits(tmp_path, b, code="KB802") == []


def test_ambiguous_name_without_alternates_is_a_warning_where_the_kb_has_the_field(tmp_path):
    b = bench(name="Llama 3 70B on 8x H100", accelerator_ids=["nvidia-h100-sxm"])
    assert len(hits(tmp_path, b, code="KB802", toml=TOML)) == 1


def test_ambiguous_name_is_not_reported_where_the_kb_cannot_record_alternates(tmp_path):
    b = bench(name="Llama 3 70B on 8x H100", accelerator_ids=["nvidia-h100-sxm"])
    assert hits(tmp_path, b, code="KB802") == []


# ---- KB803 accelerator-not-named-in-text --------------------------------------------------


def test_pick_not_named_in_the_text_is_a_warning(tmp_path):
    found = hits(tmp_path, bench(name="Llama 3 8B decode on 1x RTX 4090", accelerator_ids=["nvidia-rtx-5090"]), code="KB803")
    assert [(f.severity, f.extra["chosen"]) for f in found] == [("warning", "nvidia-rtx-5090")]


def test_pick_named_in_the_text_passes(tmp_path):
    assert hits(tmp_path, bench(name="Llama 3 8B decode on 1x RTX 4090", accelerator_ids=["nvidia-rtx-4090"]), code="KB803") == []


def test_hardware_named_only_in_notes_is_not_evidence(tmp_path):
    b = bench(name="Llama 3 8B decode", notes="about 2x an RTX 4090", accelerator_ids=["nvidia-rtx-5090"])
    assert hits(tmp_path, b, code="KB803") == []


# ---- KB804 / KB805 ------------------------------------------------------------------------


def test_unrecognised_hardware_raw_is_info(tmp_path):
    found = hits(tmp_path, bench(hardware_raw="NVIDIA H999 12GB", accelerator_ids=["nvidia-h100-sxm"]), code="KB804")
    assert [f.severity for f in found] == ["info"]


def test_a_string_mapped_by_quoted_publisher_documentation_is_not_kb804(tmp_path):
    mapped = {
        "date": "2026-12-01",
        "tag": "t",
        "field": "accelerator_ids",
        "action": "import",
        "method": "hardware name mapped by the data set's documentation",
        "evidence": {"field": "README.md", "quote": "| NVIDIA H100 |"},
        "basis": "the README's hardware matrix lists one part",
        "numbers_changed": False,
    }
    raw = "Lab Accelerator Seven"
    assert hits(tmp_path / "a", bench(hardware_raw=raw, accelerator_ids=["nvidia-h100-sxm"], provenance=[mapped]), code="KB804") == []
    # without the quote the same record is unrecognised
    bare = dict(mapped, evidence=None)
    assert len(hits(tmp_path / "b", bench(hardware_raw=raw, accelerator_ids=["nvidia-h100-sxm"], provenance=[bare]), code="KB804")) == 1


def test_recognised_hardware_raw_is_not_kb804(tmp_path):
    assert hits(tmp_path, bench(hardware_raw="NVIDIA H100 PCIe", accelerator_ids=["nvidia-h100-pcie"]), code="KB804") == []


def test_hardware_named_but_accelerator_ids_empty_is_info(tmp_path):
    found = hits(tmp_path, bench(name="vLLM on 8x MI300X", accelerator_ids=[]), code="KB805")
    assert [(f.severity, f.extra["candidates"]) for f in found] == [("info", ["amd-instinct-mi300x"])]


def test_ambiguous_hardware_with_empty_accelerator_ids_is_left_alone(tmp_path):
    # the string cannot tell the H100 variants apart, so an empty pick is the honest value
    assert hits(tmp_path, bench(hardware_raw="8x H100", accelerator_ids=[]), code="KB805") == []


def test_hardware_named_and_set_is_not_kb805(tmp_path):
    assert hits(tmp_path, bench(name="vLLM on 8x MI300X", accelerator_ids=["amd-instinct-mi300x"]), code="KB805") == []


# ---- real KBs -----------------------------------------------------------------------------


def test_corpus_a100_records_with_empty_accelerator_ids_are_reported(research_kb):
    data = json.loads((research_kb / "data" / "benchmarks" / "mpt7b-a100-bs1-ttft-ms.json").read_text())
    # read by hand: the name says A100, accelerator_ids is []
    assert "A100" in data["name"] and data["accelerator_ids"] == []
    found = [f for f in inferkb.open(research_kb).audit(AUDIT).findings if f.record == "benchmarks/mpt7b-a100-bs1-ttft-ms"]
    assert [(f.code, f.extra["candidates"]) for f in found] == [("KB805", ["nvidia-a100-80gb-sxm4"])]


def test_corpus_every_benchmark_is_either_checked_or_counted_as_not_checked(research_kb):
    n_files = len(list((research_kb / "data" / "benchmarks").glob("*.json")))
    fig = inferkb.open(research_kb).audit(AUDIT).figures[AUDIT]
    assert fig["benchmarks"] == n_files
    assert fig["checked_by_text"] + fig["checked_by_hardware_raw"] + fig["not_checked"] == n_files
    assert fig["checked_by_hardware_raw"] == 0  # the corpus schema has no hardware_raw


def test_corpus_mlperf_mi355x_record_is_consistent(research_kb):
    # read by hand: the name says "AMD 8xMI355X" and accelerator_ids is ["amd-instinct-mi355x"]
    rid = "benchmarks/bench-mlperf-v6-1-amd-mi355x-llama2-70b-offline"
    assert [f for f in inferkb.open(research_kb).audit(AUDIT).findings if f.record == rid] == []


def test_text_evidence_quotes_are_exact_substrings_on_the_corpus(research_kb):
    kb = inferkb.open(research_kb)
    found = [f for f in kb.audit("identity").findings if f.evidence]
    assert found
    for f in found:
        text = kb.get(f.record).data[f.evidence["field"]]
        assert f.evidence["quote"] in text, (f.record, f.evidence)
