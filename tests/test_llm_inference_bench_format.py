"""llm-inference-bench-format: the weight format of Argonne LLM-Inference-Bench rows, from their group's run script.

The map entries in the small KBs below are written by hand; the expected
outcomes (which row is inside a script's loops) are read off them by hand,
not computed through the module under test.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb import derive
from inferkb.errors import InputError
from inferkb.intake import llm_inference_bench_formats as F
from inferkb.intake.base import stable_view, without_backfills

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "community" / "argonne-LLM-Inference-Bench"
TODAY = dt.date(2026, 12, 2)
COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}
SHA = "a30fdf4ee2800e989c6c2cd838a1c2076e9a4ac0"
MAP = f'''
[[group]]
table = "Throughput"
framework = "vLLM"
hardware = "Nvidia H100 GPU"
format = "fp16"
models = ["org/Seven"]
device_counts = [1, 2]
batch_sizes = [1, 16]
lengths = [128, 256]
repo = "argonne-lcf/LLM-Inference-Bench"
path = "vLLM/H100/run.sh"
commit = "{SHA}"
quote = 'python3 bench.py --dtype="float16"'
evidence = "the script passes --dtype float16 on every run"
'''


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


# ---- the bundled map and KB -------------------------------------------------------------


def test_every_bundled_entry_names_an_existing_format_and_cites_a_pinned_script(bundled):
    quant = bundled.ids_of_type("quantization")
    entries = F.group_map()
    assert len(entries) == 31
    for e in entries:
        assert e.format in quant, (e.path, e.format)
        assert e.repo == "argonne-lcf/LLM-Inference-Bench" and len(e.commit) == 40
        # the quoted line names the dtype or the GGUF file; a TensorRT-LLM line passes $precision, set in its loop
        assert "float16" in e.quote or "_f16.gguf" in e.quote or ("--dtype=$precision" in e.quote and '"float16"' in e.evidence), e.path


def test_bundled_rows_inside_a_script_are_fp16_and_the_rest_say_which_script_was_checked(bundled):
    h100 = bundled.records["benchmarks/lib-throughput-nvidia-h100-x1-vllm-meta-llama-3-8b-in128-out128-bs1"].data
    assert h100["format_id"] == "fp16" and "format_id" not in h100["condition_gaps"]
    # MI250 vLLM script loops over tensor-parallel sizes 4 and 8 (GCDs) only: a row on one MI250 module (2 GCDs) is
    # outside it, and the reason counts the module as two script devices.
    mi250 = bundled.records["benchmarks/lib-throughput-amd-mi250-x1-vllm-llama-2-7b-hf-in1024-out1024-bs1"].data
    assert mi250["format_id"] is None
    assert "vLLM/MI250/run-throughput-bench.sh (at 508e7e2eb28c)" in mi250["condition_gaps"]["format_id"]["checked"]
    assert "1 x 2 = 2 script device(s) is not among its device counts [4, 8]" in mi250["condition_gaps"]["format_id"]["reason"]
    # No script read for TensorRT-LLM's throughput runs: the original gap stays.
    trt = bundled.records["benchmarks/lib-throughput-nvidia-h100-x1-tensorrt-llm-meta-llama-3-8b-in128-out128-bs1"].data
    assert trt["format_id"] is None
    assert trt["condition_gaps"]["format_id"]["reason"] == "the weight precision is not stated"


@pytest.mark.parametrize(
    "rid",
    [
        # 2 MI250 modules = 4 GCDs = the vLLM script's TP 4; Llama-2-70B's FP16 weights do not fit 2 GCDs (128 GB).
        "lib-throughput-amd-mi250-x2-vllm-llama-2-70b-hf-in1024-out1024-bs1",
        # 4 modules = 8 GCDs: llama.cpp/MI250/llama2-70b.sh's only CUDA_VISIBLE_DEVICES (8 devices).
        "lib-throughput-amd-mi250-x4-llama-cpp-llama-2-70b-hf-in1024-out1024-bs1",
        # 1 module = 2 GCDs: the '0,1' run of llama.cpp/MI250/llama2-7b.sh.
        "lib-throughput-amd-mi250-x1-llama-cpp-llama-2-7b-hf-in1024-out1024-bs1",
    ],
)
def test_bundled_mi250_rows_count_modules_and_the_scripts_count_gcds(bundled, rid):
    rec = bundled.records[f"benchmarks/{rid}"].data
    assert rec["format_id"] == "fp16" and "format_id" not in rec["condition_gaps"], rid
    basis = next(e["basis"] for e in rec["provenance"] if e["field"] == "format_id" and e["tag"] == F.TAG)
    assert "script devices: the CSV's Num of Hardware counts MI250 OAM modules" in basis and "two GCDs" in basis


def test_every_mi250_entry_counts_two_script_devices_per_csv_count():
    mi250 = [e for e in F.group_map() if e.hardware == "AMD MI250 GPU"]
    assert len(mi250) == 9 and all(e.devices_per_count == 2 and "GCD" in e.devices_per_count_evidence for e in mi250)
    assert all(e.devices_per_count == 1 for e in F.group_map() if e.hardware != "AMD MI250 GPU")


def test_devices_per_count_scales_the_rows_count_before_the_loop_check():
    per2 = MAP.replace(
        "device_counts = [1, 2]", 'device_counts = [4]\ndevices_per_count = 2\ndevices_per_count_evidence = "two dies per card"'
    )
    entries = F.parse_map(per2)
    assert F.decide(_row("x", accelerator_count=2), {"fp16"}, entries).kind == "filled"
    d = F.decide(_row("y", accelerator_count=4), {"fp16"}, entries)
    assert d.kind == "outside" and "4 x 2 = 8 script device(s) is not among its device counts [4]" in d.why
    # Without the field a count of 2 is not among [4].
    assert (
        F.decide(_row("z", accelerator_count=2), {"fp16"}, F.parse_map(MAP.replace("device_counts = [1, 2]", "device_counts = [4]"))).kind
        == "outside"
    )


def test_the_derivation_has_nothing_left_to_do_on_the_bundled_kb(bundled):
    res = derive.run(bundled, F.NAME)
    assert res.changes == [] and res.proof.ok


# ---- a small KB ---------------------------------------------------------------------------


def _row(rid: str, **over) -> dict:
    rec = {
        "id": rid,
        "type": "benchmark",
        "name": rid,
        **COMMON,
        "engine_id": "vllm",
        "accelerator_ids": [],
        "accelerator_count": 1,
        "hardware_raw": "Nvidia H100 GPU",
        "model": "org/Seven",
        "model_id": None,
        "format_id": None,
        "metric": "total_tok_s",
        "value": 100.0,
        "unit": "tok/s",
        "value_scope": "aggregate",
        "origin": "llm-inference-bench",
        "scenario": "batch-sweep",
        "conditions": {"batch_size": 16, "input_tokens": 128, "output_tokens": 128},
        "condition_gaps": {
            "warmup": {"reason": "not stated", "checked": ["the CSV row"]},
            "format_id": {"reason": "the weight precision is not stated", "checked": ["the CSV row"], "recover": "the run scripts"},
        },
        "environment": {"framework": "vLLM"},
        "submission": {"table": "Throughput", "line": 2},
        "provenance": [],
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(rec.get(k), dict):
            rec[k] = {**rec[k], **v}
        else:
            rec[k] = v
    return rec


ROWS = [
    _row("b-inside"),
    _row("b-other-count", accelerator_count=4),
    _row("b-other-model", model="org/Other"),
    _row("b-unequal-lengths", conditions={"input_tokens": 128, "output_tokens": 1}),
    _row("b-no-entry", hardware_raw="AMD MI250 GPU"),
    _row("b-other-origin", origin="elsewhere"),
    _row("b-already-set", format_id="fp8-e4m3"),
]


@pytest.fixture
def kb_root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(F, "group_map", lambda: F.parse_map(MAP, path="test-map.toml"))
    fp16 = {"id": "fp16", "type": "quantization", "name": "FP16", "weight_bits": 16, **COMMON}
    return make_kb(tmp_path / "kb", copy.deepcopy(ROWS), models=[fp16])


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_the_derivation_fills_the_row_inside_the_loops_and_nothing_else(kb_root):
    res = derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    assert res.proof.ok and res.written
    assert {(c.record, c.field) for c in res.changes if c.field == "format_id"} == {("benchmarks/b-inside", "format_id")}
    inside = _rec(kb_root, "b-inside")
    assert inside["format_id"] == "fp16"
    assert inside["condition_gaps"] == {"warmup": {"reason": "not stated", "checked": ["the CSV row"]}}
    before = next(r for r in ROWS if r["id"] == "b-inside")
    for key in set(before) | set(inside):
        if key not in ("format_id", "condition_gaps", "provenance"):
            assert inside.get(key) == before.get(key), key
    assert [e["field"] for e in inside["provenance"]] == ["format_id", "condition_gaps"]
    assert SHA in inside["provenance"][0]["basis"] and 'python3 bench.py --dtype="float16"' in inside["provenance"][0]["basis"]
    assert all(e["numbers_changed"] is False and e["tag"] == F.TAG for e in inside["provenance"])


@pytest.mark.parametrize(
    ("rid", "said"),
    [
        ("b-other-count", "4 device(s) is not among its device counts [1, 2]"),
        ("b-other-model", "do not run model 'org/Other'"),
        ("b-unequal-lengths", "input/output 128/1 is not among"),
    ],
)
def test_a_row_outside_the_scripts_loops_stays_null_and_its_gap_names_the_script(kb_root, rid, said):
    derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    rec = _rec(kb_root, rid)
    assert rec["format_id"] is None
    gap = rec["condition_gaps"]["format_id"]
    assert said in gap["reason"] and "vLLM/H100/run.sh" in gap["reason"]
    assert gap["checked"] == ["the CSV row", "vLLM/H100/run.sh (at a30fdf4ee280)"]


@pytest.mark.parametrize("rid", ["b-no-entry", "b-other-origin", "b-already-set"])
def test_a_record_without_an_entry_or_out_of_scope_is_left_byte_for_byte(kb_root, rid):
    path = kb_root / "data" / "benchmarks" / f"{rid}.json"
    old = path.read_bytes()
    res = derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    assert path.read_bytes() == old
    assert not [c for c in res.changes if c.record == f"benchmarks/{rid}"]


def test_a_second_run_changes_nothing(kb_root):
    derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    again = derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    assert again.changes == [] and not again.written


def test_the_importer_fill_writes_what_the_derivation_writes(kb_root):
    derive.run(inferkb.open(kb_root, cache=False), F.NAME, write=True, today=TODAY)
    entries = F.parse_map(MAP, path="test-map.toml")
    for rid in ("b-inside", "b-other-count", "b-no-entry"):
        fresh = copy.deepcopy(next(r for r in ROWS if r["id"] == rid))
        F.fill(fresh, {"fp16", "fp8-e4m3"}, TODAY.isoformat(), entries)
        written = _rec(kb_root, rid)
        assert stable_view(without_backfills(written, fresh)) == stable_view(fresh), rid
        assert fresh["format_id"] == written["format_id"] and fresh["condition_gaps"] == written["condition_gaps"]


def test_output_lengths_let_an_entry_cover_rows_whose_output_differs_from_their_input():
    entries = F.parse_map(MAP.replace("lengths = [128, 256]", "lengths = [1024]\noutput_lengths = [1]"))
    ttft = {"input_tokens": 1024, "output_tokens": 1}
    assert F.decide(_row("x", conditions=ttft), {"fp16"}, entries).kind == "filled"
    d = F.decide(_row("y", conditions={"input_tokens": 1024, "output_tokens": 1024}), {"fp16"}, entries)
    assert d.kind == "outside" and "input lengths [1024] x output lengths [1]" in d.why


def test_an_entry_whose_format_the_kb_lacks_fills_nothing():
    entries = F.parse_map(MAP.replace('format = "fp16"', 'format = "fp4-new"'))
    d = F.decide(_row("x"), {"fp16"}, entries)
    assert d.kind == "unknown-format" and d.format_id is None and "fp4-new" in d.why


# ---- bad map input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (MAP.replace(f'commit = "{SHA}"', 'commit = "a30fdf4"'), "group[0].commit"),
        (MAP.replace("quote = 'python3 bench.py --dtype=\"float16\"'", ""), "group[0].quote"),
        (MAP.replace("device_counts = [1, 2]", "device_counts = []"), "group[0].device_counts"),
        (MAP.replace("batch_sizes = [1, 16]", 'batch_sizes = ["16"]'), "group[0].batch_sizes"),
        (MAP.replace('models = ["org/Seven"]', "models = []"), "group[0].models"),
        (MAP.replace("lengths = [128, 256]", "lengths = [128]\noutput_lengths = [0]"), "group[0].output_lengths"),
        (MAP.replace('format = "fp16"', 'format = ""'), "group[0].format"),
        (MAP + MAP, "group[1].models"),
        (
            MAP.replace("device_counts = [1, 2]", 'device_counts = [1]\ndevices_per_count = 0\ndevices_per_count_evidence = "x"'),
            "group[0].devices_per_count",
        ),
        (MAP.replace("device_counts = [1, 2]", "device_counts = [1]\ndevices_per_count = true"), "group[0].devices_per_count"),
        (MAP.replace("device_counts = [1, 2]", "device_counts = [1]\ndevices_per_count = 2"), "group[0].devices_per_count_evidence"),
        (
            MAP.replace("device_counts = [1, 2]", 'device_counts = [1]\ndevices_per_count = 2\ndevices_per_count_evidence = " "'),
            "group[0].devices_per_count_evidence",
        ),
    ],
)
def test_a_broken_map_entry_is_an_input_error_naming_it(text, field):
    with pytest.raises(InputError) as exc:
        F.parse_map(text, path="m.toml")
    assert exc.value.field == field and exc.value.path == "m.toml"


def test_a_map_that_is_not_toml_is_an_input_error():
    with pytest.raises(InputError, match="not valid TOML"):
        F.parse_map("[[group]\n", path="m.toml")


def test_two_entries_of_one_group_with_disjoint_models_are_allowed():
    second = MAP.replace('models = ["org/Seven"]', 'models = ["org/Other"]').replace("device_counts = [1, 2]", "device_counts = [4]")
    entries = F.parse_map(MAP + second)
    assert F.decide(_row("x", model="org/Other", accelerator_count=4), {"fp16"}, entries).kind == "filled"
    assert F.decide(_row("y", model="org/Other", accelerator_count=1), {"fp16"}, entries).kind == "outside"


# ---- the corpus ---------------------------------------------------------------------------


def test_a_re_import_of_the_corpus_agrees_with_the_bundled_records():
    if not CORPUS.is_dir():
        pytest.skip(f"corpus absent: {CORPUS}")
    cmd = [sys.executable, "-m", "inferkb", "import-community", "--dry-run", "--set", "llm-inference-bench", "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, "INFERKB_NO_CACHE": "1"})
    assert out.returncode == 0, out.stderr
    [one] = json.loads(out.stdout)["sets"]
    assert (one["written"], one["unchanged"]) == (0, 5912)
