"""Audit ``metric-consistency``: does a benchmark's metric match what its own text says was measured?

Checks (codes KB401-KB406): the metric disagrees with the quantity its
``unit``/``name`` describe (a ``ttft_ms`` record whose unit is an end-to-end
latency); a rate metric whose value is a ratio; a ratio metric with no named
baseline; signed percentage changes quoted in the text that the numbers in
the text or the arms do not reproduce; non-positive rates; throughput whose
scope (per-device, per-node, aggregate, per-request) is stated nowhere.

Works on a KB with a metric registry (``kb.metrics``) and on one without (the
corpus): metrics a KB's registry does not describe are looked up in inferkb's
own registry (``kb/metrics.json``, the only place metrics are described).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..arms import arm_deltas
from ..metrics import bundled_metrics
from ..rules import Rule, register
from . import AuditResult, audit, record_cache
from .metric_consistency_cache import SKIPPED, cached_result, keep_result, metric_consistency_cache

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

_LATENCY_CUES = {
    "ttft": re.compile(r"\bttft\b|time[ -]to[ -]first[ -]token|first[ -]token", re.I),
    "e2e": re.compile(
        r"end[ -]to[ -]end|\be2e\b|full request|request latency|time[ -]to[ -]last[ -]token|\bttlt\b|total (?:request )?latency", re.I
    ),
    "itl": re.compile(r"inter[ -]token|\bitl\b|\btpot\b|time per output token|per[ -]token latency|ms ?/ ?tok", re.I),
}
_LATENCY_NAMES = {"ttft": "time to first token", "e2e": "end-to-end request latency", "itl": "inter-token latency / TPOT"}
_PHASE_CUES = {
    "prefill": re.compile(r"\bprefill\b|prompt processing|\bpp\d+\b", re.I),
    "decode": re.compile(r"\bdecode\b|\bgenerat(?:ion|ed)\b|\btg\d+\b", re.I),
}
_FLOPS_CUE = re.compile(r"\b[TPG]?FLOPS\b|\bTOPS\b")
_RATE_CUE = re.compile(r"\btok(?:en)?s?\s*/\s*s(?:ec)?\b|tokens per second|\btps\b|\breq/s\b", re.I)
_TIME_CUE = re.compile(r"^\s*(?:ms|s|seconds?|milliseconds?)\b|\b(?:ms|milliseconds?|seconds?)\b", re.I)
_RATIO_CUE = re.compile(
    r"^\s*x\b|\bx\s+(?:multiple|speed-?up|faster|slower|the)\b|\bmultiple of\b|\bspeed-?up\b|"
    r"\btimes (?:the|faster|slower|higher|lower)\b|\binflation factor\b",
    re.I,
)
_BASELINE_CUE = re.compile(
    r"\bbaseline\b|\bvs\.?(?=\s)|\bversus\b|\brelative to\b|\bcompared (?:to|with)\b|\bover (?:the )?(?:same|vanilla|default)\b", re.I
)

# Scope of a throughput value, most specific first: a value "per GPU (aggregate across the rack)" is per-device.
SCOPE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "per-device",
        re.compile(
            r"(?<!\dW )(?<!\d W )\bper[ -](?:gpu|accelerator|chip|card|device)\b(?![ -]*(?:power|cap|tdp|limit|memory|vram))|/\s?gpu\b",
            re.I,
        ),
    ),
    ("per-node", re.compile(r"\bper[ -](?:\d+[ -]gpu[ -])?(?:node|server|host)\b", re.I)),
    ("per-system", re.compile(r"\bper[ -](?:system|rack|cluster)\b", re.I)),
    (
        "per-request",
        re.compile(
            r"\bper[ -](?:request|user)\b|\bsingle[ -]stream\b|\bone user\b|\bone request at a time\b|"
            r"\bbatch(?:[ _-]?size)?\s*(?:=|of|-)?\s*1\b(?![.\d])|\bbs\s*=?\s*1\b(?![.\d])|\bconcurrency\s*(?:=|of)?\s*1\b(?![.\d])|\btg\d+\b",
            re.I,
        ),
    ),
    ("aggregate", re.compile(r"\baggregate\b|\bacross all\b|\bsummed over\b|\bsystem[ -]wide\b", re.I)),
)
_SCOPE_FIELDS = ("unit", "name", "methodology")

KB401 = register(
    Rule(
        "KB401",
        "metric-unit-mismatch",
        "error",
        "metric-consistency",
        "The metric names one quantity but the record's unit/name describe another.",
        "A ttft_ms filter returns every record filed as ttft_ms; an end-to-end latency filed there makes TTFT look ten to a hundred times worse "
        "than it is. The unit text is the record's own statement of what was measured, so a contradiction is read from the record itself.",
        '{"metric": "ttft_ms", "unit": "ms to first token (512-token prompt)"}',
        '{"metric": "ttft_ms", "unit": "ms average end-to-end latency ..."}',
    )
)
KB402 = register(
    Rule(
        "KB402",
        "rate-value-is-ratio",
        "error",
        "metric-consistency",
        "A rate metric (tok/s, req/s) carries a ratio ('1.38x', 'speedup', 'multiple of').",
        "A factor of 13.4 filed as tok/s reads as a plausible throughput and gets quoted as one; ratios belong to a ratio metric with a named baseline.",
        '{"metric": "tps_aggregate", "unit": "output tokens/s"}',
        '{"metric": "tps_aggregate", "unit": "x MULTIPLE of the true steady-state tok/s"}',
    )
)
KB403 = register(
    Rule(
        "KB403",
        "ratio-baseline-missing",
        "error",
        "metric-consistency",
        "A ratio metric that needs a baseline (speedup, delta) names none.",
        "'2x faster' against an unnamed baseline cannot be checked or compared; the baseline is part of the measurement (a ratio metric must name its baseline).",
        '{"metric": "speedup_ratio", "unit": "x vs BASELINE: same build without EAGLE-3"}',
        '{"metric": "speedup_ratio", "unit": "x"}',
    )
)
KB404 = register(
    Rule(
        "KB404",
        "quoted-change-mismatch",
        "warning",
        "metric-consistency",
        "A percentage change quoted in the text is not reproduced by the numbers in the text or the arms.",
        "Percentages are derived numbers; recomputing them from the quoted figures catches transcription slips. Tolerance is the rounding of the quoted "
        "percentage plus the rounding of the figures it was computed from.",
        '"0.894 s ... 1.578 s (+76.5%)"  ((1.578-0.894)/0.894 = +76.5%)',
        '"0.894 s ... 1.578 s (+67.5%)"',
    )
)
KB405 = register(
    Rule(
        "KB405",
        "non-positive-rate",
        "warning",
        "metric-consistency",
        "A rate metric has a value of zero or less.",
        "A rate of 0 reads as a failed run; a figure that was not published should be null with a reason, and a deliberate zero needs its own metric or a note.",
        '{"metric": "decode_tok_s", "value": 42.0}',
        '{"metric": "decode_tok_s", "value": 0, "unit": "tokens per second (not published)"}',
    )
)
KB406 = register(
    Rule(
        "KB406",
        "throughput-scope-unstated",
        "warning",
        "metric-consistency",
        "A throughput value does not say what it is counted over (per device, per node, aggregate, per request).",
        "22,300 tok/s per node and 22,300 tok/s for 96 GPUs differ twelvefold; without the scope a throughput cannot be compared or checked against hardware limits.",
        '{"metric": "tps_aggregate", "value_scope": "per-device"}  or unit "output tokens/s (aggregate, 8 GPUs)"',
        '{"metric": "tps_aggregate", "unit": "tok/s"}',
    )
)


def metric_info(kb: KB, name: str | None) -> dict[str, Any] | None:
    """Dimension/unit/direction/requires_baseline/measures for metric ``name``, or ``None`` when no registry has it.

    The KB's registry first, else the bundled registry (``kb/metrics.json``); an
    entry's ``measures`` (the quantity the unit-text cross-check compares
    against: decode, prefill, throughput, ttft, itl, e2e, ...) defaults to the
    bundled entry's, then to its dimension.
    """
    if not name:
        return None
    bundled = bundled_metrics().get(name)
    entry = (kb.metrics.get(name) if kb.metrics else None) or bundled
    if entry is None:
        return None
    out: dict[str, Any] = {k: entry[k] for k in ("dimension", "unit", "direction")}
    out["requires_baseline"] = bool(entry.get("requires_baseline", (bundled or {}).get("requires_baseline", False)))
    out["measures"] = entry.get("measures") or (bundled or {}).get("measures") or out["dimension"]
    return out


def _text(data: dict[str, Any], field: str) -> str:
    value = data.get(field)
    return value if isinstance(value, str) else ""


def _quote(text: str, m: re.Match[str], width: int = 60) -> str:
    start, end = max(0, m.start() - width), min(len(text), m.end() + width)
    return ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")


def value_scope(data: dict[str, Any]) -> tuple[str, dict[str, str] | None] | None:
    """What a benchmark's value is counted over: ``(scope, evidence)`` or ``None`` when nothing says.

    ``scope`` is one of the bundled schema's ``value_scope`` members
    (per-device, per-node, per-system, per-request, aggregate). A
    ``value_scope`` field wins (evidence ``None``); otherwise the first scope
    cue in ``unit``, then ``name``, then ``methodology``, most specific scope
    first within a field; evidence is ``{"field", "quote"}``.
    """
    declared = data.get("value_scope")
    if isinstance(declared, str) and declared:
        return ("per-request" if declared == "per-user" else declared), None
    for field in _SCOPE_FIELDS:
        text = _text(data, field)
        for scope, pattern in SCOPE_CUES:
            m = pattern.search(text)
            if m:
                return scope, {"field": field, "quote": _quote(text, m, 40)}
    return None


# ---- quoted percentage changes ------------------------------------------------
_QTY = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(ms|s|sec|seconds|tok/s|tokens/s|req/s|GB|W)(?![\w/])")
_PCT_AFTER = re.compile(r"[^\d%;~]{0,20}?([+\-\u2212])\s?(\d+)(?:\.(\d+))?\s*%")
_PCT_ANY = re.compile(r"(?<![\w.])([+\-\u2212])(\d+)(?:\.(\d+))?\s*%")
_FAMILY = {
    "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "sec": ("time", 1.0),
    "seconds": ("time", 1.0),
    "tok/s": ("tok/s", 1.0),
    "tokens/s": ("tok/s", 1.0),
    "req/s": ("req/s", 1.0),
    "GB": ("GB", 1.0),
    "W": ("W", 1.0),
}
_TEXT_FIELDS = ("name", "unit", "methodology", "notes")


def _qty(m: re.Match[str]) -> tuple[float, float, str]:
    """(value in family base units, half-unit rounding error in base units, family)."""
    family, scale = _FAMILY[m.group(3)]
    decimals = len(m.group(2) or "")
    value = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
    return value * scale, 0.5 * 10**-decimals * scale, family


def _pct(sign: str, whole: str, frac: str | None) -> tuple[float, float]:
    value = float(whole + ("." + frac if frac else ""))
    return (-value if sign in "-\u2212" else value), 0.5 * 10 ** -len(frac or "")


def _reproduces(base: tuple[float, float], new: tuple[float, float], quoted: float, quoted_tol: float) -> tuple[bool, float | None]:
    (a, ea), (b, eb) = base, new
    if a == 0:
        return False, None
    computed = (b - a) / a * 100.0
    tol = quoted_tol + 100.0 * (eb / abs(a) + abs(b) * ea / (a * a)) + 1e-9
    return abs(computed - quoted) <= tol, computed


def _record_quantity(data: dict[str, Any], info: dict[str, Any] | None) -> tuple[float, float, str] | None:
    value = data.get("value")
    if not info or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    family, scale = _FAMILY.get(str(info.get("unit")), (None, 1.0))
    if family is None:
        return None
    text = repr(float(value)).rstrip("0").rstrip(".")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return float(value) * scale, 0.5 * 10**-decimals * scale, family


def check_quoted_changes(data: dict[str, Any], info: dict[str, Any] | None) -> tuple[list[dict[str, Any]], int]:
    """Recompute every signed percentage quoted next to a figure (``"1.578 s (+76.5%)"``) in the text fields.

    The baseline candidates are the earlier figures of the same unit family in
    the same field and the record's own ``value``; with ``arms``, the computed
    :func:`~inferkb.arms.arm_deltas` too (and then bare signed percentages are
    checked against them). A quote passes if any candidate reproduces it within
    rounding. Returns ``(mismatches, checked_count)``; each mismatch is
    ``{"field", "quote", "quoted_pct", "closest_pct"}``.
    """
    own = _record_quantity(data, info)
    deltas = [d for arm in arm_deltas(data).values() for d in arm.values() if d is not None]
    mismatches: list[dict[str, Any]] = []
    checked = 0
    for field in _TEXT_FIELDS:
        text = _text(data, field)
        if "%" not in text:
            continue
        quantities = list(_QTY.finditer(text))
        seen_pct: set[int] = set()
        for i, qm in enumerate(quantities):
            pm = _PCT_AFTER.match(text, qm.end())
            if not pm:
                continue
            seen_pct.add(pm.start(1))
            quoted, qtol = _pct(pm.group(1), pm.group(2), pm.group(3))
            new = _qty(qm)
            bases = [_qty(b) for b in quantities[:i] if _qty(b)[2] == new[2]]
            if own and own[2] == new[2]:
                bases.append(own)
            bases = [b for b in bases if abs(b[0] - new[0]) > 1e-12]
            if not bases and not deltas:
                continue
            checked += 1
            results = [_reproduces(b[:2], new[:2], quoted, qtol) for b in bases]
            if any(ok for ok, _ in results) or any(abs(d - quoted) <= qtol + 1e-9 for d in deltas):
                continue
            candidates = [c for _, c in results if c is not None] + deltas
            closest = min(candidates, key=lambda c: abs(c - quoted)) if candidates else None
            mismatches.append(
                {
                    "field": field,
                    "quote": text[max(0, qm.start() - 60) : pm.end()],
                    "quoted_pct": quoted,
                    "closest_pct": None if closest is None else round(closest, 3),
                }
            )
        if deltas:
            for pm in _PCT_ANY.finditer(text):
                if pm.start(1) in seen_pct:
                    continue
                quoted, qtol = _pct(pm.group(1), pm.group(2), pm.group(3))
                checked += 1
                if not any(abs(d - quoted) <= qtol + 1e-9 for d in deltas):
                    closest = min(deltas, key=lambda c: abs(c - quoted))
                    mismatches.append(
                        {
                            "field": field,
                            "quote": text[max(0, pm.start() - 60) : pm.end()],
                            "quoted_pct": quoted,
                            "closest_pct": round(closest, 3),
                        }
                    )
    return mismatches, checked


# ---- per-record checks ----------------------------------------------------------
def _measured_mismatch(data: dict[str, Any], info: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    """(what the text says was measured, evidence) when it contradicts the metric; else ``None``."""
    measures, dimension = info.get("measures"), info.get("dimension")
    for field in ("unit", "name"):
        text = _text(data, field)
        if not text:
            continue
        if dimension == "latency" and measures in _LATENCY_CUES:
            if _LATENCY_CUES[measures].search(text):
                return None
            for other, pattern in _LATENCY_CUES.items():
                m = pattern.search(text)
                if other != measures and m:
                    return _LATENCY_NAMES[other], {"field": field, "quote": _quote(text, m)}
            m = _RATE_CUE.search(text)
            if m and not _TIME_CUE.search(text):
                return "a rate (tokens or requests per second)", {"field": field, "quote": _quote(text, m)}
        elif dimension == "rate":
            m = _FLOPS_CUE.search(text)
            if m and not _RATE_CUE.search(text):
                return "peak compute (FLOPS), a hardware specification", {"field": field, "quote": _quote(text, m)}
            if measures in _PHASE_CUES and not _PHASE_CUES[measures].search(text):
                other = "decode" if measures == "prefill" else "prefill"
                m = _PHASE_CUES[other].search(text)
                if m:
                    return f"{other} throughput", {"field": field, "quote": _quote(text, m)}
            if field == "unit" and (_RATE_CUE.search(text) or _PHASE_CUES["decode"].search(text)):
                return None
        if field == "unit" and text.strip():
            return None  # the unit spoke and did not contradict; the name is only consulted when the unit is silent
    return None


def _check_record(kb: KB, rec: Record) -> tuple[list, int]:
    """KB401-KB406 findings of one benchmark and how many quoted percentages were recomputed (``SKIPPED``, and no
    findings, when no registry describes its metric)."""
    data = rec.data
    info = metric_info(kb, data.get("metric"))
    if info is None:
        return [], SKIPPED
    where = {"record": rec.key, "path": rec.path}
    out = []
    dimension, metric, value = info["dimension"], data["metric"], data.get("value")
    unit = _text(data, "unit")

    mismatch = _measured_mismatch(data, info)
    if mismatch:
        what, evidence = mismatch
        out.append(
            KB401.finding(
                f"metric {metric} ({dimension}, {info.get('unit')}) but the record's {evidence['field']} describes {what}",
                field="metric",
                evidence=evidence,
                extra={"metric": metric, "described": what},
                **where,
            )
        )
    if dimension == "rate":
        m = _RATIO_CUE.search(unit)
        if m:
            out.append(
                KB402.finding(
                    f"rate metric {metric} carries a ratio: its unit describes a multiple, not a rate",
                    field="value",
                    evidence={"field": "unit", "quote": _quote(unit, m)},
                    **where,
                )
            )
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
            out.append(
                KB405.finding(
                    f"rate metric {metric} has value {value}; a rate that was not measured should be null with a reason",
                    field="value",
                    evidence={"field": "unit", "quote": unit[:160]} if unit else None,
                    **where,
                )
            )
        if metric != "tok_s_per_user" and value is not None and value_scope(data) is None:
            out.append(
                KB406.finding(
                    f"{metric} value does not state its scope (per-device, per-node, aggregate or per-request); "
                    f"searched value_scope, {', '.join(_SCOPE_FIELDS)}",
                    field="value_scope",
                    **where,
                )
            )
    if info.get("requires_baseline") and not data.get("baseline_arm"):
        text = " ".join(_text(data, f) for f in ("unit", "name"))
        if not _BASELINE_CUE.search(text):
            out.append(
                KB403.finding(
                    f"ratio metric {metric} names no baseline (no baseline_arm; unit and name mention none)", field="unit", **where
                )
            )
    mismatches, checked = check_quoted_changes(data, info)
    for mm in mismatches:
        closest = "" if mm["closest_pct"] is None else f"; the closest recomputation gives {mm['closest_pct']:+.2f}%"
        out.append(
            KB404.finding(
                f"quoted change {mm['quoted_pct']:+g}% is not reproduced by the figures it follows or the arms{closest}",
                field=mm["field"],
                evidence={"field": mm["field"], "quote": mm["quote"]},
                extra={"quoted_pct": mm["quoted_pct"], "closest_pct": mm["closest_pct"]},
                **where,
            )
        )
    return out, checked


def _cost(kb: KB) -> float:
    """Seconds per 20,000 synthetic records (see :class:`inferkb.audit.AuditSpec`), less what the cache holds."""
    if "benchmark" not in kb.profile.types:
        return 0.01
    return 0.02 + 0.14 * (1.0 - record_cache.hit_share(metric_consistency_cache(kb), kb, list(kb.by_type("benchmark"))))


@audit(
    "metric-consistency",
    "Metric vs what unit/name say was measured; ratios in rates; baselines; quoted % changes; non-positive rates; throughput scope.",
    cost=_cost,
)
def run(kb: KB) -> AuditResult:
    """Run the metric-consistency checks over every benchmark record; figures count records checked and findings by rule.

    Each unchanged benchmark's result is kept in the load cache
    (:mod:`inferkb.audit.metric_consistency_cache`); the report is the same.
    """
    result = AuditResult("metric-consistency")
    figures: dict[str, Any] = {"checked": 0, "skipped_no_metric": 0, "percent_quotes_checked": 0}
    cache = metric_consistency_cache(kb)
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            kept = cached_result(cache, kb, rec) if cache is not None else None
            if kept is None:
                found, quotes = _check_record(kb, rec)
                keep_result(cache, kb, rec, found, quotes)
            else:
                found, quotes = kept
            result.findings.extend(found)
            if quotes == SKIPPED:
                figures["skipped_no_metric"] += 1
            else:
                figures["checked"] += 1
                figures["percent_quotes_checked"] += quotes
    if cache is not None:
        cache.save()
    by_rule: dict[str, int] = {}
    for f in result.findings:
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    figures["by_rule"] = dict(sorted(by_rule.items()))
    result.figures = figures
    return result
