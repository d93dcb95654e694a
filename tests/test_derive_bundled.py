"""Derivations on a copy of the bundled KB (its schema has `provenance`, `interconnect_exercised`, ...)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inferkb
from inferkb import derive
from inferkb.derive.interconnect_ids import exercised
from inferkb.store import bundled_root

FIXTURES = Path(__file__).parent / "data" / "derive"
TODAY = dt.date(2026, 11, 29)
NEEDED = [
    "accelerators/nvidia-h100-sxm",
    "accelerators/nvidia-rtx-pro-6000-blackwell-server",
    "accelerators/nvidia-rtx-pro-6000-blackwell",
    "engines/vllm",
    "sources/repo-vllm",
]


def _copy(dest: Path) -> Path:
    src = bundled_root()
    missing = [r for r in NEEDED if not (src / "data" / f"{r}.json").is_file()]
    if missing:
        pytest.skip(f"bundled KB lacks {missing}")
    shutil.copytree(src, dest)
    (dest / "data" / "benchmarks").mkdir(exist_ok=True)
    for f in FIXTURES.glob("*.json"):
        shutil.copy(f, dest / "data" / "benchmarks" / f.name)
    return dest


@pytest.fixture()
def kb_root(tmp_path: Path) -> Path:
    return _copy(tmp_path / "kb")


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_interconnect_ids_is_the_accelerators_list_with_provenance_in_the_record(kb_root):
    derive.run(inferkb.open(kb_root), "interconnect-ids", write=True, today=TODAY)
    rec = _rec(kb_root, "derive-fixture-tp4-h100")
    acc = json.loads((kb_root / "data" / "accelerators" / "nvidia-h100-sxm.json").read_text(encoding="utf-8"))
    assert rec["interconnect_ids"] == acc["interconnect"]
    entry = next(e for e in rec["provenance"] if e["field"] == "interconnect_ids")
    assert entry["basis"].startswith("fabric present in the hardware configuration")
    assert entry["evidence"] == {"field": "accelerator_ids[0]", "quote": "nvidia-h100-sxm"}
    assert not (kb_root / "provenance").exists()


def test_a_stated_tp4_split_is_exercised(kb_root):
    derive.run(inferkb.open(kb_root), "interconnect-ids", write=True, today=TODAY)
    rec = _rec(kb_root, "derive-fixture-tp4-h100")
    assert rec["interconnect_exercised"] is True
    assert next(e for e in rec["provenance"] if e["field"] == "interconnect_exercised")["evidence"] == {
        "field": "conditions.tensor_parallel",
        "quote": "4",
    }


def test_a_stated_single_device_is_not_exercised(kb_root):
    derive.run(inferkb.open(kb_root), "interconnect-ids", write=True, today=TODAY)
    assert _rec(kb_root, "derive-fixture-single-rtx-pro")["interconnect_exercised"] is False


def test_data_parallel_replicas_alone_leave_exercised_unset_with_a_reason(kb_root):
    result = derive.run(inferkb.open(kb_root), "interconnect-ids", write=True, today=TODAY)
    assert "interconnect_exercised" not in _rec(kb_root, "derive-fixture-dp-only")
    [f] = [f for f in result.findings if f.record == "benchmarks/derive-fixture-dp-only" and f.field == "interconnect_exercised"]
    assert f.code == "KB1002" and "data-parallel" in f.message


def test_count_one_with_tp4_is_a_conflict_not_a_value(kb_root):
    result = derive.run(inferkb.open(kb_root), "interconnect-ids", today=TODAY)
    codes = [
        f.code for f in result.findings if f.record == "benchmarks/derive-fixture-count-conflict" and f.field == "interconnect_exercised"
    ]
    assert codes == ["KB1003"]


def test_an_ambiguous_nvidia_smi_name_lists_the_other_part_as_alternate(kb_root):
    result = derive.run(inferkb.open(kb_root), "accelerator-alternates", write=True, today=TODAY)
    rec = _rec(kb_root, "derive-fixture-single-rtx-pro")
    assert rec["accelerator_alternates"] == ["nvidia-rtx-pro-6000-blackwell"]
    assert "benchmarks/derive-fixture-tp4-h100" not in {c.record for c in result.changes}  # "NVIDIA H100 80GB HBM3" is unique


def test_awq_in_the_model_name_fills_the_bundled_awq_record(kb_root):
    kb = inferkb.open(kb_root)
    awq = sorted(i for i in kb.ids_of_type("quantization") if i.startswith("awq"))
    result = derive.run(kb, "format-id", today=TODAY)
    got = {c.record: c.new for c in result.changes}
    assert got.get("benchmarks/derive-fixture-single-rtx-pro") == (awq[0] if len(awq) == 1 else None)


def test_all_derivations_keep_the_bundled_kb_valid_and_are_idempotent(kb_root):
    before = {(f.code, f.record, f.field) for f in inferkb.open(kb_root).validate().findings if f.severity == "error"}
    for name in ("interconnect-ids", "format-id", "accelerator-alternates"):
        derive.run(inferkb.open(kb_root), name, write=True, today=TODAY)
    after = {(f.code, f.record, f.field) for f in inferkb.open(kb_root).validate().findings if f.severity == "error"}
    assert after - before == set()
    for name in ("interconnect-ids", "format-id", "accelerator-alternates"):
        assert derive.run(inferkb.open(kb_root), name, today=TODAY).changes == []


def test_unknown_derivation_is_a_usage_error(kb_root):
    with pytest.raises(inferkb.UsageError):
        derive.run(inferkb.open(kb_root), "nope")


sizes = st.none() | st.integers(min_value=1, max_value=16)


@given(count=sizes, tp=sizes, pp=sizes, ep=sizes, dp=sizes)
def test_exercised_is_true_only_for_a_stated_split_and_false_only_for_one_device(count, tp, pp, ep, dp):
    data = {
        "accelerator_count": count,
        "conditions": {"tensor_parallel": tp, "pipeline_parallel": pp, "expert_parallel": ep, "data_parallel": dp},
    }
    value, _, evidence, _ = exercised(data)
    if value is True:
        assert max(tp or 1, pp or 1, ep or 1) > 1 and (count is None or count > 1)
    if value is False:
        assert count == 1 and max(tp or 1, pp or 1, ep or 1) == 1
    if value is not None:
        assert evidence["quote"] == json.dumps(get(data, evidence["field"]))


def get(data: dict, dotted: str):
    cur = data
    for part in dotted.split("."):
        cur = cur[part]
    return cur


numbers = st.integers(min_value=1, max_value=10**6) | st.floats(min_value=0.001, max_value=1e6, allow_nan=False)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=numbers,
    count=st.integers(min_value=1, max_value=64),
    tp=st.integers(min_value=1, max_value=8),
    batch=st.integers(min_value=1, max_value=512),
    model=st.sampled_from(["X-FP8", "X-AWQ", "X Q4_K_M", "X bf16", "X"]),
)
def test_derive_never_changes_a_number(kb_root, value, count, tp, batch, model):
    path = kb_root / "data" / "benchmarks" / "derive-fixture-tp4-h100.json"
    rec = json.loads((FIXTURES / path.name).read_text(encoding="utf-8"))
    rec.update(value=value, accelerator_count=count, model=model, conditions={"tensor_parallel": tp, "batch_size": batch})
    path.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    for name in ("interconnect-ids", "format-id", "accelerator-alternates"):
        result = derive.run(inferkb.open(kb_root), name, write=True, today=TODAY)
        assert result.proof.ok
    new = json.loads(path.read_text(encoding="utf-8"))
    assert (new["value"], new["accelerator_count"], new["conditions"]) == (value, count, {"tensor_parallel": tp, "batch_size": batch})


def test_explicit_null_exercised_is_settled_by_a_stated_split(bundled_copy):
    import json

    import inferkb
    from inferkb import derive

    path = bundled_copy / "data" / "benchmarks" / "vllm-mtp-regression-qwen3-next-80b-a3b.json"
    data = json.loads(path.read_text())
    data["interconnect_exercised"] = None  # TP=4 on 4 devices is stated in conditions/accelerator_count
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    kb = inferkb.open(bundled_copy)
    derive.run(kb, "interconnect-ids", write=True)
    after = json.loads(path.read_text())
    assert after["interconnect_exercised"] is True
    # The record carries later correction entries (issue 7), so look the derivation's entry up rather than take the last one.
    derived = [p for p in after["provenance"] if p["tag"] == "derive:interconnect-ids" and p["field"] == "interconnect_exercised"]
    assert len(derived) == 1
    assert derived[0]["evidence"] == {"field": "conditions.tensor_parallel", "quote": "4"}
