"""One resolver, one policy: exact alias, then normalised, candidates listed when ambiguous, never a partial name."""

from __future__ import annotations

import inferkb
from conftest import rec, write_kb
from inferkb.intake import IntakeOptions
from inferkb.intake.base import resolve_accelerator
from inferkb.resolve import prose_names, resolve


def bundled():
    return inferkb.open()


def test_rtx_5070_ti_is_not_the_rtx_5070():
    # The bundled KB has an RTX 5070 record and no 5070 Ti: the Ti must not resolve to it.
    kb = bundled()
    for text in ("RTX 5070 Ti", "NVIDIA GeForce RTX 5070 Ti"):
        res = resolve(kb, "accelerator", text)
        assert res.id is None and res.ids == () and res.how == "partial" and res.leftover == ("ti",)
        assert ("nvidia-rtx-5070",) in [ids for _, ids in res.parts]


def test_intake_neither_picks_nor_lists_a_part_the_string_does_not_name():
    ids, alternates, raw, notes = resolve_accelerator(bundled(), IntakeOptions(hardware_raw="NVIDIA GeForce RTX 5070 Ti"), None)
    assert (ids, alternates, raw) == ([], [], "NVIDIA GeForce RTX 5070 Ti")
    assert "also 'ti'" in notes[0]


def test_the_5070_itself_resolves_by_alias_and_by_name_without_vendor_words():
    kb = bundled()
    assert resolve(kb, "accelerator", "NVIDIA GeForce RTX 5070").id == "nvidia-rtx-5070"
    res = resolve(kb, "accelerator", "RTX 5070")
    assert (res.id, res.how) == ("nvidia-rtx-5070", "name")


def test_a_bare_model_number_lists_every_part_and_picks_none():
    res = resolve(bundled(), "accelerator", "H100")
    assert res.how == "family" and res.id is None and res.ambiguous
    assert set(res.ids) == {"nvidia-h100-sxm", "nvidia-h100-pcie", "nvidia-h100-nvl"}


def test_a_leading_count_is_read_and_the_rest_resolved():
    res = resolve(bundled(), "accelerator", "8x NVIDIA H100 80GB HBM3")
    assert (res.count, res.id, res.how) == (8, "nvidia-h100-sxm", "exact")


def test_normalised_spelling_resolves():
    # llm-d reports write the nvidia-smi name with hyphens.
    res = resolve(bundled(), "accelerator", "NVIDIA-H100-80GB-HBM3")
    assert (res.id, res.how) == ("nvidia-h100-sxm", "normalised")


def test_a_mixed_system_is_parts_not_an_ambiguity():
    res = resolve(bundled(), "accelerator", "NVIDIA H100 PCIe + AMD Instinct MI300X")
    assert res.how == "parts" and res.id is None and not res.ambiguous
    assert res.ids == ("nvidia-h100-pcie", "amd-instinct-mi300x")


def test_engines_formats_and_models_follow_the_same_policy(tmp_path):
    kb = bundled()
    assert resolve(kb, "engine", "TRT-LLM").id == "tensorrt-llm"
    assert (resolve(kb, "engine", "VLLM").id, resolve(kb, "engine", "VLLM").how) == ("vllm", "normalised")
    assert resolve(kb, "engine", "vLLM 0.8").id is None  # a name plus more words is not a name
    assert resolve(kb, "quantization", "NVFP4").id == "nvfp4"
    assert resolve(kb, "quantization", "fp8").how == "none"
    kb = inferkb.open(
        write_kb(
            tmp_path / "kb",
            {"data/models/a.json": rec("model", "a", aliases=["Twin"]), "data/models/b.json": rec("model", "b", aliases=["Twin"])},
        )
    )
    res = resolve(kb, "model", "twin")
    assert res.ambiguous and res.ids == ("a", "b") and res.id is None


def test_a_record_written_on_the_same_kb_is_resolved_at_once(tmp_path):
    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/engines/e.json": rec("engine", "e")}))
    assert resolve(kb, "engine", "Fancy Serve").how == "none"
    kb.write_record(rec("engine", "fancy", name="Fancy Serve"))
    assert resolve(kb, "engine", "Fancy Serve").id == "fancy"


def test_identity_does_not_accept_a_part_the_raw_string_only_partly_names(tmp_path):
    from inferkb.audit.identity import raw_candidates

    assert raw_candidates(bundled(), "RTX 5070 Ti") == ([], [])
    assert raw_candidates(bundled(), "RTX 5070") == (["nvidia-rtx-5070"], [("nvidia-rtx-5070",)])


def test_prose_names_come_from_the_record_names():
    assert prose_names(["lm-eval-harness", "EleutherAI lm-evaluation-harness"]) == (
        "EleutherAI lm-evaluation-harness",
        "lm-evaluation-harness",
        "lm-eval-harness",
    )
    assert "TGI" in prose_names(["Text Generation Inference (TGI)"]) and "PyTorch" in prose_names(["PyTorch (eager / custom harness)"])


def test_a_mixed_system_with_an_unknown_part_is_unrecognised_and_says_which_part_is_known(tmp_path):
    acc = rec("accelerator", "amd-instinct-mi300x", name="AMD Instinct MI300X", aliases=["AMD Instinct MI300X 192GB HBM3"])
    raw = "AMD Instinct MI300X 192GB HBM3 (x8) and Acme Z9 (x8)"
    bench = rec("benchmark", "mixed", hardware_raw=raw, accelerator_ids=[])
    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/accelerators/a.json": {**acc, "id": "a"}, "data/benchmarks/mixed.json": bench}))
    [f] = [f for f in kb.audit("identity").findings if f.record == "benchmarks/mixed"]
    assert f.code == "KB804" and "as a whole" in f.message and "(a)" in f.message and "'acme z9'" in f.message
