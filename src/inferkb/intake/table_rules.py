"""Finding rules of the result-table importers (MLPerf, InferenceX, llm-d Benchmark Report): KB1110-KB1119.

The harness importers' rules (KB1101-KB1105) live in :mod:`inferkb.intake.common`.
"""

from __future__ import annotations

from ..rules import Rule, register

KB1110 = register(
    Rule(
        "KB1110",
        "intake-result-invalid",
        "error",
        "intake",
        "The harness itself declares the run INVALID; it is not imported as a measurement.",
        "MLPerf LoadGen marks a run INVALID when a latency or duration constraint failed; its throughput is not a valid "
        "result of the scenario, so it is refused rather than stored next to valid results.",
        "Result is : VALID",
        "Result is : INVALID",
    )
)
KB1111 = register(
    Rule(
        "KB1111",
        "intake-unit-contradiction",
        "warning",
        "intake",
        "The unit a table states contradicts what the benchmark reports; the metric is left undetermined.",
        "A value filed under the wrong unit is off by orders of magnitude in every comparison; both readings are "
        "listed as candidates and none is chosen (evidence must determine the value uniquely).",
        "llama2-70b Offline, Units 'Tokens/s'",
        "llama2-70b Offline, Units 'Samples/s' with a tokens-sized value",
    )
)
KB1112 = register(
    Rule(
        "KB1112",
        "intake-count-contradiction",
        "warning",
        "intake",
        "Device counts stated in one row contradict each other; the count is left null.",
        "A per-GPU or per-system figure is only as right as its denominator; when a row's own numbers imply two "
        "different device counts, neither is picked.",
        "num_gpu 8 and total power / per-GPU power = 8",
        "num_gpu 64 but total power / per-GPU power = 8",
    )
)
KB1113 = register(
    Rule(
        "KB1113",
        "intake-rows-skipped",
        "info",
        "intake",
        "Rows of a result table were not imported; counted by reason.",
        "A table mixes LLM and non-LLM results; the import says how many rows it left out and why, so nothing disappears silently.",
        "(all rows imported)",
        "whisper rows skipped: speech model",
    )
)
KB1114 = register(
    Rule(
        "KB1114",
        "intake-engine-ambiguous",
        "info",
        "intake",
        "The framework string names several inference engines (or none the KB knows); engine_id is left null.",
        "engine_id is a strict reference: it is set only when the evidence names exactly one engine.",
        "'vLLM 0.22.0, PyTorch 2.10.0, ROCm 7.2.2'",
        "'TensorRT-LLM 1.3, NVIDIA Dynamo 0.8, vLLM CentML'",
    )
)
KB1115 = register(
    Rule(
        "KB1115",
        "intake-value-unusable",
        "warning",
        "intake",
        "A row's result value is missing, not a number, zero or negative; the row is not imported.",
        "A result table row without a usable number is not a measurement.",
        "Result 1234.5",
        "Result '' or 'N/A'",
    )
)
