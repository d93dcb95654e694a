"""Specification of the llama-bench importer (json, jsonl, csv, markdown).

Expected numbers are read from the corpus files with json.load or typed in
from the fixture text, never produced by the importer itself.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS, rec
from inferkb.errors import InputError
from inferkb.intake import IMPORTERS, IntakeOptions
from inferkb.intake.base import commit

importlib.import_module("inferkb.intake.llama_bench")

LB = CORPUS / "harness" / "llama.cpp"
DATA = Path(__file__).resolve().parent / "data" / "intake"
CSV_HEADER = '"build_commit","build_number","gpu_info","model_filename","n_prompt","n_gen","avg_ts","stddev_ts","flash_attn"\n'


def corpus(name: str) -> Path:
    path = LB / name
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture
def kb(bundled_copy):
    """A writable copy of the bundled KB that has a llama-cpp engine and an accelerator aliased 'NVIDIA GeForce RTX 4090'."""
    engine = bundled_copy / "data" / "engines" / "llama-cpp.json"
    if not engine.exists():
        engine.parent.mkdir(parents=True, exist_ok=True)
        engine.write_text(json.dumps(rec("engine", "llama-cpp")) + "\n")
    accel_dir = bundled_copy / "data" / "accelerators"
    accel_dir.mkdir(parents=True, exist_ok=True)
    if not any("NVIDIA GeForce RTX 4090" in p.read_text() for p in accel_dir.glob("*.json")):
        (accel_dir / "test-rtx-4090.json").write_text(
            json.dumps(rec("accelerator", "test-rtx-4090", aliases=["NVIDIA GeForce RTX 4090"])) + "\n"
        )
    return inferkb.open(bundled_copy)


def parse(paths, kb, **opts):
    return IMPORTERS["llama-bench"].parse([Path(p) for p in paths], IntakeOptions(**opts), kb)


def bench(result) -> list[dict]:
    return [r for r in result.records if r["type"] == "benchmark"]


def write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_json_rows_map_pp_to_prefill_and_tg_to_decode(kb):
    path = corpus("json_b5606_rtx4090_cuda-rpc.json")
    rows = json.loads(path.read_text())
    pp, tg = bench(parse([path], kb))
    assert (pp["metric"], pp["value"]) == ("prefill_tok_s", rows[0]["avg_ts"])
    assert (tg["metric"], tg["value"]) == ("decode_tok_s", rows[1]["avg_ts"])
    assert pp["conditions"]["input_tokens"] == rows[0]["n_prompt"] and pp["conditions"]["output_tokens"] is None
    assert tg["conditions"]["output_tokens"] == rows[1]["n_gen"]
    assert pp["unit"] == "tok/s" and pp["engine_id"] == "llama-cpp"


def test_json_arm_stats_use_avg_stddev_and_samples(kb):
    path = corpus("json_b5606_rtx4090_cuda-rpc.json")
    row = json.loads(path.read_text())[0]
    stats = bench(parse([path], kb))[0]["arms"][0]["stats"]
    assert stats["mean"] == row["avg_ts"] and stats["stdev"] == row["stddev_ts"]
    assert stats["n"] == len(row["samples_ts"]) == 5
    assert (stats["min"], stats["max"]) == (min(row["samples_ts"]), max(row["samples_ts"]))


def test_build_number_is_engine_version_and_commit_is_kept(kb):
    pp = bench(parse([corpus("json_b5606_rtx4090_cuda-rpc.json")], kb))[0]
    assert pp["conditions"]["engine_version"] == "b5606"
    assert pp["environment"]["engine_commit"] == "247e5c6e"


def test_gpu_info_is_hardware_raw_and_resolves_by_alias(kb):
    expected = [r.id for r in kb.by_type("accelerator") if "NVIDIA GeForce RTX 4090" in (r.data.get("aliases") or [])]
    pp = bench(parse([corpus("json_b5606_rtx4090_cuda-rpc.json")], kb))[0]
    assert pp["hardware_raw"] == "NVIDIA GeForce RTX 4090"
    assert pp["accelerator_ids"] == expected[:1] and len(expected) == 1


def test_boolean_flash_attn_and_integer_flash_attn_are_normalised(kb):
    old = bench(parse([corpus("json_b5606_rtx4090_cuda-rpc.json")], kb))[0]["arms"][0]["config"]
    new = bench(parse([corpus("json_b10066_apple-m4_metal-blas.json")], kb))[0]["arms"][0]["config"]
    assert old["flash_attn"] is False and new["flash_attn"] == "auto"
    assert new["n_batch"] == 2048 and new["n_ubatch"] == 512 and new["backends"] == "MTL,BLAS"


def test_every_row_of_a_reindented_sweep_becomes_a_record_with_depth_in_its_label(kb):
    path = corpus("json_b7951_7900xtx_rocm_reindented.json")
    rows = json.loads(path.read_text())
    records = bench(parse([path], kb))
    assert len(records) == len(rows) == 84
    deep = [r for r, row in zip(records, rows, strict=True) if row["n_depth"] > 0]
    assert deep and all(f"@ d{row['n_depth']}" in r["name"] for r, row in zip(records, rows, strict=True) if row["n_depth"] > 0)
    assert len({r["id"] for r in records}) == 84


def test_unknown_gpu_string_is_kept_and_reported(kb):
    result = parse([corpus("json_b10066_apple-m4_metal-blas.json")], kb)
    records = bench(result)
    if records[0]["accelerator_ids"]:
        pytest.skip("this KB resolves 'Apple M4'")
    assert records[0]["hardware_raw"] == "Apple M4"
    (finding,) = [f for f in result.findings if f.code == "KB1103"]
    assert finding.extra["occurrences"] == len(records)


def test_markdown_log_with_stderr_noise_gives_every_row_with_its_build(kb):
    records = bench(parse([corpus("markdown_b7361_7900xtx_vulkan_scriptlog.txt")], kb))
    assert [r["value"] for r in records] == [3229.07, 150.97, 3290.92, 172.86, 2546.13, 129.80]
    assert [r["arms"][0]["stats"]["stdev"] for r in records] == [53.81, 0.05, 37.67, 0.23, 18.25, 0.34]
    assert {r["conditions"]["engine_version"] for r in records} == {"b7361"}
    assert all(r["arms"][0]["stats"]["n"] is None for r in records)
    assert records[0]["arms"][0]["config"]["fa"] is True and records[0]["arms"][0]["config"]["n_batch"] == 512


def test_markdown_device_lines_become_hardware_raw(kb):
    records = bench(parse([corpus("markdown_b7361_7900xtx_vulkan_scriptlog.txt")], kb))
    assert records[0]["hardware_raw"] == "AMD Radeon RX 7900 XTX (RADV NAVI31) (radv)"
    assert records[-1]["hardware_raw"].count("AMD Radeon RX 7900 XTX") == 2


def test_markdown_2023_labels_with_a_space_are_read(kb):
    pp, tg = bench(parse([DATA / "llama_bench_2023.md"], kb))
    assert (pp["metric"], pp["value"], pp["conditions"]["input_tokens"]) == ("prefill_tok_s", 41.37, 512)
    assert (tg["metric"], tg["value"], tg["conditions"]["output_tokens"]) == ("decode_tok_s", 9.92, 128)
    assert pp["conditions"]["engine_version"] == "b1468"


def test_csv_with_every_value_quoted_gives_typed_records(kb):
    pp, tg, both = bench(parse([DATA / "llama_bench_small.csv"], kb))
    assert (pp["value"], tg["value"], both["value"]) == (5120.5, 250.125, 900.0)
    assert both["metric"] == "total_tok_s" and both["arms"][0]["label"] == "pp512+tg128"
    assert pp["arms"][0]["config"]["flash_attn"] is True and pp["arms"][0]["config"]["n_batch"] == 2048
    assert pp["model"] == "tiny-1B.Q4_0.gguf"
    assert pp["arms"][0]["stats"]["n"] is None


def test_jsonl_gives_the_same_values_as_csv_plus_samples(kb):
    from_csv = bench(parse([DATA / "llama_bench_small.csv"], kb))
    from_jsonl = bench(parse([DATA / "llama_bench_small.jsonl"], kb))
    assert [r["value"] for r in from_jsonl] == [r["value"] for r in from_csv]
    assert from_jsonl[0]["arms"][0]["stats"]["n"] == 3


def test_every_corpus_form_commits(kb):
    for name in ("json_b5606_rtx4090_cuda-rpc.json", "markdown_b7361_7900xtx_vulkan_scriptlog.txt"):
        result = parse([corpus(name)], kb)
        assert len(commit(kb, result.records)) == len(result.records)
    result = parse([DATA / "llama_bench_small.csv"], kb)
    commit(kb, result.records)


def test_samples_contradicting_avg_ts_are_reported(kb, tmp_path):
    row = json.loads((DATA / "llama_bench_small.jsonl").read_text().splitlines()[0])
    row["samples_ts"] = [10.0, 10.0, 10.0]
    result = parse([write(tmp_path, "x.jsonl", json.dumps(row) + "\n")], kb)
    assert [f.code for f in result.findings if f.code == "KB1101"] == ["KB1101"]


def test_form_is_sniffed_from_content_not_extension(kb, tmp_path):
    path = write(tmp_path, "results.json", (DATA / "llama_bench_small.csv").read_text())
    assert len(bench(parse([path], kb))) == 3


# ---- bad input ---------------------------------------------------------------


def test_csv_row_with_a_missing_column_is_refused(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","m.gguf","512","0","100.0","1.0"\n'
    with pytest.raises(InputError, match="8 values but the header has 9 columns"):
        parse([write(tmp_path, "x.csv", text)], kb)


def test_csv_row_with_an_extra_column_is_refused(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","m.gguf","512","0","100.0","1.0","0","extra"\n'
    with pytest.raises(InputError, match="10 values"):
        parse([write(tmp_path, "x.csv", text)], kb)


def test_csv_quoted_newline_stays_inside_its_field(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","dir\nname/m.gguf","512","0","100.0","1.0","0"\n'
    (record,) = bench(parse([write(tmp_path, "x.csv", text)], kb))
    assert record["model"] == "m.gguf" and record["value"] == 100.0


def test_csv_with_a_non_utf8_byte_is_refused_with_its_offset(kb, tmp_path):
    raw = (CSV_HEADER + '"abc","1","GPU \xe9","m.gguf","512","0","100.0","1.0","0"\n').encode("latin-1")
    with pytest.raises(InputError, match=r"0xe9 at offset \d+ \(line 2\)"):
        parse([write(tmp_path, "x.csv", raw)], kb)


def test_csv_non_number_in_a_numeric_column_is_refused(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","m.gguf","many","0","100.0","1.0","0"\n'
    with pytest.raises(InputError, match="n_prompt"):
        parse([write(tmp_path, "x.csv", text)], kb)


def test_empty_file_is_refused(kb, tmp_path):
    with pytest.raises(InputError, match="empty"):
        parse([write(tmp_path, "x.json", b"")], kb)


def test_truncated_json_array_is_refused(kb, tmp_path):
    text = (DATA / "llama_bench_small.jsonl").read_text().splitlines()[0]
    with pytest.raises(InputError, match="truncated"):
        parse([write(tmp_path, "x.json", "[\n" + text[:80])], kb)


def test_nan_rate_is_refused(kb, tmp_path):
    row = (DATA / "llama_bench_small.jsonl").read_text().splitlines()[0].replace('"avg_ts": 5120.5', '"avg_ts": NaN')
    with pytest.raises(InputError, match="NaN"):
        parse([write(tmp_path, "x.jsonl", row + "\n")], kb)


def test_negative_rate_is_refused(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","m.gguf","512","0","-3.0","1.0","0"\n'
    with pytest.raises(InputError, match="not positive"):
        parse([write(tmp_path, "x.csv", text)], kb)


def test_row_that_is_neither_pp_nor_tg_is_refused(kb, tmp_path):
    text = CSV_HEADER + '"abc","1","GPU","m.gguf","0","0","3.0","1.0","0"\n'
    with pytest.raises(InputError, match="both 0"):
        parse([write(tmp_path, "x.csv", text)], kb)


def test_vllm_file_given_to_llama_bench_names_expected_and_found_keys(kb, tmp_path):
    path = write(tmp_path, "x.json", '[{"avg_latency": 1.0, "latencies": [1.0]}]')
    with pytest.raises(InputError, match="not a llama-bench file: expected keys build_commit, n_prompt, n_gen, avg_ts.*found avg_latency"):
        parse([path], kb)


def test_text_that_is_no_llama_bench_form_is_refused(kb, tmp_path):
    with pytest.raises(InputError, match="not a llama-bench file"):
        parse([write(tmp_path, "x.txt", "hello\nworld\n")], kb)


def test_device_count_comes_from_gpu_info_list_when_all_devices_are_used(kb, tmp_path):
    row = json.loads((DATA / "llama_bench_small.jsonl").read_text().splitlines()[0])
    two = dict(row, gpu_info="GPU A, GPU B", split_mode="layer")
    single = dict(row, gpu_info="GPU A, GPU B", split_mode="none")
    picked = dict(row, gpu_info="GPU A, GPU B", split_mode="layer", devices="CUDA1")
    path = write(tmp_path, "x.jsonl", "".join(json.dumps(r) + "\n" for r in (two, single, picked)))
    assert [r["accelerator_count"] for r in bench(parse([path], kb))] == [2, 1, None]
