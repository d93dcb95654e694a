"""Importers for the corpus harnesses that had none (issue #8): SGLang bench_serving, GuideLLM, AIPerf, trtllm-bench.

Expected values are read by hand from the raw files in ../shared/corpus/harness/ (quoted in the comments).
"""

from __future__ import annotations

import json

import pytest

import inferkb
from conftest import HARNESS, benchmarks_of, harness_file, import_with
from inferkb.errors import InputError
from inferkb.intake import load_all
from inferkb.intake.base import commit
from inferkb.store import Record
from inferkb.validate import validate_record

SG_2024 = "sglang/bench_serving_llama33-70b_h200_online_dec2024.jsonl"
SG_AGG = "sglang/bench_serving_qwen25-3b_agg_c32_server-info_dec2025.jsonl"
SG_PD = "sglang/bench_serving_qwen25-3b_pd-disagg_c32_server-info_dec2025.jsonl"
GUIDELLM = "guidellm/benchmarks_qwen25-7b_throughput_v0.2-era.json"
AIPERF = "aiperf/profile_export_aiperf_v0.11.0_qwen3-4b_c16.json"
TRT = "trtllm-bench/throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt"
TRT_ABORTED = "trtllm-bench/throughput_log_v0.16.0_truncated_no-report.txt"
SOURCE = "repo-vllm"  # any source record of the bundled KB: validation needs every cited source to exist


corpus = harness_file


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


parse = import_with


bench = benchmarks_of


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def assert_valid(kb, records):
    for data in records:
        rec = Record(key=f"benchmarks/{data['id']}", id=data["id"], type="benchmark", dir="benchmarks", path="x.json", data=data)
        errors = [f"{f.code} {f.message}" for f in validate_record(kb, rec) if f.severity == "error"]
        assert errors == [], (data["id"], errors)


# ---- SGLang bench_serving -----------------------------------------------------------


def test_sglang_every_jsonl_line_is_one_record_with_its_request_rate(kb):
    records = bench(parse("sglang-serving", [corpus(SG_2024)], kb))
    assert len(records) == 7
    # the lines' request_rate: 1.0, 2.0, 4.0, ... (the datacrunch script's --request-rate 1 2 4 8 16 ...)
    assert [r["conditions"]["request_rate"] for r in records][:3] == [1.0, 2.0, 4.0]
    # line 1: "total_output_tokens": 160347, "duration": 298.3675805060193, "output_throughput": 537.4142851849319
    assert records[0]["value"] == pytest.approx(160347 / 298.3675805060193)


def test_sglang_bare_infinity_request_rate_is_unbounded(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_AGG)], kb))
    assert record["conditions"]["request_rate"] == "inf"
    assert record["conditions"]["concurrency"] == 32  # "max_concurrency": 32, the cap


def test_sglang_headline_uses_the_server_token_count_and_keeps_the_retokenized_one_beside_it(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_AGG)], kb))
    # "total_output_tokens": 6180, "total_output_tokens_retokenized": 6176, "duration": 1.9367358824238181
    assert record["value"] == pytest.approx(6180 / 1.9367358824238181)
    sub = record["submission"]
    assert sub["total_output_tokens"] == 6180 and sub["total_output_tokens_retokenized"] == 6176
    assert sub["retokenized_to_server_output_tokens"] == pytest.approx(6176 / 6180)


def test_sglang_measured_concurrency_is_not_the_condition(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_AGG)], kb))
    assert record["submission"]["mean_requests_in_flight"] == pytest.approx(28.425194366851255)
    assert record["conditions"]["concurrency"] == 32


def test_sglang_server_info_gives_model_version_and_layout(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_AGG)], kb))
    assert record["model"] == "Qwen/Qwen2.5-3B-Instruct" and record["engine_id"] == "sglang"
    assert record["conditions"]["engine_version"] == "0.5.5.post3" and record["conditions"]["tensor_parallel"] == 1
    assert record["metrics"]["itl_ms"]["stats"]["p95"] == pytest.approx(23.269593063741922)
    assert record["metrics"]["e2e_latency_ms"]["stats"]["stdev"] == pytest.approx(306.52124269032686)


def test_sglang_random_lengths_drawn_from_a_range_are_a_reasoned_gap(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_AGG)], kb))
    assert record["conditions"]["input_tokens"] is None
    # random_input_len 128, random_range_ratio 0.0, total_input_tokens 6145 over 100 completed requests
    reason = record["condition_gaps"]["input_tokens"]["reason"]
    assert "between 0 and 128" in reason and "61.5 tokens" in reason


def test_sglang_fixed_random_lengths_are_conditions(kb, tmp_path):
    line = json.loads(corpus(SG_2024).read_text().splitlines()[0])
    line["random_range_ratio"] = 1.0
    path = tmp_path / "fixed.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (record,) = bench(parse("sglang-serving", [path], kb))
    assert record["conditions"]["input_tokens"] == 1024 and record["conditions"]["output_tokens"] == 1024


def test_sglang_prefill_decode_router_leaves_tp_as_a_reasoned_gap(kb):
    (record,) = bench(parse("sglang-serving", [corpus(SG_PD)], kb))
    assert record["conditions"]["tensor_parallel"] is None
    assert record["condition_gaps"]["tensor_parallel"]["reason"].startswith("prefill/decode disaggregated: 1 prefill server (tp 1)")


def test_sglang_infinity_outside_request_rate_is_refused(kb, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"backend": "sglang", "completed": 3, "duration": 1.0, "output_throughput": Infinity}\n')
    with pytest.raises(InputError, match="line 1: Infinity is not a number here"):
        parse("sglang-serving", [path], kb)


def test_sglang_duplicate_key_is_refused(kb, tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"completed": 3, "completed": 4, "duration": 1.0, "output_throughput": 2.0}\n')
    with pytest.raises(InputError, match="appears twice"):
        parse("sglang-serving", [path], kb)


def test_sglang_without_hardware_warns_once_per_file(kb):
    result = parse("sglang-serving", [corpus(SG_2024)], kb)
    (warning,) = [f for f in result.findings if f.code == "KB1106"]
    assert warning.extra["occurrences"] == 7


def test_sglang_records_validate_and_commit_once(kb, bundled_copy):
    records = bench(parse("sglang-serving", [corpus(SG_2024), corpus(SG_AGG), corpus(SG_PD)], kb, source=SOURCE))
    assert_valid(kb, records)
    target = inferkb.open(bundled_copy)
    result = parse("sglang-serving", [corpus(SG_AGG)], target)
    assert len(commit(target, result.records)) == 2  # the run and its local-file source
    # a re-import writes nothing: the source record now exists (not rebuilt) and the run is identical
    again = inferkb.open(bundled_copy)
    unchanged: list[str] = []
    assert commit(again, parse("sglang-serving", [corpus(SG_AGG)], again).records, unchanged=unchanged) == []
    assert unchanged == [f"benchmarks/{bench(result)[0]['id']}"]


# ---- GuideLLM ------------------------------------------------------------------------


def test_guidellm_benchmark_is_one_record_with_the_run_rate(kb):
    result = parse("guidellm", [corpus(GUIDELLM)], kb)
    (record,) = bench(result)
    # metrics.output_tokens_per_second.successful.mean 644.5063503771702; 128000 output tokens / 198.60006 s = 644.51
    assert record["value"] == pytest.approx(644.5063503771702)
    assert record["metrics"]["request_throughput_rps"]["value"] == pytest.approx(5.035245200174767)
    assert "KB1101" not in codes(result)


def test_guidellm_inter_token_latency_is_tpot_and_request_latency_becomes_ms(kb):
    (record,) = bench(parse("guidellm", [corpus(GUIDELLM)], kb))
    assert record["metrics"]["tpot_ms"]["stats"]["mean"] == pytest.approx(182.11426856949572)
    # request_latency.successful.median 93.94215273857117 s
    assert record["metrics"]["e2e_latency_ms"]["stats"]["p50"] == pytest.approx(93942.15273857117)
    ttft = record["metrics"]["ttft_ms"]
    assert ttft["stats"]["p999"] == pytest.approx(104042.86813735962) and ttft["percentiles"]["p0.1"] == pytest.approx(243.2703971862793)


def test_guidellm_conditions_come_from_the_data_spec_and_args(kb):
    (record,) = bench(parse("guidellm", [corpus(GUIDELLM)], kb))
    c = record["conditions"]
    # request_loader.data "prompt_tokens=512,output_tokens=128"; request_totals.total 1000; warmup_number/duration null
    assert (c["input_tokens"], c["output_tokens"], c["num_prompts"], c["warmup"]) == (512, 128, 1000, False)
    assert c["concurrency"] is None and "max 512.0" in record["condition_gaps"]["concurrency"]["reason"]
    assert record["scenario"] == "offline" and record["model"] == "qwen2.5-7b"


def test_guidellm_names_no_engine(kb):
    result = parse("guidellm", [corpus(GUIDELLM)], kb)
    assert bench(result)[0]["engine_id"] is None and "KB1105" in codes(result)
    assert bench(parse("guidellm", [corpus(GUIDELLM)], kb, engine="vllm"))[0]["engine_id"] == "vllm"


def test_guidellm_records_validate(kb):
    assert_valid(kb, bench(parse("guidellm", [corpus(GUIDELLM)], kb, source=SOURCE)))


# ---- AIPerf --------------------------------------------------------------------------


def test_aiperf_headline_is_output_token_throughput(kb):
    result = parse("aiperf", [corpus(AIPERF)], kb)
    (record,) = bench(result)
    # total_osl.avg 537554.0 / benchmark_duration.avg 299.935655192 s = 1792.231 (output_token_throughput.avg)
    assert record["value"] == pytest.approx(537554.0 / 299.935655192)
    assert "KB1101" not in codes(result)


def test_aiperf_inter_token_latency_is_tpot_and_inter_chunk_latency_is_itl(kb):
    (record,) = bench(parse("aiperf", [corpus(AIPERF)], kb))
    assert record["metrics"]["tpot_ms"]["stats"]["mean"] == pytest.approx(8.77927431816552)
    assert record["metrics"]["itl_ms"]["stats"]["mean"] == pytest.approx(8.84740421014943)
    assert record["metrics"]["ttft_ms"]["stats"]["n"] == 2044
    assert record["metrics"]["tok_s_per_user"]["stats"]["p50"] == pytest.approx(114.52530287907582)


def test_aiperf_conditions_from_the_profiling_phase(kb):
    (record,) = bench(parse("aiperf", [corpus(AIPERF)], kb))
    # input_config.phases: [{"name": "profiling", "type": "concurrency", "duration": 300.0, "concurrency": 16}]
    assert record["conditions"]["concurrency"] == 16 and record["conditions"]["warmup"] is False
    assert "bounded by duration (300.0 s)" in record["condition_gaps"]["num_prompts"]["reason"]
    assert "request_rate" not in record["condition_gaps"]
    assert record["model"] == "qwen3-4b"


def test_aiperf_unexpected_unit_is_refused(kb, tmp_path):
    doc = json.loads(corpus(AIPERF).read_text())
    doc["time_to_first_token"]["unit"] = "sec"
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="unit is 'sec', expected 'ms'"):
        parse("aiperf", [path], kb)


def test_aiperf_records_validate(kb):
    assert_valid(kb, bench(parse("aiperf", [corpus(AIPERF)], kb, source=SOURCE)))


# ---- trtllm-bench --------------------------------------------------------------------


def test_trtllm_report_is_one_record_with_output_token_throughput(kb):
    result = parse("trtllm-bench", [corpus(TRT)], kb)
    (record,) = bench(result)
    # "Token Throughput (tokens/sec):	14389.7989"; 30000 x 128 / 266.8557100 s = 14389.80
    assert record["value"] == 14389.7989 and record["metric"] == "output_tok_s"
    assert "KB1101" not in codes(result)
    assert record["metrics"]["request_throughput_rps"]["value"] == 112.4203


def test_trtllm_conditions_and_device_count(kb):
    (record,) = bench(parse("trtllm-bench", [corpus(TRT)], kb))
    c = record["conditions"]
    assert (c["tensor_parallel"], c["pipeline_parallel"], c["num_prompts"], c["engine_version"]) == (8, 1, 30000, "0.16.0")
    assert c["request_rate"] == "inf"  # "Issue Rate (req/sec):	2.9766E+13"
    assert record["accelerator_count"] == 8  # eight "Rank N is using GPU N" lines
    assert record["engine_id"] == "tensorrt-llm" and record["model"] == "meta-llama/Llama-3.1-70B-Instruct"
    assert "average input length (128 tokens)" in record["condition_gaps"]["input_tokens"]["reason"]


def test_trtllm_aborted_run_gives_no_record_and_an_error_finding(kb):
    result = parse("trtllm-bench", [corpus(TRT_ABORTED)], kb)
    assert bench(result) == [] and codes(result) == ["KB1102"]


def test_trtllm_other_text_is_an_input_error(kb, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(InputError, match="not a trtllm-bench log"):
        parse("trtllm-bench", [path], kb)


def test_trtllm_records_validate(kb):
    assert_valid(kb, bench(parse("trtllm-bench", [corpus(TRT)], kb, source=SOURCE)))


def test_every_harness_folder_of_the_corpus_has_an_importer():
    if not HARNESS.is_dir():
        pytest.skip(f"harness corpus not found at {HARNESS}")
    folders = {p.name for p in HARNESS.iterdir() if p.is_dir()}
    covered = {
        "vllm": "vllm-serve",
        "llama.cpp": "llama-bench",
        "sglang": "sglang-serving",
        "mlperf": "mlperf",
        "aiperf": "aiperf",
        "guidellm": "guidellm",
        "trtllm-bench": "trtllm-bench",
        "llm-d": "llmd-report",
        "inferencex": "inferencex",
    }
    assert folders <= set(covered), folders - set(covered)
    assert set(covered.values()) <= set(load_all())
