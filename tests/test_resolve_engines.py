"""Engine names that prose uses come from engine records; a plain-word parenthetical is not a name."""

from __future__ import annotations

import inferkb
from inferkb.resolve import engine_names, prose_names


def test_a_plain_word_in_parentheses_is_not_an_engine_name():
    assert "inference" not in prose_names(["DeepSpeed (inference)"])
    assert "DeepSpeed" in prose_names(["DeepSpeed (inference)"])


def test_a_coined_parenthetical_stays_a_name():
    assert "TGI" in prose_names(["Text Generation Inference (TGI)"])


def test_mlperf_inference_in_a_framework_string_does_not_name_deepspeed():
    names = engine_names(inferkb.open())
    assert all(n.lower() != "inference" for n in names["deepspeed"])
