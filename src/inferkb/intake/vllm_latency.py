"""Importer ``vllm-latency``: ``vllm bench latency --output-json`` (and the older ``benchmark_latency.py``).

Input (FORMATS.md 1a): one JSON object per run with ``avg_latency`` (s),
optional ``std_latency`` (s, population), ``latencies`` (list, s, one per
measured iteration) and ``percentiles`` (``{"10": s, ..., "99": s}``). Each
latency is the wall time of ONE ``LLM.generate()`` call over a whole batch
of prompts — a batch latency, not a per-request latency.

Arms: ``IntakeOptions.arms = [(arm_id, path)]`` with ``baseline`` naming the
baseline arm; a single positional file is one arm called ``baseline``.
Several positional files become arms named after their file stems and need
``baseline`` unless one is called ``baseline``.

Output: ONE benchmark record, metric ``e2e_latency_ms`` (unit ``ms``; the
methodology says "ms per batch generate() call"), ``value`` = baseline arm
mean, one arm per file with stats ``{mean, p50, p90, p99, min, max, stdev, n}``
recomputed from ``latencies`` (s -> ms; percentiles by NumPy's linear method,
stdev population, as vLLM computes them). The recomputed figures are
cross-checked against the file's ``avg_latency``/``std_latency``/``percentiles``
and a KB1101 finding reports any disagreement beyond float rounding. A file
without ``latencies`` uses its own numbers (KB1104). Deltas between arms are
not stored: they are computed from the arms.

Nothing in the file states model, batch size, lengths or hardware: those come
from options or stay null with ``condition_gaps``; ``hardware_raw`` falls back to
``gpu_raw`` of ``--env`` (the run is in-process, so the captured machine is the one measured). Sources: ``--source`` or a
local-file source record (:mod:`inferkb.intake.common`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, UsageError
from ..store import KEBAB
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, percentile, read_input, register, sample_stats

if TYPE_CHECKING:
    from ..kb import KB

FMT = "vllm-latency"
EXPECTED = ("avg_latency", "latencies", "percentiles")
RELEVANT = ("batch_size", "input_tokens", "output_tokens", "warmup", "engine_version", "tensor_parallel")
# The file is written with full float precision, so anything beyond float
# summation noise is a real disagreement.
REL_TOL = 1e-6


def arm_stats(doc: dict[str, Any], path: Path, arm_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """Stats in ms for one latency file: ``(stats, disagreements, from_raw)``.

    ``disagreements`` lists ``{field, file_ms, recomputed_ms}`` where the file's
    own summary differs from the raw list. Raises :class:`InputError` for an
    empty/non-list ``latencies``, a non-finite, zero or negative latency, or a
    file with neither ``latencies`` nor ``avg_latency``.
    """
    C.require_keys(doc, EXPECTED, path, FMT, any_of=True)
    raw = doc.get("latencies")
    pct = doc.get("percentiles")
    if pct is not None and not isinstance(pct, dict):
        raise InputError("expected an object of percentile -> seconds", path=str(path), field="percentiles")
    if raw is None:
        if "avg_latency" not in doc:
            raise InputError("neither a latencies list nor avg_latency", path=str(path), field="avg_latency")
        stats: dict[str, Any] = {"mean": C.number(doc["avg_latency"], path, "avg_latency", positive=True) * 1000.0}
        for key, name in (("50", "p50"), ("90", "p90"), ("99", "p99")):
            if pct and key in pct:
                stats[name] = C.number(pct[key], path, f"percentiles.{key}", positive=True) * 1000.0
        if "std_latency" in doc:
            stats["stdev"] = C.number(doc["std_latency"], path, "std_latency", nonneg=True) * 1000.0
        stats["n"] = None
        return stats, [], False
    if not isinstance(raw, list) or not raw:
        raise InputError("expected a non-empty list of latencies in seconds", path=str(path), field="latencies")
    values = [C.number(v, path, f"latencies[{i}]", positive=True) for i, v in enumerate(raw)]
    stats = sample_stats(values, scale=1000.0)
    xs = sorted(v * 1000.0 for v in values)
    disagree: list[dict[str, Any]] = []

    def check(field: str, file_s: Any, recomputed_ms: float) -> None:
        file_ms = C.number(file_s, path, field, nonneg=True) * 1000.0
        if not C.close(file_ms, recomputed_ms, rel=REL_TOL, abs_=1e-6):
            disagree.append({"field": field, "file_ms": file_ms, "recomputed_ms": recomputed_ms})

    if "avg_latency" in doc:
        check("avg_latency", doc["avg_latency"], stats["mean"])
    if "std_latency" in doc:
        check("std_latency", doc["std_latency"], stats["stdev"])
    for key, value in (pct or {}).items():
        try:
            p = float(key)
        except ValueError:
            raise InputError(f"percentile key {key!r} is not a number", path=str(path), field="percentiles") from None
        if not 0 <= p <= 100:
            raise InputError(f"percentile key {key!r} is outside 0..100", path=str(path), field="percentiles")
        check(f"percentiles.{key}", value, percentile(xs, p))
    return stats, disagree, True


def _arms(paths: list[Path], options: IntakeOptions) -> tuple[list[tuple[str, Path]], str]:
    arms = list(options.arms)
    if not arms:
        if not paths:
            raise UsageError("vllm-latency needs a file or --arm ID=FILE")
        if len(paths) == 1:
            arms = [("baseline", paths[0])]
        else:
            arms = [(C.slug(p.stem), p) for p in paths]
    elif paths:
        raise UsageError("give latency files either as positional paths or as --arm ID=FILE, not both")
    ids = [a for a, _ in arms]
    for arm_id in ids:
        if not KEBAB.match(arm_id):
            raise UsageError(f"arm id {arm_id!r} is not a kebab-case slug (a-z, 0-9, single hyphens)")
    if len(set(ids)) != len(ids):
        raise UsageError(f"arm ids used twice: {', '.join(sorted({i for i in ids if ids.count(i) > 1}))}")
    baseline = options.baseline or ("baseline" if "baseline" in ids else (ids[0] if len(ids) == 1 else None))
    if baseline is None:
        raise UsageError(f"several arms ({', '.join(ids)}) and no --baseline; name the baseline arm")
    if baseline not in ids:
        raise UsageError(f"--baseline {baseline!r} is not one of the arms ({', '.join(ids)})")
    return arms, baseline


@register
class VllmLatency(Importer):
    """``vllm bench latency --output-json`` files, one per arm -> one multi-arm benchmark record."""

    name = FMT
    description = "vLLM `bench latency --output-json` / benchmark_latency.py (batch latency; one file per arm)"
    multi_arm = True

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """Build one record from every arm file; see the module docstring. Raises InputError/UsageError."""
        arms, baseline = _arms(paths, options)
        result = IntakeResult()
        extra_records: list[dict[str, Any]] = []
        arm_objs, sources = [], []
        summary_only = []
        base_path = dict(arms)[baseline]
        for arm_id, path in arms:
            raw = read_input(path)
            doc = C.load_json(path, raw)
            stats, disagree, from_raw = arm_stats(doc, path, arm_id)
            arm_objs.append({"id": arm_id, "label": path.name, "stats": stats, "unit": "ms"})
            for sid in C.resolve_sources(kb, options, path, raw, FMT, extra_records):
                if sid not in sources:
                    sources.append(sid)
            for d in disagree:
                result.findings.append(
                    C.KB1101.finding(
                        f"arm {arm_id}: {d['field']} in the file is {d['file_ms']:.6g} ms but the raw latencies give "
                        f"{d['recomputed_ms']:.6g} ms; the recomputed value is used",
                        path=str(path),
                        field=d["field"],
                        extra={"arm": arm_id, **d},
                    )
                )
            if not from_raw:
                summary_only.append(arm_id)
                result.findings.append(
                    C.KB1104.finding(
                        f"arm {arm_id}: no raw latencies list; stats are the file's own avg_latency/percentiles (min, max, n unknown)",
                        path=str(path),
                        field="latencies",
                        extra={"arm": arm_id},
                    )
                )
        engine = C.engine_id(kb, options, "vllm")
        stated = C.option_conditions(options)
        if "engine_version" not in stated and C.env_package(options.env, "vllm"):
            stated["engine_version"] = C.env_package(options.env, "vllm")
        conditions, gaps = build_conditions(
            stated, FMT, ["the latency JSON (avg_latency, latencies, percentiles only)", "command-line options"], RELEVANT
        )
        base_mean = next(a["stats"]["mean"] for a in arm_objs if a["id"] == baseline)
        hw_hint = options.hardware_raw or options.accelerator
        rid = C.make_id(FMT, options.model, hw_hint, base_path.stem)
        label = options.model or base_path.stem
        rec = C.skeleton(
            rid=rid,
            name=f"vLLM bench latency, {label} ({len(arm_objs)} arm{'s' if len(arm_objs) > 1 else ''})",
            engine=engine,
            metric="e2e_latency_ms",
            value=base_mean,
            unit="ms",
            value_scope=None,
            scenario="offline",
            sources=sources,
            options=options,
        )
        env_gpu = options.env.get("gpu_raw") if isinstance(options.env, dict) else None
        C.apply_hardware(rec, kb, options, env_gpu, result.findings, path=base_path)
        rec["conditions"] = conditions
        rec["condition_gaps"] = gaps
        rec["arms"] = arm_objs
        rec["baseline_arm"] = baseline
        rec["methodology"] = (
            "vllm bench latency --output-json: each sample is the wall time of one LLM.generate() call over a whole batch "
            "of prompts, i.e. ms per batch generate() call (not per request). Arm stats recomputed from the raw `latencies` "
            "list (seconds -> ms): mean, NumPy-linear percentiles, population stdev, n = measured iterations; "
            "cross-checked against the file's avg_latency/std_latency/percentiles. value = mean of the baseline arm."
            + (f" Arms without raw latencies ({', '.join(summary_only)}) use the file's own summary numbers." if summary_only else "")
        )
        C.attach_env(rec, options.env, engine_package="vllm")
        result.records = extra_records + [rec]
        result.stats = {"imported": 1, "arms": len(arm_objs), "skipped": {}}
        return result
