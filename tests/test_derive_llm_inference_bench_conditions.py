"""llm-inference-bench-conditions: warmup, dataset and engine_version of Argonne rows, from the program their script runs.

The rows are the bundled KB's, imported from the corpus CSVs; a row "before" the derivation is rebuilt from the
bundled one by dropping this derivation's values and provenance and taking back the importer's gaps from a row the
derivation never touches (one outside every script's loops). The expected values are read off the repository files
by hand (the quoted lines in the test names' comments), not computed through the module under test.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb import derive
from inferkb.derive import llm_inference_bench_conditions as C
from inferkb.errors import InputError
from inferkb.intake import llm_inference_bench_formats as F

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "src" / "inferkb" / "kb" / "data" / "benchmarks"
CORPUS = REPO.parent / "shared" / "corpus"
TAG = f"derive:{C.NAME}"
TODAY = dt.date(2026, 12, 3)
LLAMA_MI250 = "lib-throughput-amd-mi250-x2-llama-cpp-llama-2-7b-hf-in128-out128-bs1"
VLLM_H100 = "lib-throughput-nvidia-h100-x1-vllm-llama-2-7b-hf-in128-out128-bs1"
TRT_H100 = "lib-power-nvidia-h100-x1-tensorrt-llm-llama-2-7b-hf-in1024-out1024-bs1"
# vLLM on one MI250 module: the MI250 script's TP loop is [4, 8] GCDs (2 or 4 modules), so this row is outside it.
OUTSIDE = "lib-throughput-amd-mi250-x1-vllm-llama-2-7b-hf-in128-out128-bs1"


def _load(rid: str) -> dict:
    return json.loads((BENCH / f"{rid}.json").read_text(encoding="utf-8"))


def _before(rid: str) -> dict:
    """The bundled row as the importer (and the earlier derivations) left it: nulls and the importer's gaps."""
    rec, outside = _load(rid), _load(OUTSIDE)
    rec["provenance"] = [e for e in rec["provenance"] if e.get("tag") != TAG]
    for name in C.CONDITIONS:
        rec["conditions"][name] = None
        rec["condition_gaps"][name] = copy.deepcopy(outside["condition_gaps"][name])
    return rec


def _final(proposals: list, field: str) -> object:
    return [p for p in proposals if p.field == field][-1].value


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


# ---- the bundled KB, after `derive llm-inference-bench-conditions --write` ----------------------------------


def test_a_filled_llama_cpp_row_carries_llama_benchs_quoted_lines(bundled):
    rec = bundled.resolve(f"benchmarks/{LLAMA_MI250}").data
    # llama-bench.cpp: "// warmup run" then one test_prompt and test_gen(ctx, 1, ...); tokens are std::rand() % n_vocab.
    assert (rec["conditions"]["warmup"], rec["conditions"]["dataset"], rec["conditions"]["engine_version"]) == (1, "random", None)
    assert "warmup" not in rec["condition_gaps"] and "dataset" not in rec["condition_gaps"]
    entries = {e["basis"].split(":")[0]: e for e in rec["provenance"] if e.get("tag") == TAG and e["field"] == "conditions"}
    warm = entries["conditions.warmup = 1"]
    assert warm["action"] == "backfill" and warm["numbers_changed"] is False
    assert "ggerganov/llama.cpp/examples/llama-bench/llama-bench.cpp@440b00ab9410ba38c9d2f2c27a2cd43eabd2d9bf" in warm["basis"]
    assert "'// warmup run'" in warm["basis"] and "llama.cpp/MI250/llama2-7b.sh@" in warm["basis"]
    assert "'tokens[i] = std::rand() % n_vocab;'" in entries["conditions.dataset = 'random'"]["basis"]


def test_a_filled_vllm_row_quotes_the_argparse_default_its_script_leaves_alone(bundled):
    rec = bundled.resolve(f"benchmarks/{VLLM_H100}").data
    assert rec["conditions"]["warmup"] == 10 and rec["conditions"]["dataset"] == "random"
    warm = next(e for e in rec["provenance"] if e.get("tag") == TAG and e["basis"].startswith("conditions.warmup"))
    assert "vLLM/H100/benchmark_latency.py@763c03df" in warm["basis"] and "'default=10,'" in warm["basis"]
    assert "passes none of --num-iters-warmup" in warm["basis"]


def test_an_unsettled_engine_version_stays_null_with_the_files_read_in_its_gap(bundled):
    gap = bundled.resolve(f"benchmarks/{VLLM_H100}").data["condition_gaps"]["engine_version"]
    assert "'pip install vllm' (no version)" in gap["reason"]
    assert gap["checked"][:3] == ["the CSV row", "the CSV header", "community/SOURCES.md"]
    assert "argonne-lcf/LLM-Inference-Bench/vLLM/H100/README.MD@763c03df0bb4b290c8484d2c5b60ec2efdf009e4" in gap["checked"]


def test_a_pinned_engine_version_is_filled_from_the_pinning_line(bundled):
    rec = bundled.resolve(f"benchmarks/{TRT_H100}").data
    # TensorRT-LLM/H100/requirements.txt: "tensorrt_llm==0.11.0"; run_power.py: an untimed generate, then ite = 1 warmup.
    assert (rec["conditions"]["engine_version"], rec["conditions"]["warmup"]) == ("0.11.0", 2)
    assert "engine_version" not in rec["condition_gaps"]


def test_a_row_outside_its_scripts_loops_is_not_touched(bundled):
    rec = bundled.resolve(f"benchmarks/{OUTSIDE}").data
    assert [rec["conditions"][n] for n in C.CONDITIONS] == [None, None, None]
    assert not [e for e in rec.get("provenance", []) if e.get("tag") == TAG]
    assert rec["condition_gaps"]["warmup"]["reason"] == "the CSVs and the dashboard state no warmup"


def test_the_derivation_has_nothing_left_to_do_on_the_bundled_kb(bundled):
    res = derive.run(bundled, C.NAME)
    assert res.changes == [] and res.proof.ok


def test_a_re_import_of_the_data_set_writes_nothing():
    if not (CORPUS / "community" / "argonne-LLM-Inference-Bench").is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    from inferkb.intake.community import import_community

    reports = import_community(inferkb.open(), CORPUS, dry_run=True, only=["llm-inference-bench"])
    assert [(r.name, r.written) for r in reports] == [("llm-inference-bench", 0)]


# ---- decide() and a small KB of rebuilt rows ---------------------------------------------------------------


def test_a_stated_value_is_never_overwritten():
    rec = _before(VLLM_H100)
    rec["conditions"]["warmup"] = 5
    proposals, why = C.decide(rec, C.conditions_map(), F.group_map())
    cond = _final(proposals, "conditions")
    assert cond["warmup"] == 5 and cond["dataset"] == "random" and why == []
    assert not [p for p in proposals if p.basis.startswith("conditions.warmup")]
    assert "warmup" in _final(proposals, "condition_gaps")


def test_a_script_line_that_passes_the_override_flag_is_reported_not_filled():
    text = F.MAP_PATH.read_text(encoding="utf-8").replace("--trust-remote-code'''", "--num-iters-warmup=2 --trust-remote-code'''")
    groups = F.parse_map(text, path="groups.toml")
    proposals, why = C.decide(_before(VLLM_H100), C.conditions_map(), groups)
    assert _final(proposals, "conditions")["warmup"] is None
    assert len(why) == 1 and "passes --num-iters-warmup" in why[0]


def test_write_then_rerun_on_rebuilt_rows(tmp_path):
    rows = [_before(LLAMA_MI250), _before(TRT_H100), _load(OUTSIDE)]
    root = make_kb(tmp_path / "kb", rows)
    outside = (root / "data" / "benchmarks" / f"{OUTSIDE}.json").read_bytes()
    res = derive.run(inferkb.open(root, cache=False), C.NAME, write=True, today=TODAY)
    assert res.written and res.proof.ok
    assert set(res.proof.changed_fields()) == {"conditions", "condition_gaps", "provenance"}
    written = json.loads((root / "data" / "benchmarks" / f"{TRT_H100}.json").read_text(encoding="utf-8"))
    assert written["conditions"]["dataset"] == "synthetic: the word 'France' repeated to the input length"
    assert (root / "data" / "benchmarks" / f"{OUTSIDE}.json").read_bytes() == outside
    again = derive.run(inferkb.open(root, cache=False), C.NAME, write=True, today=TODAY)
    assert again.changes == [] and not again.written


# ---- the map ----------------------------------------------------------------------------------------------


def test_every_group_of_the_group_map_has_an_entry_for_every_condition():
    keys = {g.key for g in F.group_map()}
    assert {(n, *k) for n in C.CONDITIONS for k in keys} == set(C.conditions_map())


def test_every_value_cites_a_pinned_file_and_every_null_the_files_read():
    for entry in C.conditions_map().values():
        if entry.settled:
            assert len(entry.commit) == 40 and entry.quotes and entry.evidence
        else:
            assert entry.checked and all("@" in c for c in entry.checked) and entry.recover


BASE = C.MAP_PATH.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "field", "said"),
    [
        ("recover = \"the vLLM version of the authors' H100", "nope = \"the vLLM version of the authors' H100", ".recover", "recover"),
        ('framework = "vLLM"', 'framework = "vLLLM"', "condition[0].framework", "unknown framework 'vLLLM'"),
        ('hardware = ["Nvidia H100 GPU"]', 'hardware = ["Nvidia H200 GPU"]', "condition[0].hardware", "no group"),
        ('quotes = ["parser', 'quotes = ["a\\nb", "parser', "condition[0].quotes", "one line"),
        ('quotes = ["parser', 'quotes = [1, "parser', "condition[0].quotes", "quotes"),
        ('condition = "warmup"', 'condition = "warmups"', "condition[0].condition", "unknown condition"),
        ("value = 10\n", 'value = 10\nreason = "x"\n', "condition[0]", "exactly one of"),
        ("value = 10\n", "value = -1\n", "condition[0].value", "whole number"),
        ('commit = "763c03df0bb4b290c8484d2c5b60ec2efdf009e4"', 'commit = "763c03df"', "condition[0].commit", "40"),
        ('absent_flags = ["--num-iters-warmup"]', 'absent_flags = ["num-iters"]', "condition[0].absent_flags", "flags"),
    ],
)
def test_an_unusable_map_is_an_input_error_naming_file_and_field(old, new, field, said):
    assert old in BASE
    with pytest.raises(InputError) as exc:
        C.parse_map(BASE.replace(old, new, 1), path="conditions.toml")
    assert exc.value.path == "conditions.toml" and exc.value.field.endswith(field) and said in str(exc.value)


def test_a_duplicate_entry_is_an_input_error():
    first = BASE.index("\n[[condition]]\n")
    second = BASE.index("\n[[condition]]\n", first + 1)
    with pytest.raises(InputError, match="two entries"):
        C.parse_map(BASE + "\n" + BASE[first:second], path="conditions.toml")


def test_a_broken_map_is_exit_2_on_the_cli(monkeypatch, capsys):
    from inferkb.cli import main

    monkeypatch.setattr(C, "conditions_map", lambda: C.parse_map("[[condition]\n", path="conditions.toml"))
    with pytest.raises(SystemExit) as exc:
        main(["derive", C.NAME])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "conditions.toml" in err and "Traceback" not in err
