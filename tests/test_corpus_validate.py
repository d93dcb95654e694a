"""validate on the real inference-research sample reports its real problems."""

from __future__ import annotations

import json
import subprocess
import sys

import inferkb


def test_corpus_loads_every_record(research_kb):
    kb = inferkb.open(research_kb)
    on_disk = sum(1 for _ in (research_kb / "data").glob("*/*.json"))
    assert len(kb.records) == on_disk and kb.load_findings == []


def test_corpus_engine_ids_that_are_source_ids_are_strict_errors(research_kb):
    # SOURCES.md of the sample lists engine_id values with no engine record; the two
    # alt-aws-* records citing alt-neuron-compiler are not in the sample, the other five are.
    report = inferkb.open(research_kb).validate(select=["KB202"])
    bad = sorted(f.extra["id"] for f in report.findings)
    assert bad == ["alt-cerebras-ultrafast"] * 2 + ["alt-groq-lpu-arch"] + ["alt-tpu-perf-guide"] * 2


def test_corpus_missing_formats_are_dangling_references(research_kb):
    report = inferkb.open(research_kb).validate(select=["KB203"])
    ids = {(f.field, f.extra["id"]) for f in report.findings}
    assert ("format_id", "2bit") in ids and ("format_id", "mlx-quantized-4bit") in ids


def test_corpus_budget_comes_from_its_ref_budget_file(research_kb):
    report = inferkb.open(research_kb).validate()
    figs = report.figures["validate"]
    assert figs["dangling_budget"] == 30  # tools/ref_budget.json
    assert (figs["dangling_references"] > 30) == any(f.code == "KB204" for f in report.findings)


def test_corpus_cited_but_missing_sources_are_reported(research_kb):
    report = inferkb.open(research_kb).validate(select=["KB201"])
    missing = {f.extra["id"] for f in report.findings}
    # Named in the sample's SOURCES.md as cited but not included.
    assert {"ev-vllm-issue-35387-mtp-latency-regression", "sd-eagle3-paper"} <= missing


def test_corpus_is_validated_against_its_own_schemas(research_kb):
    report = inferkb.open(research_kb).validate()
    assert set(report.figures["validate"]["schema_origin"].values()) == {"kb"}
    # Records from older commits lack the `basis` that the sample's flops schema now requires.
    assert any(f.code == "KB101" and "basis" in f.message for f in report.findings)


def test_cli_validate_on_corpus_exits_1_with_json(research_kb):
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "validate", "--kb", str(research_kb), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["records"] == 294 and doc["summary"]["by_severity"]["error"] > 0
