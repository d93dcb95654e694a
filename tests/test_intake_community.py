"""The community data sets: bundled records pinned to the raw files, read here independently (csv, json, sqlite3).

Every expected value is read from the raw corpus file by this test's own code
or worked out by hand in a comment; the importers are exercised only to show
the bundled records are what a fresh import produces.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

import inferkb
from conftest import BUNDLED, CORPUS
from inferkb.errors import InputError
from inferkb.intake.base import IntakeOptions

COMMUNITY = CORPUS / "community"
LIB = COMMUNITY / "argonne-LLM-Inference-Bench" / "gh-pages" / "docs" / "data"
BENCH = BUNDLED / "data" / "benchmarks"


@pytest.fixture(scope="module")
def community() -> Path:
    if not COMMUNITY.is_dir():
        pytest.skip(f"shared corpus not found at {COMMUNITY}")
    return COMMUNITY


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Every bundled benchmark record that came from a community data set."""
    origins = {"llm-inference-bench", "llmperf-leaderboard", "localscore", "strix-halo-llama-bench", "inferencex"}
    out = []
    for path in BENCH.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("origin") in origins:
            out.append(data)
    return out


def by_table_line(records: list[dict], table: str, line: int) -> dict:
    hits = [
        r
        for r in records
        if r.get("origin") == "llm-inference-bench" and r["submission"]["table"] == table and r["submission"]["line"] == line
    ]
    assert len(hits) == 1, hits
    return hits[0]


def csv_row(path: Path, line: int) -> dict:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            if reader.line_num == line:
                return row
    raise AssertionError(f"no line {line} in {path}")


# ---- LLM-Inference-Bench -------------------------------------------------------


def test_throughput_row_is_total_tokens_of_the_batch(community, records):
    row = csv_row(LIB / "Throughput" / "All_results.csv", 2)
    rec = by_table_line(records, "Throughput", 2)
    # By hand: 1 x (128 + 128) / 0.688306736946106 s = 371.93 tok/s = the Throughput cell, so input + output of the batch.
    assert row["Hardware"] == "Nvidia GH200 GPU" and row["Batch Size"] == "1" and row["Input Output Length"] == "128"
    assert rec["metric"] == "total_tok_s" and rec["value_scope"] == "aggregate"
    assert rec["value"] == float(row["Throughput"])
    assert rec["metrics"]["e2e_latency_ms"]["value"] == pytest.approx(float(row["Latency"]) * 1000)
    assert rec["conditions"]["input_tokens"] == rec["conditions"]["output_tokens"] == 128
    assert rec["conditions"]["batch_size"] == 1 and rec["accelerator_count"] == 1
    assert rec["accelerator_ids"] == ["nvidia-gh200"]
    assert rec["submission"]["commit"] == "88c6378c07000618ee8a4716294198c80c4a0299"
    assert rec["submission"]["path"] == "docs/data/Throughput/All_results.csv"


def test_llama_cpp_throughput_counts_one_sequence_whatever_the_batch(community, records):
    path = LIB / "Throughput" / "All_results.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        line, row = next((reader.line_num, r) for r in reader if r["Framework"] == "llama.cpp" and r["Batch Size"] == "16")
    rec = by_table_line(records, "Throughput", line)
    length, lat, thr = int(row["Input Output Length"]), float(row["Latency"]), float(row["Throughput"])
    assert abs(2 * length / lat - thr) <= 0.01 * thr  # one sequence's tokens / latency
    assert abs(16 * 2 * length / lat - thr) > 0.5 * thr  # not the batch's
    assert rec["metric"] == "total_tok_s" and rec["value_scope"] == "per-request" and rec["value"] == thr


def test_ambiguous_a100_lists_every_variant_and_picks_none(community, records):
    rec = next(r for r in records if r.get("hardware_raw") == "Nvidia A100 GPU")
    assert rec["accelerator_ids"] == []
    assert set(rec["accelerator_alternates"]) == {
        "nvidia-a100-40gb-pcie",
        "nvidia-a100-40gb-sxm4",
        "nvidia-a100-80gb-pcie",
        "nvidia-a100-80gb-sxm4",
    }
    assert "accelerator_ids" in rec["condition_gaps"]


def test_power_csv_milliwatts_are_normalised_by_the_tdp_bound(community, records):
    row = csv_row(LIB / "Power" / "All_results.csv", 2)
    rec = by_table_line(records, "Power", 2)
    # 230742.68 as W would be 577x an A100's 400 W; as mW it is 230.7 W, under 1.5 x 400 W.
    assert float(row["avg_power"]) == pytest.approx(230742.6779661017)
    assert rec["power_w"] == pytest.approx(float(row["avg_power"]) / 1000)
    assert rec["power_scope"] is None


def test_perplexity_power_scale_is_the_one_that_reproduces_throughput_per_watt(community, records):
    path = LIB / "Perplexity" / "All_results.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [(reader.line_num, r) for r in reader]
    checked = {"W": 0, "mW": 0}
    for line, row in rows:
        thr, power, tpw = float(row["Throughput"]), float(row["avg_power"]), float(row["Throughput_per_watt_avg"])
        scale = 1.0 if abs(thr / power - tpw) <= 1e-3 * tpw else 1000.0
        assert abs(thr / (power / scale) - tpw) <= 1e-3 * tpw
        assert by_table_line(records, "Perplexity", line)["power_w"] == pytest.approx(power / scale)
        checked["W" if scale == 1 else "mW"] += 1
    assert checked == {"W": 101, "mW": 60}


def test_dashboard_rows_repeating_the_main_table_are_not_imported_twice(community, records):
    def key(r):
        return (
            r["Hardware"],
            r["Num of Hardware"],
            r["Framework"],
            r["Model"],
            r["Input Output Length"],
            r["Batch Size"],
            r["Latency"],
            r["Throughput"],
        )

    with (LIB / "Throughput" / "All_results.csv").open(encoding="utf-8", newline="") as fh:
        main = {key(r) for r in csv.DictReader(fh)}
    with (LIB / "Best_Hardware_and_Framework" / "All_results.csv").open(encoding="utf-8", newline="") as fh:
        best = list(csv.DictReader(fh))
    repeats = sum(1 for r in best if key(r) in main)
    imported = [
        r for r in records if r.get("origin") == "llm-inference-bench" and r["submission"]["table"] == "Best_Hardware_and_Framework"
    ]
    assert repeats == 1285
    assert len(imported) == len(best) - repeats == 40


def test_fig22_short_rows_keep_ttft_and_leave_end_latency_out(community, records):
    path = CORPUS / "community" / "argonne-LLM-Inference-Bench" / "main" / "Plots" / "Fig_22" / "all_results_TTFT_ITL.csv"
    line40 = path.read_text(encoding="utf-8").splitlines()[39]
    assert line40.startswith("Nvidia GH200 GPU,") and line40.count(",") == 7  # 8 cells for a 9-column header
    rec = by_table_line(records, "all_results_TTFT_ITL", 40)
    assert rec["metric"] == "ttft_ms" and "e2e_latency_ms" not in rec["metrics"]
    assert rec["value"] == pytest.approx(float(line40.split(",")[-1]) * 1000)
    assert rec["conditions"]["input_tokens"] == 1024 and rec["conditions"]["output_tokens"] == 1


def test_csv_without_the_expected_columns_names_what_is_missing(tmp_path):
    from inferkb.intake.llm_inference_bench import read_table

    path = tmp_path / "x.csv"
    path.write_text("Hardware,Model\nA,B\n")
    with pytest.raises(InputError, match="Num of Hardware"):
        read_table(path.read_bytes(), path)


# ---- llmperf-leaderboard ----------------------------------------------------------


def test_llmperf_summary_values_and_the_unknown_hardware_gap(community, records):
    doc = json.loads((COMMUNITY / "llmperf-leaderboard" / "raw_data" / "summary" / "groq_70b.json").read_text())
    rec = next(r for r in records if r.get("origin") == "llmperf-leaderboard" and r["submission"]["provider"] == "groq")
    assert rec["value"] == doc["results_mean_output_throughput_token_per_s"]
    ttft = rec["metrics"]["ttft_ms"]
    assert ttft["stats"]["p50"] == pytest.approx(doc["results_ttft_s_quantiles_p50"] * 1000)
    assert ttft["stats"]["p99"] == pytest.approx(doc["results_ttft_s_quantiles_p99"] * 1000)
    assert ttft["percentiles"]["p25"] == pytest.approx(doc["results_ttft_s_quantiles_p25"] * 1000)
    assert rec["conditions"]["input_tokens"] == 550 and rec["conditions"]["output_tokens"] == 150
    assert rec["conditions"]["concurrency"] == doc["num_concurrent_requests"] == 5
    assert rec["accelerator_ids"] == [] and rec["accelerator_count"] is None
    assert "hosted API" in rec["condition_gaps"]["accelerator_count"]["reason"]


def test_every_llmperf_summary_has_a_record_with_percentiles(community, records):
    summaries = sorted((COMMUNITY / "llmperf-leaderboard" / "raw_data" / "summary").glob("*.json"))
    mine = [r for r in records if r.get("origin") == "llmperf-leaderboard"]
    assert len(mine) == len(summaries) == 19
    assert all("p90" in r["metrics"]["ttft_ms"]["stats"] for r in mine)


# ---- LocalScore -------------------------------------------------------------------


def localscore_rows() -> dict[int, dict]:
    con = sqlite3.connect(f"{(COMMUNITY / 'localscore' / 'db.sqlite').as_uri()}?mode=ro&immutable=1", uri=True)
    con.row_factory = sqlite3.Row
    try:
        return {r["id"]: dict(r) for r in con.execute("SELECT * FROM test_results")}
    finally:
        con.close()


def test_localscore_test_result_is_pinned_to_the_database(community, records):
    rows = localscore_rows()
    rec = next(r for r in records if r.get("origin") == "localscore" and r["submission"]["test_result_id"] == 1)
    assert rec["value"] == rows[1]["gen_tps"] and rec["metric"] == "decode_tok_s"
    assert rec["metrics"]["prefill_tok_s"]["value"] == rows[1]["prompt_tps"]
    assert rec["metrics"]["ttft_ms"]["value"] == rows[1]["ttft_ms"]
    assert rec["conditions"]["input_tokens"] == rows[1]["n_prompt"] == 1024
    assert rec["conditions"]["output_tokens"] == rows[1]["n_gen"] == 16
    assert rec["accelerator_ids"] == ["nvidia-rtx-3090"] and rec["format_id"] == "gguf-q4-k-m"
    assert rec["power_w"] == rows[1]["power_watts"]
    assert len([r for r in records if r.get("origin") == "localscore"]) == len(rows) == 117


def test_localscore_cpu_run_links_to_its_cpu_record_and_zero_power_is_not_a_measurement(community, records):
    rows = localscore_rows()
    rec = next(r for r in records if r.get("origin") == "localscore" and r["submission"]["test_result_id"] == 37)
    assert rows[37]["power_watts"] == 0.0
    assert rec["power_w"] is None and "power_w" in rec["condition_gaps"]
    assert rec["hardware_raw"].startswith("AMD EPYC 7352") and rec["accelerator_ids"] == ["amd-epyc-7352"]
    assert "accelerator_ids" not in rec["condition_gaps"]
    [link] = [p for p in rec["provenance"] if p["field"] == "accelerator_ids"]
    assert link["tag"] == "derive:accelerator-ids" and link["evidence"]["quote"] == rec["hardware_raw"]


def test_localscore_m4_max_cpu_and_gpu_runs_of_one_machine_link_to_different_records(community, records):
    by_raw = {r["hardware_raw"]: r["accelerator_ids"] for r in records if r.get("origin") == "localscore"}
    assert by_raw["Apple M4 Max 12P+4E"] == ["apple-m4-max-cpu"]
    assert by_raw["Apple M4 Max 12P+4E+40GPU"] == ["apple-m4-max"]


CPU_NAMES = ("AMD EPYC 7352 24-Core Processor (znver2)", "Apple M4 Max 12P+4E")


def test_a_fresh_localscore_import_links_each_cpu_to_the_record_whose_alias_is_its_name(community):
    from inferkb.intake.localscore import LocalScore

    res = LocalScore().parse([community / "localscore" / "db.sqlite"], IntakeOptions(), inferkb.open())
    cpu = [r for r in res.records if r["type"] == "benchmark" and r["hardware_raw"] in CPU_NAMES]
    assert len(cpu) == 18
    assert {r["hardware_raw"]: tuple(r["accelerator_ids"]) for r in cpu} == {
        CPU_NAMES[0]: ("amd-epyc-7352",),
        CPU_NAMES[1]: ("apple-m4-max-cpu",),
    }
    assert not any("accelerator_ids" in r["condition_gaps"] for r in cpu)


def test_a_cpu_no_record_names_stays_unattached_even_beside_its_chips_gpu_record(community, tmp_path):
    from conftest import write_kb
    from inferkb.intake.localscore import LocalScore

    gpu = json.loads((BUNDLED / "data" / "accelerators" / "apple-m4-max.json").read_text())
    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/accelerators/apple-m4-max.json": gpu}))
    res = LocalScore().parse([community / "localscore" / "db.sqlite"], IntakeOptions(), kb)
    cpu = [r for r in res.records if r["type"] == "benchmark" and r["hardware_raw"] == CPU_NAMES[1]]
    assert cpu and all(r["accelerator_ids"] == [] for r in cpu)
    assert "no accelerator record names this CPU" in cpu[0]["condition_gaps"]["accelerator_ids"]["reason"]


def test_localscore_4060_ti_is_the_16_gb_card_by_its_memory(community, records):
    rec = next(r for r in records if r.get("origin") == "localscore" and r["hardware_raw"] == "NVIDIA GeForce RTX 4060 Ti")
    assert rec["accelerator_ids"] == ["nvidia-rtx-4060-ti-16gb"]
    assert rec["submission"]["accelerator_memory_gb"] == pytest.approx(15.61)


# ---- Strix Halo llama-bench sweeps --------------------------------------------------


def sweep_lines(model: str) -> list[dict]:
    path = COMMUNITY / "lhl-strix-halo-testing" / "llm-bench" / model / "results.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_sweep_line_is_the_llama_bench_row_with_the_wrappers_power(community, records):
    first = sweep_lines("llama-2-7b.Q4_0")[0]
    raw = first["bench_raw"]
    rec = next(
        r
        for r in records
        if r.get("origin") == "strix-halo-llama-bench"
        and r["submission"].get("test_time") == raw["test_time"]
        and r["submission"]["path"].endswith("llama-2-7b.Q4_0/results.jsonl")
    )
    assert rec["metric"] == "prefill_tok_s" and rec["value"] == raw["avg_ts"] == first["tokens_per_sec"]
    assert rec["conditions"]["input_tokens"] == raw["n_prompt"] == 1
    assert rec["power_w"] == first["avg_power_w"]
    assert rec["accelerator_ids"] == ["amd-radeon-8060s-ryzen-ai-max"]
    assert rec["arms"][0]["stats"]["n"] == len(raw["samples_ts"])


def test_sweep_lines_without_a_llama_bench_row_are_not_imported(community, records):
    lines = sweep_lines("gpt-oss-120b-F16")
    finished = [ln for ln in lines if ln["bench_raw"] is not None]
    mine = [
        r
        for r in records
        if r.get("origin") == "strix-halo-llama-bench" and r["submission"]["path"].endswith("gpt-oss-120b-F16/results.jsonl")
    ]
    assert (len(lines), len(finished)) == (416, 317)
    assert len(mine) == len(finished)


# ---- InferenceX decode-SLO ---------------------------------------------------------


def test_inferencex_seconds_become_ms_and_the_record_is_experimental(community, records):
    name = "qwen35_vllm_tp8_isl2048_osl128_conc32"
    doc = json.loads(
        (COMMUNITY / "InferenceX" / "experimental" / "token_position_decode_slo" / "qwen3.5" / "results" / f"{name}.json").read_text()
    )
    rec = next(r for r in records if r.get("origin") == "inferencex" and r["submission"]["path"].endswith(f"{name}.json"))
    assert rec["experimental"] is True and rec["status"] == "draft"
    assert rec["value"] == doc["output_throughput"] and rec["metric"] == "output_tok_s"
    assert rec["metrics"]["ttft_ms"]["stats"]["p50"] == pytest.approx(doc["median_ttft"] * 1000)
    assert rec["metrics"]["tpot_ms"]["stats"]["p99"] == pytest.approx(doc["p99_tpot"] * 1000)
    # By hand: 655360 input tokens / 320 prompts = 2048 = the file name's ISL.
    assert rec["conditions"]["input_tokens"] == doc["total_input_tokens"] // doc["num_prompts"] == 2048
    assert rec["conditions"]["concurrency"] == 32 and rec["conditions"]["tensor_parallel"] == 8
    assert rec["accelerator_ids"] == [] and set(rec["accelerator_alternates"]) == {"nvidia-h200-sxm", "nvidia-h200-nvl"}
    assert rec["accelerator_count"] == 8


def test_glm5_hardware_is_unknown(community, records):
    rec = next(r for r in records if r.get("origin") == "inferencex" and "glm5" in r["id"])
    assert rec["hardware_raw"] is None and rec["accelerator_alternates"] == []
    assert "no GPU type" in rec["condition_gaps"]["accelerator_ids"]["reason"]


# ---- the orchestrator -----------------------------------------------------------------


def test_a_fresh_import_reproduces_the_bundled_records(community):
    from inferkb.intake.community import import_community

    reports = import_community(inferkb.open(), CORPUS, dry_run=True)
    assert sum(r.imported for r in reports) > 6000
    assert [(r.name, r.written) for r in reports if r.written] == []


def test_a_corpus_file_that_differs_from_sources_md_is_refused(community, tmp_path):
    from inferkb.intake.community import import_community

    fake = tmp_path / "corpus" / "community"
    (fake / "localscore").mkdir(parents=True)
    (fake / "SOURCES.md").write_text((COMMUNITY / "SOURCES.md").read_text(encoding="utf-8"), encoding="utf-8")
    (fake / "localscore" / "db.sqlite").write_bytes(b"not the database")
    with pytest.raises(InputError, match="SHA-256"):
        import_community(inferkb.open(), tmp_path / "corpus", dry_run=True, only=["localscore"])


def test_sources_md_pins_repo_path_and_commit(community):
    from inferkb.intake.community import read_sources_md

    pins = read_sources_md(COMMUNITY / "SOURCES.md")
    pin = pins["argonne-LLM-Inference-Bench/gh-pages/docs/data/Throughput/All_results.csv"]
    assert pin["repo"] == "argonne-lcf/LLM-Inference-Bench"
    assert pin["commit"] == "88c6378c07000618ee8a4716294198c80c4a0299"
    assert pin["path"] == "docs/data/Throughput/All_results.csv"


def test_llmperf_importer_on_its_own_cites_a_local_source(community):
    from inferkb.intake.llmperf import LLMPerf

    path = COMMUNITY / "llmperf-leaderboard" / "raw_data" / "summary" / "groq_70b.json"
    res = LLMPerf().parse([path], IntakeOptions(), inferkb.open())
    bench = [r for r in res.records if r["type"] == "benchmark"]
    assert len(bench) == 1 and bench[0]["sources"][0].startswith("local-groq-70b-")
    assert bench[0]["origin"] == "llmperf-leaderboard" and "commit" not in bench[0]["submission"]
