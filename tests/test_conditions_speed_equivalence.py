"""The load-conditions extractor's shortcuts give the same answers as the plain way.

``conditions_patterns.split_clauses`` visits only the boundary matches instead
of walking the text one character at a time, and most patterns carry literals
(``conditions_patterns.KEYS``) that a text must hold before the pattern is run.
These property tests compare both against simple reference implementations on
random text built from corpus-like fragments, and compare :func:`assess` with
its pre-filters on against the same function with them all off.
"""

from __future__ import annotations

import dataclasses
import json
import re
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inferkb
from conftest import RESEARCH
from inferkb.audit import conditions_patterns as P
from inferkb.audit import conditions_reading as R
from inferkb.audit import conditions_text as T

# Phrasings from real benchmark prose, the things the patterns look for and
# near misses ("batching", "output_tok_s", "tp" inside "output").
FRAGMENTS = (
    "llama-bench commit ab12345|llama-server v1.2.3|sglang-0.4.1|TRT-LLM nightly-1a2b3c4d|mlx-lm 0.20.1|lm-eval 0.4.5|"
    "batch 64|batch-32|batch=4|batch size 8|Batch-Size: 1,024|bs=8|--bs 4|B=3|static batch 16|batching|batch 1-64|in-flight batch|"
    "batch/concurrency|concurrency 16|--max-concurrency 1|max_concurrency=4|8 concurrent users|one request at a time|"
    "single-stream|single user|TP=4|tp 8|TP8|tp_size 2| -tp 2|tensor parallel 8|tensor-parallel size = 4|DP|EP|DEP16|"
    "data parallel|expert parallel|replica|ISL 1024 / OSL 128|ISL/OSL 1000/1000|ISL=2048|OSL: 256|1k/1k|8K/1K|"
    "128-in/2048-out|512 token prompt|128 token output|1024 input tokens|256 output tokens|300 input, 200 output|"
    "prompt length 2000 tokens|Input len: 128K|output length of 512|generation length 64|generation of 128 tokens|"
    "64 tokens generated|Output: 128 tokens|Output: first token only|completions of 256 tokens|--input-len 512|"
    "--output_len 128|input_len=1024|Context: 4096 tokens|128K context|at 32K input|pp512|tg128| -p 512| -p 0| -n 128|"
    " -g 64|(no prompt)|output length between 100 and 200 tokens|prompt processing|prefill|8x H100|4 x NVIDIA H100|"
    "8xMI355X|2-GPU|8 GPUs|4 NVIDIA A100 GPUs|single GPU|one-GPU|single H200|vLLM 0.6.3|vllm v0.22.0|SGLang v0.4+|"
    "TensorRT-LLM release b1234|llama.cpp commit ee59a7c|llama.cpp b5997|Ollama v0.21.2|llama-bench|mlx_lm.benchmark|"
    "Build: 66906cd8 (b5997)|build hash ff5ef82|vLLM nightly-abc1234|lm-eval|FasterTransformer|trt-llm|engine version|"
    "version/commit|build/commit|engine: not|vLLM commit|--warmup 10|--warm_up 1|warmup 10 iters|warm-up of 5 requests|"
    "3 warmup runs|no warmup|no warmup phase is stated|warm up|not stated|NOT STATED|never stated|unstated|unspecified|"
    "unknown|omitted|OMITTED BY SOURCE:|source omits|unrecoverable|not in the summary|not a stated|no batch size|"
    "No prompt length|No|no TP/PP split|harness defaults were used|left at the harness default|"
    "run mostly at tool defaults|default settings of|implied 1 by|(3 of 7 checked: model, hardware)|sibling|"
    "sibling record|for context|same post reports|comparison figure|would need|cross-check|projection|"
    "the paper's own cross-platform|up to 64|above 8|exceeds 4|max 16|maximum 2|1 to 2560|1..8192|GPU model not stated|"
    "specific GPUs not stated|no accelerator model|unspecified hardware|hardware: unrecoverable|sequence lengths|"
    "prompt/output lengths|output_tok_s|throughput|N/A|tok/s|Model meta-llama/Llama-3.1-8B-Instruct|Llama 3.1 8B|3.3.3|"
    "src-000519|TP|no|8|omitted\nby the source:|Omitted  by source :|up to|maximum|over|than|above|takeover|warmup|"
    "warm-up|mpirun -n 8|llama-bench -p 512 -n 128|mlx_lm.benchmark -p 256 -g 128"
).split("|")
# Every ASCII character that \s matches (not only " \t\n\r").
ASCII_WS = [c for c in map(chr, range(128)) if re.match(r"\s", c)]
GLUE = [" ", "  ", ", ", ". ", "; ", ": ", "\n", "\n\n", ".\n", "(", ")", " (", ") ", "-", "/", "=", "! ", "? ", "'", *ASCII_WS]
NON_ASCII = ["\u212a", "\u017f", "\u0130", "\u0131", "\u2013", "\u00d7", "\u00a0", "\u03c4"]


def _cased(draw, text: str) -> str:
    mode = draw(st.sampled_from(["keep", "keep", "upper", "lower", "title"]))
    return text if mode == "keep" else getattr(text, mode)()


@st.composite
def prose(draw, ascii_only: bool = True, max_parts: int = 14) -> str:
    """Text of fragments and glue; fragments may change case, and some text may be arbitrary."""
    parts = []
    for _ in range(draw(st.integers(0, max_parts))):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            parts.append(_cased(draw, draw(st.sampled_from(FRAGMENTS))))
        elif kind < 9:
            parts.append(draw(st.sampled_from(GLUE)))
        else:
            parts.append(draw(st.text(alphabet="abnostpx0123456789 .;()\n-=/:", max_size=8)))
        if not ascii_only and draw(st.integers(0, 9)) == 0:
            parts.append(draw(st.sampled_from(NON_ASCII)))
    return "".join(parts)


# --- clause splitting --------------------------------------------------------


def reference_split_clauses(text: str) -> list[tuple[str, bool]]:
    """The original splitter: walk every character, tracking the parenthesis depth."""
    out: list[tuple[str, bool]] = []
    start, depth, omitted = 0, 0, False
    bounds = {m.start(): m for m in P._BOUNDARY.finditer(text)}
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        m = bounds.get(i)
        if m and (depth == 0 or "\n" in m.group(0)):
            piece = text[start:i]
            omitted = omitted or bool(P.OMITTED_LEAD.match(piece))
            if piece.strip():
                out.append((piece, omitted))
            if ";" not in m.group(0):
                omitted = False
            if "\n" in m.group(0):
                depth = 0
            start = i = m.end()
            continue
        i += 1
    piece = text[start:]
    if piece.strip():
        out.append((piece, omitted or bool(P.OMITTED_LEAD.match(piece))))
    return out


@settings(max_examples=250, deadline=None)
@given(prose(ascii_only=False, max_parts=20))
def test_split_clauses_matches_reference(text):
    assert P.split_clauses(text) == reference_split_clauses(text)


# Dense boundaries, parentheses and "OMITTED BY SOURCE:" leads: where skipping positions could go wrong.
TOKENS = ["(", ")", "\n", "\n\n", ". ", ".\n", "! ", "? ", "; ", ";\n", ";", ".", " ", "\t", "A", "x", "'", "`", "-", '"']
TOKENS += ["OMITTED BY SOURCE: ", "omitted by the source:", "Omitted  by source :", "OMITTED\tBY SOURCE:", "\u00a0", "\u2028"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=30).map("".join))
def test_boundaries_match_finditer(text):
    assert [m.span() for m in P._boundaries(text)] == [m.span() for m in P._BOUNDARY.finditer(text)]
    assert P.split_clauses(text) == reference_split_clauses(text)


def test_split_examples():
    text = "TP size (never stated; the model fits). Batch 8; OSL 128\nOMITTED BY SOURCE: ISL; OSL. Next"
    assert P.split_clauses(text) == reference_split_clauses(text)
    assert [c for c, _ in P.split_clauses(text)] == [
        "TP size (never stated; the model fits).",
        "Batch 8",
        "OSL 128",
        "OMITTED BY SOURCE: ISL",
        "OSL.",
        "Next",
    ]
    assert [inh for _, inh in P.split_clauses(text)] == [False, False, False, True, True, False]
    # A newline always splits and closes any open parenthesis.
    for text in ("(a\nb. C", "(\n. A", "x (y; z\nw; v"):
        assert P.split_clauses(text) == reference_split_clauses(text)
    assert [c for c, _ in P.split_clauses("(a\nb. C")] == ["(a", "b.", "C"]


# --- keyword pre-filters -----------------------------------------------------

KEYED = list(P._KEYED)  # engine patterns compiled later (per KB's engine names) register themselves too: see _keyed()


def _keyed() -> list:
    return list(P._KEYED)


def test_every_keyed_pattern_is_listed_once_with_keys():
    keyed_now = _keyed()
    assert len({id(p) for p in keyed_now}) == len(P.KEYS) > 60
    for p in keyed_now:
        keys = P.KEYS[id(p)]
        assert keys and all(k and k == k.lower() for k in keys), p.pattern
    # The terms, negation markers and every value pattern family are pre-filtered.
    for p in [*P.TERMS.values(), P.NEG_MARKER, P.HARNESS_DEFAULT, P.NOT_THIS_RUN, *P.BATCH, *P.CONCURRENCY, *P.INPUT, *P.OUTPUT]:
        assert id(p) in P.KEYS, p.pattern
    for p in [*P.COUNT, *P.WARMUP, P.TP_SIZE, *(q for pats in P.ENGINE_PATTERNS.values() for _, q in pats)]:
        assert id(p) in P.KEYS, p.pattern


def _check_keys(text: str) -> None:
    low = P.folded(text)
    assert low == text.lower()
    for p in _keyed():
        keys = P.KEYS[id(p)]
        for m in p.finditer(text):
            # Every match holds one of its pattern's literals, so the pre-filter never hides it.
            assert any(k in m.group(0).lower() for k in keys), (p.pattern, m.group(0), keys)
        if p.search(text):
            assert P.may_match(p, low)
            assert p in [q for q, _ in P.keyed([p], low)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prose())
def test_keys_never_hide_a_match(text):
    _check_keys(text)


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_keys_never_hide_a_match_in_fragments(fragment):
    for text in (fragment, fragment.upper(), fragment.lower(), f"x. {fragment}; ({fragment})\n", f"no {fragment}"):
        _check_keys(text)
    # Every ASCII character that \s matches, wherever the fragment has a space.
    for ws in ASCII_WS:
        _check_keys(f"no {fragment}".replace(" ", ws))


@settings(max_examples=100, deadline=None)
@given(prose(ascii_only=False))
def test_non_ascii_text_is_never_prefiltered(text):
    low = P.folded(text)
    if text.isascii():
        assert low == text.lower()
    else:
        assert low is None
        assert all(P.may_match(p, low) for p in KEYED)


BOUNDISH = ["", "up to", "Up  To", "upto", "maximum", "Maximum", "maxim", "max", "MAX", "over", "takeover", "Beyond", "above"]
BOUNDISH += ["past", "than", "under", "below", "exceed", "exceeds", "exceeding", "no"]


@settings(max_examples=250, deadline=None)
@given(prose(max_parts=6), st.sampled_from(BOUNDISH), st.sampled_from(["", " ", "  ", "\t", "\n", " \n", "\x1c", "\n\n", "."]))
def test_bound_words_match_bound_before(text, word, tail):
    prefix = text + word + tail
    assert bool(P.BOUND_BEFORE.search(prefix)) == prefix.lower().rstrip().endswith(P.BOUND_WORDS)


def test_quiet_examples():
    assert R._quiet(P.folded("ISL 1024, OSL 128, TP=8. Model meta-llama/Llama-3.1-8B."))
    for loud in ("(3 of 7 checked: model, hardware) ISL 1024", "ISL not stated", "No ISL", "ISL: no\x1cISL", "harness defaults for ISL"):
        assert not R._quiet(P.folded(loud)), loud
    assert not R._quiet(None)


@settings(max_examples=150, deadline=None)
@given(prose())
def test_quiet_text_has_nothing_to_record(text):
    if not R._quiet(P.folded(text)):
        return
    for clause, _ in P.split_clauses(text):
        body = P.AUDIT_HEADER.sub("", clause)
        assert body == clause
        assert not P.NEG_MARKER.search(body) and not P.HARNESS_DEFAULT.search(body)
        assert not P.NO_LEAD.match(body) and not P.NO_BEFORE_END.search(body)


# --- the whole extractor, pre-filters on and off ------------------------------


def _as_dicts(record: dict) -> str:
    return json.dumps({c: dataclasses.asdict(a) for c, a in T.assess(record).items()}, sort_keys=True, default=repr)


def _same_without_prefilters(record: dict) -> None:
    fast = _as_dicts(record)
    # folded() -> None is what a non-ASCII text gets: every pre-filter then lets every pattern run.
    with mock.patch.object(P, "folded", lambda text: None):
        slow = _as_dicts(record)
    assert fast == slow


small_int = st.one_of(st.none(), st.integers(0, 4096))


@st.composite
def records(draw) -> dict:
    rec: dict = {
        "name": draw(prose(max_parts=6)),
        "unit": draw(st.sampled_from(["ms", "tok/s", "tokens/s", "", "TTFT, 128K context", "pp512 tok/s"])),
        "methodology": draw(prose(max_parts=24)),
        "notes": draw(prose(max_parts=10)),
        "engine_id": draw(st.sampled_from([None, *P.ENGINE_PATTERNS, "lm-eval-harness", "fastertransformer"])),
    }
    if draw(st.booleans()):
        rec["conditions"] = {k: draw(small_int) for k in ("batch_size", "concurrency", "input_tokens", "output_tokens", "warmup")}
    if draw(st.booleans()):
        rec["accelerator_ids"] = draw(st.lists(st.sampled_from(["nvidia-h100", "amd-mi300x"]), max_size=2))
        rec["accelerator_count"] = draw(small_int)
    if draw(st.booleans()):
        rec["model"] = draw(st.sampled_from(["Llama 3.1 8B", "N/A", "", "Qwen2.5-7B"]))
    return rec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_assess_same_with_and_without_prefilters(record):
    _same_without_prefilters(record)


@pytest.mark.parametrize("where", ["corpus", "bundled"])
def test_real_records_same_with_and_without_prefilters(where):
    if where == "corpus" and not RESEARCH.is_dir():
        pytest.skip(f"{RESEARCH} not found")
    kb = inferkb.open(RESEARCH) if where == "corpus" else inferkb.open()
    recs = [r.data for r in kb.by_type("benchmark")]
    assert recs
    for rec in recs:
        _same_without_prefilters(rec)


def test_prefilter_off_switch_really_runs_every_pattern():
    # Guard for the tests above: with folded() patched, nothing is pre-filtered.
    with mock.patch.object(P, "folded", lambda text: None):
        assert P.folded("batch 8") is None
        assert all(P.may_match(p, P.folded("")) for p in KEYED)
    assert not P.may_match(P.BATCH[0], P.folded("nothing here"))
    assert P.may_match(P.BATCH[0], P.folded("Batch Size 8"))
