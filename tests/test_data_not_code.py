"""Data stays data: metrics come from metrics.json, condition/environment keys from the benchmark schema, engine names from engine records."""

from __future__ import annotations

import json

import inferkb
from conftest import BUNDLED, rec, write_kb
from inferkb.audit.conditions_text import assess
from inferkb.audit.metric_consistency import metric_info
from inferkb.resolve import engine_names

TOML = """
[kb]
name = "t"
metrics = "metrics.json"
[types.engine]
dir = "engines"
[types.benchmark]
dir = "benchmarks"
[types.source]
dir = "sources"
"""


def test_metric_meaning_comes_from_the_kbs_registry_file(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")}, toml=TOML)
    entry = {"name": "first_byte_ms", "dimension": "latency", "unit": "ms", "direction": "lower", "measures": "ttft"}
    (root / "metrics.json").write_text(json.dumps({"metrics": [entry]}))
    info = metric_info(inferkb.open(root), "first_byte_ms")
    assert info == {"dimension": "latency", "unit": "ms", "direction": "lower", "requires_baseline": False, "measures": "ttft"}


def test_a_kb_without_a_registry_reads_metrics_from_the_bundled_metrics_json(research_kb):
    registry = {m["name"]: m for m in json.loads((BUNDLED / "metrics.json").read_text())["metrics"]}
    info = metric_info(inferkb.open(research_kb), "tps_aggregate")
    assert (info["unit"], info["measures"]) == (registry["tps_aggregate"]["unit"], registry["tps_aggregate"]["measures"])
    assert metric_info(inferkb.open(research_kb), "not_a_metric") is None


def test_importers_take_condition_and_environment_keys_from_the_schema():
    from inferkb.intake.base import CONDITION_KEYS
    from inferkb.intake.common import ENV_KEYS

    schema = json.loads((BUNDLED / "schemas" / "benchmark.schema.json").read_text())
    assert CONDITION_KEYS == tuple(schema["properties"]["conditions"]["properties"])
    env = schema["properties"]["environment"]["properties"]
    assert ENV_KEYS == tuple(k for k, v in env.items() if "string" in v["type"])


def test_an_engine_named_only_by_its_record_has_its_version_found(tmp_path):
    engine = rec("engine", "fancy-serve", name="FancyServe", aliases=["fancyserve"])
    bench = rec("benchmark", "b", engine_id="fancy-serve", methodology="Served with FancyServe v1.2.3 on one GPU.")
    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/engines/fancy-serve.json": engine, "data/benchmarks/b.json": bench}))
    assert set(engine_names(kb)["fancy-serve"]) == {"FancyServe", "fancy-serve", "fancyserve"}
    a = assess(bench, engines=engine_names(kb))["engine_version"]
    assert (a.status, a.value, a.evidence["quote"]) == ("present", "v1.2.3", "FancyServe v1.2.3")
    report = kb.audit("load-conditions")
    assert not [f for f in report.findings if f.field == "conditions.engine_version" and f.code == "KB301"]
