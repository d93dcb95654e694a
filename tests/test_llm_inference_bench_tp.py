"""llm-inference-bench-tp: the TP size of Argonne LLM-Inference-Bench vLLM rows, from their run script's loop.

The expected TP of each fixture row is read off the hand-written map entry (the row's device count inside the
script's tensor-parallel loop), not computed through the module under test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb import derive
from inferkb.derive import llm_inference_bench_tp as T
from inferkb.errors import InputError
from inferkb.intake import llm_inference_bench_formats as F
from test_llm_inference_bench_format import COMMON, MAP, TODAY, _row

FLAG_MAP = MAP.replace(
    "quote = 'python3 bench.py --dtype=\"float16\"'",
    "quote = 'python3 bench.py --tensor-parallel-size=$tensor_parallel --dtype=\"float16\"'",
)
GCD_MAP = FLAG_MAP.replace(
    "device_counts = [1, 2]", 'device_counts = [4, 8]\ndevices_per_count = 2\ndevices_per_count_evidence = "two GCDs per module"'
)
TP_GAP = {"reason": "2 devices are used but the file does not say how the model is split", "checked": ["the CSV row"]}


def _tp_row(rid: str, **over) -> dict:
    rec = _row(rid, format_id="fp16", **over)
    rec["conditions"] = {**rec["conditions"], "tensor_parallel": None}
    del rec["condition_gaps"]["format_id"]
    if rec["accelerator_count"] > 1:
        rec["condition_gaps"]["tensor_parallel"] = dict(TP_GAP)
    for k, v in over.items():
        if k == "conditions":
            rec["conditions"] = {**rec["conditions"], **v}
    return rec


ROWS = [
    _tp_row("t-two", accelerator_count=2),
    _tp_row("t-one"),
    _tp_row("t-outside", accelerator_count=4),
    _tp_row("t-other-model", accelerator_count=2, model="org/Other"),
    _tp_row("t-already", accelerator_count=2, conditions={"tensor_parallel": 2}),
]


def _kb(tmp_path, monkeypatch, text: str, rows=ROWS) -> Path:
    monkeypatch.setattr(F, "group_map", lambda: F.parse_map(text, path="test-map.toml"))
    fp16 = {"id": "fp16", "type": "quantization", "name": "FP16", "weight_bits": 16, **COMMON}
    return make_kb(tmp_path / "kb", copy.deepcopy(rows), models=[fp16])


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_rows_inside_the_tp_loop_get_their_device_count_as_tp(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch, FLAG_MAP)
    res = derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
    assert res.proof.ok and res.written
    two = _rec(root, "t-two")
    assert two["conditions"]["tensor_parallel"] == 2 and "tensor_parallel" not in two["condition_gaps"]
    tags = [(e["tag"], e["field"]) for e in two["provenance"]]
    assert tags == [(f"derive:{T.NAME}", "conditions"), (f"derive:{T.NAME}", "condition_gaps")]
    assert "--tensor-parallel-size=$tensor_parallel in its loop over tensor-parallel sizes [1, 2]" in two["provenance"][0]["basis"]
    assert _rec(root, "t-one")["conditions"]["tensor_parallel"] == 1
    # Every other condition is as it was.
    before = next(r for r in ROWS if r["id"] == "t-two")["conditions"]
    assert {k: v for k, v in two["conditions"].items() if k != "tensor_parallel"} == {
        k: v for k, v in before.items() if k != "tensor_parallel"
    }


@pytest.mark.parametrize("rid", ["t-outside", "t-other-model", "t-already"])
def test_rows_outside_the_loops_or_already_set_are_left_byte_for_byte(tmp_path, monkeypatch, rid):
    root = _kb(tmp_path, monkeypatch, FLAG_MAP)
    path = root / "data" / "benchmarks" / f"{rid}.json"
    old = path.read_bytes()
    derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
    assert path.read_bytes() == old


def test_a_script_line_without_the_tp_flag_fills_nothing(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch, MAP)
    res = derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
    assert res.changes == [] and _rec(root, "t-two")["conditions"]["tensor_parallel"] is None


def test_gcds_per_module_leave_tp_null_and_say_what_the_script_ran(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch, GCD_MAP)
    res = derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
    assert res.proof.ok
    two = _rec(root, "t-two")
    assert two["conditions"]["tensor_parallel"] is None
    gap = two["condition_gaps"]["tensor_parallel"]
    assert "--tensor-parallel-size 4, over 4 GCDs of 2 MI250 modules" in gap["reason"]
    assert gap["checked"][-1] == T.CHECKED
    assert any(f.code == "KB1002" and f.record == "benchmarks/t-two" for f in res.findings)
    # A row on one module (2 GCDs) is outside the [4, 8] loop: untouched.
    assert "tensor_parallel" not in _rec(root, "t-one")["condition_gaps"]


def test_gcds_per_module_fill_tp_in_runtime_devices_when_the_accelerator_states_them(tmp_path, monkeypatch):
    # The accelerator record says the runtime exposes 2 devices per module, as the map's devices_per_count does: the
    # row on 2 modules inside the script's [4, 8] loop ran at TP 4 (4 GCDs), and KB1201 reads 2 x 2 = 4 devices.
    acc = {
        "id": "mod",
        "type": "accelerator",
        "name": "Two-die module",
        "runtime_devices": 2,
        "runtime_devices_basis": {"source_id": "s", "quote": "two devices"},
        **COMMON,
    }
    rows = [dict(r, accelerator_ids=["mod"]) for r in ROWS]
    monkeypatch.setattr(F, "group_map", lambda: F.parse_map(GCD_MAP, path="test-map.toml"))
    fp16 = {"id": "fp16", "type": "quantization", "name": "FP16", "weight_bits": 16, **COMMON}
    root = make_kb(tmp_path / "kb", copy.deepcopy(rows), models=[fp16, acc])
    res = derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
    assert res.proof.ok and set(res.proof.changed_fields()) == {"conditions", "condition_gaps", "provenance"}
    two = _rec(root, "t-two")
    assert two["conditions"]["tensor_parallel"] == 4 and "tensor_parallel" not in two["condition_gaps"]
    entry = next(e for e in two["provenance"] if e["field"] == "conditions")
    assert "runtime devices: 2 accelerators x 2" in entry["basis"]
    assert _rec(root, "t-one")["conditions"]["tensor_parallel"] is None  # outside the loop
    assert not [f for f in inferkb.open(root, cache=False).audit("device-count").findings if f.code == "KB1201"]


def test_a_second_run_changes_nothing(tmp_path, monkeypatch):
    for i, text in enumerate((FLAG_MAP, GCD_MAP)):
        root = _kb(tmp_path / str(i), monkeypatch, text)
        derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
        again = derive.run(inferkb.open(root, cache=False), T.NAME, write=True, today=TODAY)
        assert again.changes == [] and not again.written


def test_an_unusable_map_is_an_input_error_naming_it(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch, FLAG_MAP)
    monkeypatch.setattr(
        F, "group_map", lambda: F.parse_map(FLAG_MAP.replace("devices_per_count", "x") + "devices_per_count = -1\n", path="bad.toml")
    )
    with pytest.raises(InputError) as exc:
        derive.run(inferkb.open(root, cache=False), T.NAME)
    assert exc.value.path == "bad.toml" and exc.value.field == "group[0].devices_per_count"


# ---- the bundled KB -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def test_bundled_h100_rows_have_their_scripts_tp_and_mi250_rows_their_gcds(bundled):
    h100 = bundled.records["benchmarks/lib-throughput-nvidia-h100-x4-vllm-qwen2-7b-in1024-out1024-bs1"].data
    assert h100["conditions"]["tensor_parallel"] == 4 and "tensor_parallel" not in h100["condition_gaps"]
    # 4 MI250 modules: the script's --tensor-parallel-size 8 over 8 GCDs (runtime_devices 2 on amd-instinct-mi250).
    mi250 = bundled.records["benchmarks/lib-throughput-amd-mi250-x4-vllm-llama-2-70b-hf-in1024-out1024-bs1"].data
    assert mi250["accelerator_count"] == 4 and mi250["conditions"]["tensor_parallel"] == 8
    assert "tensor_parallel" not in mi250["condition_gaps"]
    # vLLM on one MI250 module (2 GCDs) is outside the script's [4, 8] loop: no TP, as imported.
    one = bundled.records["benchmarks/lib-throughput-amd-mi250-x1-vllm-llama-2-7b-hf-in1024-out1024-bs1"].data
    assert one["conditions"]["tensor_parallel"] is None


def test_the_derivation_has_nothing_left_to_do_on_the_bundled_kb(bundled):
    res = derive.run(bundled, T.NAME)
    assert res.changes == [] and res.proof.ok
