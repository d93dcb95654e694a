"""MLPerf round-wide tables, rules as load conditions, links, LoadGen enrichment and per-accelerator figures.

Expected values are read in each test from the raw corpus files (with the
json/csv modules, not through inferkb) or copied by hand from the rule lines
quoted in the test.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb import derive
from inferkb.audit import run_audits
from inferkb.intake import mlperf_links, mlperf_rules
from inferkb.intake.base import IntakeOptions
from inferkb.intake.mlperf_json import import_round_json, iter_json_rows
from inferkb.query import stats

REPO = Path(__file__).resolve().parents[1]
MLPERF = REPO.parent / "shared" / "corpus" / "mlperf"
BUNDLED = REPO / "src" / "inferkb" / "kb"
LLM = re.compile(r"llama|gptj|gpt-oss|mixtral|deepseek|qwen", re.I)


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


def raw_rows(rnd: str) -> list[dict]:
    return json.loads(need(MLPERF / f"inference_results_{rnd}" / "summary_results.json").read_text())


def row(rnd: str, submitter: str, platform: str, model: str, scenario: str) -> dict:
    hits = [
        r for r in raw_rows(rnd) if (r["Submitter"], r["Platform"], r["Model"], r["Scenario"]) == (submitter, platform, model, scenario)
    ]
    assert len(hits) == 1
    return hits[0]


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def bundled_rec(kb, rnd, division, submitter, platform, model, scenario) -> dict:
    from inferkb.intake.mlperf import _bounded_id

    found = kb.resolve(f"benchmarks/{_bounded_id('mlperf', rnd, division, submitter, platform, model, scenario)}")
    assert found is not None
    return found.data


# ---- rules files ------------------------------------------------------------------------


def test_every_rules_value_cites_a_declared_source_with_a_commit():
    for rnd in mlperf_rules.available_rounds():
        rules = mlperf_rules.load(rnd)
        assert rules is not None
        for src in rules.sources.values():
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]) and src["repo"] and src["path"] and src["source_id"]


def test_v51_interactive_limits_are_the_interactive_lines_of_mlperf_conf():
    # loadgen/mlperf.conf @001712e9: "llama3_1-8b-interactive.Server.ttft_latency = 500", "... tpot_latency = 30",
    # "*.Server.target_latency_percentile = 99", "*.Server.min_duration = 600000"
    out = mlperf_rules.apply(mlperf_rules.load("v5.1"), "llama3.1-8b", "Interactive")
    c = out.constraints
    assert (c["ttft_ms_max"], c["tpot_ms_max"], c["latency_percentile"], c["min_duration_ms"]) == (500, 30, 99, 600000)
    assert c["evidence"]["ttft_ms_max"] == "conf: llama3_1-8b-interactive.Server.ttft_latency = 500"
    assert "concurrency" not in out.conditions


def test_offline_has_no_concurrency_limit_as_a_value_not_a_gap():
    out = mlperf_rules.apply(mlperf_rules.load("v6.0"), "gpt-oss-120b", "Offline")
    assert out.conditions["concurrency"] == "unbounded" and out.constraints["concurrency_limit"] == "none"
    gaps = mlperf_rules.condition_gaps(mlperf_rules.load("v6.0"), "gpt-oss-120b", "Offline", out)
    assert "concurrency" not in gaps and gaps["input_tokens"]["checked"] == ["rules:mlperf-v6.0"]


def test_single_stream_is_one_query_at_a_time():
    out = mlperf_rules.apply(mlperf_rules.load("v5.1"), "llama3.1-8b-edge", "SingleStream")
    assert out.conditions["concurrency"] == 1 and out.constraints["latency_percentile"] == 90


def test_gptj_token_latencies_are_inferred_and_vlm_tracks_none():
    # v6.0 mlperf.conf copy: "gptj.*.infer_token_latencies = 1", "qwen3-vl-235b-a22b.*.use_token_latencies = 0"
    rules = mlperf_rules.load("v6.0")
    assert mlperf_rules.apply(rules, "gptj-99", "Offline").constraints["token_latencies"] == "inferred"
    assert mlperf_rules.apply(rules, "qwen3-vl-235b-a22b", "Server").constraints == {
        **mlperf_rules.apply(rules, "qwen3-vl-235b-a22b", "Server").constraints,
        "token_latencies": "not tracked",
        "latency_ms_max": 12000,
    }


def test_a_round_without_a_rules_value_leaves_it_out():
    c = mlperf_rules.apply(mlperf_rules.load("v6.1"), "llama2-70b-99.9", "Server").constraints
    assert "ttft_ms_max" not in c and c["rules"] == "mlperf-v6.1"


# ---- round-wide tables: rows pinned to the raw files ------------------------------------


@pytest.mark.parametrize("rnd", ["v4.1", "v5.1", "v6.0"])
def test_bundled_kb_holds_one_record_per_llm_row_of_each_round(bundled, rnd):
    expected = sum(1 for r in raw_rows(rnd) if LLM.search(r["Model"]))
    got = [r for r in bundled.by_type("benchmark") if (r.data.get("submission") or {}).get("round") == rnd]
    assert len(got) == expected


@pytest.mark.parametrize(
    ("rnd", "submitter", "platform", "model", "scenario"),
    [
        ("v4.1", "NVIDIA", "H200-SXM-141GBx8_TRT", "llama2-70b-99", "Offline"),
        ("v4.1", "GigaComputing", "GIGABYTE_G593_SD1_H200_SXM_141GBx8_TRT", "mixtral-8x7b", "Server"),
        ("v5.1", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive"),
        ("v5.1", "NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT", "llama3.1-405b", "Interactive"),
        ("v6.0", "AMD", "8xMI355X_2xEPYC_9575F", "gpt-oss-120b", "Server"),
        ("v6.0", "Nebius", "nebius_b200_n1", "gpt-oss-120b", "Interactive"),
    ],
)
def test_record_value_and_count_are_the_raw_row(bundled, rnd, submitter, platform, model, scenario):
    raw = row(rnd, submitter, platform, model, scenario)
    data = bundled_rec(bundled, rnd, raw["Category"], submitter, platform, model, scenario)
    assert data["value"] == float(raw["Performance_Result"])
    assert data["accelerator_count"] == raw["Nodes"] * int(float(raw["a#"]))
    assert data["submission"]["division"] == raw["Category"] and data["origin"] == "mlperf-inference"


def test_nvl72_count_is_nodes_times_accelerators_per_node(bundled):
    raw = row("v5.1", "NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT", "llama3.1-405b", "Interactive")
    assert (raw["Nodes"], raw["a#"]) == (18, 4)
    data = bundled_rec(bundled, "v5.1", "closed", "NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT", "llama3.1-405b", "Interactive")
    assert data["accelerator_count"] == 72 and data["per_accelerator"]["divisor"] == 72
    assert data["per_accelerator"]["value"] == pytest.approx(float(raw["Performance_Result"]) / 72)


def test_a_part_count_contradicting_nodes_times_per_node_leaves_the_count_null(bundled):
    raw = [r for r in raw_rows("v6.0") if "(x87)" in str(r["Accelerator"])][0]
    assert raw["Nodes"] * raw["a#"] == raw["Total Accelerators"] == 88
    data = bundled_rec(bundled, "v6.0", "closed", raw["Submitter"], raw["Platform"], raw["Model"], raw["Scenario"])
    assert data["accelerator_count"] is None and "x87" in data["condition_gaps"]["accelerator_count"]["reason"]
    assert "per_accelerator" not in data


def test_open_division_rows_do_not_claim_the_reference_model(bundled):
    opens = [r.data for r in bundled.by_type("benchmark") if (r.data.get("submission") or {}).get("division") == "open"]
    assert opens and all(d["model_id"] is None and d["model"] is None and "model" in d["condition_gaps"] for d in opens)


def test_vision_language_rates_are_not_token_rates(bundled):
    raw = row("v6.0", "RedHat", "8xb200_NV_vllm_qwen", "qwen3-vl-235b-a22b", "Offline")
    data = bundled_rec(bundled, "v6.0", "closed", "RedHat", "8xb200_NV_vllm_qwen", "qwen3-vl-235b-a22b", "Offline")
    assert raw["Performance_Units"] == "Samples/s" and data["metric"] == "samples_per_s" and "per_accelerator" not in data


def test_json_rows_missing_a_key_are_an_input_error_naming_it(tmp_path):
    from inferkb.errors import InputError

    p = tmp_path / "summary_results.json"
    p.write_text(json.dumps([{"Submitter": "x"}]))
    with pytest.raises(InputError, match="row 1 lacks Category"):
        list(iter_json_rows(p))


# ---- the inferred flag, GPT-J token inference, unit labels --------------------------------


def test_v61_inferred_flag_is_the_scenario_not_the_token_rate(bundled):
    rows = list(csv.DictReader(open(need(MLPERF / "inference_results_v6.1" / "summary.csv"), encoding="utf-8")))
    r = next(x for x in rows if x["inferred"] == "1" and x["Scenario"] == "Interactive" and x["Model"] == "gpt-oss-120b")
    data = bundled_rec(bundled, "v6.1", r["Division"], r["Organization"], r["Platform"], r["Model"], r["Scenario"])
    sub = data["submission"]
    assert sub["scenario_inferred"] is True and sub["tokens_inferred"] is False and data["confidence"] == 0.9
    assert "a Server run under the Interactive limits" in data["notes"]


def test_v41_gptj_records_say_their_tokens_are_inferred(bundled):
    data = bundled_rec(bundled, "v4.1", "closed", "GigaComputing", "GIGABYTE_G593_SD1_H200_SXM_141GBx8_TRT", "gptj-99", "Offline")
    assert data["submission"]["tokens_inferred"] is True
    assert data["constraints"]["evidence"]["token_latencies"] == "log-gptj-offline: Tokens per second (inferred): 20041.3"


def test_gigacomputing_rows_are_token_rates_with_the_correction_recorded(bundled):
    raw_csv = list(csv.DictReader(open(need(MLPERF / "inference_results_v4.1/closed/GigaComputing/summary.csv"), encoding="utf-8")))
    csv_row = next(r for r in raw_csv if r["Model"] == "llama2-70b-99.9" and r["Scenario"] == "Server")
    assert csv_row["Units"] == "Queries/s"
    data = bundled_rec(bundled, "v4.1", "closed", "GigaComputing", "GIGABYTE_G593_SD1_H200_SXM_141GBx8_TRT", "llama2-70b-99.9", "Server")
    assert data["metric"] == "output_tok_s" and data["value"] == float(csv_row["Result"]) and data["status"] == "verified"
    assert "mlperf-inference-v4-1-gigacomputing-summary" in data["sources"]
    fix = [p for p in data["provenance"] if p["tag"] == "mlperf-unit-label"]
    assert fix and fix[0]["action"] == "correction" and fix[0]["numbers_changed"] is False and "29715.28" in fix[0]["basis"]


def test_v51_llama31_8b_interactive_queries_label_is_resolved_to_tokens(bundled):
    raw = row("v5.1", "Dell", "XE9680L_B200_SXM_180GBx8_TRT", "llama3.1-8b", "Interactive")
    assert raw["Performance_Units"] == "Queries/s"
    dell = bundled_rec(bundled, "v5.1", "closed", "Dell", "XE9680L_B200_SXM_180GBx8_TRT", "llama3.1-8b", "Interactive")
    other = bundled_rec(bundled, "v5.1", "closed", "HPE", "HPE_Cray_XD670_H200_SXM_141GBx8_TRT", "llama3.1-8b", "Interactive")
    assert (dell["metric"], dell["confidence"], other["metric"], other["confidence"]) == ("output_tok_s", 0.9, "output_tok_s", 0.8)


def test_unsettled_unit_labels_stay_contested(bundled):
    # v4.1 has two NeuralMagic GO_2xRTX4090 llama2-70b-99.9 Offline rows: one says Tokens/s, one Samples/s (no evidence settles it)
    raws = [
        r
        for r in raw_rows("v4.1")
        if r["Submitter"] == "NeuralMagic" and r["Platform"].startswith("GO_2xRTX4090") and r["Model"] == "llama2-70b-99.9"
    ]
    samples = next(r for r in raws if r["Performance_Units"] == "Samples/s")
    recs = [r.data for r in bundled.by_type("benchmark") if (r.data.get("submission") or {}).get("platform") == samples["Platform"]]
    data = next(d for d in recs if d["submission"]["units_raw"] == "Samples/s")
    assert data["value"] == samples["Performance_Result"] and data["metric"] is None and data["status"] == "contested"


# ---- LoadGen summaries and system descriptions --------------------------------------------


def test_loadgen_percentiles_enrich_the_table_record_in_ms(bundled):
    rel = "inference_results_v5.1/closed/Dell/results/XE9680L_B200_SXM_180GBx8_TRT/llama3.1-8b/Interactive/performance/run_1/mlperf_log_summary.txt"
    text = need(MLPERF / rel).read_text()
    ns = int(re.search(r"99\.00 percentile first token latency \(ns\)\s*:\s*(\d+)", text).group(1))
    qps = float(re.search(r"target_qps : ([\d.]+)", text).group(1))
    data = bundled_rec(bundled, "v5.1", "closed", "Dell", "XE9680L_B200_SXM_180GBx8_TRT", "llama3.1-8b", "Interactive")
    assert data["metrics"]["ttft_ms"]["stats"]["p99"] == pytest.approx(ns / 1e6)
    assert data["submission"]["result_validity"] == "VALID" and data["submission"]["loadgen_scenario"] == "Server"
    assert data["conditions"]["request_rate"] == qps and data["submission"]["loadgen_ttft_ms_max"] == 500


def test_offline_summary_adds_no_per_request_latency(bundled):
    data = bundled_rec(bundled, "v5.1", "closed", "Quanta_Cloud_Technology", "D75T-7U_8xMI325X", "llama2-70b-99.9", "Offline")
    assert "e2e_latency_ms" not in data.get("metrics", {}) and data["submission"]["loadgen_summary"].endswith("mlperf_log_summary.txt")


def test_system_description_adds_the_software_stack(bundled):
    doc = json.loads(need(MLPERF / "inference_results_v5.1/closed/RedHat/systems/IBM_Cloud_gx3-48x240x2l40s_vLLM.json").read_text())
    data = bundled_rec(bundled, "v5.1", "closed", "RedHat", "IBM_Cloud_gx3-48x240x2l40s_vLLM", "llama3.1-8b", "Server")
    assert data["environment"]["driver"] == doc["other_software_stack"]["cuda_driver_version"]
    assert data["environment"]["extra"]["hw_notes"] == doc["hw_notes"]


# ---- links ------------------------------------------------------------------------------------


def test_99_and_999_variants_with_one_value_are_linked_both_ways(bundled):
    a = row("v5.1", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")
    b = row("v5.1", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99.9", "Interactive")
    assert a["Performance_Result"] == b["Performance_Result"]
    ra = bundled_rec(bundled, "v5.1", "closed", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")
    rb = bundled_rec(bundled, "v5.1", "closed", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99.9", "Interactive")
    assert ra["same_measurement_as"] == [rb["id"]] and rb["same_measurement_as"] == [ra["id"]]


def test_different_values_are_not_the_same_measurement():
    base = {"submission": {"suite": "MLPerf Inference", "round": "v5.1", "division": "closed", "submitter": "S", "platform": "P", "scenario_raw": "Offline"},
            "metric": "output_tok_s", "unit": "tok/s"}  # fmt: skip
    recs = [{**base, "id": "a", "model": "llama2-70b-99", "value": 1.0}, {**base, "id": "b", "model": "llama2-70b-99.9", "value": 1.5}]
    assert mlperf_links.link_same_measurement(recs) == 0 and all("same_measurement_as" not in r for r in recs)


def test_same_submitter_and_hardware_across_rounds_share_a_series(bundled):
    # AMD 8xMI355X_2xEPYC_9575F submitted gpt-oss-120b in v6.0 and v6.1 and llama2-70b in v5.1 (raw tables)
    v60 = bundled_rec(bundled, "v6.0", "closed", "AMD", "8xMI355X_2xEPYC_9575F", "gpt-oss-120b", "Server")
    series = [r.data for r in bundled.by_type("benchmark") if r.data.get("system_series") == v60["system_series"]]
    assert {d["submission"]["round"] for d in series} >= {"v6.0", "v6.1"}
    assert {(d["submission"]["submitter"], d["accelerator_count"], d["environment"]["host_cpu"]) for d in series} == {
        ("AMD", 8, "AMD EPYC 9575F")
    }


# ---- per-accelerator derivation and the device-count audit ----------------------------------


def _mini(tmp_path, records: list[dict], accelerators: list[dict] | None = None) -> inferkb.KB:
    root = tmp_path / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks", "accelerators"))
    (root / "data" / "benchmarks").mkdir()
    (root / "data" / "accelerators").mkdir()
    for acc in accelerators or []:
        (root / "data" / "accelerators" / f"{acc['id']}.json").write_text(json.dumps(acc))
    for r in records:
        (root / "data" / "benchmarks" / f"{r['id']}.json").write_text(json.dumps(r))
    return inferkb.open(root)


def test_per_accelerator_is_value_over_count_with_its_provenance(bundled):
    data = bundled_rec(bundled, "v5.1", "closed", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")
    pa = data["per_accelerator"]
    assert pa == {"value": round(8840.42 / 8, 6), "unit": "tok/s", "divisor": 8, "divisor_basis": pa["divisor_basis"]}
    entry = next(p for p in data["provenance"] if p["tag"] == "derive:per-accelerator")
    assert entry["action"] == "backfill" and entry["evidence"] == {"field": "accelerator_count", "quote": "8"}


def test_per_accelerator_derivation_proves_no_existing_number_changed(tmp_path, bundled):
    src = bundled_rec(bundled, "v5.1", "closed", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")
    fresh = {k: v for k, v in src.items() if k != "per_accelerator"}
    fresh["provenance"] = [p for p in src["provenance"] if p["tag"] != "derive:per-accelerator"]
    kb = _mini(tmp_path, [fresh])
    result = derive.run(kb, "per-accelerator")
    assert result.proof.ok and [c.field for c in result.changes] == ["per_accelerator"]


def test_heterogeneous_systems_get_no_per_accelerator_figure(bundled):
    mixed = [r.data for r in bundled.by_type("benchmark") if len(r.data.get("accelerator_ids") or []) > 1]
    assert all("per_accelerator" not in d for d in mixed)


def test_count_audit_flags_a_layout_larger_than_the_count(tmp_path):
    bad = rec("benchmark", "b", engine_id=None, metric=None, value=None, accelerator_count=4, conditions={"tensor_parallel": 8})
    good = rec(
        "benchmark",
        "g",
        engine_id=None,
        metric=None,
        value=None,
        accelerator_count=8,
        conditions={"tensor_parallel": 4, "data_parallel": 2},
    )
    kb = _mini(tmp_path, [bad, good])
    report = run_audits(kb, ["device-count"])
    assert [f.record for f in report.findings if f.code == "KB1201"] == ["benchmarks/b"]


def test_count_audit_flags_power_per_device_far_above_tdp(tmp_path):
    acc = rec("accelerator", "gpu-x", tdp_w=700)
    one = rec(
        "benchmark",
        "one",
        engine_id=None,
        metric=None,
        value=None,
        accelerator_count=1,
        accelerator_ids=["gpu-x"],
        power_w=7200,
        power_scope="node",
    )
    eight = rec(
        "benchmark",
        "eight",
        engine_id=None,
        metric=None,
        value=None,
        accelerator_count=8,
        accelerator_ids=["gpu-x"],
        power_w=7200,
        power_scope="node",
    )
    kb = _mini(tmp_path, [one, eight], [acc])
    report = run_audits(kb, ["device-count"])
    assert [f.record for f in report.findings if f.code == "KB1202"] == ["benchmarks/one"]


# ---- load-conditions share and stats per origin -----------------------------------------------


def test_a_gap_without_checked_evidence_is_not_reasoned(tmp_path):
    gaps = {k: {"reason": "unknown"} for k in ("batch_size", "input_tokens", "output_tokens", "engine_version", "warmup")}
    with_checked = {k: {**v, "checked": ["table row"]} for k, v in gaps.items()}
    base = dict(engine_id=None, metric=None, value=None, model="m", accelerator_ids=["a"], accelerator_count=1)
    kb = write_kb(
        tmp_path / "k",
        {
            "data/benchmarks/x.json": rec("benchmark", "x", condition_gaps=gaps, **base),
            "data/benchmarks/y.json": rec("benchmark", "y", condition_gaps=with_checked, **base),
        },
    )
    figures = run_audits(inferkb.open(kb), ["load-conditions"]).figures["load-conditions"]
    assert figures["complete_or_reasoned"] == 1 and figures["complete_or_reasoned_share"] == 0.5


def test_stats_counts_benchmarks_per_origin(tmp_path):
    kb = write_kb(
        tmp_path / "k",
        {
            "data/benchmarks/a.json": rec("benchmark", "a", origin="mlperf-inference"),
            "data/benchmarks/b.json": rec("benchmark", "b", origin="mlperf-inference"),
            "data/benchmarks/c.json": rec("benchmark", "c"),
        },
    )
    assert stats(inferkb.open(kb))["benchmark_origins"] == {"mlperf-inference": 2, "(none)": 1}


def test_stats_counts_benchmarks_per_round_and_division_in_round_order(tmp_path):
    def sub(rnd, division=None):
        return {"round": rnd, **({"division": division} if division else {})}

    kb = write_kb(
        tmp_path / "k",
        {
            "data/benchmarks/a.json": rec("benchmark", "a", origin="mlperf-inference", submission=sub("v10.0", "closed")),
            "data/benchmarks/b.json": rec("benchmark", "b", origin="mlperf-inference", submission=sub("v4.1", "open")),
            "data/benchmarks/c.json": rec("benchmark", "c", origin="mlperf-inference", submission=sub("v4.1", "open")),
            "data/benchmarks/d.json": rec("benchmark", "d", origin="mlperf-inference", submission=sub("v4.1")),
            "data/benchmarks/e.json": rec("benchmark", "e", origin="localscore"),  # no round: not listed
            "data/benchmarks/f.json": rec("benchmark", "f", origin="x", submission={"round": 3}),  # not a string
        },
    )
    rounds = stats(inferkb.open(kb))["benchmark_rounds"]
    assert rounds == {"mlperf-inference": {"v4.1": {"(none)": 1, "open": 2}, "v10.0": {"closed": 1}}}
    assert list(rounds["mlperf-inference"]) == ["v4.1", "v10.0"]  # v10 after v4, not before


def test_bundled_stats_per_round_add_up_to_the_mlperf_origin(bundled):
    data = stats(bundled)
    per_round = {rnd: sum(divs.values()) for rnd, divs in data["benchmark_rounds"]["mlperf-inference"].items()}
    assert sum(per_round.values()) == data["benchmark_origins"]["mlperf-inference"]
    assert set(per_round) == {"v4.1", "v5.1", "v6.0", "v6.1"}


def test_round_json_import_into_an_empty_kb_matches_the_bundled_records(tmp_path, bundled):
    """Importing v6.0 afresh gives the bundled values (the import is reproducible)."""
    root = tmp_path / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks"))
    res = import_round_json(inferkb.open(root), need(MLPERF / "inference_results_v6.0/summary_results.json"), IntakeOptions())
    fresh = {r["id"]: r for r in res.records if r["type"] == "benchmark"}
    for rid, data in list(fresh.items())[:25]:
        assert bundled.resolve(f"benchmarks/{rid}").data["value"] == data["value"]


@pytest.mark.parametrize(
    ("raw", "parts", "count"),
    [
        ("AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)", 2, 48),
        ("AMD Instinct MI300X 192GB HBM3 (x2x8) and AMD Instinct MI355X 288GB HBM3e (x2x8)", 2, 32),
        ("AMD Instinct MI355X 288GB HBM3e (x87)", 1, 87),
        ("NVIDIA H200-SXM-141GB", 1, None),
    ],
)
def test_accelerator_strings_split_into_parts_and_state_their_counts(raw, parts, count):
    from inferkb.intake.mlperf_maps import split_heterogeneous, stated_part_count

    assert len(split_heterogeneous(raw)) == parts and stated_part_count(raw) == count


def test_linked_records_say_the_rule_in_provenance(bundled):
    data = bundled_rec(bundled, "v5.1", "closed", "AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")
    entry = next(p for p in data["provenance"] if p["tag"] == "mlperf-links")
    assert entry["field"] == "same_measurement_as" and entry["evidence"] == {"field": "value", "quote": "8840.42"}
