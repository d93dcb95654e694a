"""provenance-tiers audit (KB701-KB702): the hand-classified gold set, tiny KBs per behaviour, the real corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, RESEARCH, rec, write_kb
from inferkb.audit.provenance_tiers import TIERS, best_tier, classify, load_tier_rules
from inferkb.errors import KBError

AUDIT = "provenance-tiers"
GOLD = json.loads((Path(__file__).parent / "data" / "tiers_gold.json").read_text())["sources"]


def src(rid: str, url: str, kind: str = "blog") -> dict:
    return rec("source", rid, url=url, kind=kind, accessed="2026-01-01")


def kb_of(tmp_path, *records: dict):
    dirs = {"source": "sources", "benchmark": "benchmarks", "accelerator": "accelerators", "model": "models"}
    return inferkb.open(write_kb(tmp_path / "kb", {f"data/{dirs[r['type']]}/{r['id']}.json": r for r in records}))


# ---- the gold set -------------------------------------------------------------------------


def test_gold_set_is_large_enough_and_covers_every_tier():
    assert len(GOLD) >= 25
    assert {g["tier"] for g in GOLD} >= set(TIERS)


def test_classifier_agrees_with_every_hand_classified_gold_source():
    disagreements = [
        (g["id"], g["tier"], classify(g["url"], g["kind"]).tier) for g in GOLD if classify(g["url"], g["kind"]).tier != g["tier"]
    ]
    agreement = f"{len(GOLD) - len(disagreements)}/{len(GOLD)}"
    assert disagreements == [], f"agreement {agreement}"


@pytest.mark.parametrize("where, root", [("corpus", RESEARCH), ("bundled", BUNDLED)])
def test_gold_entries_copy_their_records_url_and_kind(where, root):
    if not root.is_dir():
        pytest.skip(f"KB not found at {root}")
    for g in (g for g in GOLD if g["kb"] == where):
        path = root / "data" / "sources" / f"{g['id']}.json"
        if not path.is_file():
            continue  # the bundled KB is still being filled; a removed source is not a classifier fault
        data = json.loads(path.read_text())
        assert (data["url"], data["kind"]) == (g["url"], g["kind"]), g["id"]


# ---- classification rules -----------------------------------------------------------------


def test_issue_on_a_vendor_repository_is_community_not_vendor():
    assert classify("https://github.com/NVIDIA/nccl/issues/1264", "issue").tier == "E"
    assert classify("https://github.com/NVIDIA/TensorRT-LLM", "repo").tier == "A"


def test_vendor_blog_host_is_b_and_vendor_datasheet_is_a():
    assert classify("https://rocm.blogs.amd.com/artificial-intelligence/x/README.html", "benchmark").tier == "B"
    assert classify("https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html", "spec-sheet").tier == "A"


def test_python_docs_are_the_vendor_document_of_pythons_own_modules():
    assert classify("https://docs.python.org/3/library/json.html", "vendor-docs").tier == "A"


def test_aws_hosts_are_not_mistaken_for_the_amazon_store():
    assert classify("https://aws.amazon.com/ec2/instance-types/inf2/", "spec-sheet").tier == "A"
    assert classify("https://www.amazon.com/dp/B0XXXX", "review").tier == "D"


def test_unknown_host_is_unclassified():
    c = classify("https://some-new-site.test/post", "blog")
    assert (c.tier, c.rule) == (None, None)


def test_best_tier_prefers_primary_sources_over_announcements():
    assert best_tier(["B", "C"]) == "C"
    assert best_tier(["E", None, "D"]) == "D"
    assert best_tier([None]) is None


def test_tier_rules_file_with_unknown_tier_is_rejected(tmp_path):
    bad = tmp_path / "rules.toml"
    bad.write_text('[[rule]]\nid = "x"\ntier = "Z"\nreason = "r"\n')
    with pytest.raises(KBError, match="tier"):
        load_tier_rules(bad)


def test_tier_rules_file_with_unknown_group_is_rejected(tmp_path):
    bad = tmp_path / "rules.toml"
    bad.write_text('[[rule]]\nid = "x"\ntier = "A"\nreason = "r"\nhosts = "@nope"\n')
    with pytest.raises(KBError, match="unknown group"):
        load_tier_rules(bad)


# ---- KB701 / KB702 ------------------------------------------------------------------------


def test_unclassifiable_source_is_reported_as_info(tmp_path):
    kb = kb_of(tmp_path, src("odd", "https://some-new-site.test/post"), src("p", "https://arxiv.org/abs/1", "paper"))
    hits = [f for f in kb.audit(AUDIT).findings if f.code == "KB701"]
    assert [(f.record, f.severity) for f in hits] == [("sources/odd", "info")]


def test_benchmark_with_only_community_sources_is_a_warning(tmp_path):
    kb = kb_of(
        tmp_path, src("iss", "https://github.com/vllm-project/vllm/issues/1", "issue"), rec("benchmark", "b", value=1.0, sources=["iss"])
    )
    hits = [f for f in kb.audit(AUDIT).findings if f.code == "KB702"]
    assert [(f.record, f.severity) for f in hits] == [("benchmarks/b", "warning")]


def test_benchmark_with_one_primary_source_passes(tmp_path):
    kb = kb_of(
        tmp_path,
        src("iss", "https://github.com/vllm-project/vllm/issues/1", "issue"),
        src("p", "https://arxiv.org/abs/1", "paper"),
        rec("benchmark", "b", value=1.0, sources=["iss", "p"]),
    )
    assert [f for f in kb.audit(AUDIT).findings if f.code == "KB702"] == []


def test_benchmark_with_an_unresolved_source_is_not_judged(tmp_path):
    kb = kb_of(
        tmp_path,
        src("iss", "https://github.com/vllm-project/vllm/issues/1", "issue"),
        rec("benchmark", "b", value=1.0, sources=["iss", "missing-source"]),
    )
    report = kb.audit(AUDIT)
    assert [f for f in report.findings if f.code == "KB702"] == []
    assert report.figures[AUDIT]["benchmarks_unassessed"] == 1


# ---- figure-weighted share ----------------------------------------------------------------


def test_figure_weighted_share_counts_numbers_by_their_best_source_tier(tmp_path):
    acc = rec(
        "accelerator",
        "a",
        sources=["sheet"],
        vram_gb=80,
        tdp_w=700,
        memory_bandwidth_gbps=None,
        flops=[{"precision": "bf16", "tflops": 989}, {"precision": "fp8", "tflops": 1979, "source_id": "iss"}],
    )
    bench = rec("benchmark", "b", value=42.0, sources=["iss"])
    kb = kb_of(
        tmp_path,
        src("sheet", "https://www.nvidia.com/en-us/data-center/h100/", "spec-sheet"),
        src("iss", "https://github.com/vllm-project/vllm/issues/1", "issue"),
        acc,
        bench,
    )
    share = kb.audit(AUDIT).figures[AUDIT]["figure_weighted"]
    # by hand: vram, tdp, bf16 row -> A (record's source); fp8 row -> E (its own source_id); value -> E;
    # the null bandwidth is not a number
    assert (share["numbers"], share["tier_a_or_c"], share["share_a_or_c"]) == (5, 3, 0.6)
    assert share["by_type"]["benchmark"]["share_a_or_c"] == 0.0


def test_numbers_of_a_record_with_no_sources_are_counted_apart(tmp_path):
    kb = kb_of(tmp_path, rec("model", "m", params_b=8.0, active_params_b=8.0, sources=[]))
    share = kb.audit(AUDIT).figures[AUDIT]["figure_weighted"]
    assert share["by_tier"] == {"no-sources": 2} and share["share_a_or_c"] == 0.0


# ---- real KBs -----------------------------------------------------------------------------


def test_every_corpus_source_gets_a_tier(research_kb):
    assert [f.record for f in inferkb.open(research_kb).audit(AUDIT).findings if f.code == "KB701"] == []


def test_corpus_benchmark_known_only_from_a_github_issue_is_flagged(research_kb):
    rid = "ev-sglang-dsv41-production-decode-tok-s-per-user"
    data = json.loads((research_kb / "data" / "benchmarks" / f"{rid}.json").read_text())
    # read by hand: its only source is sglang issue 40877 on github.com
    assert data["sources"] == ["ev-sglang-issue-40877-production-deepseek-v41-flash"]
    hits = [f for f in inferkb.open(research_kb).audit(AUDIT).findings if f.code == "KB702"]
    assert f"benchmarks/{rid}" in {f.record for f in hits}


def test_corpus_mlperf_benchmark_is_not_flagged(research_kb):
    hits = {f.record for f in inferkb.open(research_kb).audit(AUDIT).findings if f.code == "KB702"}
    assert "benchmarks/bench-mlperf-v6-1-amd-mi355x-llama2-70b-offline" not in hits


def test_bundled_kb_runs_and_reports_a_share():
    figures = inferkb.open().audit(AUDIT).figures[AUDIT]
    assert figures["figure_weighted"]["numbers"] > 0
    assert 0.0 <= figures["figure_weighted"]["share_a_or_c"] <= 1.0


def test_every_bundled_source_gets_a_tier():
    # Before the personal-blog rule and the pricing/mirror/provider hosts, 9 bundled sources were KB701.
    assert [f.record for f in inferkb.open().audit(AUDIT).findings if f.code == "KB701"] == []


def test_a_personal_notes_site_is_community_and_a_providers_own_blog_is_b():
    assert classify("https://glennklockwood.com/garden/processors/h100", "blog").rule == "personal-blog"
    assert classify("https://www.spheron.network/blog/nvidia-h200-vs-b200-vs-gb200", "blog").tier == "B"
    assert classify("https://manuals.plus/m/56b0c3ef", "spec-sheet").tier == "D"
