"""Importers ``sglang-one-batch`` and ``sglang-one-batch-server``: the ``result.jsonl`` of SGLang's single-batch benchmarks.

Both harnesses append one JSON line per (run_name, batch_size, input_len,
output_len) they run (FORMATS.md 3b, 3c); a file accumulates lines, and the
same configuration run again appends an identical-looking line. One record is
made per distinct configuration: repeated lines become the statistics of that
record (``n``, mean, median, min, max, population stdev over the lines, and one
arm ``run`` holding the headline's distribution), never one record per line.

What the lines mean was read from sgl-project/sglang:

- ``python -m sglang.bench_one_batch`` (:data:`SRC_ENGINE`): no server; the
  model runs in-process, the batch is ONE prefill (extend) forward pass and
  ``output_len - 1`` decode steps. Keys (seconds, full float precision):
  ``prefill_latency`` (the extend call, which returns every request's first
  token: TTFT), ``median_decode_latency`` (median step: ITL; absent when
  output_len is 1), ``total_latency`` (prefill + all steps: the batch's E2E);
  rates ``prefill_throughput`` = batch x input_len / prefill_latency,
  ``median_decode_throughput`` = batch / median step, ``overall_throughput`` =
  batch x (input_len + output_len) / total_latency. A warmup run precedes the
  measured ones and writes no line.
- ``python -m sglang.bench_one_batch_server`` (:data:`SRC_SERVER`): the batch
  is one streamed ``/generate`` request with ``ignore_eos`` and
  ``max_new_tokens = output_len`` to a running server. ``latency`` (s, 4
  decimals) is the whole batch; ``output_throughput`` is batch x output_len /
  (latency - TTFT of the LAST request of the batch), a decode-phase rate, in
  every version that writes ``last_gen_throughput`` (the oldest version,
  :data:`SRC_SERVER_OLDEST`, wrote batch x output_len / latency, a whole-run
  output rate): which one a line holds is decided by the line's own numbers.
  ``overall_throughput`` = batch x (input_len + output_len) / latency. Newer
  lines add ``last_ttft`` (s) and ``input_throughput`` = batch x input_len /
  last_ttft, ``acc_length`` (-1.0 = speculative decoding off: a sentinel, not
  a measurement) and ``cache_hit_rate`` (null stays null).
  ``last_gen_throughput`` is the server's own figure for its last decode
  batch, kept in ``submission``.

Units become the KB's (s -> ms, scaled in decimal so 70.1871 s is 70187.1 ms:
no digits are added); a figure the file rounded keeps its precision, and a
mean or stdev over rounded lines is rounded to the same resolution. Every
line's throughputs are cross-checked against its latencies (KB1101 when they
disagree beyond the file's rounding). Latencies must not be negative (an
InputError naming file, line and field); a zero latency reaches the write's
statistics rules (KB122) and is refused there.

Conditions: batch_size, input_len and output_len are stated by every line;
``concurrency`` = batch_size because the batch is submitted at once (the
provenance says so). Model, hardware, TP size, engine version and warmup are
not in these files: null with a ``condition_gaps`` reason naming what the
harness does by default and what would recover it. A corpus file listed in
``harness/SOURCES.md`` cites its upstream repository, path and commit
(:mod:`inferkb.intake.harness_pins`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..jsonio import parse_bytes
from . import common as C
from . import sglang_batch_lines as L
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register, sample_stats, today
from .harness_pins import resolve_pinned_sources
from .sglang_serving import parse_lines

if TYPE_CHECKING:
    from ..kb import KB

ENGINE, SERVER = L.ENGINE, L.SERVER
SRC_ENGINE, SRC_SERVER, SRC_SERVER_OLDEST = L.SRC_ENGINE, L.SRC_SERVER, L.SRC_SERVER_OLDEST
RELEVANT = ("batch_size", "concurrency", "input_tokens", "output_tokens", "warmup", "engine_version", "tensor_parallel")
TAG = {ENGINE: "intake-sglang-one-batch", SERVER: "intake-sglang-one-batch-server"}


@dataclass
class Group:
    """The lines of one configuration: ``key`` = (run_name, batch, input_len, output_len)."""

    key: tuple[str | None, int, int, int]
    lines: list[L.Line] = field(default_factory=list)


def _stats(samples: list[tuple[float, float]]) -> dict[str, Any]:
    """Stats over repeats ``[(value in KB units, value as written)]``: mean, p50, min, max, stdev (population), n.

    When every written value was rounded (at most 6 decimals), mean, median and
    stdev are rounded to the finest resolution among the values (in KB units).
    """
    s = sample_stats([v for v, _ in samples])
    out = {k: s[k] for k in ("mean", "p50", "min", "max", "stdev", "n")}
    written = [L.decimals(raw) for _, raw in samples]
    if max(written) <= L.ROUNDED_MAX_DECIMALS:
        places = max(L.decimals(v) for v, _ in samples)
        for k in ("mean", "p50", "stdev"):
            out[k] = round(out[k], places)
    return out


def _gaps(fmt: str, gaps: dict[str, Any], pin: dict[str, str] | None) -> None:
    """The harness-specific reasons of the gaps :func:`build_conditions` left generic (in place)."""
    if "warmup" in gaps:
        gaps["warmup"]["reason"], gaps["warmup"]["recover"] = L.WARMUP_REASON[fmt], L.WARMUP_RECOVER[fmt]
    if "engine_version" in gaps:
        gaps["engine_version"]["reason"] = "the line states no SGLang version or commit" + (
            f"; the file is committed to {pin['repo']} at {pin['commit'][:12]}, which dates the file but does not say "
            "which SGLang build produced it"
            if pin
            else ""
        )
    if "tensor_parallel" in gaps:
        gaps["tensor_parallel"]["reason"] = "the line records no server arguments (tp_size)"


def _speculative(group: Group, sub: dict[str, Any], result: IntakeResult, path: Path) -> None:
    states = [ln.spec for ln in group.lines if ln.spec is not None]
    if not states:
        return
    if all(s == "off" for s in states):
        sub["speculative_decoding"] = False
    elif all(isinstance(s, float) for s in states):
        sub["speculative_decoding"] = True
        L.summary(sub, "spec_accept_length", [float(s) for s in states])
    else:
        result.findings.append(
            C.KB1101.finding(
                f"lines {L.line_list(group.lines)}: repeats of one configuration disagree on speculative decoding "
                "(acc_length -1.0 on some lines, an acceptance length on others); speculative_decoding left unset",
                path=str(path),
                field="acc_length",
            )
        )


def _provenance(fmt: str, group: Group, rec: dict[str, Any]) -> list[dict[str, Any]]:
    first = group.lines[0]
    batch = group.key[1]
    many = len(group.lines) > 1
    entries = [
        {
            "date": today(),
            "tag": TAG[fmt],
            "field": "*",
            "action": "import",
            "method": f"inferkb.intake.sglang_one_batch ({fmt})",
            "evidence": {"field": f"line {first.number}", "quote": first.text[:300]},
            "basis": (
                f"{len(group.lines)} lines of one run_name x batch_size x input_len x output_len (lines {L.line_list(group.lines)}) "
                "combined as repeats: stats over the lines, population stdev"
                if many
                else "one line of the file"
            )
            + "; latencies in seconds scaled to ms in decimal arithmetic (x 1000, no digits added)",
            "numbers_changed": False,
        },
        {
            "date": today(),
            "tag": TAG[fmt],
            "field": "conditions.concurrency",
            "action": "import",
            "method": "concurrency = batch_size",
            "evidence": {"field": f"line {first.number}.batch_size", "quote": first.quote("batch_size")},
            "basis": L.CONCURRENCY_BASIS[fmt].format(batch=batch),
            "numbers_changed": False,
        },
    ]
    for metric, key in first.source_key.items():
        if metric not in rec["metrics"]:
            continue
        scale = L.SCALE.get(key, 1)
        entries.append(
            {
                "date": today(),
                "tag": TAG[fmt],
                "field": f"metrics.{metric}",
                "action": "import",
                "method": f"{key} x {scale} (s -> ms)" if scale != 1 else f"{key} as written (tok/s)",
                "evidence": {"field": f"line {first.number}.{key}", "quote": first.quote(key)},
                "basis": rec["metrics"][metric]["basis"],
                "numbers_changed": False,
            }
        )
    return entries


def group_record(
    fmt: str, group: Group, path: Path, options: IntakeOptions, kb: KB, sources: list[str], pin: dict[str, str] | None, result: IntakeResult
) -> dict[str, Any]:
    """One benchmark record for the lines of one configuration (see the module docstring)."""
    run_name, batch, isl, osl = group.key
    lines = group.lines
    n = len(lines)
    metrics: dict[str, dict[str, Any]] = {}
    for metric in L.METRIC_ORDER:
        have = [ln for ln in lines if metric in ln.values]
        if not have:
            continue
        entry: dict[str, Any] = {}
        if len(have) == 1:
            entry["value"] = have[0].values[metric]
        else:
            entry["stats"] = _stats([(ln.values[metric], ln.written[metric]) for ln in have])
        entry.update(unit=L.UNIT[metric], value_scope=L.SCOPE[metric], basis=have[0].basis[metric])
        metrics[metric] = entry
    headline = metrics["e2e_latency_ms"]
    value = headline.get("value", headline.get("stats", {}).get("mean"))
    model = options.model or next((ln.model for ln in lines if ln.model), None)
    engine = C.engine_id(kb, options, "sglang" if "sglang" in kb.ids_of_type("engine") else None)
    config = f"bs{batch}-in{isl}-out{osl}"
    rid = C.make_id(fmt, run_name, config, Path(model).name if model else None, options.hardware_raw or options.accelerator, path.stem)
    rec = C.skeleton(
        rid=rid,
        name=f"SGLang {L.HARNESS[fmt].removeprefix('python -m sglang.')}, {run_name or 'no run_name'}, batch {batch}, "
        f"ISL {isl}, OSL {osl}" + (f", {n} repeats" if n > 1 else "") + f" ({path.name})",
        engine=engine,
        metric="e2e_latency_ms",
        value=value,
        unit="ms",
        value_scope=None,
        scenario="offline",
        sources=sources,
        options=options,
    )
    rec["model"] = model
    if engine is None:
        C.engine_unstated(result, rec, path, "no engine record 'sglang' in this KB and no --engine given; engine_id left null")
    C.apply_hardware(rec, kb, options, None, result.findings, path=path)
    stated = C.option_conditions(options)
    for cond, val in (("batch_size", batch), ("concurrency", batch), ("input_tokens", isl), ("output_tokens", osl)):
        stated.setdefault(cond, val)
    tp = {ln.tp_size for ln in lines if ln.tp_size is not None}
    if len(tp) == 1:
        stated.setdefault("tensor_parallel", tp.pop())
    checked = [f"the {fmt} JSONL lines {L.line_list(lines)} of {path.name}", "command-line options"]
    rec["format_id"] = None
    rec["conditions"], rec["condition_gaps"] = build_conditions(stated, fmt, checked, RELEVANT)
    _gaps(fmt, rec["condition_gaps"], pin)
    rec["condition_gaps"]["format_id"] = {
        "reason": "the line states no weight or KV-cache dtype or quantization",
        "checked": checked[:1],
        "recover": "the server or engine launch arguments (--dtype, --quantization, --kv-cache-dtype)",
    }
    C.identity_gaps(rec, fmt, checked[:1], result.findings, path=path, where=path.name)
    rec["metrics"] = metrics
    if n > 1:
        rec["arms"] = [
            {
                "id": "run",
                "label": f"{n} repeated lines ({L.line_list(lines)})",
                "config": {},
                "stats": metrics["e2e_latency_ms"]["stats"],
                "unit": "ms",
            }
        ]
        rec["baseline_arm"] = "run"
    rec["submission"] = L.submission(fmt, group.key, lines, pin, result)
    _speculative(group, rec["submission"], result, path)
    rec["methodology"] = L.METHODOLOGY[fmt] + (
        f" {n} lines share this configuration and are treated as repeats; the file records no server or engine arguments, "
        "so runs of differently configured setups under one run_name cannot be told apart."
        if n > 1
        else ""
    )
    rec["provenance"] = _provenance(fmt, group, rec)
    C.attach_env(rec, options.env, engine_package="sglang")
    return rec


def sniff(raw: bytes, path: Path) -> str | None:
    """The harness (see :func:`~inferkb.intake.sglang_batch_lines.line_kind`) of a JSONL file's first line, ``None`` for anything else; never raises."""
    try:
        lines = parse_lines(raw, path)
    except InputError:
        return None
    return L.line_kind(lines[0][1])


def _one_document(raw: bytes) -> bool:
    """True when the whole file is one (multi-line) JSON document: another harness's JSON, not JSON lines."""
    value, problem = parse_bytes(raw, require_object=False)
    return problem is None and isinstance(value, (dict, list)) and len(raw.strip().splitlines()) > 1


def parse_files(fmt: str, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
    """Records of every configuration of every file; raises InputError (the file, line and field) for unusable input."""
    result = IntakeResult(stats={"imported": 0, "skipped": {}, "lines": 0})
    extra: list[dict[str, Any]] = []
    bench: list[dict[str, Any]] = []
    for path in paths:
        raw = read_input(path)
        try:
            parsed = parse_lines(raw, path, harness=f"{L.HARNESS[fmt]} result file")
        except InputError as exc:
            if _one_document(raw):
                raise InputError(
                    f"one JSON document, not a {L.HARNESS[fmt]} result.jsonl (one JSON object per line)", path=str(path)
                ) from None
            raise exc from None
        texts = raw.decode("utf-8").splitlines()
        groups: dict[tuple[str | None, int, int, int], Group] = {}
        for number, doc in parsed:
            line = L.read_line(fmt, number, texts[number - 1], doc, path, result)
            if line is None:
                continue
            groups.setdefault(line.key, Group(line.key)).lines.append(line)
            result.stats["lines"] += 1
        sources, pin = resolve_pinned_sources(kb, options, path, raw, fmt, L.HARNESS[fmt], extra)
        for group in groups.values():
            bench.append(group_record(fmt, group, path, options, kb, sources, pin, result))
    return C.finish_batch(result, extra, bench, options, "configurations")


@register
class SglangOneBatch(Importer):
    """``python -m sglang.bench_one_batch`` result.jsonl -> one record per configuration (repeats as stats)."""

    name = ENGINE
    description = (
        "SGLang `python -m sglang.bench_one_batch` result.jsonl (offline engine, no server; one record per "
        "run_name x batch x ISL x OSL, repeated lines as stats; prefill/decode split, s -> ms)"
    )

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """See the module docstring; raises InputError/UsageError, never writes."""
        return parse_files(ENGINE, paths, options, kb)


@register
class SglangOneBatchServer(Importer):
    """``python -m sglang.bench_one_batch_server`` result.jsonl (old and new keys) -> one record per configuration."""

    name = SERVER
    description = (
        "SGLang `python -m sglang.bench_one_batch_server` result.jsonl (old and new keys; one record per "
        "run_name x batch x ISL x OSL, repeated lines as stats; s -> ms; acc_length -1 = no speculative decoding)"
    )

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """See the module docstring; raises InputError/UsageError, never writes."""
        return parse_files(SERVER, paths, options, kb)
