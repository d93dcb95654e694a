"""One line of an SGLang ``bench_one_batch`` / ``bench_one_batch_server`` result.jsonl: which harness wrote it, its figures in KB units.

The record building is in :mod:`inferkb.intake.sglang_one_batch`; this module
reads and checks single lines, and holds the text (bases, gap reasons,
methodology) both importers cite. Sources read (sgl-project/sglang):
:data:`SRC_ENGINE`, :data:`SRC_SERVER`, :data:`SRC_SERVER_OLDEST`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import common as C
from .base import IntakeResult

ENGINE = "sglang-one-batch"
SERVER = "sglang-one-batch-server"
HARNESS = {ENGINE: "python -m sglang.bench_one_batch", SERVER: "python -m sglang.bench_one_batch_server"}
SRC_ENGINE = "sgl-project/sglang python/sglang/bench_one_batch.py @ 009441505062411de64a6e06e346779899eb53dc (latency_test_run_once)"
SRC_SERVER = "sgl-project/sglang python/sglang/bench_one_batch_server.py @ b23a42fc8f3dafd77951b941b6d62b4bddc7ef55 (run_one_case)"
SRC_SERVER_OLDEST = "sgl-project/sglang python/sglang/bench_one_batch_server.py @ 00b08c497f0735678e084ae5e3dd88ca06b46627 (run_one_case)"
IDENTITY = ("batch_size", "input_len", "output_len")

# (key in the line, metric, required); latencies are seconds in the file (SCALE), rates tok/s.
ENGINE_KEYS = (
    ("prefill_latency", "ttft_ms", True),
    ("median_decode_latency", "itl_ms", False),
    ("total_latency", "e2e_latency_ms", True),
    ("prefill_throughput", "prefill_tok_s", False),
    ("median_decode_throughput", "decode_tok_s", False),
    ("overall_throughput", "total_tok_s", False),
)
SERVER_KEYS = (
    ("latency", "e2e_latency_ms", True),
    ("last_ttft", "ttft_ms", False),
    ("input_throughput", "prefill_tok_s", False),
    ("overall_throughput", "total_tok_s", True),
)
SCALE = {"prefill_latency": 1000, "median_decode_latency": 1000, "total_latency": 1000, "latency": 1000, "last_ttft": 1000}
METRIC_ORDER = ("e2e_latency_ms", "ttft_ms", "itl_ms", "prefill_tok_s", "decode_tok_s", "output_tok_s", "total_tok_s")
UNIT = {m: ("ms" if m.endswith("_ms") else "tok/s") for m in METRIC_ORDER}
SCOPE = {
    "e2e_latency_ms": None,
    "ttft_ms": "per-request",
    "itl_ms": "per-request",
    "prefill_tok_s": "aggregate",
    "decode_tok_s": "aggregate",
    "output_tok_s": "aggregate",
    "total_tok_s": "aggregate",
}
BASIS = {
    (ENGINE, "prefill_latency"): "prefill_latency (s) x 1000: wall time of the one prefill (extend) forward pass over the whole "
    "batch, which returns every request's first token; in-process, so no HTTP, tokenizer or queueing time",
    (ENGINE, "median_decode_latency"): "median_decode_latency (s) x 1000: the median over the output_len - 1 decode steps of "
    "one step's wall time; each step gives every request of the batch one token",
    (ENGINE, "total_latency"): "total_latency (s) x 1000: the prefill pass plus every decode step, the batch's wall time "
    "(every request of the batch starts and ends with it)",
    (ENGINE, "prefill_throughput"): "prefill_throughput: batch_size x input_len / prefill_latency (prompt tokens of the batch "
    "per second of the prefill pass)",
    (ENGINE, "median_decode_throughput"): "median_decode_throughput: batch_size / median_decode_latency (output tokens of the "
    "whole batch per second at the median decode step)",
    (ENGINE, "overall_throughput"): "overall_throughput: batch_size x (input_len + output_len) / total_latency (input plus "
    "output tokens over the whole run)",
    (SERVER, "latency"): "latency (s, rounded to 4 decimals by the harness) x 1000: from sending the batch as one /generate "
    "request to the end of its streamed response, the batch's wall time (the last request's end-to-end latency)",
    (SERVER, "last_ttft"): "last_ttft (s, 4 decimals) x 1000: the time to first token of the LAST request of the batch to get "
    "one, i.e. the batch's largest TTFT, not a typical request's",
    (SERVER, "input_throughput"): "input_throughput: batch_size x input_len / last_ttft (prompt tokens over the time until "
    "every request of the batch had its first token)",
    (SERVER, "overall_throughput"): "overall_throughput: batch_size x (input_len + output_len) / latency (input plus output "
    "tokens over the whole run; 2 decimals)",
}
DECODE_BASIS = (
    "output_throughput: batch_size x output_len / (latency - TTFT of the last request of the batch), output tokens over the "
    "time after the batch's last first token ({why}); when prefill is split over several steps, requests prefilled earlier "
    "decode before that moment and the figure overstates the decode rate"
)
WHOLE_RUN_BASIS = (
    "output_throughput: batch_size x output_len / latency (output tokens over the whole run; the line's figure equals it "
    f"within rounding, the definition of {SRC_SERVER_OLDEST})"
)
WARMUP_REASON = {
    ENGINE: "bench_one_batch runs one warmup batch (the first batch size and input length, at most 32 output tokens) before "
    f"the measured ones and writes no line for it ({SRC_ENGINE.split(' (')[0]}, latency_test); the line does not say which "
    "version ran, so the warmup is not established from the file",
    SERVER: "bench_one_batch_server sends one warmup batch (16 prompts of 1024 input and 16 output tokens) unless "
    f"--skip-warmup is given ({SRC_SERVER.split(' (')[0]}, run_benchmark); the line does not record whether it was",
}
WARMUP_RECOVER = {
    ENGINE: "the run's console output ('Warmup ...' before 'Benchmark ...'); pass --warmup",
    SERVER: "the run's command line (--skip-warmup) or console output ('Warmup Begin'); pass --warmup",
}
CONCURRENCY_BASIS = {
    ENGINE: "bench_one_batch runs the batch as one static batch in-process: all {batch} requests are prefilled in one forward "
    "pass and decoded together, so {batch} requests are in flight from start to end",
    SERVER: "bench_one_batch_server submits the batch as one /generate request holding all {batch} prompts, so all {batch} "
    "requests are outstanding at once (how many the server runs together is its own scheduling, not stated)",
}
METHODOLOGY = {
    ENGINE: "SGLang bench_one_batch: one static batch run in-process (no server), one prefill pass then output_len - 1 decode "
    "steps. Headline = total_latency of the batch in ms (ms per batch, not per request); TTFT = prefill_latency, ITL = median "
    "decode step, prefill/decode throughput as the harness computes them (seconds -> ms for latencies). Every rate is "
    f"cross-checked against its latency (KB1101). Field meanings from {SRC_ENGINE}.",
    SERVER: "SGLang bench_one_batch_server: one batch sent as one streamed /generate request (ignore_eos, max_new_tokens = "
    "output_len) to a running server. Headline = latency of the whole batch in ms (ms per batch); TTFT is the LAST request's "
    "(last_ttft), output_throughput is a decode-phase rate over (latency - last TTFT) in the versions that write "
    "last_gen_throughput, checked line by line; last_gen_throughput (the server's last decode batch) is kept in submission. "
    f"acc_length -1.0 is the harness's 'no speculative decoding' sentinel. Field meanings from {SRC_SERVER}.",
}
KNOWN = {
    fmt: {*IDENTITY, "run_name", "model_path", "model", "tp_size", "completed_requests", *(k for k, _, _ in keys)}
    | ({"output_throughput", "acc_length", "cache_hit_rate", "last_gen_throughput"} if fmt == SERVER else set())
    for fmt, keys in ((ENGINE, ENGINE_KEYS), (SERVER, SERVER_KEYS))
}
# Above this many decimals a number was written at full float precision, not rounded by the harness.
ROUNDED_MAX_DECIMALS = 6
# Server rounding: latency 4 decimals, rates 2 decimals.
_HALF_S = 5e-5
_HALF_RATE = 0.005


@dataclass
class Line:
    """One line's figures: ``values`` in KB units, ``written`` as in the file, ``source_key``/``basis`` per metric."""

    number: int
    text: str
    key: tuple[str | None, int, int, int]
    values: dict[str, float] = field(default_factory=dict)
    written: dict[str, float] = field(default_factory=dict)
    source_key: dict[str, str] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    tp_size: int | None = None
    spec: str | float | None = None  # "off" (acc_length -1), an acceptance length, or None (not written)

    def quote(self, key: str) -> str:
        """The ``"key": value`` text of the line as written (the key alone when it is not found)."""
        m = re.search(rf'"{re.escape(key)}"\s*:\s*[^,}}]*', self.text)
        return m.group(0).strip() if m else f'"{key}"'


def line_kind(doc: Any) -> str | None:
    """``sglang-one-batch``, ``sglang-one-batch-server``, ``sglang-serving`` or ``None``: which harness wrote a result line.

    Decided by the keys each harness always writes (FORMATS.md 3a-3c):
    bench_serving's ``completed``, ``duration`` and
    ``total_output_tokens_retokenized`` (vLLM's serve JSON has the first two only); bench_one_batch's
    ``prefill_latency`` and ``total_latency``; bench_one_batch_server's
    ``latency`` and ``overall_throughput``; the last two beside ``batch_size``,
    ``input_len`` and ``output_len``.
    """
    if not isinstance(doc, dict):
        return None
    keys = set(doc)
    if {"completed", "duration", "total_output_tokens_retokenized"} <= keys:
        return "sglang-serving"
    if not set(IDENTITY) <= keys:
        return None
    if {"prefill_latency", "total_latency"} <= keys:
        return ENGINE
    if {"latency", "overall_throughput"} <= keys:
        return SERVER
    return None


def _finite(value: Any, path: Path, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{value!r} is not a number this harness writes", path=str(path), field=where)
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, path, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, path, f"{where}[{i}]")


def decimals(value: float) -> int:
    """Decimal places of ``value`` as written (its shortest repr): 70.1871 -> 4, 12000.0 -> 0."""
    exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _scaled(value: float, scale: int) -> float:
    """``value x scale`` in decimal arithmetic: 70.1871 s -> 70187.1 ms, no binary noise added."""
    return float(Decimal(repr(float(value))) * scale) if scale != 1 else float(value)


def _agrees(stated: float, computed: float, rel: float, slack: float) -> bool:
    """``stated`` equals ``computed`` within a relative error ``rel`` of the inputs plus ``slack`` of the rounding."""
    return abs(stated - computed) <= abs(computed) * rel * 1.01 + slack + 1e-9 * abs(computed)


def _wrong_harness(fmt: str, kind: str | None, number: int, doc: dict[str, Any], path: Path) -> InputError:
    found = ", ".join(list(doc)[:12]) or "no keys"
    if kind is not None:
        hint = {
            "sglang-serving": "sglang.bench_serving output",
            ENGINE: "sglang.bench_one_batch output",
            SERVER: "sglang.bench_one_batch_server output",
        }[kind]
        return InputError(f"line {number}: not a {HARNESS[fmt]} line: it is {hint}; use `inferkb intake {kind}`", path=str(path))
    need = ("prefill_latency", "total_latency") if fmt == ENGINE else ("latency", "overall_throughput")
    return InputError(
        f"not a {HARNESS[fmt]} line (unknown schema): expected keys {', '.join(IDENTITY + need)}; found {found}",
        path=str(path),
        field=next((f"line {number}.{k}" for k in IDENTITY + need if k not in doc), None),
    )


def _check(result: IntakeResult, path: Path, number: int, key: str, stated: float, computed: float, formula: str, ok: bool) -> None:
    if not ok:
        result.findings.append(
            C.KB1101.finding(
                f"line {number}: {key} {stated:.6g} is not {formula} ({computed:.6g}); the line's own figure is kept",
                path=str(path),
                field=f"line {number}.{key}",
            )
        )


def _output_throughput(line: Line, doc: dict[str, Any], path: Path, result: IntakeResult) -> None:
    """Decide which output rate a server line's ``output_throughput`` is, from the line's own numbers (module docstring)."""
    if doc.get("output_throughput") is None:
        return
    number, (_, batch, _, osl) = line.number, line.key
    stated = C.number(doc["output_throughput"], path, f"line {number}.output_throughput", nonneg=True)
    latency = line.written["e2e_latency_ms"]
    ttft = line.written.get("ttft_ms")
    metric = basis = None
    whole = batch * osl / latency if latency > 0 else math.inf
    if ttft is not None and latency > ttft:
        window = batch * osl / (latency - ttft)
        if _agrees(stated, window, 2 * _HALF_S / (latency - ttft), _HALF_RATE):
            metric, basis = "decode_tok_s", DECODE_BASIS.format(why="the line's last_ttft reproduces it")
    if metric is None and _agrees(stated, whole, _HALF_S / latency if latency > 0 else 0, _HALF_RATE):
        metric, basis = "output_tok_s", WHOLE_RUN_BASIS
    if metric is None and ttft is None and stated > whole:
        metric = "decode_tok_s"
        basis = DECODE_BASIS.format(
            why=f"the line has no last_ttft; its figure exceeds batch x output_len / latency ({whole:.2f}) while "
            f"overall_throughput matches batch x (input_len + output_len) / latency, the definition of {SRC_SERVER}"
        )
    if metric is None:
        result.findings.append(
            C.KB1101.finding(
                f"line {number}: output_throughput {stated:.6g} matches neither batch x output_len / latency ({whole:.6g}) "
                "nor batch x output_len / (latency - last_ttft); not imported",
                path=str(path),
                field=f"line {number}.output_throughput",
            )
        )
        return
    line.values[metric] = line.written[metric] = stated
    line.source_key[metric], line.basis[metric] = "output_throughput", basis


def _server_extras(line: Line, doc: dict[str, Any], path: Path) -> None:
    number = line.number
    acc = doc.get("acc_length")
    if acc is not None:
        x = C.number(acc, path, f"line {number}.acc_length")
        if x == -1:
            line.spec = "off"
        elif x > 0:
            line.spec = x
        else:
            raise InputError(
                f"{acc!r}: expected -1 (the harness's 'speculative decoding off' sentinel) or an acceptance length > 0",
                path=str(path),
                field=f"line {number}.acc_length",
            )
    if "cache_hit_rate" in doc:
        rate = doc["cache_hit_rate"]
        if rate is not None:
            rate = C.number(rate, path, f"line {number}.cache_hit_rate", nonneg=True)
            if rate > 1:
                raise InputError(
                    f"{rate!r}: a cache hit rate is a fraction in [0, 1]", path=str(path), field=f"line {number}.cache_hit_rate"
                )
        line.extra["cache_hit_rate"] = rate
    if doc.get("last_gen_throughput") is not None:
        gen = C.number(doc["last_gen_throughput"], path, f"line {number}.last_gen_throughput")
        line.extra["last_gen_throughput"] = gen if gen >= 0 else None  # a negative figure: the server reported none


def read_line(fmt: str, number: int, text: str, doc: dict[str, Any], path: Path, result: IntakeResult) -> Line | None:
    """The :class:`Line` of one parsed JSONL line, or ``None`` (KB1102) for a run that completed fewer requests than its batch.

    Raises :class:`InputError` naming the line and field for another harness's
    line, an unknown schema, a batch/length that is not a whole number >= 1, a
    missing or non-numeric figure, a negative latency or rate, a non-finite number.
    """
    kind = line_kind(doc)
    if kind != fmt:
        raise _wrong_harness(fmt, kind, number, doc, path)
    _finite(doc, path, f"line {number}")
    ints = []
    for key in IDENTITY:
        value = C.integer(doc[key])
        if value is None:
            raise InputError(f"expected a whole number >= 1, found {C.shown(doc[key])}", path=str(path), field=f"line {number}.{key}")
        C.number(value, path, f"line {number}.{key}")  # an int past float range cannot enter the rate cross-checks
        ints.append(value)
    run_name = doc.get("run_name")
    if run_name is not None and not isinstance(run_name, str):
        raise InputError(f"expected a string, found {C.shown(run_name)}", path=str(path), field=f"line {number}.run_name")
    batch, isl, osl = ints
    completed = doc.get("completed_requests")
    if completed is not None and C.number(completed, path, f"line {number}.completed_requests", nonneg=True) < batch:
        result.findings.append(
            C.KB1102.finding(
                f"line {number}: completed_requests {completed} of a batch of {batch}; the figures do not describe the batch, no record made",
                path=str(path),
                field=f"line {number}.completed_requests",
            )
        )
        result.stats["skipped"]["incomplete batch"] = result.stats["skipped"].get("incomplete batch", 0) + 1
        return None
    line = Line(number=number, text=text, key=(run_name, batch, isl, osl))
    for key, metric, required in ENGINE_KEYS if fmt == ENGINE else SERVER_KEYS:
        if doc.get(key) is None:
            if required:
                raise InputError("missing or null; every line of this harness has it", path=str(path), field=f"line {number}.{key}")
            continue
        x = C.number(doc[key], path, f"line {number}.{key}", nonneg=True)
        line.written[metric] = x
        line.values[metric] = _scaled(x, SCALE.get(key, 1))
        line.source_key[metric], line.basis[metric] = key, BASIS[(fmt, key)]
    _cross_check(fmt, line, path, result)
    if fmt == SERVER:
        _output_throughput(line, doc, path, result)
        _server_extras(line, doc, path)
    for key in ("model_path", "model"):
        if isinstance(doc.get(key), str) and doc[key].strip():
            line.model = doc[key]
            break
    line.tp_size = C.integer(doc.get("tp_size"))
    unknown = sorted(set(doc) - KNOWN[fmt])
    if unknown:
        kept = result.stats.setdefault("keys_not_imported", [])
        kept.extend(k for k in unknown if k not in kept)
    return line


def _cross_check(fmt: str, line: Line, path: Path, result: IntakeResult) -> None:
    """KB1101 for a rate that does not follow from the line's own latency (full precision: 1e-6; server: its rounding)."""
    w, n, (_, b, i, o) = line.written, line.number, line.key
    checks = []
    if fmt == ENGINE:
        for rate, lat, tokens, formula in (
            ("prefill_tok_s", "ttft_ms", b * i, "batch_size x input_len / prefill_latency"),
            ("decode_tok_s", "itl_ms", b, "batch_size / median_decode_latency"),
            ("total_tok_s", "e2e_latency_ms", b * (i + o), "batch_size x (input_len + output_len) / total_latency"),
        ):
            if rate in w and w.get(lat):
                checks.append((rate, tokens / w[lat], formula, C.close(w[rate], tokens / w[lat], rel=1e-6)))
    else:
        for rate, lat, tokens, formula in (
            ("prefill_tok_s", "ttft_ms", b * i, "batch_size x input_len / last_ttft"),
            ("total_tok_s", "e2e_latency_ms", b * (i + o), "batch_size x (input_len + output_len) / latency"),
        ):
            if rate in w and w.get(lat):
                computed = tokens / w[lat]
                checks.append((rate, computed, formula, _agrees(w[rate], computed, _HALF_S / w[lat], _HALF_RATE)))
    for rate, computed, formula, ok in checks:
        _check(result, path, n, line.source_key[rate], w[rate], computed, formula, ok)


def summary(sub: dict[str, Any], key: str, values: list[float]) -> None:
    """``sub[key]`` for one line's figure; ``key_mean``/``key_min``/``key_max`` over repeats; nothing for none.

    The mean of values the harness rounded (at most 6 decimals) is rounded to their resolution.
    """
    if not values:
        return
    if len(values) == 1:
        sub[key] = values[0]
        return
    mean = math.fsum(values) / len(values)
    places = max(decimals(v) for v in values)
    sub[f"{key}_mean"] = round(mean, places) if places <= ROUNDED_MAX_DECIMALS else mean
    sub[f"{key}_min"], sub[f"{key}_max"] = min(values), max(values)


def line_list(lines: list[Line]) -> str:
    """``"1-15"`` for consecutive line numbers, else ``"8, 9, 12"``."""
    nums = [ln.number for ln in lines]
    if len(nums) > 2 and nums == list(range(nums[0], nums[-1] + 1)):
        return f"{nums[0]}-{nums[-1]}"
    return ", ".join(str(x) for x in nums)


def submission(fmt: str, key: tuple, lines: list[Line], pin: dict[str, str] | None, result: IntakeResult) -> dict[str, Any]:
    """The record's ``submission``: harness, lines, run_name, the upstream pin and the server's own figures."""
    sub: dict[str, Any] = {"harness": f"{HARNESS[fmt]} (result.jsonl)", "lines": line_list(lines), "repeats": len(lines)}
    if key[0] is not None:
        sub["run_name"] = key[0]
    if pin:
        sub.update(repo=pin["repo"], path=pin["path"], commit=pin["commit"])
    gen = [ln.extra["last_gen_throughput"] for ln in lines if ln.extra.get("last_gen_throughput") is not None]
    summary(sub, "server_last_gen_throughput_tok_s", gen)
    hits = [ln.extra["cache_hit_rate"] for ln in lines if "cache_hit_rate" in ln.extra]
    if hits and all(h is None for h in hits):
        sub["cache_hit_rate"] = None  # written as null: the server reported none
    else:
        summary(sub, "cache_hit_rate", [h for h in hits if h is not None])
    return sub
