"""The load-conditions extractor and audit, specified by the real corpus, a hand-labelled gold set and tiny fixtures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from inferkb.audit.conditions_text import CONDITIONS, TEXT_FIELDS, assess

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "inference-research"
GOLD = json.loads((REPO / "tests" / "data" / "conditions_gold.json").read_text(encoding="utf-8"))


def _accuracy_module():
    spec = importlib.util.spec_from_file_location("conditions_accuracy", REPO / "benchmarks" / "conditions_accuracy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus() -> dict[str, dict]:
    if not (CORPUS / "data" / "benchmarks").is_dir():
        pytest.skip(f"inference-research sample corpus not found at {CORPUS} (expected next to the repo in ../shared)")
    return _accuracy_module().load_corpus(CORPUS)


@pytest.fixture(scope="module")
def gold_score(corpus) -> dict:
    return _accuracy_module().score(corpus, GOLD)


def bench(**fields) -> dict:
    """A minimal benchmark record with the given fields."""
    return {"id": "x", "type": "benchmark", "name": "", "sources": ["src-a"], **fields}


def status(record: dict, condition: str) -> str:
    return assess(record)[condition].status


def value(record: dict, condition: str):
    return assess(record)[condition].value


# ---- real corpus ------------------------------------------------------------


def test_every_corpus_record_gets_all_seven_conditions(corpus):
    for rec in corpus.values():
        assert tuple(assess(rec)) == CONDITIONS


def test_every_quote_is_an_exact_substring_of_its_field(corpus):
    for rid, rec in corpus.items():
        for cond, a in assess(rec).items():
            if a.evidence is None:
                continue
            fld, quote = a.evidence["field"], a.evidence["quote"]
            if fld in TEXT_FIELDS:
                assert quote and quote in rec[fld], (rid, cond, quote)
            else:
                node = rec
                for part in fld.split("."):
                    node = node[part]
                assert quote == str(node), (rid, cond, fld)


def test_only_present_carries_a_value_except_the_known_half_of_hardware(corpus):
    for rec in corpus.values():
        for cond, a in assess(rec).items():
            if a.status != "present" and cond != "hardware":
                assert a.value is None, (rec["id"], cond)
            if a.status == "absent":
                assert a.reason and a.recover and a.checked


def test_gold_set_covers_at_least_40_corpus_records(corpus):
    assert len(GOLD["records"]) >= 40
    assert not [rid for rid in GOLD["records"] if rid not in corpus]


def test_no_condition_is_present_where_the_record_says_it_is_not_given(gold_score):
    assert gold_score["negation_violations"] == []


def test_present_precision_on_gold_is_at_least_0_95(gold_score):
    overall = gold_score["overall"]
    print("per-condition precision/recall:", {c: (d["precision"], d["recall"]) for c, d in gold_score["per_condition"].items()})
    assert overall["precision"] >= 0.95, gold_score["disagreements"]


def test_present_recall_on_gold_is_at_least_0_8(gold_score):
    assert gold_score["overall"]["recall"] >= 0.8, gold_score["disagreements"]


def test_earlier_audit_blocks_in_notes_count_as_negations(corpus):
    # alt-tpu-v6e-bf16-tps notes: "- warmup: unrecoverable from asic-tpu-v6e-specs - would need ..."
    a = assess(corpus["alt-tpu-v6e-bf16-tps"])
    assert a["warmup"].status == "absent" and "not given" in a["warmup"].reason


def test_the_mtp_regression_lengths_are_harness_defaults_not_values(corpus):
    a = assess(corpus["ev-vllm-mtp-regression-qwen3-next-80b-a3b"])
    for cond in ("batch_or_concurrency", "input_length", "output_length"):
        assert a[cond].status == "harness-default" and a[cond].value is None
    assert "vllm bench latency" in a["input_length"].reason


# ---- phrasing classes (fixtures) --------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("decode at bs=1", {"batch_size": 1}),
        ("static batch 64", {"batch_size": 64}),
        ("llama.cpp CUDA backend, batch size 1, 512 token prompt", {"batch_size": 1}),
        ("Batch size: 3 (max that fits)", {"batch_size": 3}),
        ("saturated prefill, B=3, cold cache", {"batch_size": 3}),
        ("python main.py --bs 1024 --scenario Offline", {"batch_size": 1024}),
        ("served at concurrency 16", {"concurrency": 16}),
        ("benchmark_serving.py --max-concurrency 1", {"concurrency": 1}),
        ("peak at 500 concurrent users", {"concurrency": 500}),
        ("single-stream decode on one node", {"concurrency": 1}),
        ("one concurrent user, production configuration", {"concurrency": 1}),
    ],
)
def test_batch_or_concurrency_phrasings(text, expected):
    assert value(bench(methodology=text), "batch_or_concurrency") == expected


@pytest.mark.parametrize(
    "text, isl, osl",
    [
        ("TensorRT-LLM, ISL/OSL 1000/1000 uniform", 1000, 1000),
        ("workload ISL 1024 / OSL 128", 1024, 128),
        ("the 1k/1k workload", 1000, 1000),
        ("prompt len 512, output len 64", 512, 64),
        ("latency at 128 input / 2048 output", 128, 2048),
        ("time-to-last-token at 128-in/2048-out", 128, 2048),
        ("512 token prompt, 128 token output", 512, 128),
        ("Requests: 512 input tokens, 64 output tokens, uniform.", 512, 64),
        ("Prompt length ISL = 1000, output length OSL = 1000", 1000, 1000),
        ("benchmark_latency.py --input-len 512 --output-len 512", 512, 512),
        ("Context: 128,000 tokens. Output: 512 tokens.", 128000, 512),
    ],
)
def test_length_phrasings(text, isl, osl):
    rec = bench(methodology=text)
    assert (value(rec, "input_length"), value(rec, "output_length")) == (isl, osl)


def test_llama_bench_pp_is_the_prompt_only_for_a_prefill_figure():
    prefill = bench(name="prompt processing pp512", methodology="llama-bench -p 512 -n 128")
    decode = bench(name="decode tg128", methodology="llama-bench -p 512 -n 128")
    assert value(prefill, "input_length") == 512
    assert status(decode, "input_length") == "absent"
    assert value(decode, "output_length") == 128


def test_a_token_rate_is_not_an_output_length():
    assert status(bench(name="GPT on CS-4: 750 output tokens/sec"), "output_length") == "absent"


def test_a_bound_or_a_sweep_is_not_a_batch_size():
    assert status(bench(name="speedup degradation beyond batch size 32"), "batch_or_concurrency") == "absent"
    assert status(bench(methodology="Speedup measured across batch sizes 1-64."), "batch_or_concurrency") == "absent"


def test_several_values_in_one_field_are_ambiguous_and_absent():
    a = assess(bench(methodology="llama-bench -p 512 and -p 4096, -n 64 and -n 512"))["output_length"]
    assert a.status == "absent" and "ambiguous" in a.reason


def test_the_name_outranks_sibling_points_in_the_methodology():
    rec = bench(name="decode at batch 1, 256 generated tokens", methodology="Sibling points from the same run: tg64, tg128.")
    assert value(rec, "output_length") == 256


@pytest.mark.parametrize(
    "text, count",
    [
        ("hardware 4x NVIDIA H100 80GB HBM3, TP=4", 4),
        ("MLPerf on 8x H200", 8),
        ("8xMI355X_2xEPYC_9575F", 8),
        ("TP=8 on 8 GPUs", 8),
        ("a single GPU, tensor-parallel size 1", 1),
        ("an 8-GPU slice of the rack", 8),
    ],
)
def test_hardware_count_phrasings(text, count):
    rec = bench(accelerator_ids=["nvidia-h100-sxm"], methodology=text)
    assert value(rec, "hardware") == {"accelerators": ["nvidia-h100-sxm"], "count": count}


def test_host_cpus_and_links_are_not_accelerator_counts():
    rec = bench(accelerator_ids=["nvidia-h100-sxm"], methodology="2x Intel Xeon, 10x 400GbE InfiniBand, 4x PCIe 4.0")
    assert status(rec, "hardware") == "absent"


def test_hardware_with_only_one_half_is_absent_and_keeps_the_known_half():
    only_part = assess(bench(accelerator_ids=["groq-lpu"]))["hardware"]
    only_count = assess(bench(methodology="run on 4x H100"))["hardware"]
    assert only_part.status == "absent" and only_part.value == {"accelerators": ["groq-lpu"]} and "count" in only_part.reason
    assert only_count.status == "absent" and only_count.value == {"count": 4} and "accelerator" in only_count.reason


def test_a_node_count_larger_than_the_tp_size_used_is_ambiguous():
    rec = bench(accelerator_ids=["nvidia-b200"], methodology="vLLM --tensor-parallel-size 1 on 8x B200 (SM100).")
    assert status(rec, "hardware") == "absent"


@pytest.mark.parametrize(
    "engine, text, version",
    [
        ("vllm", "vLLM commit ee59a7c61574 on main", "ee59a7c61574"),
        ("vllm", "Engine: vLLM v0.6.3 with chunked prefill", "v0.6.3"),
        ("ollama", "ENGINE: Ollama v0.21.2 wrapping llama.cpp", "v0.21.2"),
        ("tensorrt-llm", "Engine: TensorRT-LLM v0.5.0 (published command line)", "v0.5.0"),
        ("llama-cpp", "llama.cpp release b8400 (commit cf23ee2)", "b8400"),
        ("llama-cpp", "Build: 66906cd8 (b5997), ROCm 6.4.0", "66906cd8 (b5997)"),
        ("vllm", "PyTorch 2.9.1+git8907517, ROCm 7.0.0, vllm-11b6af52", "11b6af52"),
        # issue #8: a branch is what the source says ran (recorded as a branch: it is not pinned to one commit)
        ("tensorrt-llm", "TensorRT-LLM feat/1.2-mlpinf", "branch feat/1.2-mlpinf"),
    ],
)
def test_engine_version_phrasings(engine, text, version):
    assert value(bench(engine_id=engine, methodology=text), "engine_version") == version


def test_a_version_of_another_tool_or_a_lower_bound_is_not_the_engine_version():
    assert status(bench(engine_id="tensorrt-llm", methodology="TensorRT 10.11, CUDA 12.9"), "engine_version") == "absent"
    assert status(bench(engine_id="sglang", methodology="Engine: SGLang v0.4+ with PD"), "engine_version") == "absent"


@pytest.mark.parametrize(
    "text, expected",
    [("trtllm-bench --warm_up 1 --num_runs 5", 1), ("warmup 10 iters before timing", 10), ("5 warmup requests", 5), ("no warmup", False)],
)
def test_warmup_phrasings(text, expected):
    assert value(bench(methodology=text), "warmup") == expected


def test_model_from_the_structured_field_from_the_name_and_a_placeholder():
    assert assess(bench(model="Llama 3.1 8B"))["model"].evidence == {"field": "model", "quote": "Llama 3.1 8B"}
    assert value(bench(model=None, name="MI300X vs H100, vLLM, Llama 3.1 70B FP8 TP8"), "model") == "Llama 3.1 70B"
    assert status(bench(model="N/A (peak compute specification)"), "model") == "absent"


def test_structured_conditions_win_and_quote_their_field():
    rec = bench(
        accelerator_ids=["nvidia-h100-sxm"],
        accelerator_count=2,
        conditions={"batch_size": 8, "input_tokens": 1024, "output_tokens": 128, "warmup": 3},
        environment={"engine_version": "0.6.3"},
        methodology="batch size 1",
    )
    a = assess(rec)
    assert a["batch_or_concurrency"].value == {"batch_size": 8}
    assert a["hardware"].value == {"accelerators": ["nvidia-h100-sxm"], "count": 2}
    assert (a["input_length"].value, a["output_length"].value, a["warmup"].value) == (1024, 128, 3)
    assert a["engine_version"].evidence == {"field": "environment.engine_version", "quote": "0.6.3"}


# ---- negation and harness defaults ------------------------------------------


@pytest.mark.parametrize(
    "text, condition",
    [
        ("batch 64 in an earlier run; batch size not stated for this one", "batch_or_concurrency"),
        ("No prompt length, output length or concurrency level is given in the source", "input_length"),
        ("No prompt length, output length or concurrency level is given in the source", "output_length"),
        ("Runs at unknown concurrency, 512 token prompt", "batch_or_concurrency"),
        ("Warmup not given.", "warmup"),
        ("OMITTED BY SOURCE: TP size, KV dtype, concurrency; batch size beyond the implicit 1", "batch_or_concurrency"),
        ("Prompt length 2000 tokens; output length NOT stated by the source.", "output_length"),
        ("OMITTED BY SOURCE: exact llama.cpp commit and ROCm version, prompt length, generation length", "input_length"),
    ],
)
def test_a_condition_the_text_says_is_not_given_is_never_present(text, condition):
    a = assess(bench(engine_id="llama-cpp", methodology=text))[condition]
    assert a.status == "absent" and a.value is None


def test_negation_in_one_clause_does_not_hide_a_value_in_the_next():
    rec = bench(methodology="Prompt length 2000 tokens; output length NOT stated by the source.")
    assert value(rec, "input_length") == 2000


def test_a_stated_value_is_not_negated_by_a_later_not_fixed_in_the_same_sentence():
    rec = bench(methodology="TP=1, ISL/OSL 1000/1000 uniform, 3000 requests, so concurrency is NOT fixed and not stated.")
    assert (value(rec, "input_length"), status(rec, "batch_or_concurrency")) == (1000, "absent")


def test_harness_default_is_an_assumption_with_no_value():
    rec = bench(
        methodology="Measured with `vllm bench latency`. No prompt length or concurrency is given, "
        "so this is a latency-at-the-harness-default shape measurement."
    )
    a = assess(rec)
    for cond in ("input_length", "batch_or_concurrency"):
        assert a[cond].status == "harness-default" and a[cond].value is None
        assert "vllm bench latency" in a[cond].reason and a[cond].evidence["quote"] in rec["methodology"]


def test_batch_implied_by_a_harness_but_never_stated_is_harness_default():
    rec = bench(
        methodology="PER-REQUEST, batch size 1. OMITTED BY SOURCE: batch size is implied 1 by "
        "benchmark_latency.py but never stated; vLLM versions."
    )
    a = assess(rec)["batch_or_concurrency"]
    assert a.status == "harness-default" and "benchmark_latency.py" in a.reason


def test_absent_reason_names_the_sources_cited():
    a = assess(bench(sources=["bench-x", "bench-y"]))["warmup"]
    assert "bench-x, bench-y" in a.reason and a.recover


def test_missing_and_null_fields_never_raise():
    for rec in ({}, {"name": None, "methodology": None, "unit": None, "notes": None, "accelerator_ids": None}):
        assert tuple(assess(rec)) == CONDITIONS


# ---- the audit ----------------------------------------------------------------


def _real_kb(tmp_path, records: list[dict]):
    import inferkb
    from conftest import write_kb

    return inferkb.open(write_kb(tmp_path / "kb", {f"data/benchmarks/{r['id']}.json": r for r in records}))


def test_audit_reports_absent_default_and_from_text_with_figures(tmp_path):
    from inferkb.audit.load_conditions import run

    full = bench(
        id="full",
        model="Llama 3.1 8B",
        engine_id="vllm",
        accelerator_ids=["nvidia-h100-sxm"],
        methodology="1x H100, vLLM 0.6.3, batch size 1, ISL/OSL 512/128, --warm_up 2",
    )
    empty = bench(id="empty", sources=["src-b"])
    result = run(_real_kb(tmp_path, [full, empty]))
    fig = result.figures
    assert fig["records"] == 2 and fig["complete"] == ["benchmarks/full"]
    assert fig["absent_by_condition"]["warmup"] == 1 and fig["present_from_text_by_condition"]["warmup"] == 1
    absent = [f for f in result.findings if f.code == "KB301" and f.record == "benchmarks/empty"]
    assert len(absent) == 7
    warm = next(f for f in absent if f.field == "conditions.warmup")
    assert warm.severity == "warning" and "src-b" in warm.message and "--warm_up" in warm.message
    from_text = [f for f in result.findings if f.code == "KB303"]
    assert from_text and all(f.evidence["quote"] in full[f.evidence["field"]] for f in from_text if f.field != "model")


def test_rules_are_registered_with_examples():
    from inferkb.audit import load_conditions  # noqa: F401 - registers the rules
    from inferkb.rules import RULES

    for code, sev in (("KB301", "warning"), ("KB302", "info"), ("KB303", "info")):
        rule = RULES[code]
        assert rule.severity == sev and rule.summary and rule.rationale and rule.passing and rule.failing
