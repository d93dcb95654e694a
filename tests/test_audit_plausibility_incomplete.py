"""physical-plausibility: no "impossible" verdict against a dense ceiling the record says is incomplete.

A part whose record lists only a BF16 peak but says (``spec_gaps["flops.fp8"]``) that its FP8 peak exists
unrecorded, or lists a sparse row with no dense row of that precision, has no known ceiling for a run
that may use the faster precision. Expected MFU values are worked out by hand in comments.
"""

from __future__ import annotations

import pytest

import inferkb
from conftest import rec, write_kb

AUDIT = "physical-plausibility"
DENSE = rec("model", "dense-8b", architecture="dense", params_b=8, active_params_b=8)
BF16 = rec("quantization", "bf16", scheme="bf16", bits="16", weight_bits=16)
FP8 = rec("quantization", "fp8", scheme="fp8", bits="8", weight_bits=8)
FP8_GAP = {"flops.fp8": {"reason": "the part has FP8 tensor cores; no FP8 peak was read"}}


def accel(flops: list[dict], spec_gaps: dict | None = None) -> dict:
    fields = {"memory_bandwidth_gbps": 1000, "flops": flops}
    if spec_gaps is not None:
        fields["spec_gaps"] = spec_gaps
    return rec("accelerator", "test-gpu", **fields)


def bench(rid: str, **fields) -> dict:
    base = {
        "engine_id": "vllm",
        "metric": "tps_aggregate",
        "value": 10000.0,
        "unit": "tok/s",
        "value_scope": "aggregate",
        "model_id": "dense-8b",
        "format_id": None,
        "accelerator_ids": ["test-gpu"],
        "accelerator_count": 1,
    }
    base.update(fields)
    return rec("benchmark", rid, **base)


def run(tmp_path, accelerator: dict, *benches: dict):
    files = {
        "data/accelerators/test-gpu.json": accelerator,
        "data/models/dense-8b.json": DENSE,
        "data/quantization/bf16.json": BF16,
        "data/quantization/fp8.json": FP8,
    }
    files.update({f"data/benchmarks/{b['id']}.json": b for b in benches})
    report = inferkb.open(write_kb(tmp_path / "kb", files)).audit(AUDIT)
    return report.findings, report.figures[AUDIT]


BF16_ONLY = [{"precision": "bf16", "tflops": 100, "basis": "derived"}]


def test_unknown_format_against_bf16_only_is_impossible_when_nothing_says_a_faster_peak_exists(tmp_path):
    # 10,000 tok/s x 2 x 8e9 = 1.6e14 FLOP/s vs 100 TFLOPS bf16 -> MFU 160%
    found, figs = run(tmp_path, accel(BF16_ONLY), bench("x"))
    assert [(f.code, f.severity) for f in found] == [("KB503", "error")]
    assert figs["per_record"]["x"]["mfu"] == pytest.approx(1.6)


def test_unknown_format_is_unchecked_when_spec_gaps_says_the_fp8_peak_is_unrecorded(tmp_path):
    found, figs = run(tmp_path, accel(BF16_ONLY, FP8_GAP), bench("x"))
    (f,) = found
    assert (f.code, f.severity) == ("KB504", "info")
    assert f.extra["missing"] == [
        "accelerator test-gpu: spec_gaps.flops.fp8 says its fp8 peak is not recorded, so its dense ceiling (100 bf16) is incomplete"
    ]
    assert figs["unchecked"] == 1 and "x" not in figs["per_record"]


def test_fp8_run_is_unchecked_too_but_a_bf16_run_is_still_checked(tmp_path):
    # BF16 weights cannot run on the FP8 path, so the BF16 peak is their real ceiling: 160% -> KB503.
    found, _ = run(tmp_path, accel(BF16_ONLY, FP8_GAP), bench("w8", format_id="fp8"), bench("w16", format_id="bf16"))
    by_id = {f.record.split("/")[1]: f.code for f in found}
    assert by_id == {"w8": "KB504", "w16": "KB503"}


def test_a_gap_on_a_wider_precision_does_not_block_the_check(tmp_path):
    # fp32 is slower than the recorded bf16 row, so its missing peak cannot raise the ceiling: 5,000 x 1.6e10 = 80%.
    found, figs = run(tmp_path, accel(BF16_ONLY, {"flops.fp32": {"reason": "not read"}}), bench("x", value=5000.0))
    assert found == [] and figs["per_record"]["x"]["mfu"] == pytest.approx(0.8)


def test_a_gap_on_a_recorded_precision_does_not_block_the_check(tmp_path):
    # flops.bf16 says the recorded bf16 row is unconfirmed, not missing: the row is the ceiling (80%).
    found, figs = run(tmp_path, accel(BF16_ONLY, {"flops.bf16": {"reason": "secondary copy"}}), bench("x", value=5000.0))
    assert found == [] and figs["per_record"]["x"]["mfu"] == pytest.approx(0.8)


def test_sparse_row_without_a_dense_row_makes_a_single_part_ceiling_incomplete(tmp_path):
    # The same rule the family-candidates path applies (RTX PRO 6000 Workstation: fp32 dense, fp4 sparse only).
    rows = [
        {"precision": "fp32", "tflops": 100, "basis": "derived"},
        {"precision": "fp4", "tflops": 4000, "dense": False, "basis": "derived"},
    ]
    (f,) = run(tmp_path, accel(rows), bench("x"))[0]
    assert f.code == "KB504"
    assert "flops lists a sparse fp4 peak but no dense fp4 row, so its dense ceiling (100 fp32) is incomplete" in f.message


def test_bad_spec_gaps_shapes_are_ignored_not_a_traceback(tmp_path):
    # A non-dict spec_gaps, or keys naming no known precision, leave the ceiling as recorded (schema validation reports them).
    for gaps in (["flops.fp8"], {"flops.": {"reason": "x"}, "flops.fp9": {"reason": "x"}}):
        found, _ = run(tmp_path, accel(BF16_ONLY, gaps), bench("x"))
        assert [f.code for f in found] == ["KB503"]
