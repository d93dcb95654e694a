"""metric-consistency audit (KB401-KB406): one behaviour per test, tiny inline KBs, then the real corpus."""

from __future__ import annotations

import pytest

import inferkb
from conftest import rec, write_kb

AUDIT = "metric-consistency"


def bench(rid: str, **fields) -> dict:
    base = {
        "engine_id": "vllm",
        "metric": "decode_tok_s",
        "value": 42.0,
        "unit": "tok/s (per-request, batch 1)",
        "methodology": "",
        "notes": "",
    }
    base.update(fields)
    return rec("benchmark", rid, **base)


def findings(tmp_path, *records: dict, code: str | None = None):
    files = {f"data/benchmarks/{r['id']}.json": r for r in records}
    kb = inferkb.open(write_kb(tmp_path / "kb", files))
    out = kb.audit(AUDIT).findings
    return [f for f in out if code is None or f.code == code]


def test_ttft_metric_whose_unit_describes_end_to_end_latency_is_flagged(tmp_path):
    hits = findings(tmp_path, bench("x", metric="ttft_ms", value=894.0, unit="ms average end-to-end latency (0.894 s)"), code="KB401")
    assert [f.record for f in hits] == ["benchmarks/x"]
    assert hits[0].evidence["field"] == "unit" and "end-to-end" in hits[0].evidence["quote"]


def test_ttft_metric_whose_unit_describes_first_token_passes(tmp_path):
    assert (
        findings(tmp_path, bench("x", metric="ttft_ms", value=46.0, unit="milliseconds to first token (512-token prompt)"), code="KB401")
        == []
    )


def test_rate_metric_whose_unit_is_peak_flops_is_flagged(tmp_path):
    assert len(findings(tmp_path, bench("x", metric="tps_aggregate", value=197, unit="TFLOPS BF16"), code="KB401")) == 1


def test_rate_metric_carrying_a_multiple_is_flagged(tmp_path):
    hits = findings(
        tmp_path, bench("x", metric="tps_aggregate", value=13.4, unit="x MULTIPLE of the true steady-state tok/s"), code="KB402"
    )
    assert len(hits) == 1


def test_rate_metric_with_a_plain_rate_unit_is_not_a_ratio(tmp_path):
    assert findings(tmp_path, bench("x", metric="tps_aggregate", value=800, unit="output tokens/s aggregate"), code="KB402") == []


def test_speedup_without_a_named_baseline_is_flagged(tmp_path):
    assert len(findings(tmp_path, bench("x", metric="speedup_ratio", value=1.38, unit="x"), code="KB403")) == 1


def test_speedup_naming_its_baseline_in_the_unit_passes(tmp_path):
    r = bench("x", metric="speedup_ratio", value=1.38, unit="x the BASELINE throughput (same build without EAGLE-3)")
    assert findings(tmp_path, r, code="KB403") == []


def test_quoted_percentage_that_the_figures_do_not_reproduce_is_flagged(tmp_path):
    # (1.578 - 0.894) / 0.894 = +76.5%, so +67.5% is a transposition.
    r = bench(
        "x",
        metric="ttft_ms",
        value=894.0,
        unit="ms to first token",
        methodology="baseline avg 0.894 s / P50 0.895; with MTP avg 1.578 s (+67.5%) / P50 1.573",
    )
    hits = findings(tmp_path, r, code="KB404")
    assert len(hits) == 1
    assert hits[0].extra["quoted_pct"] == 67.5 and hits[0].extra["closest_pct"] == pytest.approx(76.51, abs=0.01)


def test_quoted_percentage_reproduced_within_rounding_passes(tmp_path):
    r = bench(
        "x",
        metric="ttft_ms",
        value=894.0,
        unit="ms to first token",
        methodology="baseline avg 0.894 s; MTP avg 1.578 s (+76.5%); MTP plus prefix caching avg 1.629 s (+82.2%)",
    )
    assert findings(tmp_path, r, code="KB404") == []


def test_quoted_percentage_may_use_the_record_value_as_baseline(tmp_path):
    # value 6853 tok/s; (6765 - 6853) / 6853 = -1.28% -> quoted -1.3% is right.
    r = bench(
        "x",
        metric="prefill_tok_s",
        value=6853.0,
        unit="tok/s prefill (single stream)",
        notes="re-running the identical config reads 6,765 tok/s (-1.3%)",
    )
    assert findings(tmp_path, r, code="KB404") == []


def test_percentage_in_text_is_checked_against_computed_arm_deltas(tmp_path):
    arms = [{"id": "baseline", "stats": {"mean": 0.894}}, {"id": "mtp", "stats": {"mean": 1.578}}]
    wrong = bench(
        "wrong",
        metric="e2e_latency_ms",
        value=894.0,
        unit="ms end-to-end",
        arms=arms,
        baseline_arm="baseline",
        notes="speculation makes latency +50% worse",
    )
    right = bench(
        "right",
        metric="e2e_latency_ms",
        value=894.0,
        unit="ms end-to-end",
        arms=arms,
        baseline_arm="baseline",
        notes="speculation makes latency +76.5% worse",
    )
    hits = findings(tmp_path, wrong, right, code="KB404")
    assert [f.record for f in hits] == ["benchmarks/wrong"]


def test_zero_rate_is_flagged(tmp_path):
    assert len(findings(tmp_path, bench("x", value=0, unit="tokens per second (not published)"), code="KB405")) == 1


def test_positive_rate_passes_the_non_positive_check(tmp_path):
    assert findings(tmp_path, bench("x", value=42.0), code="KB405") == []


def test_throughput_without_any_scope_is_flagged(tmp_path):
    assert len(findings(tmp_path, bench("x", metric="tps_aggregate", value=800, unit="tok/s"), code="KB406")) == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"value_scope": "per-device"},
        {"unit": "output tokens/s (aggregate, 8 GPUs)"},
        {"unit": "decode tokens/s per GPU"},
        {"methodology": "llama.cpp, batch size 1"},
    ],
)
def test_throughput_with_a_stated_scope_passes(tmp_path, fields):
    r = bench("x", metric="tps_aggregate", value=800, **{"unit": "tok/s", **fields})
    assert findings(tmp_path, r, code="KB406") == []


def test_per_gpu_power_cap_is_not_a_throughput_scope(tmp_path):
    r = bench("x", metric="tps_aggregate", value=800, unit="output tokens/s under a 1000W per-GPU cap")
    assert len(findings(tmp_path, r, code="KB406")) == 1


def test_bundled_registry_is_used_when_present(bundled_copy):
    kb = inferkb.open(bundled_copy)
    from inferkb.audit.metric_consistency import metric_info

    assert kb.metrics, "the bundled KB ships a metric registry"
    assert metric_info(kb, "speedup_ratio")["requires_baseline"] is True
    assert metric_info(kb, "e2e_latency_ms")["dimension"] == "latency"


def test_audit_runs_on_the_bundled_kb():
    report = inferkb.open().audit(AUDIT)
    assert report.figures[AUDIT]["checked"] >= 0


# ---- the real corpus: findings verified by reading each record's unit/value by hand --------------
@pytest.fixture(scope="module")
def corpus_findings(request):
    from conftest import RESEARCH

    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    return inferkb.open(RESEARCH).audit(AUDIT).findings


def _ids(found, code):
    return {f.record.split("/", 1)[1] for f in found if f.code == code}


def test_corpus_mtp_record_filed_as_ttft_but_measuring_end_to_end_is_found(corpus_findings):
    # unit: "ms average end-to-end latency, BASELINE with speculation DISABLED (0.894 s) ..."
    assert "ev-vllm-mtp-regression-qwen3-next-80b-a3b" in _ids(corpus_findings, "KB401")


def test_corpus_other_latency_and_flops_mismatches_are_found(corpus_findings):
    found = _ids(corpus_findings, "KB401")
    assert "trtllm-llama2-70b-h100-fp8-batch1-request-latency" in found  # ttft_ms, unit "ms per full request"
    assert "vllm-mi300x-llama3-8b-fp16-latency-512in-512out" in found  # itl_ms, unit "average end-to-end latency"
    assert "alt-tpu-v5e-bf16-tps" in found  # tps_aggregate, unit "TFLOPS BF16"


def test_corpus_inflation_factor_filed_as_throughput_is_found(corpus_findings):
    assert "ev-llamacpp-spec-bench-replay-inflates" in _ids(corpus_findings, "KB402")


def test_corpus_zero_rates_are_found(corpus_findings):
    assert {"alt-groq-no-throughput-figure", "h200-8x-mlperf-v4-1-maxq-llama2-70b-offline-idle-node-draw"} <= _ids(corpus_findings, "KB405")


def test_corpus_speedups_all_name_their_baseline(corpus_findings):
    # all three speedup_ratio records say "BASELINE: ..." in their unit
    assert _ids(corpus_findings, "KB403") == set()


def test_corpus_mtp_percentages_reproduce(corpus_findings):
    # methodology: 0.894 s -> 1.578 s (+76.5%) and 1.629 s (+82.2%); both correct by hand
    assert "ev-vllm-mtp-regression-qwen3-next-80b-a3b" not in _ids(corpus_findings, "KB404")


def test_bundled_mtp_arms_reproduce_the_percentages_the_corpus_quotes():
    # The corpus record quotes +76.5% and +82.2%; the bundled record stores the arms and the deltas are computed.
    from inferkb.arms import arm_deltas

    kb = inferkb.open()
    record = kb.resolve("vllm-mtp-regression-qwen3-next-80b-a3b", "benchmark")
    if record is None:
        pytest.skip("bundled MTP benchmark record not present")
    deltas = arm_deltas(record.data)
    assert sorted(round(d["mean_delta_pct"], 1) for d in deltas.values()) == [76.5, 82.2]
