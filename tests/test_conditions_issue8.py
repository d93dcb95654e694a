"""Load-conditions phrasings from issue #8 that were missed: device counts in chips/cards/instances, sweeps, a laptop;
engine versions as 'build <hash>' or a branch."""

from __future__ import annotations

import pytest

from inferkb.audit.conditions_text import assess, device_count


def bench(**fields) -> dict:
    return {"id": "x", "type": "benchmark", "name": "", "sources": ["src-a"], **fields}


@pytest.mark.parametrize(
    "text, count",
    [
        ("Llama-3-70B on a 12-chip instance (inf2.48xlarge), TP=12", 12),
        ("served on 16 Trainium2 chips with NxD Inference", 16),
        ("decode on 8 AMD MI300X accelerators", 8),
        ("a single laptop, llama.cpp with Metal", 1),
        ("one card, vLLM 0.8.3", 1),
    ],
)
def test_device_count_phrasings_of_issue_8(text, count):
    dev = device_count(bench(methodology=text))
    assert dev.count == count, dev.reason


def test_a_sweep_over_device_counts_is_ambiguous_and_says_so():
    dev = device_count(bench(methodology="Throughput scales from 2 to 4 to 6 to 8 cards with TP equal to the card count."))
    assert dev.count is None
    assert dev.reason.startswith("ambiguous count: a sweep over 2, 4, 6, 8 devices")


def test_a_pod_size_is_still_not_the_runs_count():
    assert device_count(bench(methodology="256-chip pod on 2D torus with ICI")).count is None


def test_hardware_is_present_with_a_chip_count_and_an_accelerator():
    a = assess(bench(accelerator_ids=["aws-trainium2"], methodology="served on 16 Trainium2 chips"))["hardware"]
    assert a.status == "present" and a.value == {"accelerators": ["aws-trainium2"], "count": 16}
    assert a.evidence == {"field": "methodology", "quote": "16 Trainium2 chips"}


@pytest.mark.parametrize(
    "engine, text, version",
    [
        ("llama-cpp", "llama-bench, build 66906cd8, Vulkan backend", "66906cd8"),
        ("vllm", "vLLM build 66906cd8 with chunked prefill", "66906cd8"),
        ("sglang", "SGLang branch deepseek-v3 with DP attention", "branch deepseek-v3"),
        ("vllm", "vLLM from the main branch, nightly wheel", "branch main"),
        ("vllm", "vLLM v0.6.3 built from the main branch", "v0.6.3"),
    ],
)
def test_engine_version_as_build_or_branch(engine, text, version):
    a = assess(bench(engine_id=engine, methodology=text))["engine_version"]
    assert a.status == "present" and a.value == version


def test_a_build_word_without_a_hash_is_not_a_version():
    assert assess(bench(engine_id="llama-cpp", methodology="llama.cpp build with CUDA 12.4"))["engine_version"].status == "absent"
