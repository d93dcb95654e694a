"""The inferencex importer: InferenceX API rows, GPU-count contradictions, per-GPU denominators, units."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import inferkb
from inferkb.errors import InputError
from inferkb.intake import load_all
from inferkb.intake.base import IntakeOptions, commit
from inferkb.intake.inferencex import gpu_count

REPO = Path(__file__).resolve().parents[1]
IX = REPO.parent / "shared" / "corpus" / "harness" / "inferencex"
BUNDLED = REPO / "src" / "inferkb" / "kb"


def need(name: str) -> Path:
    path = IX / name
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> inferkb.KB:
    root = tmp_path_factory.mktemp("kb") / "kb"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("benchmarks"))
    return inferkb.open(root)


def run(kb, path: Path):
    return load_all()["inferencex"].parse([path], IntakeOptions(), kb)


@pytest.fixture(scope="module")
def powerx(kb):
    return run(kb, need("powerx.json"))


@pytest.fixture(scope="module")
def rows():
    return {r["id"]: r for r in json.loads(need("powerx.json").read_text())["rows"]}


def rec_of(result, row_id: str) -> dict:
    return next(r for r in result.records if r["type"] == "benchmark" and r["submission"]["row_id"] == row_id)


def test_one_record_per_row(powerx, rows):
    assert powerx.stats["imported"] == len(rows) == 37


def test_stated_count_contradicting_power_ratio_leaves_count_null_with_a_finding(powerx, rows):
    # Row 440994: num_prefill_gpu = num_decode_gpu = 64, but 5167.287 W total / 645.911 W per GPU = 8.
    assert rows["440994"]["num_prefill_gpu"] == 64
    rec = rec_of(powerx, "440994")
    assert rec["accelerator_count"] is None and "accelerator_count" in rec["condition_gaps"]
    finding = next(f for f in powerx.findings if f.code == "KB1112" and "440994" in f.message)
    assert finding.extra["candidates"][0] == 64 and finding.extra["candidates"][1] == pytest.approx(8.0, abs=0.01)


def test_consistent_aggregated_count_is_used_once_not_summed(powerx, rows):
    assert rows["440982"]["num_prefill_gpu"] == rows["440982"]["num_decode_gpu"] == 8
    assert rec_of(powerx, "440982")["accelerator_count"] == 8


def test_disaggregated_count_is_prefill_plus_decode(powerx, rows):
    row = rows["440856"]  # 6 prefill workers x 8 + 2 decode workers x 8
    assert rec_of(powerx, "440856")["accelerator_count"] == row["num_prefill_gpu"] + row["num_decode_gpu"] == 64


def test_disaggregated_per_gpu_rates_say_their_denominator(powerx):
    m = rec_of(powerx, "440856")["metrics"]
    assert "per decode GPU" in m["output_tok_s"]["basis"] and "per prefill GPU" in m["input_tok_s"]["basis"]


def test_input_rate_is_input_tokens_over_the_run_not_a_prefill_phase_rate(powerx, rows):
    """input_tput_per_gpu + output_tput_per_gpu = tput_per_gpu (1288.80 + 160.82 = 1449.62 in row 440994): input tokens
    over the whole run, the registry's input_tok_s; it was stored as prefill_tok_s (a prefill-phase rate)."""
    row = rows["440994"]["metrics"]
    assert row["input_tput_per_gpu"] + row["output_tput_per_gpu"] == pytest.approx(row["tput_per_gpu"], rel=1e-9)
    for r in powerx.records:
        if r["type"] == "benchmark":
            assert "prefill_tok_s" not in r["metrics"], r["id"]
    assert rec_of(powerx, "440994")["metrics"]["input_tok_s"]["value"] == row["input_tput_per_gpu"]


def test_latencies_are_converted_from_seconds_to_ms(powerx, rows):
    rec = rec_of(powerx, "440994")
    assert rec["metrics"]["ttft_ms"]["stats"]["mean"] == pytest.approx(rows["440994"]["metrics"]["mean_ttft"] * 1000)
    assert rec["metrics"]["e2e_latency_ms"]["stats"]["p999"] == pytest.approx(rows["440994"]["metrics"]["p99.9_e2el"] * 1000)


def test_headline_is_total_tokens_per_gpu(powerx, rows):
    rec = rec_of(powerx, "440994")
    assert (rec["metric"], rec["value"], rec["value_scope"]) == ("total_tok_s", rows["440994"]["metrics"]["tput_per_gpu"], "per-device")


def test_interactivity_keeps_only_mean_and_median(powerx):
    assert set(rec_of(powerx, "440994")["metrics"]["tok_s_per_user"]["stats"]) == {"mean", "p50"}


def test_vague_precision_leaves_format_null(powerx):
    rec = rec_of(powerx, "440994")
    assert rec["format_id"] is None and "NVFP4 or MXFP4" in rec["condition_gaps"]["format_id"]["reason"]


def test_records_validate(kb, powerx):
    assert len(commit(kb, powerx.records, update=True)) == len(powerx.records)


def test_gpu_count_uses_power_ratio_when_count_is_absent():
    row = {"disagg": False, "metrics": {"power_valid": 1, "avg_total_gpu_power_w": 1600.0, "avg_power_w": 400.0}}
    assert gpu_count(row)[0] == 4


def test_empty_result_imports_nothing(kb):
    res = run(kb, need("diagnostic.json"))
    assert res.records == [] and [f.code for f in res.findings] == ["KB1113"]


def test_lookup_sample_rows_are_read(kb):
    assert run(kb, need("lookup.json")).stats["imported"] == 5


def test_wrong_harness_names_expected_and_found_keys(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"avg_latency": 1.0}))
    with pytest.raises(InputError, match="expected a list of rows.*found avg_latency"):
        run(kb, p)


def test_row_missing_keys_names_them(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"id": "1", "hardware": "b200"}]))
    with pytest.raises(InputError, match="missing framework, model, conc"):
        run(kb, p)


def test_truncated_json_is_an_input_error(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"rows": [{"id": "1"')
    with pytest.raises(InputError, match="not usable JSON"):
        run(kb, p)


def test_nan_is_an_input_error(kb, tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"rows": [{"id": "1", "metrics": {"mean_ttft": NaN}}]}')
    with pytest.raises(InputError, match="NaN"):
        run(kb, p)


def test_zero_latency_row_is_skipped_with_a_finding(kb, tmp_path, rows):
    row = json.loads(json.dumps(rows["440982"]))
    row["metrics"]["mean_ttft"] = 0.0
    p = tmp_path / "x.json"
    p.write_text(json.dumps([row]))
    res = run(kb, p)
    assert res.stats["imported"] == 0 and res.stats["skipped"] == {"unusable-row": 1}
    assert any(f.code == "KB1115" and "mean_ttft" in f.message for f in res.findings)
