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
    assert rows[(f"benchmarks/{CISCO}", "mlperf-inference-v4-1-summary-results")][3] is None


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
