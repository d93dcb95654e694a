"""The llmd-report importer and export_report: llm-d Benchmark Report v0.2 in and out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

import inferkb
from inferkb.errors import InputError, UsageError
from inferkb.intake import load_all
from inferkb.intake.base import IntakeOptions, commit
from inferkb.intake.llmd_report import export_report

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
LLMD = CORPUS / "harness" / "llm-d"
BUNDLED = REPO / "src" / "inferkb" / "kb"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> inferkb.KB:
    root = tmp_path_factory.mktemp("kb") / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks"))
    return inferkb.open(root)


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(need(LLMD / "br_v0_2_1_json_schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def run(kb, path: Path, **opts):
    return load_all()["llmd-report"].parse([path], IntakeOptions(**opts), kb)


def bench(res):
    return [r for r in res.records if r["type"] == "benchmark"]


def test_a_yaml_list_gives_one_record_per_report(kb):
    res = run(kb, need(LLMD / "guidellm_all.v0_2_1.yaml"))
    recs = bench(res)
    assert len(recs) == 2 and len({r["id"] for r in recs}) == 2
    assert [r["conditions"]["request_rate"] for r in recs] == [2.0, 4.0]


def test_statistics_are_converted_to_registry_units(kb):
    res = run(kb, need(LLMD / "br_v0_2_1_example.yaml"))
    m = bench(res)[0]["metrics"]
    # The example states TTFT in s: p50 0.03622930939309299 s, p99p9 0.057014757215045425 s.
    assert m["ttft_ms"]["stats"]["p50"] == pytest.approx(36.22930939309299)
    assert m["ttft_ms"]["stats"]["p999"] == pytest.approx(57.014757215045425)
    assert m["ttft_ms"]["percentiles"]["p0.1"] == pytest.approx(27.322400792501866)
    assert m["tpot_ms"]["unit"] == "ms"


def test_ms_per_token_is_kept_as_ms(kb):
    rec = bench(run(kb, need(LLMD / "guidellm_all.v0_2_1.yaml")))[0]
    assert rec["metrics"]["itl_ms"]["stats"]["mean"] == pytest.approx(1.1508464813232422)


def test_headline_is_output_token_rate(kb):
    rec = bench(run(kb, need(LLMD / "inference_perf.v0_2.yaml")))[0]
    assert (rec["metric"], rec["value"], rec["unit"]) == ("output_tok_s", 216.12494338685693, "tok/s")
    assert rec["conditions"]["num_prompts"] == 79


def test_input_token_rate_is_input_tokens_over_the_run_not_a_prefill_rate(kb):
    """inference_perf.v0_2.yaml: input_token_rate 1770.96 + output_token_rate 216.12 = total_token_rate 1987.09 tok/s, so
    the input rate counts input tokens over the whole run (registry input_tok_s); it was stored as prefill_tok_s."""
    rec = bench(run(kb, need(LLMD / "inference_perf.v0_2.yaml")))[0]
    m = rec["metrics"]
    assert "prefill_tok_s" not in m
    assert m["input_tok_s"]["value_scope"] == "aggregate"
    assert m["input_tok_s"]["stats"]["mean"] + m["output_tok_s"]["stats"]["mean"] == pytest.approx(m["total_tok_s"]["stats"]["mean"])


def test_export_writes_the_input_token_rate_back(kb, tmp_path):
    res = run(kb, need(LLMD / "inference_perf.v0_2.yaml"))
    commit(kb, res.records, update=True)
    doc = export_report(kb, bench(res)[0]["id"])
    rate = doc["results"]["request_performance"]["aggregate"]["throughput"]["input_token_rate"]
    assert rate["units"] == "tokens/s" and rate["mean"] == pytest.approx(1770.9616662668363)


def test_unbounded_concurrency_is_a_gap_not_a_number(kb):
    rec = bench(run(kb, need(LLMD / "br_v0_2_1_example.yaml")))[0]
    assert rec["conditions"]["concurrency"] is None and ".inf" in rec["condition_gaps"]["concurrency"]["reason"]


def test_stack_parallelism_and_run_ids_are_kept(kb):
    rec = bench(run(kb, need(LLMD / "br_v0_2_1_example.yaml")))[0]
    assert rec["conditions"]["tensor_parallel"] == 8
    assert rec["hardware_raw"] == "NVIDIA-H100-80GB-HBM3"
    assert rec["submission"]["run_uid"] == "38b1f169ca178b756f7483523b17de61"
    assert rec["environment"]["extra"]["stack"][0]["native"]["args"]["--tensor-parallel-size"] == 8


def test_count_with_replicas_is_left_null_with_a_reason(kb):
    rec = bench(run(kb, need(LLMD / "br_v0_2_1_example.yaml")))[0]
    assert rec["accelerator_count"] is None and "replicas 2" in rec["condition_gaps"]["accelerator_count"]["reason"]


def test_gaussian_lengths_are_not_taken_as_one_length(kb):
    rec = bench(run(kb, need(LLMD / "br_v0_2_1_example.yaml")))[0]
    assert rec["conditions"]["input_tokens"] == 2148 and rec["conditions"]["output_tokens"] is None


@pytest.mark.parametrize("name", ["br_v0_2_1_example.yaml", "guidellm_all.v0_2_1.yaml", "inference_perf.v0_2.yaml"])
def test_imported_records_validate_and_export_to_a_valid_report(kb, validator, name):
    res = run(kb, need(LLMD / name))
    commit(kb, res.records, update=True)
    for rec in bench(res):
        doc = export_report(kb, rec["id"])
        assert list(validator.iter_errors(doc)) == []


def test_export_round_trips_the_headline(kb, tmp_path):
    res = run(kb, need(LLMD / "inference_perf.v0_2.yaml"))
    commit(kb, res.records, update=True)
    rec = bench(res)[0]
    p = tmp_path / "out.json"
    p.write_text(json.dumps(export_report(kb, rec["id"])))
    back = bench(run(kb, p, record_id="roundtrip"))[0]
    assert back["value"] == rec["value"] and back["metrics"]["e2e_latency_ms"]["stats"]["mean"] == pytest.approx(
        rec["metrics"]["e2e_latency_ms"]["stats"]["mean"]
    )


def test_export_of_an_mlperf_record_validates(kb, validator, tmp_path):
    csv_path = need(CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv")
    res = load_all()["mlperf"].parse([csv_path], IntakeOptions(), kb)
    commit(kb, res.records, update=True)
    rec = next(r for r in bench(res) if r["accelerator_count"])
    doc = export_report(kb, rec["id"])
    assert list(validator.iter_errors(doc)) == []
    assert doc["results"]["request_performance"]["aggregate"]["throughput"]["output_token_rate"]["mean"] == rec["value"]


def test_export_refuses_a_non_benchmark_record(kb):
    with pytest.raises(UsageError, match="only benchmark records"):
        export_report(kb, next(iter(kb.ids_of_type("engine"))))


def test_wrong_harness_names_expected_and_found_keys(kb, tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump({"benchmarks": []}))
    with pytest.raises(InputError, match="expected keys version, run, results; missing version, run, results; found benchmarks"):
        run(kb, p)


def test_other_report_version_is_refused(kb, tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump({"version": "0.1", "run": {"uid": "x"}, "results": {}}))
    with pytest.raises(InputError, match="not 0.2"):
        run(kb, p)


def test_broken_yaml_names_the_line(kb, tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("version: '0.2'\nrun: {uid: [\n")
    with pytest.raises(InputError, match="line"):
        run(kb, p)


def test_report_without_throughput_is_an_input_error(kb, tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump({"version": "0.2", "run": {"uid": "x"}, "results": {"request_performance": {"aggregate": {}}}}))
    with pytest.raises(InputError, match="no aggregate throughput"):
        run(kb, p)


def test_empty_file_is_an_input_error(kb, tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        run(kb, p)
