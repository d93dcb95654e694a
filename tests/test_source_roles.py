"""Why a record cites each source: the round's rules evidence versus the record's own result (inferkb.source_roles).

Worked case from the bundled KB: the Cisco C240M7 2x L40S gptj-99 Offline record (v4.1) cites GigaComputing's H200
submission because its gptj-99.9 Offline LoadGen log is ``log-gptj-offline`` in ``kb/rules/mlperf-v4.1.json``, the
evidence for the record's ``constraints.performance_sample_count`` (13368) and ``constraints.token_latencies``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

import inferkb
from conftest import BUNDLED
from inferkb.source_roles import source_roles

CISCO = "mlperf-v4-1-closed-cisco-c240m7-l40sx2-trt-gptj-99-offline"
GIGA_OWN = "mlperf-v4-1-closed-gigacomputing-gigabyte-g593-sd1-h200-sxm-141gbx8-trt-gptj-99-9-offline"
GIGA_SRC = "mlperf-v4-1-closed-gigacomputing-gigabyte-g593-sd1-h200-sxm-141gbx8-trt"
CISCO_SRC = "mlperf-v4-1-closed-cisco-c240m7-l40sx2-trt"
RULES_FILE = "inferkb/kb/rules/mlperf-v4.1.json"


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_another_submitters_log_is_rules_evidence_naming_the_file_key_and_fields(kb):
    roles = source_roles(kb, kb.get(f"benchmarks/{CISCO}").data)
    giga = roles[GIGA_SRC]
    assert giga.role == "rules-evidence"
    assert giga.rules_file == RULES_FILE and giga.rules_keys == ("log-gptj-offline",)
    assert giga.backs == ("constraints.performance_sample_count", "constraints.token_latencies")
    assert roles["mlcommons-inference-policies-rules-0012149b"].backs == ("constraints.concurrency_limit", "conditions.concurrency")
    assert roles[CISCO_SRC].role == "result"


def test_a_records_own_submission_is_its_result_not_rules_evidence(kb):
    roles = source_roles(kb, kb.get(f"benchmarks/{GIGA_OWN}").data)
    own = roles[GIGA_SRC]
    assert own.role == "result"
    assert "not this record's own result" not in own.describe()
    assert own.describe().startswith("this record's own result")


def test_show_text_and_json_give_the_role(kb):
    text = run("show", CISCO)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  {GIGA_SRC}  "))
    assert lines[at + 1].strip() == (
        f"role: cited as evidence of the round's rules ({RULES_FILE}, log-gptj-offline), backing "
        "constraints.performance_sample_count, constraints.token_latencies; not this record's own result"
    )
    doc = json.loads(run("show", CISCO, "--format", "json").stdout)
    role = doc["computed"]["source_roles"][GIGA_SRC]
    assert role["role"] == "rules-evidence" and role["rules_file"] == RULES_FILE
    assert role["backs"] == ["constraints.performance_sample_count", "constraints.token_latencies"]
    own = json.loads(run("show", GIGA_OWN, "--format", "json").stdout)["computed"]["source_roles"][GIGA_SRC]
    assert own["role"] == "result"


def test_records_without_rules_or_with_broken_rules_fields_get_no_rules_role(kb):
    fake = SimpleNamespace(resolve=lambda sid, type_name: None)
    assert source_roles(fake, {"sources": ["s1"]}) == {}
    assert source_roles(fake, {"sources": ["s1"], "constraints": {"rules": "mlperf-v0.1"}}) == {}
    broken = {"sources": [GIGA_SRC], "constraints": {"rules": "mlperf-v4.1", "evidence": ["not", "a", "mapping"]}, "submission": 7}
    assert source_roles(fake, broken) == {}
    odd = {"sources": [GIGA_SRC, 3], "constraints": {"rules": "mlperf-v4.1", "evidence": {"x": 5, "y": "log-gptj-offline: k"}}}
    assert source_roles(fake, odd)[GIGA_SRC].backs == ("constraints.y",)


def test_export_record_sources_carries_the_role(kb):
    from inferkb.export.tables import build_tables

    table = build_tables(kb, findings="none")["record_sources"]
    names = [c.name for c in table.columns]
    assert names[-2:] == ["role", "role_note"]
    rows = {(r[0], r[1]): r for r in table.rows}
    assert rows[(f"benchmarks/{CISCO}", GIGA_SRC)][3] == "rules-evidence"
    assert rows[(f"benchmarks/{GIGA_OWN}", GIGA_SRC)][3] == "result"
    assert rows[(f"benchmarks/{CISCO}", "mlperf-inference-v4-1-summary-results")][3] == "results-table"


def test_site_record_page_says_why_a_source_is_cited(tmp_path, kb):
    from inferkb.site import build_site

    root = tmp_path / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks", "sources", "docs"))
    (root / "data" / "benchmarks").mkdir()
    (root / "data" / "sources").mkdir()
    wanted = set()
    for rid in (CISCO, GIGA_OWN):
        shutil.copy(BUNDLED / "data" / "benchmarks" / f"{rid}.json", root / "data" / "benchmarks")
        wanted.update(kb.get(f"benchmarks/{rid}").data["sources"])
    for sid in wanted:
        shutil.copy(BUNDLED / "data" / "sources" / f"{sid}.json", root / "data" / "sources")
    build_site(inferkb.open(root), tmp_path / "site", search=False)
    cisco = (tmp_path / "site" / "benchmarks" / f"{CISCO}.html").read_text(encoding="utf-8")
    assert "why cited" in cisco
    assert "cited as evidence of the round&#39;s rules (inferkb/kb/rules/mlperf-v4.1.json, log-gptj-offline)" in cisco
    own = (tmp_path / "site" / "benchmarks" / f"{GIGA_OWN}.html").read_text(encoding="utf-8")
    assert "this record&#39;s own result" in own


V61 = "mlperf-v6-1-open-scitix-b200-sxm-180gbx8-trt-deepseek-r1-server"


def test_the_table_the_import_read_is_the_results_table(kb):
    cisco = source_roles(kb, kb.get(f"benchmarks/{CISCO}").data)["mlperf-inference-v4-1-summary-results"]
    assert cisco.role == "results-table"
    assert cisco.read_by == "inferkb.intake.mlperf, summary_results.json, row 94"
    assert cisco.describe() == (
        "the results table this record's numbers were copied from (inferkb.intake.mlperf, summary_results.json, row 94)"
    )
    assert cisco.to_dict()["read_by"] == cisco.read_by
    # The summary.csv importer's method names the layout, not the file: its table is the round's summary.csv.
    v61 = source_roles(kb, kb.get(f"benchmarks/{V61}").data)["mlperf-inference-v6-1-summary"]
    assert v61.role == "results-table" and v61.read_by.startswith("inferkb.intake.mlperf, v6.1 table layout, line ")


def test_a_results_table_the_import_did_not_read_gets_no_role(kb):
    # GigaComputing's own summary.csv is cited beside the round's summary_results.json, which the import read.
    giga = kb.get("benchmarks/mlperf-v4-1-closed-gigacomputing-gigabyte-g593-sd1-h200-sxm-141gbx8-trt-mixtral-8x7b-server")
    roles = source_roles(kb, giga.data)
    assert "mlperf-inference-v4-1-gigacomputing-summary" not in roles
    assert roles["mlperf-inference-v4-1-summary-results"].role == "results-table"


def test_results_table_role_needs_the_kind_and_an_import_entry_naming_the_file():
    def kb_with(kind, url):
        src = SimpleNamespace(data={"kind": kind, "url": url})
        return SimpleNamespace(resolve=lambda sid, type_name: src if sid == "t" else None)

    read = {"sources": ["t"], "provenance": [{"action": "import", "method": "some.importer, table.csv, row 3"}]}
    assert source_roles(kb_with("results-table", "https://x/y/table.csv"), read)["t"].role == "results-table"
    assert source_roles(kb_with("repo", "https://x/y/table.csv"), read) == {}
    assert source_roles(kb_with("results-table", "https://x/y/other.csv"), read) == {}
    assert source_roles(kb_with("results-table", "https://x/y/"), read) == {}
    not_import = {"sources": ["t"], "provenance": [{"action": "backfill", "method": "some.importer, table.csv, row 3"}]}
    assert source_roles(kb_with("results-table", "https://x/y/table.csv"), not_import) == {}
    broken = {"sources": ["t"], "provenance": ["x", {"action": "import", "method": 5}]}
    assert source_roles(kb_with("results-table", "https://x/y/table.csv"), broken) == {}
