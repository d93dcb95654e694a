"""Impossible statistics (KB120-KB123): orders, signs and spreads no measurement can have.

A benchmark's numbers live in three places: the headline ``value`` (with its
``metric``), ``metrics.<name>`` (``value``, ``stats``, ``percentiles``) and
``arms[].stats``. Whatever a harness printed, some combinations cannot come
from any set of samples:

- KB120 ``stat-order``: order statistics out of order. For any sample,
  ``min <= p50 <= p90 <= p95 <= p99 <= p99.9 <= max`` (a percentile is a
  non-decreasing function of its rank) and ``min <= mean <= max``.
- KB121 ``stat-negative``: a negative standard deviation, or a negative
  value of a latency, rate, memory or energy metric (registry dimension;
  a ratio or a quality delta may be negative).
- KB122 ``stat-zero``: a latency statistic or a run duration of zero or
  less (a request that took no time, a run that lasted none; rates divided
  by such a duration are meaningless). Gaps between tokens (metrics whose
  registry ``measures`` is ``itl``: ITL, TPOT) are exempt: a streamed chunk
  that carries several tokens gives real zero gaps (AIPerf's ITL minimum
  is 0 in the corpus profile of Qwen3-4B), so only their sign is checked.
  A token throughput (output, total, input: registry tok/s rates that
  measure ``throughput``) of zero or less beside a positive request rate
  (req/s) of the same record is refused too: every completed request has at
  least one input and one output token.
- KB123 ``stat-spread``: a standard deviation larger than the range allows.
  Popoviciu's inequality on variances (T. Popoviciu, 1935) bounds the
  population variance by ``(max - min)^2 / 4``; the sample (n - 1)
  standard deviation is therefore at most ``(max - min) / 2 * sqrt(n / (n - 1))``,
  and at most ``(max - min) / sqrt(2)`` for any n >= 2 (the n = 2 case) when
  ``n`` is not stated. ``n = 1`` admits only a standard deviation of 0.

Every rule is error severity: intake refuses a batch holding such a record
(the store's writer runs :func:`inferkb.validate.validate_records` first) and
``validate`` reports one already in the KB. Comparisons allow a relative
slack of 1e-9 plus 1e-9 absolute, so values rounded alike (a console's two
decimals) never trip a rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from .findings import Finding
from .rules import Rule, register

KB120 = register(
    Rule(
        "KB120",
        "stat-order",
        "error",
        "validate",
        "Order statistics out of order: a percentile above a higher one, min above a percentile, max below one, or mean outside [min, max].",
        "A percentile never decreases with its rank and a mean lies between the smallest and the largest sample; "
        "a p99 below the p50 is a transcription or unit error, not a measurement.",
        '"stats": {"min": 10, "p50": 12, "p99": 30, "max": 41, "mean": 14}',
        '"stats": {"p50": 120, "p99": 80}',
    )
)
KB121 = register(
    Rule(
        "KB121",
        "stat-negative",
        "error",
        "validate",
        "A negative standard deviation, or a negative latency, rate, memory or energy value.",
        "A standard deviation is a square root and latencies, throughputs, memory and energy are magnitudes; "
        "a minus sign there is a parsing or sign error.",
        '"metrics": {"ttft_ms": {"value": 35.1, "unit": "ms"}}',
        '"metrics": {"output_tok_s": {"value": -812.0, "unit": "tok/s"}}',
    )
)
KB122 = register(
    Rule(
        "KB122",
        "stat-zero",
        "error",
        "validate",
        "A latency statistic or a run duration of zero or less; a token throughput of zero beside a positive request rate.",
        "Every request takes some time and a run lasts some time; a rate computed over a zero duration is a division by zero; "
        "completed requests carry tokens.",
        '"submission": {"duration_s": 61.3}',
        '"submission": {"duration_s": 0}',
    )
)
KB123 = register(
    Rule(
        "KB123",
        "stat-spread",
        "error",
        "validate",
        "A standard deviation larger than its range allows (Popoviciu's inequality), or non-zero with n = 1.",
        "The population variance of samples in [min, max] is at most (max - min)^2 / 4; a larger spread cannot come from those samples.",
        '"stats": {"min": 10, "max": 20, "stdev": 3.1, "n": 50}',
        '"stats": {"min": 10, "max": 11, "stdev": 9.0, "n": 50}',
    )
)

# Ranked slots of a stats object, lowest rank first (the schema's names; p999 = p99.9).
RANKED = ("min", "p50", "p90", "p95", "p99", "p999", "max")
RANK = {"min": 0.0, "p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9, "max": 100.0}
MAGNITUDE_DIMENSIONS = frozenset({"latency", "rate", "memory", "energy"})
DURATION_KEYS = frozenset({"duration", "duration_s", "duration_ms", "duration_ns"})


def _num(value: Any) -> float | None:
    kind = type(value)  # exact types first: nearly every call gets a float or an int parsed from JSON
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _above(a: float, b: float) -> bool:
    """True when ``a`` exceeds ``b`` by more than rounding slack."""
    return a - b > 1e-9 + 1e-9 * max(abs(a), abs(b))


def _ranked(stats: Mapping[str, Any], percentiles: Mapping[str, Any] | None) -> list[tuple[float, str, float]]:
    out = [(RANK[k], k, v) for k in RANKED if (v := _num(stats.get(k))) is not None]
    for key, val in (percentiles or {}).items():
        if not isinstance(key, str) or not key.startswith("p"):
            continue
        try:
            rank = float(key[1:])
        except ValueError:
            continue
        if 0 <= rank <= 100 and (v := _num(val)) is not None:
            out.append((rank, f"percentiles.{key}", v))
    out.sort(key=lambda t: t[0])
    return out


def _stdev_problems(stats: Mapping[str, Any], lo: float | None, hi: float | None) -> list[tuple[Rule, str, str]]:
    """KB121 (negative) and KB123 (Popoviciu) for ``stats["stdev"]``, given the block's numeric ``min`` and ``max``."""
    out: list[tuple[Rule, str, str]] = []
    sd = _num(stats.get("stdev"))
    if sd is not None and sd < 0:
        out.append((KB121, "stdev", f"stdev = {sd:g} is negative; a standard deviation is a square root"))
    n = stats.get("n")
    n = n if isinstance(n, int) and not isinstance(n, bool) else None
    if sd is not None and sd > 0:
        if n == 1:
            out.append((KB123, "stdev", f"stdev = {sd:g} with n = 1; one sample has no spread"))
        elif lo is not None and hi is not None and hi >= lo:
            bound = (hi - lo) / 2 * math.sqrt(n / (n - 1)) if n is not None and n >= 2 else (hi - lo) / math.sqrt(2)
            if _above(sd, bound):
                out.append(
                    (
                        KB123,
                        "stdev",
                        f"stdev = {sd:g} exceeds {bound:g}, the most samples in [{lo:g}, {hi:g}]"
                        f"{f' (n = {n})' if n else ''} can spread (Popoviciu's inequality)",
                    )
                )
    return out


def stats_problems(stats: Mapping[str, Any], percentiles: Mapping[str, Any] | None = None) -> list[tuple[Rule, str, str]]:
    """What is impossible in one stats object: ``[(rule, slot, message)]`` for KB120, KB121 (stdev) and KB123.

    ``stats`` is ``{mean, p50, p90, p95, p99, p999, min, max, stdev, n}`` (any
    subset; null and non-numbers ignored); ``percentiles`` is the ``{"p25": v,
    "p99.9": v}`` map a metric may carry beside it. Only adjacent ranks are
    compared, so one misplaced value gives one message.
    """
    out: list[tuple[Rule, str, str]] = []
    ranked = _ranked(stats, percentiles)
    for (r_lo, k_lo, v_lo), (r_hi, k_hi, v_hi) in zip(ranked, ranked[1:], strict=False):
        if r_hi > r_lo and _above(v_lo, v_hi):
            out.append((KB120, k_hi, f"{k_hi} = {v_hi:g} is below {k_lo} = {v_lo:g}; a higher rank cannot have a smaller value"))
    mean, lo, hi = _num(stats.get("mean")), _num(stats.get("min")), _num(stats.get("max"))
    if mean is not None and lo is not None and _above(lo, mean):
        out.append((KB120, "mean", f"mean = {mean:g} is below min = {lo:g}"))
    if mean is not None and hi is not None and _above(mean, hi):
        out.append((KB120, "mean", f"mean = {mean:g} is above max = {hi:g}"))
    out.extend(_stdev_problems(stats, lo, hi))
    return out


SCALAR_SLOTS = ("mean", *RANKED)  # the stats slots the sign rules read, in the order their findings come out
SLOT_ORDER = {key: i for i, key in enumerate(SCALAR_SLOTS)}


def _block_problems_general(
    where: str, name: str | None, block: Mapping[str, Any], dim: str | None, zero_impossible: bool
) -> list[tuple[Rule, str, str]]:
    """:func:`block_problems` as the rules read: :func:`stats_problems`, then the sign and zero rules slot by slot."""
    out: list[tuple[Rule, str, str]] = []
    stats = block.get("stats") if isinstance(block.get("stats"), dict) else {}
    percentiles = block.get("percentiles") if isinstance(block.get("percentiles"), dict) else None
    for rule, slot, message in stats_problems(stats, percentiles):
        out.append((rule, f"{where}.stats.{slot}" if not slot.startswith("percentiles.") else f"{where}.{slot}", message))
    scalars = {f"stats.{k}": stats.get(k) for k in SCALAR_SLOTS if k in stats}
    if "value" in block:
        scalars["value"] = block.get("value")
    for key, val in (percentiles or {}).items():
        scalars[f"percentiles.{key}"] = val
    for slot, raw in scalars.items():
        x = _num(raw)
        if x is None:
            continue
        if dim in MAGNITUDE_DIMENSIONS and x < 0:
            out.append((KB121, f"{where}.{slot}", f"{slot} = {x:g} is negative; {name} is a {dim}"))
        elif x == 0 and zero_impossible:
            out.append((KB122, f"{where}.{slot}", f"{slot} = 0 for the latency metric {name}; a request cannot take no time"))
    return out


def block_problems(
    where: str, name: str | None, block: Mapping[str, Any], dim: str | None, zero_impossible: bool
) -> list[tuple[Rule, str, str]]:
    """KB120-KB123 of one numbers block (``{"stats": {...}, "percentiles": {...}, "value": v}``) at field path ``where``.

    ``name`` is the block's metric, ``dim`` its registry dimension, ``zero_impossible`` whether a 0 of it is refused
    (KB122). Returns ``[(rule, field, message)]``. A block without a ``percentiles`` map (nearly all) takes one pass over
    its stats slots; any other block takes :func:`_block_problems_general`, which gives the same list for every block
    (a property test holds the two equal).
    """
    if block.get("percentiles"):
        return _block_problems_general(where, name, block, dim, zero_impossible)
    stats = block.get("stats")
    if type(stats) is not dict:
        stats = stats if isinstance(stats, dict) else {}
    nums: dict[str, float] = {}
    for key, raw in stats.items():
        if key in SLOT_ORDER and raw is not None and (x := _num(raw)) is not None:
            nums[key] = x
    out: list[tuple[Rule, str, str]] = []
    if nums:
        if len(nums) > 1:
            nums = {key: nums[key] for key in sorted(nums, key=SLOT_ORDER.__getitem__)}
        k_lo = v_lo = None
        for k_hi, v_hi in nums.items():
            if k_hi == "mean":
                continue
            if k_lo is not None and _above(v_lo, v_hi):
                out.append(
                    (
                        KB120,
                        f"{where}.stats.{k_hi}",
                        f"{k_hi} = {v_hi:g} is below {k_lo} = {v_lo:g}; a higher rank cannot have a smaller value",
                    )
                )
            k_lo, v_lo = k_hi, v_hi
        mean, lo, hi = nums.get("mean"), nums.get("min"), nums.get("max")
        if mean is not None and lo is not None and _above(lo, mean):
            out.append((KB120, f"{where}.stats.mean", f"mean = {mean:g} is below min = {lo:g}"))
        if mean is not None and hi is not None and _above(mean, hi):
            out.append((KB120, f"{where}.stats.mean", f"mean = {mean:g} is above max = {hi:g}"))
    raw_sd = stats.get("stdev")
    if raw_sd is not None:
        for rule, slot, message in _stdev_problems(stats, nums.get("min"), nums.get("max")):
            out.append((rule, f"{where}.stats.{slot}", message))
    check_sign = dim in MAGNITUDE_DIMENSIONS
    if check_sign or zero_impossible:
        if "value" in block and (x := _num(block.get("value"))) is not None:
            nums["value"] = x
        for key, x in nums.items():
            slot = key if key == "value" else f"stats.{key}"
            if check_sign and x < 0:
                out.append((KB121, f"{where}.{slot}", f"{slot} = {x:g} is negative; {name} is a {dim}"))
            elif x == 0 and zero_impossible:
                out.append((KB122, f"{where}.{slot}", f"{slot} = 0 for the latency metric {name}; a request cannot take no time"))
    return out


def _metric_blocks(data: Mapping[str, Any]) -> Iterator[tuple[str, str | None, Mapping[str, Any]]]:
    """``(field path, metric name or None, block)`` for every place a benchmark keeps numbers."""
    arms = data.get("arms")
    headline = data.get("metric") if isinstance(data.get("metric"), str) else None
    if isinstance(arms, list):
        for i, arm in enumerate(arms):
            if isinstance(arm, dict) and isinstance(arm.get("stats"), dict):
                yield f"arms[{i}]", headline, {"stats": arm["stats"]}
    metrics = data.get("metrics")
    if isinstance(metrics, dict):
        for name, block in metrics.items():
            if isinstance(block, dict):
                yield f"metrics.{name}", str(name), block


def _durations(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if k in DURATION_KEYS and (x := _num(v)) is not None:
                yield sub, x
            elif isinstance(v, (dict, list)):
                yield from _durations(v, sub)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _durations(v, f"{path}[{i}]")


def _may_hold_duration(value: Any) -> bool:
    """False only when no key of :data:`DURATION_KEYS` occurs anywhere in ``value`` (each serialises as ``"duration...``),
    tested on its orjson serialisation, so :func:`_durations` need not walk it; True when it cannot be serialised."""
    try:
        return b'"duration' in orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits (strict-path records), a non-str key
        return True


def _zero_token_rates(data: Mapping[str, Any], metrics: Mapping[str, Mapping[str, Any]], add: Any) -> None:
    """KB122 for a token throughput of zero or less (``-0.0`` included) beside a positive request rate in one record.

    Token throughputs are the registry's tok/s rates that measure ``throughput``
    (output, total, input, aggregate); the request rate is a req/s rate. Every
    completed request has at least one input and one output token, so a run that
    completed requests at a positive rate moved tokens at a positive rate.
    """

    def registry(name: str) -> Mapping[str, Any]:
        entry = metrics.get(name)
        return entry if isinstance(entry, Mapping) and entry.get("dimension") == "rate" else {}

    values: dict[str, tuple[str, float]] = {}  # metric -> (field, value)
    blocks = data.get("metrics") if isinstance(data.get("metrics"), dict) else {}
    if not blocks:  # the headline alone cannot be both the req/s rate and a tok/s rate
        return
    for name, block in blocks.items():
        if isinstance(block, dict) and (x := _num(block.get("value"))) is not None:
            values[str(name)] = (f"metrics.{name}.value", x)
    head = data.get("metric")
    if isinstance(head, str) and (x := _num(data.get("value"))) is not None:
        values.setdefault(head, ("value", x))
    requests = [(n, x) for n, (_, x) in values.items() if registry(n).get("unit") == "req/s" and x > 0]
    if not requests:
        return
    req_name, req_rate = requests[0]
    for name, (field, x) in values.items():
        entry = registry(name)
        if entry.get("unit") == "tok/s" and entry.get("measures") == "throughput" and x <= 0:
            add(
                KB122,
                field,
                f"{name} = {x:g} tok/s while {req_name} = {req_rate:g} req/s; completed requests carry tokens, so a run "
                "that completed requests cannot have moved none",
            )


def _metric_kind(metrics: Mapping[str, Mapping[str, Any]], name: str | None) -> tuple[str | None, bool]:
    """``(registry dimension, whether a 0 is refused)`` of metric ``name``: a 0 is refused for a latency that every
    request spends (TTFT, E2E), not for a gap between tokens (``measures`` ``itl``), which can be 0."""
    entry = metrics.get(name) if name else None
    if not (type(entry) is dict or isinstance(entry, Mapping)):
        return None, False
    dim = entry.get("dimension")
    return dim, dim == "latency" and entry.get("measures") != "itl"


def stat_findings(
    data: Mapping[str, Any], metrics: Mapping[str, Mapping[str, Any]], *, record: str, path: str, durations: bool = True
) -> list[Finding]:
    """KB120-KB123 findings for one benchmark record's ``data``.

    ``metrics`` is the metric registry ``{name: {dimension, ...}}`` (an empty
    registry skips the sign rules that need a metric's dimension). ``durations=False``: the caller knows that no
    key of :data:`DURATION_KEYS` occurs in ``data`` (the loader saw no ``"duration`` in its bytes), so the run
    durations are not looked for.
    """
    out: list[Finding] = []

    def add(rule: Rule, field: str, message: str) -> None:
        out.append(rule.finding(message, record=record, path=path, field=field))

    metric = data.get("metric")
    head_dim, head_zero_impossible = _metric_kind(metrics, metric if isinstance(metric, str) else None)
    value = _num(data.get("value"))
    if value is not None and head_dim in MAGNITUDE_DIMENSIONS and value < 0:
        add(KB121, "value", f"value = {value:g} is negative; {metric} is a {head_dim}")
    if value is not None and head_zero_impossible and value == 0:
        add(KB122, "value", f"value = 0 for the latency metric {metric}")
    if data.get("arms") or data.get("metrics"):  # else _metric_blocks yields nothing
        for where, name, block in _metric_blocks(data):
            for rule, field, message in block_problems(where, name, block, *_metric_kind(metrics, name)):
                add(rule, field, message)
    _zero_token_rates(data, metrics, add)
    if not durations:
        return out
    timed = {k: data.get(k) for k in ("submission", "environment", "conditions")}
    for field, x in _durations(timed, "") if _may_hold_duration(timed) else ():
        if x <= 0:
            add(KB122, field, f"{field} = {x:g}; a run cannot last no time")
    return out
