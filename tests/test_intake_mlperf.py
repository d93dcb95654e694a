"""The mlperf importer: summary.csv tables (v6.1 and v4.1 layouts), LoadGen summaries, v6.x result_summary.json."""

from __future__ import annotations

import csv
import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

import inferkb
from inferkb.errors import InputError
from inferkb.intake import load_all
from inferkb.intake.base import IntakeOptions, commit
from inferkb.intake.mlperf import REQUIRED_COLUMNS, TableContext, import_table, iter_records
from inferkb.intake.mlperf_maps import engine_alias_index, match_engine, match_format

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
V61 = CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv"
V41 = CORPUS / "mlperf" / "inference_results_v4.1" / "closed" / "GigaComputing" / "summary.csv"
HARNESS = CORPUS / "harness" / "mlperf"
BUNDLED = REPO / "src" / "inferkb" / "kb"
# Models of the v6.1 table that are LLMs, listed by hand from the file's Model column.
V61_LLM_MODELS = {
    "gpt-oss-120b",
    "llama2-70b-99.9",
    "deepseek-r1",
    "llama3.1-8b",
    "llama3_1-8b",
    "llama3.1-8b-edge",
    "qwen3.6-27b",
    "qwen3-vl-235b-a22b",
}


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> inferkb.KB:
    """A copy of the bundled KB without benchmarks and MLPerf submission sources, as before the import script ran."""
    root = tmp_path_factory.mktemp("kb") / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks", "mlperf-v*.json"))
    return inferkb.open(root)


def run(kb, path: Path, **opts):
    return load_all()["mlperf"].parse([path], IntakeOptions(**opts), kb)


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def v61(kb):
    return run(kb, need(V61))


def bench(result):
    return [r for r in result.records if r["type"] == "benchmark"]


# ---- the v6.1 table -----------------------------------------------------------


def test_v61_imports_one_record_per_llm_row(v61):
    expected = sum(1 for r in rows_of(V61) if r["Model"] in V61_LLM_MODELS)
    assert len(bench(v61)) == expected == v61.stats["imported"]


def test_v61_skipped_rows_are_counted_by_reason(v61):
    rows = rows_of(V61)
    skipped = len(rows) - sum(1 for r in rows if r["Model"] in V61_LLM_MODELS)
    assert sum(v61.stats["skipped"].values()) == skipped
    assert v61.stats["skipped"]["non-llm-speech"] == sum(1 for r in rows if r["Model"] == "whisper")
    assert any(f.code == "KB1113" for f in v61.findings)


def test_v61_record_copies_the_row(v61):
    row = next(r for r in rows_of(V61) if r["Location"].endswith("/8xMI355X_2xEPYC_9575F/gpt-oss-120b/Offline/performance/run_1"))
    rec = next(r for r in bench(v61) if r["submission"]["results_path"] == row["Location"].lstrip("./"))
    assert rec["value"] == float(row["Result"])
    assert (rec["metric"], rec["unit"], rec["value_scope"], rec["scenario"]) == ("output_tok_s", "tok/s", "per-system", "offline")
    assert rec["hardware_raw"] == row["accelerator_model_name"]
    assert rec["submission"]["submitter"] == "AMD" and rec["submission"]["division"] == "closed"
    assert rec["accuracy"] == [{"metric": "exact_match", "value": 83.706, "unit": None}]


def test_accelerator_count_is_nodes_times_accelerators_per_node(v61):
    row = next(r for r in rows_of(V61) if r["Model"] in V61_LLM_MODELS and int(r["number_of_nodes"]) > 1)
    rec = next(r for r in bench(v61) if r["submission"]["results_path"] == row["Location"].lstrip("./"))
    assert rec["accelerator_count"] == int(row["number_of_nodes"]) * int(row["accelerators_per_node"])


def test_cpu_only_rows_have_no_accelerator_and_no_count(v61):
    recs = [r for r in bench(v61) if r["submission"]["accelerators_per_node"] == 0]
    assert recs and all(r["accelerator_count"] is None and r["accelerator_ids"] == [] for r in recs)
    assert v61.stats["cpu_only_rows"] == len(recs)


def test_each_submission_gets_one_source_pointing_at_its_results_directory(v61):
    sources = {r["id"]: r for r in v61.records if r["type"] == "source"}
    rec = bench(v61)[0]
    # the one source the import creates for this record is its submission directory (rules sources already exist)
    src = next(sources[s] for s in rec["sources"] if s in sources)
    division, org, _, platform = rec["submission"]["results_path"].split("/")[:4]
    assert src["url"].endswith(f"/{division}/{org}/results/{platform}")
    assert src["url"].startswith("https://github.com/mlcommons/inference_results_v6.1/tree/")


def test_v61_records_validate_and_write(kb, v61):
    written = commit(kb, v61.records, update=True)
    assert len([w for w in written if w.startswith("benchmarks/")]) == v61.stats["imported"]


# ---- v4.1 layout ----------------------------------------------------------------


def test_v41_layout_is_sniffed_and_llm_units_contradiction_is_reported(kb):
    res = run(kb, need(V41))
    assert res.stats["layout"] == "v4.1"
    llm = [r for r in rows_of(V41) if r["Model"].startswith(("llama", "gptj", "mixtral"))]
    assert res.stats["imported"] == len(llm) == 10
    rec = bench(res)[0]
    assert rec["metric"] is None and rec["status"] == "contested" and rec["unit"] in ("Queries/s", "Samples/s")
    assert sum(f.code == "KB1111" for f in res.findings) == len(llm)
    assert rec["condition_gaps"]["format_id"]["reason"].startswith("the table states no weight data types")


# ---- mappings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("fp8", None),
        ("fp4", None),
        ("INT8", None),
        ("bf16, fp8, fp4", None),
        ("nvfp4", "nvfp4"),
        ("NVFP4 weights and activations; FP8 KV cache", "nvfp4"),
        ("NVFP4, FP8 (KV cache)", "nvfp4"),
        ("MXFP4", "mxfp4"),
        ("BF16/F8_E4M3/U8", None),
    ],
)
def test_weight_types_map_to_a_format_only_when_unambiguous(kb, text, expected):
    from inferkb.intake.mlperf_maps import format_index

    fid, reason = match_format(text, format_index(kb))
    assert fid == expected
    assert (reason == "") == (expected is not None)


def test_fp8_alone_gives_a_reason_naming_the_candidates(kb):
    from inferkb.intake.mlperf_maps import format_index

    assert "E4M3" in match_format("fp8", format_index(kb))[1]


@pytest.mark.parametrize(
    "framework,engine",
    [
        ("vLLM 0.22.0, PyTorch 2.10.0, ROCm 7.2.2", "vllm"),
        ("TensorRT 10.14, CUDA 13.1, TensorRT-LLM 1.3.0rc0", "tensorrt-llm"),
        ("TensorRT-LLM feat/1.2-mlpinf, NVIDIA Dynamo mlperf-v6.0-dynamo-v0.8.0", None),
        ("ROCm 7.2.0", None),
        ("PyTorch 2.10.0+git8514f05, ROCm 7.2.2", "pytorch"),
    ],
)
def test_engine_is_set_only_when_the_framework_names_one(kb, framework, engine):
    assert match_engine(framework, engine_alias_index(kb))[0] == engine


def test_engine_version_is_the_token_after_the_engine_name(kb):
    assert match_engine("vLLM 0.22.0, PyTorch 2.10.0", engine_alias_index(kb))[1] == "0.22.0"


def test_engine_version_joined_to_the_name_by_a_hyphen_drops_the_hyphen(kb):
    """v5.1 MangoBoost rows state 'vllm-0.9.0.2.dev108+...'; the version was stored as '-0.9.0.2.dev108+...'."""
    framework = "Mango LLMBoost AI Enterprise Platform, vllm-0.9.0.2.dev108+g71faa1880.d20250717.rocm641, ROCm 6.12.12"
    assert match_engine(framework, engine_alias_index(kb))[:2] == ("vllm", "0.9.0.2.dev108+g71faa1880.d20250717.rocm641")


def test_no_bundled_engine_version_starts_with_a_separator():
    bad = sorted(
        r.id
        for r in inferkb.open().by_type("benchmark")
        if str((r.data.get("conditions") or {}).get("engine_version") or "")[:1] in ("-", "_", "/")
    )
    assert bad == []


# ---- bad input -------------------------------------------------------------------

HEADER = ",".join(REQUIRED_COLUMNS)


def csv_row(**over: str) -> str:
    vals = {c: "" for c in REQUIRED_COLUMNS}
    vals.update(
        Organization="Acme",
        Availability="available",
        Division="closed",
        SystemType="datacenter",
        SystemName="Box",
        Platform="Box_1",
        Model="llama2-70b-99",
        MlperfModel="llama2-70b-99",
        Scenario="Offline",
        Result="1000.5",
        Accuracy="ROUGE1: 44.4",
        number_of_nodes="1",
        accelerator_model_name="Imaginary Accel 9000",
        accelerators_per_node="4",
        Location="./closed/Acme/results/Box_1/llama2-70b-99/Offline/performance/run_1",
        framework="vLLM 0.9.0",
        version="v9.9",
        inferred="0",
        Units="Tokens/s",
    )
    vals.update(over)
    return ",".join('"' + vals[c].replace('"', '""') + '"' for c in REQUIRED_COLUMNS)


def test_unknown_accelerator_is_kept_raw_and_reported(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER + "\n" + csv_row() + "\n", encoding="utf-8")
    res = run(kb, p)
    rec = bench(res)[0]
    assert rec["accelerator_ids"] == [] and rec["hardware_raw"] == "Imaginary Accel 9000" and rec["accelerator_count"] == 4
    assert res.stats["unresolved_hardware"] == {"Imaginary Accel 9000": 1}
    assert any(f.code == "KB1103" for f in res.findings)


def test_missing_column_names_expected_and_found(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER.replace(",Units", "") + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing columns Units.*found Organization"):
        run(kb, p)


def test_row_with_an_extra_field_is_refused(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER + "\n" + csv_row() + ',"surplus"\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 has 22 fields, the header has 21"):
        run(kb, p)


def test_extra_header_columns_are_accepted(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER + ",new_column\n" + csv_row() + ',"x"\n', encoding="utf-8")
    assert run(kb, p).stats["imported"] == 1


def test_quoted_newline_inside_a_field_is_one_row(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER + "\n" + csv_row(operating_system="Ubuntu\n24.04") + "\n" + csv_row(Scenario="Server") + "\n", encoding="utf-8")
    res = run(kb, p)
    assert res.stats["imported"] == 2
    assert bench(res)[0]["environment"]["os"] == "Ubuntu\n24.04"


def test_non_utf8_byte_is_an_input_error(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_bytes((HEADER + "\n" + csv_row()).encode() + b"\n\xff\n")
    with pytest.raises(InputError, match="not UTF-8"):
        run(kb, p)


def test_empty_file_is_an_input_error(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        run(kb, p)


def test_non_numeric_result_skips_the_row_with_a_finding(kb, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(HEADER + "\n" + csv_row(Result="N/A") + "\n", encoding="utf-8")
    res = run(kb, p)
    assert res.stats["imported"] == 0 and res.stats["skipped"] == {"unusable-result-value": 1}
    assert any(f.code == "KB1115" for f in res.findings)


def test_json_of_another_harness_names_expected_and_found_keys(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"avg_latency": 1.0, "latencies": [1.0]}))
    with pytest.raises(InputError, match="expected keys version.*found avg_latency"):
        run(kb, p)


def test_truncated_json_is_an_input_error(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"version": "0.1.0", "tps": 12')
    with pytest.raises(InputError, match="not usable JSON"):
        run(kb, p)


def test_table_streams_with_bounded_memory(kb, tmp_path):
    """~20 MB of rows go through iter_records without the reader holding the file: peak memory stays small."""
    p = tmp_path / "big.csv"
    filler = csv_row(Model="whisper", MlperfModel="whisper", Units="Samples/s")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(HEADER + "\n")
        for _ in range(20 * 1024 * 1024 // (len(filler) + 1)):
            fh.write(filler + "\n")
        fh.write(csv_row() + "\n")
    assert p.stat().st_size > 20 * 1024 * 1024
    ctx = TableContext(kb, IntakeOptions(), str(p))
    tracemalloc.start()
    with open(p, encoding="utf-8", newline="") as fh:
        n = sum(1 for _ in iter_records(fh, ctx))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert n == 1 and ctx.skipped["non-llm-speech"] > 50_000
    assert peak < 5 * 1024 * 1024


def test_import_table_accepts_any_line_iterator(kb):
    res = import_table(kb, iter([HEADER + "\n", csv_row() + "\n"]), IntakeOptions())
    assert res.stats["imported"] == 1


# ---- LoadGen summaries and the v6.x JSON ------------------------------------------------


def test_offline_tokens_per_second_is_the_headline(kb):
    res = run(kb, need(HARNESS / "v4.1_NVIDIA_B200x1_llama2-70b-99_Offline_summary.txt"))
    rec = bench(res)[0]
    assert (rec["metric"], rec["value"], rec["scenario"]) == ("output_tok_s", 11264.4, "offline")
    assert rec["submission"]["tokens_inferred"] is False


def test_inferred_tokens_per_second_is_flagged(kb):
    rec = bench(run(kb, need(HARNESS / "v4.1_NVIDIA_Orin_gptj-99_Offline_summary.txt")))[0]
    assert rec["value"] == 64.4734 and rec["submission"]["tokens_inferred"] is True and rec["confidence"] < 0.8


def test_server_completed_tokens_and_ns_latencies_in_ms(kb):
    rec = bench(run(kb, need(HARNESS / "v4.1_NVIDIA_DGX-H100x8_mixtral-8x7b_Server_summary.txt")))[0]
    assert (rec["metric"], rec["value"]) == ("output_tok_s", 50795.57)
    assert rec["metrics"]["ttft_ms"]["stats"]["p99"] == pytest.approx(628.885054)  # 628885054 ns in the file
    assert rec["metrics"]["tpot_ms"]["stats"]["p999"] == pytest.approx(136.325318)
    assert rec["metrics"]["e2e_latency_ms"]["percentiles"]["p97"] == pytest.approx(44053.760068)
    assert rec["conditions"]["request_rate"] == 348


def test_seeds_above_int64_are_kept_exactly(kb):
    rec = bench(run(kb, need(HARNESS / "v4.1_NVIDIA_DGX-H100x8_mixtral-8x7b_Server_summary.txt")))[0]
    assert rec["submission"]["schedule_rng_seed"] == "14962580496156340209"


def test_single_stream_headline_is_the_90th_percentile_latency_in_ms(kb):
    rec = bench(run(kb, need(HARNESS / "v4.1_NVIDIA_Orin_gptj-99_SingleStream_summary.txt")))[0]
    assert (rec["metric"], rec["value"], rec["scenario"]) == ("e2e_latency_ms", pytest.approx(4149.771822), "single-stream")


def test_invalid_run_is_refused_with_a_finding(kb):
    res = run(kb, need(HARNESS / "loadgen5.1_local_llama3.1-8b_Server_INVALID_summary.txt"))
    assert bench(res) == [] and res.stats["skipped"] == {"invalid-result": 1}
    assert [f.code for f in res.findings] == ["KB1110"]


def test_trailer_only_summary_is_an_input_error(kb):
    with pytest.raises(InputError, match="only LoadGen's trailer"):
        run(kb, need(HARNESS / "loadgen5.1_local_Offline_AccuracyOnly_summary_trailer-only.txt"))


def test_result_summary_json_percentile_keys_and_ns(kb):
    path = need(HARNESS / "v6.1_NVIDIA_VR-NVL72_deepseek-r1_Interactive_result_summary.json")
    doc = json.loads(path.read_text())
    rec = bench(run(kb, path))[0]
    assert rec["value"] == doc["tps"]
    assert rec["metrics"]["ttft_ms"]["stats"]["p999"] == pytest.approx(doc["ttft"]["percentiles"]["99.9"] / 1e6)
    assert rec["conditions"]["warmup"] is False and rec["conditions"]["request_rate"] == 170.0
    assert rec["submission"]["scheduler_random_seed"] == "16159082839903944936"
    assert rec["scenario"] is None and "scenario" in rec["condition_gaps"]


def test_bundled_kb_holds_every_v61_llm_row():
    """scripts/import_mlperf.py has been run: one bundled benchmark record per LLM row of the v6.1 table."""
    expected = sum(1 for r in rows_of(need(V61)) if r["Model"] in V61_LLM_MODELS)
    bundled = inferkb.open()
    got = [
        r
        for r in bundled.by_type("benchmark")
        if (r.data.get("submission") or {}).get("round") == "v6.1" and (r.data.get("submission") or {}).get("suite") == "MLPerf Inference"
    ]
    assert len(got) == expected


def test_import_mlperf_script_refuses_a_corpus_without_the_tables(tmp_path):
    """Run from a clone whose ../shared is absent, the script used to skip all four tables and exit 0 ('0 records')."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "import_mlperf.py"), "--corpus", str(tmp_path / "no-corpus"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(tmp_path / "no-corpus" / "mlperf") in proc.stderr and "--corpus" in proc.stderr
    assert proc.stdout == ""


def test_a_round_wide_json_table_given_to_intake_points_at_the_import_script(tmp_path):
    from inferkb.intake.mlperf_loadgen import parse_summary_text

    table = '[{"ID": "4.1-0001", "Submitter": "X", "Model": "llama2-70b-99", "Scenario": "Offline"}]'
    with pytest.raises(InputError) as err:
        parse_summary_text(table, path="summary_results.json")
    assert "scripts/import_mlperf.py" in str(err.value) and "not a LoadGen mlperf_log_summary.txt" in str(err.value)
    with pytest.raises(InputError) as err:
        parse_summary_text("Samples per second: 12\nnothing else\n", path="partial.txt")
    assert "import_mlperf.py" not in str(err.value)  # plain text that is not JSON gets no table hint


def test_record_names_do_not_repeat_the_submitter():
    from inferkb.intake.mlperf import system_label

    assert system_label("NVIDIA", "NVIDIA DGX H100") == "NVIDIA DGX H100"
    assert system_label("Dell", " dell PowerEdge XE9680 ") == "dell PowerEdge XE9680"
    assert system_label("Krai", "xe9680_mi300x") == "Krai xe9680_mi300x"
    assert system_label("HPE", "HPEX Cray") == "HPE HPEX Cray"  # a whole word only
    # the bundled MLPerf records, straight from their names: "<division>: <org> <org> ..." never occurs
    doubled = []
    for rec in inferkb.open().by_type("benchmark"):
        if rec.data.get("origin") == "mlperf-inference":
            words = str(rec.data["name"]).split(": ", 1)[1].split()
            if len(words) > 1 and words[0].lower() == words[1].lower():
                doubled.append(rec.id)
    assert doubled == []
