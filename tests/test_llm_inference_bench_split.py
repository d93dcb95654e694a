"""llm-inference-bench-split: interconnect_exercised of Argonne rows whose engine split each run over 2+ devices.

The fixture maps are hand-written: a llama.cpp group that counts two script devices per CSV count (the MI250: two
GCDs per module) and a split map entry for llama.cpp. The expected values are read off them, not computed through the
module under test.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb import derive
from inferkb.derive import llm_inference_bench_split as S
from inferkb.errors import InputError
from inferkb.intake import llm_inference_bench_formats as F
from test_llm_inference_bench_format import SHA, TODAY, _row

CORPUS_CSV = (
    Path(__file__).resolve().parents[2]
    / "shared/corpus/community/argonne-LLM-Inference-Bench/gh-pages/docs/data/Throughput/All_results.csv"
)

GROUPS = f'''
[[group]]
table = "Throughput"
framework = "llama.cpp"
hardware = "AMD MI250 GPU"
format = "fp16"
models = ["org/Seven"]
device_counts = [2, 4]
devices_per_count = 2
devices_per_count_evidence = "two GCDs per module"
batch_sizes = [1, 16]
lengths = [128, 256]
repo = "argonne-lcf/LLM-Inference-Bench"
path = "llama.cpp/MI250/seven.sh"
commit = "{SHA}"
quote = 'CUDA_VISIBLE_DEVICES=$CVD ./llama-bench -m seven_f16.gguf -b $batch_size -r 1 -o csv'
evidence = "the script runs llama-bench with CUDA_VISIBLE_DEVICES in '0,1' '0,1,2,3'"

[[group]]
table = "Throughput"
framework = "vLLM"
hardware = "AMD MI250 GPU"
format = "fp16"
models = ["org/Seven"]
device_counts = [1, 2, 4]
devices_per_count = 2
devices_per_count_evidence = "two GCDs per module"
batch_sizes = [1, 16]
lengths = [128, 256]
repo = "argonne-lcf/LLM-Inference-Bench"
path = "vLLM/MI250/run.sh"
commit = "{SHA}"
quote = 'python3 bench.py --dtype="float16"'
evidence = "the script passes --dtype float16"
'''
SPLIT = f'''
[[engine]]
framework = "llama.cpp"
flags = ["-ngl", "-sm", "--split-mode"]
repo = "ggerganov/llama.cpp"
path = "examples/llama-bench/llama-bench.cpp"
commit = "{SHA}"
quotes = ["/* split_mode */ {{LLAMA_SPLIT_MODE_LAYER}},"]
evidence = "layers are split over every visible device by default"
'''


def _lib(rid: str, framework: str, count: int, exercised: object = "absent") -> dict:
    rec = _row(rid, format_id="fp16", accelerator_count=count, hardware_raw="AMD MI250 GPU")
    rec["engine_id"] = "llama-cpp" if framework == "llama.cpp" else "vllm"
    rec["environment"] = {"framework": framework}
    del rec["condition_gaps"]["format_id"]
    if exercised != "absent":
        rec["interconnect_exercised"] = exercised
    return rec


ROWS = [
    _lib("l-one-module", "llama.cpp", 1, False),
    _lib("l-two-modules", "llama.cpp", 2),
    _lib("l-outside", "llama.cpp", 3, False),
    _lib("v-one-module", "vLLM", 1, False),
]


def _kb(tmp_path, monkeypatch, groups: str = GROUPS, split: str = SPLIT) -> Path:
    monkeypatch.setattr(F, "group_map", lambda: F.parse_map(groups, path="groups.toml"))
    monkeypatch.setattr(S, "split_map", lambda: S.parse_map(split, path="split.toml"))
    return make_kb(tmp_path / "kb", copy.deepcopy(ROWS))


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_a_stated_false_on_one_module_split_over_its_two_gcds_becomes_true_as_a_correction(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch)
    res = derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    assert res.proof.ok and set(res.proof.changed_fields()) == {"interconnect_exercised", "provenance"}
    one = _rec(root, "l-one-module")
    assert one["interconnect_exercised"] is True
    entry = one["provenance"][-1]
    assert (entry["tag"], entry["field"], entry["action"], entry["numbers_changed"]) == (
        f"derive:{S.NAME}",
        "interconnect_exercised",
        "correction",
        False,
    )
    assert entry["evidence"] == {"field": "accelerator_count", "quote": "1"}
    assert "1 x 2 = 2 script devices" in entry["basis"] and "in-package GCD-GCD link" in entry["basis"]
    assert f"ggerganov/llama.cpp/examples/llama-bench/llama-bench.cpp@{SHA}" in entry["basis"]


def test_an_absent_value_on_two_modules_is_a_backfill(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch)
    derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    two = _rec(root, "l-two-modules")
    assert two["interconnect_exercised"] is True and two["provenance"][-1]["action"] == "backfill"


@pytest.mark.parametrize("rid", ["v-one-module", "l-outside"])
def test_a_false_without_split_evidence_stays_byte_for_byte(tmp_path, monkeypatch, rid):
    # vLLM has no split entry (its one-module MI250 rows come from an unpublished run); 3 modules is outside the loops.
    root = _kb(tmp_path, monkeypatch)
    path = root / "data" / "benchmarks" / f"{rid}.json"
    old = path.read_bytes()
    derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    assert path.read_bytes() == old


def test_a_script_line_that_sets_the_split_itself_is_reported_not_derived(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch, groups=GROUPS.replace("-r 1 -o csv", "-sm none -r 1 -o csv"))
    res = derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    assert res.changes == [] and _rec(root, "l-one-module")["interconnect_exercised"] is False
    found = [f for f in res.findings if f.record == "benchmarks/l-one-module"]
    assert found and found[0].code == "KB1002" and "passes -sm" in found[0].message


def test_a_second_run_changes_nothing(tmp_path, monkeypatch):
    root = _kb(tmp_path, monkeypatch)
    derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    again = derive.run(inferkb.open(root, cache=False), S.NAME, write=True, today=TODAY)
    assert again.changes == [] and not again.written


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (SPLIT.replace(f'commit = "{SHA}"', 'commit = "abc"'), "engine[0].commit"),
        (SPLIT.replace('flags = ["-ngl", "-sm", "--split-mode"]', "flags = []"), "engine[0].flags"),
        (SPLIT.replace("quotes = [", "quotes = [1, "), "engine[0].quotes"),
        (SPLIT + SPLIT, "engine[1].framework"),
        (SPLIT.replace('evidence = "layers', 'evidence = ""\nx = "layers'), "engine[0].evidence"),
    ],
)
def test_an_unusable_split_map_is_an_input_error_naming_file_and_field(tmp_path, monkeypatch, text, field):
    root = _kb(tmp_path, monkeypatch, split=text)
    with pytest.raises(InputError) as exc:
        derive.run(inferkb.open(root, cache=False), S.NAME)
    assert exc.value.path == "split.toml" and exc.value.field == field


def test_a_broken_split_map_is_exit_2_on_the_cli(tmp_path, monkeypatch, capsys):
    from inferkb.cli import main

    root = _kb(tmp_path, monkeypatch, split="[[engine]\n")
    with pytest.raises(SystemExit) as exc:
        main(["derive", S.NAME, "--kb", str(root)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "split.toml" in err and "Traceback" not in err


# ---- the bundled map, KB and corpus ----------------------------------------------------


def test_the_bundled_map_quotes_llama_benchs_defaults():
    entry = S.split_map()["llama.cpp"]
    assert entry.repo == "ggerganov/llama.cpp" and len(entry.commit) == 40
    assert any("LLAMA_SPLIT_MODE_LAYER" in q for q in entry.quotes) and any("{99}" in q for q in entry.quotes)


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def test_bundled_mi250_rows_on_one_module(bundled):
    rows = [r.data for r in bundled.by_type("benchmark") if r.data.get("origin") == "llm-inference-bench"]
    one = [d for d in rows if d.get("hardware_raw") == "AMD MI250 GPU" and d.get("accelerator_count") == 1]
    by_engine: dict[tuple[str, object], int] = {}
    for d in one:
        key = (d["engine_id"], d.get("interconnect_exercised"))
        by_engine[key] = by_engine.get(key, 0) + 1
    # llama.cpp ran on CUDA_VISIBLE_DEVICES "0,1" (both GCDs) with llama-bench's layer split: true (100 rows);
    # vLLM's one-module rows are outside the script's TP loop [4, 8] and one module is two GCDs: the false that
    # read accelerator_count 1 as one device is now null, with a gap (124 rows).
    assert by_engine == {("llama-cpp", True): 100, ("vllm", None): 124}
    nulls = [d for d in one if d["engine_id"] == "vllm"]
    assert all("interconnect_exercised" in d["condition_gaps"] for d in nulls)
    assert all(any(e["tag"] == f"derive:{S.NAME}" and e["action"] == "correction" for e in d["provenance"]) for d in nulls)


def test_the_derivation_has_nothing_left_to_do_on_the_bundled_kb(bundled):
    res = derive.run(bundled, S.NAME)
    assert res.changes == [] and res.proof.ok


def test_the_corpus_holds_the_one_module_mi250_llama_cpp_rows():
    if not CORPUS_CSV.is_file():
        pytest.skip(f"corpus CSV not present at {CORPUS_CSV}")
    with CORPUS_CSV.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Hardware"] == "AMD MI250 GPU" and r["Framework"] == "llama.cpp"]
    counts = {int(r["Num of Hardware"]) for r in rows}
    assert 1 in counts and sum(int(r["Num of Hardware"]) == 1 for r in rows) == 100


# ---- a false that read one MI250 module as one device ----------------------------------------------------

MI250_VLLM_ONE = "lib-throughput-amd-mi250-x1-vllm-llama-2-7b-hf-in128-out128-bs1"


def _as_before(bundled: inferkb.KB) -> dict:
    """The bundled row as interconnect-ids left it: its false, without this derivation's correction and gap."""
    data = copy.deepcopy(bundled.resolve(f"benchmarks/{MI250_VLLM_ONE}").data)
    data["interconnect_exercised"] = False
    data["provenance"] = [e for e in data["provenance"] if e.get("tag") != f"derive:{S.NAME}"]
    del data["condition_gaps"]["interconnect_exercised"]
    return data


def test_a_single_device_false_on_one_two_gcd_module_outside_the_loops_becomes_null_with_a_gap(bundled):
    value, gaps = S.unsupported_false(_as_before(bundled), 2)
    assert (value.field, value.value, value.action) == ("interconnect_exercised", None, "correction")
    gap = gaps.value["interconnect_exercised"]
    assert "vLLM/MI250/run-throughput-bench.sh (at 508e7e2eb28c)" in gap["checked"]
    assert "device counts [4, 8]" in gap["reason"] and "one device or split" in gap["reason"]


def test_a_false_not_derived_from_a_single_device_reading_stays(bundled):
    data = _as_before(bundled)
    data["provenance"] = [e for e in data["provenance"] if e.get("tag") != "derive:interconnect-ids"]
    assert S.unsupported_false(data, 2) == []


@pytest.mark.parametrize(("key", "value", "per"), [("tensor_parallel", 1, 2), (None, None, 1)])
def test_a_stated_tp_or_a_one_device_accelerator_keeps_the_false(bundled, key, value, per):
    data = _as_before(bundled)
    if key:
        data["conditions"][key] = value
    assert S.unsupported_false(data, per) == []
