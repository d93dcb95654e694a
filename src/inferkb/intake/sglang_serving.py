"""Importer ``sglang-serving``: ``python -m sglang.bench_serving --output-file X.jsonl`` (one JSON line per run).

The harness appends one line per run (FORMATS.md 3a), so a file accumulates
runs; each line becomes one benchmark record. What the lines hold and mean was
read from ``python/sglang/bench_serving.py`` in sgl-project/sglang at commit
0033168f0f58b2bc05aa0273bd475d9c01bafb1c (``calculate_metrics``, ``benchmark``,
the argument parser):

- ``request_rate`` is written by ``json.dumps`` of a float, so an unlimited
  rate (``inf``, the default: every request sent at time 0; else Poisson
  arrivals) is the bare token ``Infinity``. It is read as the condition
  ``request_rate = "inf"``; ``Infinity`` or ``NaN`` anywhere else is an error.
- ``total_output_tokens`` sums the output token counts the *server* returned;
  ``total_output_tokens_retokenized`` re-encodes the generated text with the
  client's tokenizer. ``output_throughput`` is the server count / duration,
  so the headline uses the server's count; the retokenized count is kept
  beside it in ``submission`` (and their ratio), never mixed in.
- ``concurrency`` is sum(E2E latency) / duration: the *average* number of
  requests in flight, kept in ``submission.mean_requests_in_flight``; the cap
  is ``max_concurrency`` (null = no cap), which is the condition.
- The random dataset draws each request's input and output length uniformly
  between ``int(len x random_range_ratio)`` and ``len``: the lengths are a
  condition only when ``random_range_ratio`` is 1, else a reasoned gap naming
  the range and the mean the totals give.
- Latencies are ms (``mean_/median_/std_/p95_/p99_`` of ``ttft``, ``tpot``,
  ``itl``, ``e2e_latency``); late-2024 lines carry medians only.
- Late-2025 lines add ``server_info`` (the server's arguments; behind a
  prefill/decode router ``{internal_states, prefill: [...], decode: [...]}``):
  model path, version, TP/DP/EP/PP sizes are read from it; ``quantization``
  (or a ``dtype`` other than ``auto`` beside a null quantization) gives
  ``format_id`` through :mod:`inferkb.intake.weight_format`.

The file names no hardware: the record keeps a ``condition_gaps`` entry and
the import warns (KB1106) unless ``--hardware-raw``/``--accelerator`` is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..jsonio import MAX_DEPTH, nesting_depth
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register
from .sglang_batch_lines import HARNESS as ONE_BATCH_HARNESS
from .sglang_batch_lines import line_kind
from .weight_format import weight_format

if TYPE_CHECKING:
    from ..kb import KB

FMT = "sglang-serving"
MARKERS = ("output_throughput", "completed", "duration")
METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e_latency": "e2e_latency_ms"}
RATES = {
    "output_throughput": "output_tok_s",
    "input_throughput": "input_tok_s",
    "total_throughput": "total_tok_s",
    "request_throughput": "request_throughput_rps",
}
_STAT = re.compile(r"^(mean|median|std|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2e_latency)_ms$")
# server_info keys worth keeping beside the record (the rest of the ~20 KB dict is launch plumbing).
SERVER_KEYS = (
    "version",
    "model_path",
    "served_model_name",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "tp_size",
    "dp_size",
    "ep_size",
    "pp_size",
    "chunked_prefill_size",
    "max_running_requests",
    "attention_backend",
    "speculative_algorithm",
    "disaggregation_mode",
    "device",
)
RELEVANT = ("concurrency", "request_rate", "input_tokens", "output_tokens", "dataset", "warmup", "engine_version", "tensor_parallel")
SOURCE_NOTE = "sgl-project/sglang python/sglang/bench_serving.py @ 0033168f0f58b2bc05aa0273bd475d9c01bafb1c"


class _NonFinite(float):
    """The float a bare ``Infinity`` parses to, marked so it can be told from an ordinary number."""


def _constant(token: str) -> float:
    if token == "Infinity":
        return _NonFinite("inf")
    raise ValueError(f"{token} is not a number JSON or bench_serving writes")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


_TOO_DEEP = object()
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)


def parse_lines(raw: bytes, path: Path, harness: str = "bench_serving --output-file") -> list[tuple[int, dict[str, Any]]]:
    """``[(line number, run dict)]`` of an SGLang JSONL result file; raises :class:`InputError` naming the line.

    Strict JSON except the bare ``Infinity`` bench_serving writes for an
    unlimited ``request_rate`` (see the module docstring); blank lines are
    skipped. ``harness`` names the writer in the message for a line that is not
    an object (the bench_one_batch importers read their result.jsonl with it too).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"byte at offset {exc.start} is not UTF-8", path=str(path)) from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = _DECODER.decode(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {number}: not JSON: {exc.msg} (column {exc.colno})", path=str(path)) from None
        except ValueError as exc:
            raise InputError(f"line {number}: {exc}", path=str(path)) from None
        except RecursionError:
            value = _TOO_DEEP  # the decoder recursed past Python's limit
        if value is _TOO_DEEP or nesting_depth(value) > MAX_DEPTH:
            raise InputError(f"line {number}: arrays/objects nested deeper than {MAX_DEPTH} levels", path=str(path))
        if not isinstance(value, dict):
            raise InputError(f"line {number}: expected one JSON object per line ({harness})", path=str(path))
        _only_rate_infinite(value, path, number)
        out.append((number, value))
    if not out:
        raise InputError("no JSON lines", path=str(path))
    return out


def _only_rate_infinite(value: Any, path: Path, number: int, where: str = "") -> None:
    """Refuse a non-finite number anywhere but the top-level ``request_rate``."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, _NonFinite):
                if where or k != "request_rate":
                    raise InputError(f"line {number}: Infinity is not a number here", path=str(path), field=f"{where}{k}")
            elif isinstance(v, (dict, list)):
                _only_rate_infinite(v, path, number, f"{where}{k}.")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, _NonFinite):
                raise InputError(f"line {number}: Infinity is not a number here", path=str(path), field=f"{where}[{i}]")
            _only_rate_infinite(v, path, number, f"{where}[{i}].")


def latency_metrics(doc: dict[str, Any], path: Path, where: str) -> dict[str, dict[str, Any]]:
    """``{ttft_ms|tpot_ms|itl_ms|e2e_latency_ms: {"stats", "unit": "ms", ...}}`` from the ``*_ms`` keys (median -> p50, std -> stdev)."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in doc.items():
        m = _STAT.match(key)
        if not m or value is None:
            continue
        x = C.number(value, path, f"{where}.{key}", nonneg=True)
        entry = out.setdefault(METRICS[m.group(3)], {"stats": {}, "unit": "ms", "value_scope": "per-request"})
        kind, pct = m.group(1), m.group(2)
        if kind == "mean":
            entry["stats"]["mean"] = x
        elif kind == "median":
            entry["stats"]["p50"] = x
        elif kind == "std":
            entry["stats"]["stdev"] = x
        elif pct in C.PERCENTILE_SLOTS:
            entry["stats"][C.PERCENTILE_SLOTS[pct]] = x
        else:
            entry.setdefault("percentiles", {})[f"p{pct}"] = x
    return out


def server_args(info: Any) -> tuple[dict[str, Any], str | None]:
    """``(flat server arguments, layout note)`` from ``server_info``: the dict itself, or for a PD router its prefill/decode lists.

    For a router the arguments shared by every prefill and decode server are
    returned and the note says how many of each ran with which TP size.
    """
    if not isinstance(info, dict):
        return {}, None
    if "prefill" not in info and "decode" not in info:
        return info, None
    servers = {role: [s for s in info.get(role) or [] if isinstance(s, dict)] for role in ("prefill", "decode")}
    every = servers["prefill"] + servers["decode"]
    shared = {k: v for k, v in every[0].items() if all(s.get(k) == v for s in every)} if every else {}
    note = "prefill/decode disaggregated: " + ", ".join(
        f"{len(group)} {role} server{'s' if len(group) != 1 else ''} (tp {', '.join(str(s.get('tp_size')) for s in group)})"
        for role, group in servers.items()
    )
    return shared, note


def _or_none(compute: Callable[..., float], *args: float) -> float | None:
    """``compute(*args)``, or ``None`` when it overflows a float (an int of more than ~308 digits in the file)."""
    try:
        return compute(*args)
    except OverflowError:
        return None


def _lengths(doc: dict[str, Any], stated: dict[str, Any], gaps_extra: dict[str, str], completed: int | None) -> None:
    """Input/output lengths: the random dataset's requested lengths when every request had them, else a reason."""
    dataset = doc.get("dataset_name")
    if dataset == "random":
        ratio = doc.get("random_range_ratio")
        for cond, key, total in (
            ("input_tokens", "random_input_len", "total_input_tokens"),
            ("output_tokens", "random_output_len", "total_output_tokens"),
        ):
            length = C.integer(doc.get(key))
            if length is None:
                continue
            if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio == 1:
                stated.setdefault(cond, length)
                continue
            low = (
                _or_none(lambda a, r: int(a * r), length, ratio)
                if isinstance(ratio, (int, float)) and not isinstance(ratio, bool)
                else None
            )
            given = doc.get(total)
            mean = _or_none(lambda t, n: t / n, given, completed) if completed and isinstance(given, (int, float)) else None
            gaps_extra[cond] = (
                f"random dataset: each request's length is drawn between {low} and {length} ({key} {length}, random_range_ratio {ratio})"
                + (f"; the file's totals give a mean of {mean:.1f} tokens per request" if mean is not None else "")
            )
    elif dataset == "sharegpt" and C.integer(doc.get("sharegpt_output_len")) is not None:
        stated.setdefault("output_tokens", C.integer(doc["sharegpt_output_len"]))


def _format(rec: dict[str, Any], gaps: dict[str, Any], info: dict[str, Any], layout: str | None, kb: KB, checked: list[str]) -> None:
    """``format_id`` from server_info's ``quantization`` (or, when that is null, a ``dtype`` other than ``auto``), in place."""
    quant, dtype = info.get("quantization"), info.get("dtype")
    stated = None
    if isinstance(quant, str) and quant.strip():
        stated = ("server_info.quantization", quant)
    elif "quantization" in info and quant is None and isinstance(dtype, str) and dtype.strip() and dtype != "auto":
        stated = ("server_info.dtype", dtype)
    if not info:
        absent = "the line has no server_info (late-2024 schema): the server's dtype and quantization are not recorded"
    elif "quantization" not in info and "dtype" not in info:
        absent = f"server_info records no dtype or quantization shared by its servers ({layout or 'one server'})"
    else:
        absent = (
            f"server_info states quantization {json.dumps(quant)} and dtype {json.dumps(dtype)}: 'auto' is the checkpoint's "
            "own dtype, which the line does not name"
        )
    rec["format_id"], entry, gap = weight_format(kb, stated, checked, "intake-sglang-serving", absent=absent)
    if gap:
        gaps["format_id"] = gap
    if entry:
        rec["provenance"] = [entry]


def run_record(
    doc: dict[str, Any], number: int, many: bool, path: Path, options: IntakeOptions, kb: KB, sources: list[str], result: IntakeResult
) -> dict[str, Any] | None:
    """One benchmark record for one JSONL line, or ``None`` (KB1102) when no request completed."""
    where = f"line {number}"
    kind = line_kind(doc)
    if kind not in (None, FMT):
        raise InputError(
            f"{where}: not a sglang.bench_serving line: it is `{ONE_BATCH_HARNESS[kind]}` output; use `inferkb intake {kind}`",
            path=str(path),
        )
    C.require_keys(doc, MARKERS, path, FMT)
    completed = int(C.number(doc["completed"], path, f"{where}.completed", nonneg=True))
    if completed == 0:
        result.findings.append(
            C.KB1102.finding(f"{where}: completed is 0; the metrics are placeholders, no record made", path=str(path), field="completed")
        )
        result.stats["skipped"]["no completed requests"] = result.stats["skipped"].get("no completed requests", 0) + 1
        return None
    duration = C.number(doc["duration"], path, f"{where}.duration", positive=True)
    metrics = latency_metrics(doc, path, where)
    for name in ("ttft_ms", "e2e_latency_ms"):
        if name in metrics:
            metrics[name]["stats"]["n"] = completed
    for key, name in RATES.items():
        if doc.get(key) is not None:
            metrics[name] = {
                "value": C.number(doc[key], path, f"{where}.{key}", nonneg=True),
                "unit": "req/s" if name.endswith("rps") else "tok/s",
                "value_scope": "aggregate",
                "basis": f"`{key}` of the line"
                + (" (server-reported output token counts / duration)" if key in ("output_throughput", "total_throughput") else ""),
            }
    out_tokens = doc.get("total_output_tokens")
    if isinstance(out_tokens, (int, float)) and not C.close(out_tokens / duration, metrics["output_tok_s"]["value"], rel=1e-6):
        result.findings.append(
            C.KB1101.finding(
                f"{where}: output_throughput {metrics['output_tok_s']['value']:.6g} is not total_output_tokens / duration "
                f"({out_tokens / duration:.6g})",
                path=str(path),
                field="output_throughput",
            )
        )
    info, layout = server_args(doc.get("server_info"))
    model = options.model or next((info[k] for k in ("served_model_name", "model_path") if isinstance(info.get(k), str)), None)
    backend = doc.get("backend") if isinstance(doc.get("backend"), str) else None
    default_engine = "sglang" if backend and backend.startswith("sglang") else ("vllm" if backend and backend.startswith("vllm") else None)
    engine = C.engine_id(kb, options, default_engine if default_engine in kb.ids_of_type("engine") else None)
    tag = doc.get("tag") if isinstance(doc.get("tag"), str) else None
    rid = C.make_id(
        FMT,
        Path(model).name if model else None,
        options.hardware_raw or options.accelerator,
        tag or path.stem,
        f"line-{number}" if many else None,
    )
    rec = C.skeleton(
        rid=rid,
        name=f"SGLang bench_serving, {Path(model).name if model else path.stem}"
        + (f", {tag}" if tag else "")
        + (f", line {number}" if many else ""),
        engine=engine,
        metric="output_tok_s",
        value=metrics["output_tok_s"]["value"],
        unit="tok/s",
        value_scope="aggregate",
        scenario="online-serving",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    if engine is None:
        C.engine_unstated(
            result,
            rec,
            path,
            f"{where}: backend {backend!r} does not say which engine served the requests; engine_id left null (pass --engine)",
        )
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    stated = C.option_conditions(options)
    rate = doc.get("request_rate")
    if isinstance(rate, _NonFinite):
        stated["request_rate"] = "inf"
    elif rate is not None:
        stated["request_rate"] = C.number(rate, path, f"{where}.request_rate", nonneg=True)
    if C.integer(doc.get("max_concurrency")) is not None:
        stated.setdefault("concurrency", C.integer(doc["max_concurrency"]))
    if isinstance(doc.get("dataset_name"), str):
        stated.setdefault("dataset", doc["dataset_name"])
    length_reasons: dict[str, str] = {}
    _lengths(doc, stated, length_reasons, completed)
    if isinstance(info.get("version"), str):
        stated.setdefault("engine_version", info["version"])
    for cond, key in (
        ("tensor_parallel", "tp_size"),
        ("data_parallel", "dp_size"),
        ("expert_parallel", "ep_size"),
        ("pipeline_parallel", "pp_size"),
    ):
        if layout is None and C.integer(info.get(key)) is not None:
            stated.setdefault(cond, C.integer(info[key]))
    checked = [f"the {FMT} JSONL line (arguments, results and server_info when present)", "command-line options"]
    conditions, gaps = build_conditions({k: v for k, v in stated.items() if v is not None}, FMT, checked, RELEVANT)
    for cond, reason in length_reasons.items():
        if cond in gaps:
            gaps[cond]["reason"] = reason
    if "concurrency" in gaps and "max_concurrency" in doc and doc["max_concurrency"] is None:
        gaps["concurrency"]["reason"] = "max_concurrency is null: no cap on requests in flight; load was set by request_rate"
    if "warmup" in gaps:
        gaps["warmup"]["reason"] = (
            "bench_serving sends warmup requests before timing (--warmup-requests), but the line does not record how many"
        )
    if "tensor_parallel" in gaps and layout:
        gaps["tensor_parallel"]["reason"] = layout
    _format(rec, gaps, info, layout, kb, checked[:1])
    rec["conditions"], rec["condition_gaps"] = conditions, gaps
    C.identity_gaps(rec, FMT, checked[:1], result.findings, path=path, where=path.name)
    rec["metrics"] = metrics
    sub: dict[str, Any] = {"harness": "python -m sglang.bench_serving --output-file (JSONL)", "line": number}
    for key in ("tag", "backend", "completed", "total_input_tokens", "total_output_tokens", "total_output_tokens_retokenized"):
        if isinstance(doc.get(key), (str, int, float)) and not isinstance(doc.get(key), bool):
            sub[key] = doc[key]
    sub["duration_s"] = duration
    retok = doc.get("total_output_tokens_retokenized")
    if isinstance(retok, (int, float)) and isinstance(out_tokens, (int, float)) and out_tokens:
        sub["retokenized_to_server_output_tokens"] = retok / out_tokens
    if isinstance(doc.get("concurrency"), (int, float)):
        sub["mean_requests_in_flight"] = doc["concurrency"]
    if isinstance(doc.get("accept_length"), (int, float)):
        sub["spec_accept_length"] = doc["accept_length"]
    for key in ("random_range_ratio", "random_input_len", "random_output_len", "sharegpt_output_len"):
        if isinstance(doc.get(key), (int, float)) and not isinstance(doc.get(key), bool):
            sub[key] = doc[key]
    for key in SERVER_KEYS:
        if isinstance(info.get(key), (str, int, float, bool)):
            sub[f"server_{key}"] = info[key]
    if layout:
        sub["server_layout"] = layout
    rec["submission"] = sub
    rec["methodology"] = (
        "SGLang bench_serving (one JSONL line per run): headline = output_throughput, the server-reported output tokens / "
        "benchmark duration; total_output_tokens_retokenized (the client re-encoding the generated text) is kept in submission, "
        "not used. Latency stats from the *_ms keys (median as p50, std as stdev); concurrency in the line is the mean number "
        f"of requests in flight, not a cap (submission.mean_requests_in_flight). Field meanings from {SOURCE_NOTE}."
    )
    C.attach_env(rec, options.env, engine_package="sglang")
    if isinstance(info.get("version"), str):
        rec.setdefault("environment", {})["engine_version"] = info["version"]
    return rec


@register
class SglangServing(Importer):
    """``sglang.bench_serving --output-file`` JSONL -> one benchmark record per line (run)."""

    name = FMT
    description = "SGLang `python -m sglang.bench_serving --output-file` JSONL (one record per line; bare Infinity rate read as 'inf')"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Records for every line of every file; raises InputError for unusable input, never writes."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            lines = parse_lines(raw, path)
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            for number, doc in lines:
                rec = run_record(doc, number, len(lines) > 1, path, options, kb, sources, result)
                if rec is not None:
                    bench.append(rec)
        return C.finish_batch(result, extra, bench, options, "runs")
