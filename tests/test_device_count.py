"""One device-count reader for the load-conditions and physical-plausibility audits: they agree on every record.

Expected counts are read off the records' own text by hand (quoted in each test).
"""

from __future__ import annotations

import pytest

import inferkb
from conftest import RESEARCH, rec, write_kb
from inferkb.audit.conditions_text import assess, device_count
from inferkb.audit.plausibility import device_count as plausibility_count
from inferkb.hardware import record_accelerator_tokens
from inferkb.resolve import engine_names

L4 = rec(
    "accelerator",
    "nvidia-l4",
    name="NVIDIA L4",
    memory_bandwidth_gbps=300,
    flops=[{"precision": "bf16", "tflops": 121, "basis": "derived"}],
)
MI355X = rec("accelerator", "amd-instinct-mi355x", name="AMD Instinct MI355X", aliases=["MI355X"], memory_bandwidth_gbps=8000)
MODEL = rec("model", "dense-8b", architecture="dense", params_b=8, active_params_b=8)
BF16 = rec("quantization", "bf16", scheme="bf16", bits="16", weight_bits=16)


def bench(rid: str, **fields) -> dict:
    base = {"engine_id": "vllm", "metric": "decode_tok_s", "value": 20.0, "unit": "tok/s", "value_scope": "per-request"}
    base.update(model_id="dense-8b", format_id="bf16", model="dense 8B", **fields)
    return rec("benchmark", rid, **base)


def both(kb, rid: str) -> tuple[dict, tuple[int | None, str]]:
    data = kb.get(rid).data
    tokens = record_accelerator_tokens(kb, data)
    hardware = assess(data, engines=engine_names(kb), accelerator_tokens=tokens)["hardware"]
    return hardware, plausibility_count(data, None, tokens)


def _kb(tmp_path, *benches):
    files = {
        f"data/{d}/{r['id']}.json": r
        for d, r in [("accelerators", L4), ("accelerators", MI355X), ("models", MODEL), ("quantization", BF16)]
    }
    files.update({f"data/benchmarks/{b['id']}.json": b for b in benches})
    return inferkb.open(write_kb(tmp_path / "kb", files))


def test_one_l4_is_a_count_of_one_for_both_audits(tmp_path):
    kb = _kb(
        tmp_path, bench("one-l4", name="L4 decode run", accelerator_ids=["nvidia-l4"], methodology="Served on one L4 with vLLM, batch 1.")
    )
    hardware, (count, basis) = both(kb, "one-l4")
    assert hardware.status == "present" and hardware.value == {"accelerators": ["nvidia-l4"], "count": 1}
    assert hardware.evidence == {"field": "methodology", "quote": "one L4"}
    assert count == 1 and "one L4" in basis
    # ... and the audits themselves report it: no KB301 for hardware, and the MBU is over one device.
    report = kb.audit("load-conditions", "physical-plausibility")
    assert not [f for f in report.findings if f.code == "KB301" and f.field == "accelerator_count"]
    assert report.figures["physical-plausibility"]["per_record"]["one-l4"]["devices"] == 1


def test_a_count_of_a_sibling_systems_part_is_not_the_records_count(tmp_path):
    text = "MI355X node; for comparison, the 8xMI325X submission of the same vendor reached 1.3x less."
    kb = _kb(tmp_path, bench("mi355x-run", accelerator_ids=["amd-instinct-mi355x"], methodology=text))
    hardware, (count, basis) = both(kb, "mi355x-run")
    assert hardware.status == "absent" and "count half missing" in hardware.reason
    assert count is None and "not stated" in basis


def test_a_count_of_the_records_own_part_is_kept(tmp_path):
    kb = _kb(tmp_path, bench("mi355x-8", accelerator_ids=["amd-instinct-mi355x"], methodology="Run on 8xMI355X, TP=8."))
    hardware, (count, _) = both(kb, "mi355x-8")
    assert hardware.value == {"accelerators": ["amd-instinct-mi355x"], "count": 8} and count == 8


def test_without_an_accelerator_record_the_vocabulary_decides():
    assert device_count({"name": "run on 4x H100"}).count == 4
    assert device_count({"name": "run on 4x Frobnicator"}).count is None


def test_accelerator_count_wins_over_the_text():
    dev = device_count({"accelerator_count": 2, "methodology": "8x H100"})
    assert (dev.count, dev.field) == (2, "accelerator_count")


# ---- the corpus records on which the two audits disagreed before they shared the reader ----------------
@pytest.fixture(scope="module")
def corpus():
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    return inferkb.open(RESEARCH)


@pytest.mark.parametrize(
    ("rid", "expected"),
    [
        # "16-core Metal 3 GPU": the Metal API version, not three devices (plausibility read 3).
        ("apple-m4-pro-llama3-2-3b-ollama-system-joules-per-token", None),
        # "256-chip pod on 2D torus" in a per-chip specification: the pod's size, not the run's (plausibility read 256).
        ("alt-tpu-v5e-bf16-tps", None),
        # name: "16x MI50 32GB serving DeepSeek-V3.2" (plausibility found no count: it matched only the exact part token).
        ("comm-mi50-16x-deepseek-v32-awq-reported", 16),
        # name: "..., 1x A100" with no accelerator_ids (plausibility found none without an accelerator record).
        ("mpt7b-a100-bs1-per-user-decode-tps", 1),
        # methodology: "on 8x B200 (SM100) with vLLM ... --tensor-parallel-size 1": 8 devices or 1? ambiguous (plausibility read 8).
        ("mxfp4-w4a16-on-w4a16-marlin-aime-math-gsm8k-avg", None),
    ],
)
def test_corpus_device_counts_agree(corpus, rid, expected):
    hardware, (count, _) = both(corpus, rid)
    load_count = hardware.value.get("count") if isinstance(hardware.value, dict) and "ambiguous" not in (hardware.reason or "") else None
    assert load_count == expected and count == expected


def test_every_corpus_and_bundled_record_gets_one_answer(corpus):
    for kb in (corpus, inferkb.open()):
        for r in kb.by_type("benchmark"):
            hardware, (count, _) = both(kb, r.id)
            load_count = (
                hardware.value.get("count") if isinstance(hardware.value, dict) and "ambiguous" not in (hardware.reason or "") else None
            )
            assert load_count == count, r.key
