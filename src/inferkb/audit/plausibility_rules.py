"""Rule codes of the ``physical-plausibility`` audit (KB501-KB507), registered once; :mod:`.plausibility` re-exports them."""

from __future__ import annotations

import re

from ..rules import Rule, register

# KB502's lower edge: real decode kernels reach about 50-85% of peak bandwidth.
MBU_SUSPICIOUS = 0.90
# Text that turns KB501 into a warning: speculative decoding emits several tokens per weight read.
SPEC_DECODE = re.compile(r"speculative|\bmtp\b|\beagle\d?\b|\bmedusa\b|draft model|lookahead|\bdspark\b", re.I)


KB501 = register(
    Rule(
        "KB501",
        "decode-rate-impossible",
        "error",
        "physical-plausibility",
        "A per-request decode rate exceeds the memory-bandwidth ceiling (implied MBU > 100%).",
        "Every decode step reads at least the active weights once; no engine can emit one request's tokens faster than aggregate bandwidth "
        "divided by those bytes. Speculative decoding can beat it (several tokens per read) and then the finding is a warning.",
        "Llama 3.1 8B BF16 on 1x H100 (3350 GB/s): 150 tok/s -> MBU 72%",
        "Llama 3.3 70B 4-bit on 1x RTX 5090 (1792 GB/s): 60 tok/s -> MBU 118%",
    )
)
KB502 = register(
    Rule(
        "KB502",
        "decode-rate-suspicious",
        "warning",
        "physical-plausibility",
        "A per-request decode rate implies MBU between 90% and 100%.",
        "Real decode kernels reach roughly 50-85% of peak bandwidth; above 90% the number, the model size, the format or the hardware is probably misstated.",
        "MBU 70%",
        "MBU 96%",
    )
)
KB503 = register(
    Rule(
        "KB503",
        "throughput-impossible",
        "error",
        "physical-plausibility",
        "A throughput or prefill rate exceeds peak dense FLOPs at the format's precision (implied MFU > 100%).",
        "Each token costs about 2 x active parameters FLOPs in the forward pass (Kaplan et al. 2020); the devices cannot do more FLOPs than their peak.",
        "Llama 2 70B FP8 on 8x H100: 30,000 tok/s -> MFU 27%",
        "Llama 2 70B FP8 on 1x H100: 30,000 tok/s -> MFU 212%",
    )
)
KB504 = register(
    Rule(
        "KB504",
        "roofline-unchecked",
        "info",
        "physical-plausibility",
        "A rate could not be checked against the roofline; the finding names the missing input.",
        "A check that silently skips looks like a pass; naming the missing input (model size, format, bandwidth, device count, scope) says what would make it checkable.",
        "model, format, accelerator and count all resolved",
        "model 'DeepSeek-V4.1-Flash' matches no model record and its name is MoE-looking",
    )
)
KB505 = register(
    Rule(
        "KB505",
        "bound-needs-device-count",
        "warning",
        "physical-plausibility",
        "The rate exceeds what one device could do and the record does not state how many devices ran it.",
        "With the count unknown the rate is either impossible (one device) or from an unrecorded multi-device run; either way the record must say.",
        '{"accelerator_count": 2, ...}',
        "70B 4-bit at 45 tok/s on 'RTX 5090', count not stated -> 108% of one device",
    )
)

KB506 = register(
    Rule(
        "KB506",
        "mfu-above-stated-format-peak",
        "warning",
        "physical-plausibility",
        "A throughput or prefill rate implies MFU above 100% of the dense peak at the record's STATED weight format.",
        "`inferkb roofline` and the site's roofline page measure MFU against the dense peak of the format the record states "
        "(format_id, else submission.weight_data_types: mfu_peak). KB503 checks the format the weights are "
        "stored in (a harness's own file size first), which can be narrower and so faster; when only the stated format puts "
        "the rate above the peak, the reader sees an MFU no hardware can produce. Usual causes: a wrong format_id, a wrong "
        "device count, or a per-system value labelled per accelerator.",
        "Llama 2 70B FP16 on 1x B200: 12,000 tok/s -> 75% of the 2,250 TFLOPS BF16 peak",
        "Llama 2 70B stated FP16, file size 4.5 bits, on 1x H100: 8,000 tok/s -> 113% of the 989.5 TFLOPS BF16 peak",
    )
)

KB507 = register(
    Rule(
        "KB507",
        "candidate-parts-ruled-out",
        "info",
        "physical-plausibility",
        "A record whose part is known only up to a family (accelerator_alternates, no accelerator_ids) exceeds the roofline of some candidates but not of all.",
        "A hardware string such as 'Nvidia H100 GPU' names a family, not a part, so there is no single ceiling; checking the rate against every "
        "candidate's ceiling still says which parts could have produced it. The slower parts are ruled out for this record. Nothing is written "
        "into the record: linking the part needs evidence of which one ran. Above every candidate's ceiling is KB501/KB503; within all is a "
        "range in the audit's figures (candidate_per_record).",
        "'Nvidia H100 GPU' at MFU 38% (nvidia-h100-sxm) to 50% (nvidia-h100-pcie): every candidate fits",
        "MFU 92% on nvidia-h100-sxm but 120% on nvidia-h100-pcie: the rate rules out nvidia-h100-pcie",
    )
)
