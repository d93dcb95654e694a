"""physical-plausibility for records known only up to a family: every part in accelerator_alternates (KB501/503/504/505/507).

Expected utilisations are worked out by hand in comments: model 8e9 parameters at BF16 (2 B/weight).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import inferkb
from conftest import BUNDLED, rec, write_kb

AUDIT = "physical-plausibility"

FAST = rec("accelerator", "fast-gpu", memory_bandwidth_gbps=2000, flops=[{"precision": "bf16", "tflops": 200, "basis": "derived"}])
SLOW = rec("accelerator", "slow-gpu", memory_bandwidth_gbps=1000, flops=[{"precision": "bf16", "tflops": 100, "basis": "derived"}])
NO_BW = rec("accelerator", "no-bw-gpu", memory_bandwidth_gbps=None, flops=[])
# Only fp32 dense and a sparse fp4 peak: the dense tensor-core rows are missing, so its ceiling is not known.
GAPPY = rec(
    "accelerator",
    "gappy-gpu",
    memory_bandwidth_gbps=1500,
    flops=[
        {"precision": "fp32", "tflops": 10, "basis": "derived"},
        {"precision": "fp4", "tflops": 4000, "dense": False, "basis": "derived"},
    ],
)
DENSE = rec("model", "dense-8b", architecture="dense", params_b=8, active_params_b=8)
BF16 = rec("quantization", "bf16", scheme="bf16", bits="16", weight_bits=16)


def bench(rid: str, alternates: list[str], **fields) -> dict:
    base = {
        "engine_id": "vllm",
        "metric": "decode_tok_s",
        "value": 30.0,
        "unit": "tok/s",
        "value_scope": "per-request",
        "model_id": "dense-8b",
        "format_id": "bf16",
        "accelerator_ids": [],
        "accelerator_alternates": alternates,
        "accelerator_count": 1,
    }
    base.update(fields)
    return rec("benchmark", rid, **base)


def run(tmp_path, *benches: dict):
    files = {f"data/accelerators/{a['id']}.json": a for a in (FAST, SLOW, NO_BW, GAPPY)}
    files.update({"data/models/dense-8b.json": DENSE, "data/quantization/bf16.json": BF16})
    files.update({f"data/benchmarks/{b['id']}.json": b for b in benches})
    report = inferkb.open(write_kb(tmp_path / "kb", files)).audit(AUDIT)
    return report.findings, report.figures[AUDIT]


def codes(found):
    return [(f.code, f.severity) for f in found]


def test_a_rate_under_every_candidate_ceiling_gets_an_mbu_range_naming_each_end(tmp_path):
    # 30 tok/s x 16e9 B = 0.48e12 B/s: 24% of 2000 GB/s (fast), 48% of 1000 GB/s (slow)
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"]))
    assert found == []
    entry = figs["candidate_per_record"]["x"]
    assert entry["mbu_min"] == pytest.approx(0.24) and entry["min_candidate"] == "fast-gpu"
    assert entry["mbu_max"] == pytest.approx(0.48) and entry["max_candidate"] == "slow-gpu"
    assert entry["candidates"] == {"fast-gpu": pytest.approx(0.24), "slow-gpu": pytest.approx(0.48)}
    assert entry["ruled_out"] == [] and figs["candidate_ranges"] == 1


def test_a_candidate_range_is_not_counted_in_the_single_part_bands_or_as_unchecked(tmp_path):
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"]))
    assert sum(figs["mbu_bands"].values()) == 0 and figs["per_record"] == {}
    assert figs["unchecked"] == 0 and figs["rate_records"] == 1


def test_a_rate_over_every_candidate_ceiling_is_impossible_whatever_the_part(tmp_path):
    # 150 tok/s x 16e9 = 2.4e12 B/s: 120% of fast, 240% of slow
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], value=150.0))
    assert codes(found) == [("KB501", "error")]
    assert "every candidate" in found[0].message and "120% (fast-gpu)" in found[0].message
    assert figs["candidate_per_record"]["x"]["ruled_out"] == ["fast-gpu", "slow-gpu"]


def test_a_rate_between_the_ceilings_rules_out_the_slower_part_as_info(tmp_path):
    # 90 tok/s x 16e9 = 1.44e12 B/s: 72% of fast, 144% of slow
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], value=90.0))
    assert codes(found) == [("KB507", "info")]
    assert found[0].extra["ruled_out"] == ["slow-gpu"] and found[0].extra["still_possible"] == ["fast-gpu"]
    assert "not on that part" in found[0].message
    assert figs["candidate_per_record"]["x"]["mbu_max"] == pytest.approx(1.44)


def test_ruling_out_writes_nothing_into_the_record(tmp_path):
    b = bench("x", ["fast-gpu", "slow-gpu"], value=90.0)
    run(tmp_path, b)
    on_disk = json.loads((tmp_path / "kb" / "data" / "benchmarks" / "x.json").read_text())
    assert on_disk["accelerator_ids"] == [] and on_disk["accelerator_alternates"] == ["fast-gpu", "slow-gpu"]


def test_throughput_over_every_candidate_peak_is_impossible(tmp_path):
    # 15,000 tok/s x 2 x 8e9 = 2.4e14 FLOP/s: 120% of 200 TFLOPS, 240% of 100
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], metric="tps_aggregate", value=15000.0, value_scope="aggregate"))
    assert codes(found) == [("KB503", "error")]
    assert figs["candidate_per_record"]["x"]["mfu_min"] == pytest.approx(1.2)


def test_throughput_between_the_peaks_is_kb507(tmp_path):
    # 9,000 x 1.6e10 = 1.44e14: 72% of fast, 144% of slow
    found, _ = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], metric="tps_aggregate", value=9000.0, value_scope="aggregate"))
    assert codes(found) == [("KB507", "info")]


def test_an_alternate_naming_no_record_is_named_unchecked_and_blocks_an_impossible_verdict(tmp_path):
    found, figs = run(tmp_path, bench("x", ["slow-gpu", "ghost-gpu"], value=90.0))
    entry = figs["candidate_per_record"]["x"]
    assert entry["unchecked"] == {"ghost-gpu": "no accelerator record"}
    # over slow's ceiling (144%), but ghost-gpu could be any speed: KB507 rules out slow-gpu only
    assert codes(found) == [("KB507", "info")]
    assert found[0].extra["still_possible"] == ["ghost-gpu"]


def test_alternates_with_no_usable_ceiling_are_kb504_naming_each(tmp_path):
    found, figs = run(tmp_path, bench("x", ["ghost-gpu", "no-bw-gpu"]))
    assert codes(found) == [("KB504", "info")]
    assert "ghost-gpu: no accelerator record" in found[0].message and "no-bw-gpu: no memory_bandwidth_gbps" in found[0].message
    assert figs["unchecked"] == 1 and figs["candidate_ranges"] == 0


def test_a_dense_table_missing_its_tensor_rows_is_unchecked_not_ruled_out(tmp_path):
    # vs gappy's 10 fp32 TFLOPS the rate would be 160%, but its sparse fp4 row says faster dense rows exist unrecorded
    found, figs = run(
        tmp_path, bench("x", ["fast-gpu", "gappy-gpu"], metric="tps_aggregate", value=1000.0, value_scope="aggregate", format_id=None)
    )
    entry = figs["candidate_per_record"]["x"]
    assert list(entry["candidates"]) == ["fast-gpu"]
    assert "sparse fp4 peak but no dense fp4 row" in entry["unchecked"]["gappy-gpu"]
    assert found == []


def test_unknown_device_count_over_the_fastest_candidate_asks_for_the_count(tmp_path):
    found, figs = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], value=150.0, accelerator_count=None))
    assert codes(found) == [("KB505", "warning")]
    assert "ONE device" in figs["candidate_per_record"]["x"]["note"]


def test_unknown_device_count_between_the_ceilings_rules_nothing_out(tmp_path):
    found, _ = run(tmp_path, bench("x", ["fast-gpu", "slow-gpu"], value=90.0, accelerator_count=None))
    assert found == []


def test_a_record_with_accelerator_ids_ignores_its_alternates(tmp_path):
    # checked against slow-gpu alone: 90 tok/s -> 144% -> KB501, as before this check existed
    found, figs = run(tmp_path, bench("x", ["fast-gpu"], value=90.0, accelerator_ids=["slow-gpu"]))
    assert codes(found) == [("KB501", "error")]
    assert figs["candidate_per_record"] == {} and figs["per_record"]["x"]["mbu"] == pytest.approx(1.44)


def test_kb507_is_explained_by_inferkb_rules():
    from inferkb.cli import cli

    result = CliRunner().invoke(cli, ["rules", "KB507"])
    assert result.exit_code == 0, result.output
    assert "candidate-parts-ruled-out" in result.output and "accelerator_alternates" in result.output


# ---- the bundled KB ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundled():
    report = inferkb.open().audit(AUDIT)
    return report.findings, report.figures[AUDIT]


def _record(rel: str) -> dict:
    return json.loads((BUNDLED / "data" / rel).read_text())


def test_bundled_argonne_h100_row_gets_the_mfu_of_each_h100_part(bundled):
    _, figs = bundled
    rid = "lib-throughput-nvidia-h100-x1-tensorrt-llm-qwen2-7b-in2048-out2048-bs16"
    data = _record(f"benchmarks/{rid}.json")
    params = _record(f"models/{data['model_id']}.json")["active_params_b"] * 1e9
    entry = figs["candidate_per_record"][rid]
    assert set(entry["candidates"]) == set(data["accelerator_alternates"])
    for part in data["accelerator_alternates"]:
        # the record states no format, so the ceiling is the part's fastest dense row of any precision
        assert data["format_id"] is None
        peak = max(r["tflops"] for r in _record(f"accelerators/{part}.json")["flops"] if r.get("dense", True))
        assert entry["candidates"][part] == pytest.approx(data["value"] * 2 * params / (peak * 1e12 * data["accelerator_count"]), abs=1e-4)
    assert entry["min_candidate"] == "nvidia-h100-sxm"


def test_bundled_inferencex_h200_rows_name_the_nvl_part_unchecked(bundled):
    _, figs = bundled
    h200 = [e for e in figs["candidate_per_record"].values() if "nvidia-h200-sxm" in e["candidates"]]
    assert h200 and all(e["unchecked"] == {"nvidia-h200-nvl": "no dense flops row"} for e in h200)


def test_bundled_rtx_pro_6000_rows_stay_unchecked_for_the_incomplete_dense_table(bundled):
    found, _ = bundled
    rid = "benchmarks/mlperf-v6-1-closed-fujitsu-primergy-cdi-rtx-pro-6000-pcie-96gbx8-trt-llama2-70b-99-9-offline"
    hit = [f for f in found if f.record == rid]
    assert codes(hit) == [("KB504", "info")]
    assert "nvidia-rtx-pro-6000-blackwell: flops lists a sparse fp4 peak but no dense fp4 row" in hit[0].message
