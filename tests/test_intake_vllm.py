"""Specification of the vLLM importers: vllm-latency, vllm-serve, vllm-throughput.

Expected numbers are read straight from the corpus files (json.load) or
computed with the standard library's statistics module, never with the code
under test.
"""

from __future__ import annotations

import importlib
import json
import statistics
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS, rec
from inferkb.errors import InputError, UsageError
from inferkb.intake import IMPORTERS, IntakeOptions
from inferkb.intake.base import commit

for _mod in ("vllm_latency", "vllm_serve", "vllm_throughput"):
    importlib.import_module(f"inferkb.intake.{_mod}")

VLLM = CORPUS / "harness" / "vllm"
DATA = Path(__file__).resolve().parent / "data" / "intake"
LATENCY = VLLM / "latency_llama8B_tp1_vllm-ascend-ci.json"


def corpus(name: str) -> Path:
    path = VLLM / name
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture
def kb(bundled_copy):
    """A writable copy of the bundled KB with the engines the importers cite and one source record."""
    for engine in ("vllm", "llama-cpp"):
        path = bundled_copy / "data" / "engines" / f"{engine}.json"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec("engine", engine)) + "\n")
    src = rec("source", "test-run-source", url="https://example.invalid/run", kind="benchmark", accessed="2026-01-01")
    (bundled_copy / "data" / "sources").mkdir(parents=True, exist_ok=True)
    (bundled_copy / "data" / "sources" / "test-run-source.json").write_text(json.dumps(src) + "\n")
    return inferkb.open(bundled_copy)


def parse(fmt: str, paths, kb, **opts):
    return IMPORTERS[fmt].parse([Path(p) for p in paths], IntakeOptions(**opts), kb)


def bench(result) -> list[dict]:
    return [r for r in result.records if r["type"] == "benchmark"]


def write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(json.dumps(content))
    return path


# ---- vllm-latency -------------------------------------------------------------


def test_latency_single_file_is_one_baseline_arm_with_stats_in_ms(kb):
    doc = json.loads(corpus(LATENCY.name).read_text())
    (record,) = bench(parse("vllm-latency", [LATENCY], kb))
    (arm,) = record["arms"]
    assert record["baseline_arm"] == "baseline" and arm["id"] == "baseline"
    assert arm["unit"] == "ms" and record["metric"] == "e2e_latency_ms" and record["unit"] == "ms"
    assert arm["stats"]["n"] == len(doc["latencies"]) == 15
    assert arm["stats"]["mean"] == pytest.approx(statistics.fmean(doc["latencies"]) * 1000, rel=1e-12)
    assert arm["stats"]["stdev"] == pytest.approx(statistics.pstdev(doc["latencies"]) * 1000, rel=1e-9)
    assert arm["stats"]["min"] == pytest.approx(min(doc["latencies"]) * 1000)
    assert arm["stats"]["max"] == pytest.approx(max(doc["latencies"]) * 1000)
    assert arm["stats"]["p90"] == pytest.approx(doc["percentiles"]["90"] * 1000, rel=1e-9)
    assert record["value"] == arm["stats"]["mean"]


def test_latency_methodology_says_the_value_is_per_batch_generate_call(kb):
    (record,) = bench(parse("vllm-latency", [corpus(LATENCY.name)], kb))
    assert "ms per batch generate() call" in record["methodology"]


def test_latency_real_file_percentiles_agree_with_raw_list(kb):
    result = parse("vllm-latency", [corpus(LATENCY.name)], kb)
    assert [f for f in result.findings if f.code == "KB1101"] == []


def test_latency_three_arms_value_is_the_baseline_mean(kb, tmp_path):
    arms = []
    for i, arm in enumerate(("baseline", "mtp", "eagle")):
        lat = [1.0 + i, 2.0 + i, 3.0 + i]
        arms.append((arm, write(tmp_path, f"{arm}.json", {"avg_latency": sum(lat) / 3, "latencies": lat})))
    (record,) = bench(parse("vllm-latency", [], kb, arms=arms, baseline="mtp"))
    assert [a["id"] for a in record["arms"]] == ["baseline", "mtp", "eagle"]
    assert record["baseline_arm"] == "mtp"
    assert record["value"] == pytest.approx(3000.0)
    assert "delta" not in json.dumps(record)


def test_latency_file_summary_disagreeing_with_raw_list_is_reported(kb, tmp_path):
    path = write(tmp_path, "lat.json", {"avg_latency": 5.0, "latencies": [1.0, 2.0, 3.0], "percentiles": {"50": 2.0, "99": 9.0}})
    result = parse("vllm-latency", [path], kb)
    fields = sorted(f.field for f in result.findings if f.code == "KB1101")
    assert fields == ["avg_latency", "percentiles.99"]
    assert bench(result)[0]["value"] == pytest.approx(2000.0)


def test_latency_without_raw_list_uses_file_numbers_and_says_so(kb, tmp_path):
    path = write(tmp_path, "lat.json", {"avg_latency": 1.5, "percentiles": {"50": 1.4, "90": 1.9, "99": 2.0}})
    result = parse("vllm-latency", [path], kb)
    stats = bench(result)[0]["arms"][0]["stats"]
    assert stats == {"mean": 1500.0, "p50": 1400.0, "p90": 1900.0, "p99": 2000.0, "n": None}
    assert [f.code for f in result.findings] == ["KB1104"]


def test_latency_several_arms_without_baseline_is_refused(kb, tmp_path):
    a = write(tmp_path, "a.json", {"avg_latency": 1.0, "latencies": [1.0]})
    b = write(tmp_path, "b.json", {"avg_latency": 1.0, "latencies": [1.0]})
    with pytest.raises(UsageError, match="baseline"):
        parse("vllm-latency", [], kb, arms=[("a", a), ("b", b)])


def test_latency_record_commits_with_a_local_file_source(kb):
    result = parse("vllm-latency", [corpus(LATENCY.name)], kb)
    written = commit(kb, result.records)
    source = next(r for r in result.records if r["type"] == "source")
    assert source["url"].startswith("file://") and "sha256" in source["notes"]
    assert len(written) == 2 and bench(result)[0]["sources"] == [source["id"]]


def test_latency_source_option_is_cited_and_no_source_is_created(kb):
    result = parse("vllm-latency", [corpus(LATENCY.name)], kb, source="test-run-source")
    assert [r["type"] for r in result.records] == ["benchmark"]
    assert result.records[0]["sources"] == ["test-run-source"]
    commit(kb, result.records)


def test_latency_unknown_source_option_is_refused(kb):
    with pytest.raises(UsageError, match="--source"):
        parse("vllm-latency", [corpus(LATENCY.name)], kb, source="no-such-source")


def test_latency_conditions_come_only_from_options(kb):
    (record,) = bench(parse("vllm-latency", [corpus(LATENCY.name)], kb, batch_size=8, input_len=32))
    assert record["conditions"]["batch_size"] == 8 and record["conditions"]["input_tokens"] == 32
    assert record["conditions"]["output_tokens"] is None
    assert "output_tokens" in record["condition_gaps"] and "batch_size" not in record["condition_gaps"]


def test_latency_env_supplies_environment_engine_version_and_hardware(kb):
    env = {"python": "3.11.7", "gpu_raw": "Imaginary GPU X1", "driver": "550.1", "extra": {"packages": {"vllm": "0.9.1"}}}
    result = parse("vllm-latency", [corpus(LATENCY.name)], kb, env=env, source="test-run-source")
    (record,) = bench(result)
    assert record["environment"]["engine_version"] == "0.9.1" and record["environment"]["driver"] == "550.1"
    assert record["conditions"]["engine_version"] == "0.9.1"
    assert record["hardware_raw"] == "Imaginary GPU X1" and record["accelerator_ids"] == []
    assert any(f.code == "KB1103" for f in result.findings)
    commit(kb, result.records)


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"avg_latency": 1.0, "latencies": [1.0, 2.', "truncated"),
        ("avg_latency = 1.0\n", "not usable JSON"),
        (b"", "empty"),
        ('{"avg_latency": NaN, "latencies": [1.0]}', "NaN"),
        ('{"avg_latency": 1.0, "latencies": [1.0, -2.0]}', "not positive"),
        ('{"avg_latency": 1.0, "latencies": [0.0, 1.0]}', "not positive"),
        ('{"avg_latency": 1.0, "latencies": []}', "non-empty list"),
        ('{"percentiles": {"50": 1.0}}', "avg_latency"),
    ],
)
def test_latency_bad_input_raises_input_error(kb, tmp_path, content, message):
    path = write(tmp_path, "bad.json", content)
    with pytest.raises(InputError, match=message):
        parse("vllm-latency", [path], kb)


def test_latency_given_a_serve_file_names_expected_and_found_keys(kb):
    with pytest.raises(InputError) as err:
        parse("vllm-latency", [corpus("sweep-serve_run0_opt125m_cpu_v0.25.1.json")], kb)
    text = str(err.value)
    assert "not a vllm-latency file" in text and "avg_latency" in text and "found date" in text


# ---- vllm-serve ---------------------------------------------------------------


def test_serve_v08_headline_is_output_throughput_and_trailing_colon_key_is_normalised(kb):
    path = corpus("serve_llama33-70b_tp8_qps-inf_v0.8-era.json")
    doc = json.loads(path.read_text())
    (record,) = bench(parse("vllm-serve", [path], kb))
    assert record["metric"] == "output_tok_s" and record["value_scope"] == "aggregate"
    assert record["value"] == doc["output_throughput"]
    assert record["conditions"]["request_rate"] == "inf" and record["conditions"]["num_prompts"] == 200
    assert "request_goodput_rps" in record["submission"] and "request_goodput:" not in json.dumps(record)
    assert record["metrics"]["tpot_ms"]["stats"]["p99"] == doc["p99_tpot_ms"]
    assert record["metrics"]["itl_ms"]["stats"]["p50"] == doc["median_itl_ms"]


def test_serve_second_valued_ttfts_array_gives_ttft_min_max_in_ms(kb):
    path = corpus("serve_deepseek-v25_tp8pp2_qps-4_v0.8-era.json")
    doc = json.loads(path.read_text())
    (record,) = bench(parse("vllm-serve", [path], kb))
    stats = record["metrics"]["ttft_ms"]["stats"]
    assert stats["min"] == pytest.approx(min(doc["ttfts"]) * 1000)
    assert stats["max"] == pytest.approx(max(doc["ttfts"]) * 1000)
    assert stats["mean"] == doc["mean_ttft_ms"]
    assert record["conditions"]["request_rate"] == 4.0


def test_serve_sweep_summary_list_gives_one_record_per_run(kb):
    path = corpus("sweep-serve_summary_opt125m_cpu_v0.25.1.json")
    runs = json.loads(path.read_text())
    records = bench(parse("vllm-serve", [path], kb))
    assert [r["value"] for r in records] == [run["output_throughput"] for run in runs]
    assert len({r["id"] for r in records}) == len(runs)
    assert [r["submission"]["run_number"] for r in records] == [run["run_number"] for run in runs]
    assert records[0]["metrics"]["e2e_latency_ms"]["stats"]["mean"] == runs[0]["mean_e2el_ms"]
    assert records[0]["conditions"]["concurrency"] == runs[0]["max_concurrency"]


def test_serve_openai_backend_leaves_engine_null_with_a_finding(kb):
    result = parse("vllm-serve", [corpus("sweep-serve_run0_opt125m_cpu_v0.25.1.json")], kb)
    assert bench(result)[0]["engine_id"] is None
    assert [f.code for f in result.findings] == ["KB1105"]


def test_serve_engine_option_overrides(kb):
    result = parse("vllm-serve", [corpus("sweep-serve_run0_opt125m_cpu_v0.25.1.json")], kb, engine="vllm")
    assert bench(result)[0]["engine_id"] == "vllm" and result.findings == []


def test_serve_all_requests_failed_makes_no_record_and_a_finding(kb):
    result = parse("vllm-serve", [corpus("serve_all-requests-failed_opt125m_v0.25.1.json")], kb)
    assert bench(result) == []
    assert [f.code for f in result.findings] == ["KB1102"]
    assert result.stats["skipped"] == {"no completed requests": 1}


def test_serve_metrics_only_file_headlines_mean_ttft(kb):
    path = corpus("serve_llama8B_tp1_qps-1_vllm-ascend-ci_metrics-only.json")
    doc = json.loads(path.read_text())
    (record,) = bench(parse("vllm-serve", [path], kb))
    assert record["metric"] == "ttft_ms" and record["value"] == doc["mean_ttft_ms"] and record["unit"] == "ms"
    assert "output_tok_s" not in record["metrics"]
    assert record["conditions"]["request_rate"] == 1.0


def test_serve_console_block_is_read_through_tqdm_noise(kb):
    (record,) = bench(parse("vllm-serve", [corpus("serve_console_benchmark_serving_qwen25-7b_dec2024.log")], kb))
    assert record["value"] == 208.46
    assert record["metrics"]["ttft_ms"]["stats"] == {"mean": 10149.10, "p50": 10365.91, "p99": 17374.89, "n": 16}
    assert record["metrics"]["total_tok_s"]["value"] == 1802.99
    assert record["conditions"]["input_tokens"] == 4096 and record["conditions"]["num_prompts"] == 16
    assert record["conditions"]["request_rate"] == "inf" and record["conditions"]["dataset"] == "random"
    assert record["model"] == "/llm/models/Qwen2.5-7B-Instruct"


def test_serve_console_with_two_blocks_gives_two_records(kb):
    result = parse("vllm-serve", [DATA / "serve_console_two_blocks.log"], kb)
    first, second = bench(result)
    assert (first["value"], second["value"]) == (195.12, 400.0)
    assert first["conditions"]["concurrency"] == 2 and first["conditions"]["request_rate"] == 4.0
    assert second["conditions"]["request_rate"] == "inf"
    assert first["metrics"]["e2e_latency_ms"]["stats"]["p99"] == 700.0
    assert first["submission"]["peak_output_tok_s"] == 240.0


def test_serve_extra_percentiles_go_to_stats_slots_or_percentiles(kb):
    (record,) = bench(parse("vllm-serve", [DATA / "serve_extra_percentiles.json"], kb))
    ttft = record["metrics"]["ttft_ms"]
    assert ttft["stats"]["p999"] == 71.0 and ttft["stats"]["p90"] == 60.0
    assert ttft["percentiles"] == {"p25": 40.0}


def test_serve_same_length_requests_state_input_tokens_varying_ones_do_not(kb):
    (record,) = bench(parse("vllm-serve", [DATA / "serve_extra_percentiles.json"], kb))
    assert record["conditions"]["input_tokens"] == 100
    assert record["conditions"]["output_tokens"] is None
    assert "different lengths" in record["condition_gaps"]["output_tokens"]["reason"]


def test_serve_summary_disagreeing_with_ttfts_array_is_reported(kb):
    result = parse("vllm-serve", [DATA / "serve_ttfts_disagree.json"], kb)
    assert [f.field for f in result.findings] == ["mean_ttft_ms"]


@pytest.mark.parametrize(
    "name",
    [
        "serve_llama33-70b_tp8_qps-inf_v0.8-era.json",
        "serve_deepseek-v25_tp8pp2_qps-4_v0.8-era.json",
        "serve_llama8B_tp1_qps-1_vllm-ascend-ci_metrics-only.json",
        "serve_llama8B_tp1_qps-inf_vllm-ascend-ci_metrics-only.json",
        "sweep-serve_run0_opt125m_cpu_v0.25.1.json",
        "sweep-serve_summary_opt125m_cpu_v0.25.1.json",
        "serve_console_benchmark_serving_qwen25-7b_dec2024.log",
    ],
)
def test_serve_records_of_every_corpus_layout_commit(kb, name):
    result = parse("vllm-serve", [corpus(name)], kb)
    assert len(commit(kb, result.records)) == len(result.records) >= 2


def test_serve_request_rate_that_is_no_number_is_refused(kb, tmp_path):
    doc = json.loads((DATA / "serve_extra_percentiles.json").read_text())
    doc["request_rate"] = "fast"
    with pytest.raises(InputError, match="request_rate"):
        parse("vllm-serve", [write(tmp_path, "s.json", doc)], kb)


def test_serve_given_a_llama_bench_file_names_expected_keys(kb, tmp_path):
    path = write(tmp_path, "lb.json", [{"build_commit": "abc", "n_prompt": 512, "avg_ts": 1.0}])
    with pytest.raises(InputError, match="not a vllm-serve file: expected one of mean_ttft_ms.*found build_commit"):
        parse("vllm-serve", [path], kb)


def test_serve_text_without_result_block_is_refused(kb, tmp_path):
    with pytest.raises(InputError, match="Serving Benchmark Result"):
        parse("vllm-serve", [write(tmp_path, "x.log", "just a log line\n")], kb)


def test_serve_unclosed_console_block_is_reported_as_truncated(kb, tmp_path):
    text = "============ Serving Benchmark Result ============\nSuccessful requests: 3\n"
    with pytest.raises(InputError, match="truncated"):
        parse("vllm-serve", [write(tmp_path, "x.log", text)], kb)


def test_serve_infinity_token_is_refused_as_non_json(kb, tmp_path):
    text = (DATA / "serve_extra_percentiles.json").read_text().replace('"request_rate": 2.5', '"request_rate": Infinity')
    with pytest.raises(InputError, match="Infinity"):
        parse("vllm-serve", [write(tmp_path, "s.json", text)], kb)


# ---- vllm-throughput ----------------------------------------------------------


def test_throughput_tokens_per_second_is_total_not_output(kb):
    path = corpus("throughput_llama8B_tp1_vllm-ascend-ci.json")
    doc = json.loads(path.read_text())
    result = parse("vllm-throughput", [path], kb)
    (record,) = bench(result)
    assert record["metric"] == "total_tok_s" and record["value"] == doc["tokens_per_second"]
    assert record["metrics"]["request_throughput_rps"]["value"] == doc["requests_per_second"]
    assert record["conditions"]["num_prompts"] == doc["num_requests"]
    assert "prompt + output" in record["methodology"]
    assert result.findings == []
    commit(kb, result.records)


def test_throughput_fork_output_key_becomes_the_headline(kb):
    (record,) = bench(parse("vllm-throughput", [DATA / "throughput_fork_keys.json"], kb))
    assert record["metric"] == "output_tok_s" and record["value"] == 400.0
    assert record["metrics"]["total_tok_s"]["value"] == 1200.0


def test_throughput_rate_contradicting_totals_is_reported(kb, tmp_path):
    doc = {"elapsed_time": 10.0, "num_requests": 10, "total_num_tokens": 1000, "requests_per_second": 1.0, "tokens_per_second": 500.0}
    result = parse("vllm-throughput", [write(tmp_path, "t.json", doc)], kb)
    assert [f.field for f in result.findings] == ["tokens_per_second"]


def test_throughput_given_a_latency_file_names_expected_keys(kb):
    with pytest.raises(InputError, match="not a vllm-throughput file: expected keys elapsed_time, num_requests"):
        parse("vllm-throughput", [corpus(LATENCY.name)], kb)


def test_throughput_zero_elapsed_time_is_refused(kb, tmp_path):
    doc = {"elapsed_time": 0, "num_requests": 10, "total_num_tokens": 1000, "requests_per_second": 1.0, "tokens_per_second": 500.0}
    with pytest.raises(InputError, match="elapsed_time"):
        parse("vllm-throughput", [write(tmp_path, "t.json", doc)], kb)
