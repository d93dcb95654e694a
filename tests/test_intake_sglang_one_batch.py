"""Importers sglang-one-batch and sglang-one-batch-server (issue 8): SGLang's single-batch result.jsonl files.

Expected values are read by hand from the raw files in ../shared/corpus/harness/sglang/ (quoted in the comments);
bad input is small fixtures written here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from conftest import HARNESS, benchmarks_of, harness_file, import_with
from inferkb.errors import InputError
from inferkb.intake.base import commit
from inferkb.intake.harness_pins import pin_for, read_harness_sources
from inferkb.intake.sglang_one_batch import sniff
from inferkb.store import Record
from inferkb.validate import validate_record

ENGINE = "sglang/bench_one_batch_result_frgossen-fork.jsonl"
OLD = "sglang/bench_one_batch_server_result_old-keys.jsonl"
NEW = "sglang/bench_one_batch_server_result_acc-length-cache-hit.jsonl"
SOURCE = "repo-sglang"  # a source record of the bundled KB, for validation without the pinned source in the index

# One new-schema line (the acc-length file's line 13) to build bad-input fixtures from.
GOOD_SERVER_LINE = {
    "run_name": "default",
    "batch_size": 8,
    "input_len": 16384,
    "output_len": 8192,
    "latency": 331.9425,
    "input_throughput": 1245.03,
    "output_throughput": 289.13,
    "overall_throughput": 592.3,
    "last_ttft": 105.2762,
    "last_gen_throughput": 253.44,
    "acc_length": -1.0,
    "cache_hit_rate": None,
}


corpus = harness_file


@pytest.fixture(scope="module")
def kb():
    return inferkb.open()


parse = import_with


bench = benchmarks_of


def by_config(records) -> dict[tuple, dict]:
    return {(r["submission"].get("run_name"), r["conditions"]["batch_size"], r["conditions"]["input_tokens"]): r for r in records}


def jsonl(tmp_path: Path, *lines, name="result.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, timeout=120)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    return proc.returncode, out, err


def assert_valid(kb, records):
    for data in records:
        rec = Record(key=f"benchmarks/{data['id']}", id=data["id"], type="benchmark", dir="benchmarks", path="x.json", data=data)
        errors = [f"{f.code} {f.message}" for f in validate_record(kb, rec) if f.severity == "error"]
        assert errors == [], (data["id"], errors)


# ---- bench_one_batch_server, old keys: 15 repeats of one configuration --------------------------------------


def test_fifteen_repeats_of_one_configuration_are_one_record_with_their_statistics(kb):
    result = parse("sglang-one-batch-server", [corpus(OLD)], kb)
    (record,) = bench(result)
    assert result.stats["lines"] == 15 and result.stats["imported"] == 1
    e2e = record["metrics"]["e2e_latency_ms"]["stats"]
    # "latency": 69.1983 (line 2) is the smallest, 98.8348 (line 11) the largest of the 15
    assert (e2e["n"], e2e["min"], e2e["max"]) == (15, 69198.3, 98834.8)
    # mean of the 15 latencies: 1146.4291 s / 15 = 76.42861 s, kept at the file's 4 decimals (0.1 ms)
    assert e2e["mean"] == 76428.6 and record["value"] == 76428.6
    assert record["arms"] == [{"id": "run", "label": "15 repeated lines (1-15)", "config": {}, "stats": e2e, "unit": "ms"}]
    assert record["baseline_arm"] == "run" and record["metric"] == "e2e_latency_ms" and record["unit"] == "ms"


def test_rounded_latencies_keep_the_precision_the_file_has(kb):
    (record,) = bench(parse("sglang-one-batch-server", [corpus(OLD)], kb))
    stats = record["metrics"]["e2e_latency_ms"]["stats"]
    for name in ("mean", "p50", "min", "max", "stdev"):
        assert round(stats[name], 1) == stats[name], (name, stats[name])  # 4 decimals of a second = 0.1 ms
    assert record["metrics"]["total_tok_s"]["stats"]["min"] == 10940.92  # "overall_throughput": 10940.92 (line 11)


def test_old_output_throughput_is_the_rate_after_the_last_first_token_not_output_tok_s(kb):
    (record,) = bench(parse("sglang-one-batch-server", [corpus(OLD)], kb))
    # line 1: 8192 x 100 / 70.1871 s = 11671.66, but "output_throughput": 2103963.11: the window is latency - last TTFT
    assert "output_tok_s" not in record["metrics"]
    decode = record["metrics"]["decode_tok_s"]
    assert (decode["stats"]["min"], decode["stats"]["max"]) == (248903.4, 2413722.01)
    assert "latency - TTFT of the last request" in decode["basis"] and "(11671.66)" in decode["basis"]
    # total (input + output) throughput is labelled as such: 8192 x 132 / 70.1871 = 15406.58
    assert record["metrics"]["total_tok_s"]["basis"].startswith("overall_throughput: batch_size x (input_len + output_len)")


def test_the_servers_last_gen_throughput_is_kept_beside_not_as_a_metric(kb):
    (record,) = bench(parse("sglang-one-batch-server", [corpus(OLD)], kb))
    sub = record["submission"]
    # "last_gen_throughput": 23.06 (line 10) .. 1748.17 (line 12)
    assert (sub["server_last_gen_throughput_tok_s_min"], sub["server_last_gen_throughput_tok_s_max"]) == (23.06, 1748.17)
    assert round(sub["server_last_gen_throughput_tok_s_mean"], 2) == sub["server_last_gen_throughput_tok_s_mean"]


# ---- bench_one_batch_server, new keys ---------------------------------------------------------------------


def test_new_keys_give_one_record_per_configuration(kb):
    records = bench(parse("sglang-one-batch-server", [corpus(NEW)], kb))
    # 12 lines of batch 256 x 3300 x 400, then six single lines of other batch/ISL/OSL
    assert len(records) == 7
    assert sorted(r["submission"]["repeats"] for r in records) == [1, 1, 1, 1, 1, 1, 12]


def test_last_ttft_and_input_throughput_are_ttft_and_prefill_rate(kb):
    line13 = by_config(bench(parse("sglang-one-batch-server", [corpus(NEW)], kb)))[("default", 8, 16384)]
    m = line13["metrics"]
    # "latency": 331.9425, "last_ttft": 105.2762 (seconds), "input_throughput": 1245.03, "output_throughput": 289.13
    assert m["e2e_latency_ms"]["value"] == 331942.5 and m["ttft_ms"]["value"] == 105276.2
    assert "LAST request" in m["ttft_ms"]["basis"]
    assert m["prefill_tok_s"]["value"] == 1245.03 and "input_tok_s" not in m
    # 8 x 8192 / (331.9425 - 105.2762) = 289.13: the decode-phase rate
    assert m["decode_tok_s"]["value"] == 289.13 and "last_ttft reproduces it" in m["decode_tok_s"]["basis"]


def test_acc_length_sentinel_means_no_speculative_decoding_and_a_null_cache_hit_rate_stays_null(kb):
    for record in bench(parse("sglang-one-batch-server", [corpus(NEW)], kb)):
        sub = record["submission"]
        assert sub["speculative_decoding"] is False and "spec_accept_length" not in sub  # "acc_length": -1.0
        assert "cache_hit_rate" in sub and sub["cache_hit_rate"] is None  # "cache_hit_rate": null
        assert not any("acc" in k for k in record["metrics"])


def test_a_real_acceptance_length_is_kept(kb, tmp_path):
    path = jsonl(tmp_path, GOOD_SERVER_LINE | {"acc_length": 2.71, "cache_hit_rate": 0.25})
    (record,) = bench(parse("sglang-one-batch-server", [path], kb))
    sub = record["submission"]
    assert (sub["speculative_decoding"], sub["spec_accept_length"], sub["cache_hit_rate"]) == (True, 2.71, 0.25)


def test_the_oldest_whole_run_output_throughput_is_output_tok_s(kb, tmp_path):
    # the first bench_one_batch_server wrote batch x output_len / latency: 16 x 8 / 2.5 s = 51.2
    line = {"run_name": "default", "batch_size": 16, "input_len": 1024, "output_len": 8, "latency": 2.5}
    path = jsonl(tmp_path, line | {"output_throughput": 51.2, "overall_throughput": 6604.8})
    (record,) = bench(parse("sglang-one-batch-server", [path], kb))
    assert record["metrics"]["output_tok_s"]["value"] == 51.2 and "decode_tok_s" not in record["metrics"]


# ---- bench_one_batch (offline engine) -----------------------------------------------------------------------


def test_engine_lines_split_by_run_name_batch_and_lengths(kb):
    records = by_config(bench(parse("sglang-one-batch", [corpus(ENGINE)], kb)))
    # cuda_graph and no_cuda_graph at batch 1, 8, 16 (256 in, 32 out), bcg_smoke, and default twice
    assert len(records) == 8
    assert records[("default", 1, 512)]["submission"]["lines"] == "8, 9"
    assert records[("default", 1, 512)]["metrics"]["ttft_ms"]["stats"]["n"] == 2


def test_engine_prefill_and_decode_are_their_own_metrics_in_ms(kb):
    m = by_config(bench(parse("sglang-one-batch", [corpus(ENGINE)], kb)))[("cuda_graph", 8, 256)]["metrics"]
    # line 2: "prefill_latency": 0.05471173860132694, "median_decode_latency": 0.009256022050976753,
    # "total_latency": 0.45050252974033356 (s); "prefill_throughput": 37432.5519962608, "median_decode_throughput": 864.30...
    assert m["ttft_ms"]["value"] == 54.71173860132694
    assert m["itl_ms"]["value"] == 9.256022050976753
    assert m["e2e_latency_ms"]["value"] == 450.50252974033356
    assert m["prefill_tok_s"]["value"] == 37432.5519962608 and m["decode_tok_s"]["value"] == 864.3021760255843
    assert m["total_tok_s"]["value"] == 5114.288706276542  # 8 x (256 + 32) / 0.4505 s


def test_engine_records_cross_check_without_findings(kb):
    result = parse("sglang-one-batch", [corpus(ENGINE)], kb)
    assert [f.code for f in result.findings] == ["KB1106"]  # no model or hardware in the file; every rate follows


def test_a_rate_that_does_not_follow_from_its_latency_is_reported_with_its_line(kb, tmp_path):
    line = json.loads(corpus(ENGINE).read_text().splitlines()[0])
    line["overall_throughput"] *= 2
    result = parse("sglang-one-batch", [jsonl(tmp_path, line)], kb)
    (finding,) = [f for f in result.findings if f.code == "KB1101"]
    assert finding.field == "line 1.overall_throughput" and "batch_size x (input_len + output_len) / total_latency" in finding.message


# ---- conditions, provenance, sources ------------------------------------------------------------------------


def test_batch_lengths_and_concurrency_are_stated_with_the_basis(kb):
    # engine line 2: "batch_size": 8, "input_len": 256, "output_len": 32; old-keys line 1: 8192, 32, 100
    for fmt, rel, index, expected, basis in (
        ("sglang-one-batch", ENGINE, 1, (8, 256, 32), "so 8 requests are in flight from start to end"),
        ("sglang-one-batch-server", OLD, 0, (8192, 32, 100), "so all 8192 requests are outstanding at once"),
    ):
        record = bench(parse(fmt, [corpus(rel)], kb))[index]
        c = record["conditions"]
        assert (c["batch_size"], c["input_tokens"], c["output_tokens"]) == expected and c["concurrency"] == expected[0]
        (entry,) = [p for p in record["provenance"] if p["field"] == "conditions.concurrency"]
        assert entry["evidence"]["quote"] == f'"batch_size": {expected[0]}' and basis in entry["basis"]
        assert record["scenario"] == "offline" and record["engine_id"] == "sglang"


def test_what_the_files_do_not_state_is_null_with_a_reason(kb):
    (record,) = bench(parse("sglang-one-batch-server", [corpus(OLD)], kb))
    gaps = record["condition_gaps"]
    assert record["model"] is None and record["accelerator_ids"] == [] and record["format_id"] is None
    assert {"model", "accelerator_ids", "accelerator_count", "warmup", "engine_version", "tensor_parallel", "format_id"} <= set(gaps)
    assert "--skip-warmup" in gaps["warmup"]["reason"] and "--skip-warmup" in gaps["warmup"]["recover"]
    assert "GeneratedRandomly/SGLang-reproduce at eb2ff72e9f48" in gaps["engine_version"]["reason"]
    engine = bench(parse("sglang-one-batch", [corpus(ENGINE)], kb))[0]
    assert "at most 32 output tokens" in engine["condition_gaps"]["warmup"]["reason"]


def test_options_fill_model_and_hardware(kb):
    (record,) = bench(
        parse("sglang-one-batch-server", [corpus(OLD)], kb, model="meta-llama/Llama-3.1-8B", hardware_raw="NVIDIA H100 80GB HBM3")
    )
    assert record["model"] == "meta-llama/Llama-3.1-8B" and record["accelerator_ids"] == ["nvidia-h100-sxm"]
    assert "model" not in record["condition_gaps"]


def test_seconds_to_ms_is_in_the_provenance(kb):
    (record,) = bench(parse("sglang-one-batch-server", [corpus(OLD)], kb))
    prov = {p["field"]: p for p in record["provenance"]}
    assert prov["metrics.e2e_latency_ms"]["method"] == "latency x 1000 (s -> ms)"
    assert prov["metrics.e2e_latency_ms"]["evidence"] == {"field": "line 1.latency", "quote": '"latency": 70.1871'}
    assert prov["metrics.total_tok_s"]["method"] == "overall_throughput as written (tok/s)"
    assert all(p["action"] == "import" and p["numbers_changed"] is False for p in record["provenance"])


def test_corpus_files_cite_their_upstream_commit(kb):
    result = parse("sglang-one-batch", [corpus(ENGINE)], kb)
    (source,) = [r for r in result.records if r["type"] == "source"]
    # SOURCES.md: frgossen/sglang (fork) | `result.jsonl` @ 7baf034536d60c77d26016dad8ed500f257907bd | rf
    assert source["url"] == "https://github.com/frgossen/sglang/blob/7baf034536d60c77d26016dad8ed500f257907bd/result.jsonl"
    assert "'rf'" in source["notes"] and "sha256" in source["notes"]
    sub = bench(result)[0]["submission"]
    assert (sub["repo"], sub["path"], sub["commit"]) == ("frgossen/sglang", "result.jsonl", "7baf034536d60c77d26016dad8ed500f257907bd")
    assert all(r["sources"] == [source["id"]] for r in bench(result))


def test_an_abbreviated_commit_in_sources_md_is_expanded_from_its_full_row():
    table = read_harness_sources(corpus("SOURCES.md"))
    # pd_inter row: "@ 88642505…", the agg row of the same repository gives 8864250509bbe4905beb95ab0fdb0f14da6f600e
    pd = table[("sglang", "bench_serving_qwen25-3b_pd-disagg_c32_server-info_dec2025.jsonl")]
    assert pd["commit"] == "8864250509bbe4905beb95ab0fdb0f14da6f600e" and pd["repo"] == "TonyLi15/sglang-benchmark"
    assert table[("llama.cpp", "json_b5606_rtx4090_cuda-rpc.json")]["date"] == "2025-07-06"


def test_a_file_outside_the_corpus_gets_a_local_source(kb, tmp_path):
    path = jsonl(tmp_path, GOOD_SERVER_LINE)
    assert pin_for(path) is None
    result = parse("sglang-one-batch-server", [path], kb)
    (source,) = [r for r in result.records if r["type"] == "source"]
    assert source["url"].startswith("file://") and "repo" not in bench(result)[0]["submission"]


def test_records_validate_and_a_second_import_writes_nothing(kb, bundled_copy):
    records = [
        *bench(parse("sglang-one-batch", [corpus(ENGINE)], kb, source=SOURCE)),
        *bench(parse("sglang-one-batch-server", [corpus(OLD), corpus(NEW)], kb, source=SOURCE)),
    ]
    assert len(records) == 16
    assert_valid(kb, records)
    target = inferkb.open(bundled_copy)
    written = commit(target, parse("sglang-one-batch-server", [corpus(NEW)], target).records)
    assert len(written) == 8  # seven configurations and the pinned source
    again = inferkb.open(bundled_copy)
    unchanged: list[str] = []
    assert commit(again, parse("sglang-one-batch-server", [corpus(NEW)], again).records, unchanged=unchanged) == []
    assert len(unchanged) == 7  # the source exists now and is not rebuilt


# ---- detection: neither steals another harness's file -------------------------------------------------------


def _harness_files() -> list[Path]:
    if not HARNESS.is_dir():
        pytest.skip(f"harness corpus not found at {HARNESS}")
    return sorted(p for p in HARNESS.rglob("*") if p.is_file() and p.suffix != ".md")


def test_every_corpus_harness_file_is_refused_except_its_own(kb):
    own = {HARNESS / ENGINE: "sglang-one-batch", HARNESS / OLD: "sglang-one-batch-server", HARNESS / NEW: "sglang-one-batch-server"}
    accepted = {}
    for path in _harness_files():
        for fmt in ("sglang-one-batch", "sglang-one-batch-server"):
            try:
                parse(fmt, [path], kb)
            except InputError as exc:
                assert str(path) in str(exc)
                continue
            accepted.setdefault(path, []).append(fmt)
    assert accepted == {p: [f] for p, f in own.items()}


def test_sniff_names_the_sglang_harness_of_each_file():
    kinds = {p.relative_to(HARNESS).as_posix(): sniff(p.read_bytes(), p) for p in _harness_files()}
    assert {k: v for k, v in kinds.items() if v} == {
        ENGINE: "sglang-one-batch",
        OLD: "sglang-one-batch-server",
        NEW: "sglang-one-batch-server",
        "sglang/bench_serving_llama33-70b_h200_online_dec2024.jsonl": "sglang-serving",
        "sglang/bench_serving_qwen25-3b_agg_c32_server-info_dec2025.jsonl": "sglang-serving",
        "sglang/bench_serving_qwen25-3b_pd-disagg_c32_server-info_dec2025.jsonl": "sglang-serving",
    }


def test_bench_serving_refuses_a_one_batch_file_naming_the_right_importer(kb):
    with pytest.raises(InputError, match=r"line 1: not a sglang.bench_serving line: .*use `inferkb intake sglang-one-batch-server`"):
        parse("sglang-serving", [corpus(OLD)], kb)
    with pytest.raises(InputError, match=r"use `inferkb intake sglang-serving`"):
        parse("sglang-one-batch", [corpus("sglang/bench_serving_llama33-70b_h200_online_dec2024.jsonl")], kb)


# ---- bad input: exit 2 naming file, line and field; never a traceback ------------------------------------------


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([GOOD_SERVER_LINE, json.dumps(GOOD_SERVER_LINE)[:60]], r"line 2: not JSON"),  # a truncated last line
        (["run_name=default batch_size=8"], r"line 1: not JSON"),
        ([GOOD_SERVER_LINE | {"latency": -331.9425}], r"line 1\.latency: -331\.9425 is negative"),
        (
            [{"schema": 3, "batch_size": 8, "input_len": 1, "output_len": 1, "elapsed": 1.0}],
            r"line 1\.latency: not a .* \(unknown schema\)",
        ),
        ([GOOD_SERVER_LINE | {"batch_size": 0}], r"line 1\.batch_size: expected a whole number >= 1"),
        ([GOOD_SERVER_LINE | {"acc_length": -2.0}], r"line 1\.acc_length: -2\.0: expected -1"),
        ([GOOD_SERVER_LINE | {"cache_hit_rate": 1.5}], r"line 1\.cache_hit_rate: 1\.5: a cache hit rate is a fraction"),
    ],
    ids=["truncated", "not-json", "negative-latency", "unknown-schema", "zero-batch", "bad-acc-length", "bad-cache-hit-rate"],
)
def test_bad_lines_are_input_errors_naming_file_line_and_field(kb, tmp_path, lines, expected):
    path = jsonl(tmp_path, *lines)
    with pytest.raises(InputError, match=expected) as info:
        parse("sglang-one-batch-server", [path], kb)
    assert str(path) in str(info.value)


def test_the_cli_exits_2_on_a_negative_latency(tmp_path):
    path = jsonl(tmp_path, GOOD_SERVER_LINE, GOOD_SERVER_LINE | {"latency": -1.0})
    code, out, err = cli("intake", "sglang-one-batch-server", path, "--dry-run")
    assert code == 2 and f"{path}: line 2.latency: -1.0 is negative" in err


def test_a_zero_ttft_is_refused_by_the_statistics_rules_before_anything_is_written(tmp_path, bundled_copy):
    path = jsonl(tmp_path, GOOD_SERVER_LINE | {"last_ttft": 0.0})
    before = sorted(p.name for p in (bundled_copy / "data" / "benchmarks").iterdir())
    for mode in (["--dry-run"], []):
        code, out, _ = cli("intake", "sglang-one-batch-server", path, "--kb", bundled_copy, "--format", "json", *mode)
        doc = json.loads(out)
        assert code == 2 and doc["error"] == "record-invalid", doc
        assert [(f["code"], f["field"]) for f in doc["findings"]] == [("KB122", "metrics.ttft_ms.value")]
    assert sorted(p.name for p in (bundled_copy / "data" / "benchmarks").iterdir()) == before


def test_an_incomplete_batch_is_a_finding_not_a_record(kb, tmp_path):
    path = jsonl(tmp_path, GOOD_SERVER_LINE | {"completed_requests": 5}, GOOD_SERVER_LINE | {"batch_size": 4, "overall_throughput": 296.15})
    result = parse("sglang-one-batch-server", [path], kb)
    assert [r["conditions"]["batch_size"] for r in bench(result)] == [4]
    assert [(f.code, f.field) for f in result.findings if f.code == "KB1102"] == [("KB1102", "line 1.completed_requests")]


def test_list_formats_shows_both_importers():
    code, out, _ = cli("intake", "--list-formats")
    assert code == 0
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"sglang-one-batch", "sglang-one-batch-server", "sglang-serving"} <= names
