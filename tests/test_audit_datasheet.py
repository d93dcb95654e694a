"""Audit datasheet-consistency (KB1301): a sparse peak is ~2x the dense peak of the same precision and path."""

from __future__ import annotations

import inferkb
from conftest import rec, write_kb
from inferkb.audit.datasheet import TOLERANCE, consistent, sparse_dense_pairs


def flop(precision: str, tflops: float, dense: bool, unit: str | None = None) -> dict:
    row = {"precision": precision, "tflops": tflops, "dense": dense, "basis": "vendor-spec-sheet"}
    if unit:
        row["unit"] = unit
    return row


def audit(tmp_path, flops: list[dict]):
    root = write_kb(tmp_path / "kb", {"data/accelerators/gpu-x.json": rec("accelerator", "gpu-x", flops=flops)})
    return inferkb.open(root).audit("datasheet-consistency")


def test_sparse_twice_dense_passes(tmp_path):
    report = audit(tmp_path, [flop("fp4", 494, True), flop("fp4", 988, False)])
    assert [f.code for f in report.findings] == []
    assert report.figures["datasheet-consistency"]["pairs_checked"] == 1


def test_sparse_paired_with_another_modes_dense_is_a_finding_naming_both_values(tmp_path):
    # The old RTX 5080 rows: FP8 dense 225.1 (FP32 accumulate) next to sparse 900.4 (FP16 accumulate) = 4x.
    report = audit(tmp_path, [flop("fp8", 225.1, True), flop("fp8", 900.4, False)])
    (f,) = report.findings
    assert f.code == "KB1301" and f.record == "accelerators/gpu-x" and f.field == "flops"
    assert "fp8" in f.message and "900.4" in f.message and "225.1" in f.message and "4x" in f.message


def test_tolerance_is_three_percent_of_twice_dense():
    assert TOLERANCE == 0.03
    assert consistent([100.0], 206.0)  # 3 % above 200
    assert not consistent([100.0], 206.5)
    assert consistent([100.0], 194.0) and not consistent([100.0], 193.5)


def test_rows_of_different_hardware_paths_are_not_paired():
    rows = [
        flop("fp64", 34, True, "fp64-vector"),
        flop("fp64", 67, True, "fp64-tensor-core"),
        flop("fp8", 1979, True),
        flop("fp8", 3958, False),
    ]
    assert sparse_dense_pairs(rows) == [("fp8", [1979.0], 3958.0)]


def test_a_sparse_row_without_a_dense_row_is_not_judged(tmp_path):
    report = audit(tmp_path, [flop("fp4", 1000, False)])
    assert report.findings == [] and report.figures["datasheet-consistency"]["pairs_checked"] == 0


def test_bundled_kb_has_no_sparse_dense_mismatch():
    report = inferkb.open().audit("datasheet-consistency")
    assert [f.message for f in report.findings] == []
    assert report.figures["datasheet-consistency"]["pairs_checked"] >= 10


def test_rule_is_explained_with_a_passing_and_a_failing_example():
    from inferkb.rules import RULES

    rule = RULES["KB1301"]
    assert rule.slug == "sparse-dense-mismatch" and "494" in rule.passing and "1801" in rule.failing


# ---- KB1302 verified-spec-unconfirmed -------------------------------------------------

GAP = {"tdp_w": {"reason": "the ROCm page read gives no power figure", "checked": ["rocm gpu-specs table"]}}


def audit_records(tmp_path, files: dict):
    root = write_kb(tmp_path / "kb", files)
    return inferkb.open(root).audit("datasheet-consistency")


def test_verified_accelerator_with_a_spec_gap_is_an_error_naming_the_field(tmp_path):
    report = audit_records(tmp_path, {"data/accelerators/gpu-x.json": rec("accelerator", "gpu-x", status="verified", spec_gaps=GAP)})
    (f,) = report.findings
    assert (f.code, f.severity, f.field) == ("KB1302", "error", "status") and "tdp_w" in f.message


def test_verified_accelerator_citing_a_source_not_re_read_is_an_error(tmp_path):
    src = rec(
        "source",
        "vendor-page",
        url="https://example.invalid/spec",
        kind="spec-sheet",
        accessed="2026-01-01",
        notes="URL recorded; page not re-read in this pass.",
    )
    report = audit_records(
        tmp_path,
        {
            "data/sources/vendor-page.json": src,
            "data/accelerators/gpu-x.json": rec("accelerator", "gpu-x", status="verified", sources=["vendor-page"]),
        },
    )
    (f,) = report.findings
    assert f.code == "KB1302" and "vendor-page" in f.message and f.extra["unread_sources"] == ["vendor-page"]


def test_draft_accelerator_with_spec_gaps_is_not_a_finding_and_is_counted(tmp_path):
    report = audit_records(tmp_path, {"data/accelerators/gpu-x.json": rec("accelerator", "gpu-x", spec_gaps=GAP)})
    assert report.findings == []
    figures = report.figures["datasheet-consistency"]
    assert figures["with_spec_gaps"] == 1 and figures["spec_gap_fields"] == {"tdp_w": 1} and figures["verified"] == 0


def test_verified_accelerator_whose_sources_were_read_is_not_a_finding(tmp_path):
    src = rec(
        "source", "vendor-page", url="https://example.invalid/spec", kind="spec-sheet", accessed="2026-01-01", notes="Read in this pass."
    )
    report = audit_records(
        tmp_path,
        {
            "data/sources/vendor-page.json": src,
            "data/accelerators/gpu-x.json": rec("accelerator", "gpu-x", status="verified", sources=["vendor-page"]),
        },
    )
    assert report.findings == [] and report.figures["datasheet-consistency"]["verified"] == 1


def test_bundled_kb_has_no_verified_accelerator_with_unconfirmed_figures():
    report = inferkb.open().audit("datasheet-consistency")
    assert [f for f in report.findings if f.code == "KB1302"] == []


def test_spec_gaps_keys_are_checked_by_the_bundled_schema(tmp_path):
    import shutil

    from conftest import BUNDLED

    root = tmp_path / "kb"
    shutil.copytree(BUNDLED / "schemas", root / "schemas")
    bad = rec("accelerator", "gpu-x", spec_gaps={"tdp": {"reason": "typo in the key"}})
    good = rec("accelerator", "gpu-y", spec_gaps={"flops.fp8": {"reason": "not on the page", "checked": [], "recover": "datasheet"}})
    write_kb(root, {"data/accelerators/gpu-x.json": bad, "data/accelerators/gpu-y.json": good}, schemas=False)
    errors = [f for f in inferkb.open(root).validate().findings if f.severity == "error"]
    assert {f.record for f in errors} == {"accelerators/gpu-x"}
    assert all("spec_gaps" in (f.field or "") + f.message for f in errors)
