"""Helpers shared by the harness importers: strict reading, key checks, ids, sources, environment.

What every importer here does the same way:

- **Reading.** :func:`load_json` parses strictly (:mod:`inferkb.jsonio`): a
  truncated file, NaN/Infinity, a duplicate key or a non-UTF-8 byte is an
  :class:`~inferkb.errors.InputError` naming the file, line and column.
- **Wrong harness.** :func:`require_keys` raises an ``InputError`` that names
  the keys the format expects and the keys the file has, so a file of another
  harness given to the wrong importer says what it is not.
- **Sources.** Every record cites a source. With ``--source ID`` the records
  cite that source record (it must exist). Without it the importer creates a
  *local-file source record* (:func:`local_source`): kind ``benchmark``, the
  file's ``file://`` URL, its SHA-256 in ``notes``, status ``draft``. That keeps
  ``intake FILE`` a one-step action for a user importing their own run while
  still tracing every number to the exact bytes it came from; re-importing the
  same bytes reuses the same source id.
- **Environment.** :func:`attach_env` maps ``IntakeOptions.env`` (the JSON of
  ``inferkb env``) onto the schema's ``environment`` object.
- **Ids.** :func:`make_id` builds a deterministic kebab-case id from the
  format and what identifies the run (model, hardware, date or file stem).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, UsageError
from ..jsonio import parse_bytes
from ..rules import Rule, register
from ..schemas import object_keys
from .base import IntakeOptions, read_input, today

if TYPE_CHECKING:
    from ..kb import KB

KB1101 = register(
    Rule(
        "KB1101",
        "intake-stats-disagree",
        "warning",
        "intake",
        "Statistics recomputed from a file's raw samples disagree with the file's own summary.",
        "A summary that does not follow from its own samples means the file was edited, truncated or produced by a different "
        "definition; the recomputed value is kept and the disagreement reported.",
        "avg_latency equals the mean of latencies",
        "avg_latency 7.9 s, mean of latencies 7.4 s",
    )
)
KB1102 = register(
    Rule(
        "KB1102",
        "intake-run-failed",
        "error",
        "intake",
        "A run completed no request; it is not imported as a measurement.",
        "A harness writes 0.0 for every metric when all requests fail; a zero throughput is not a measured number.",
        '{"completed": 200}',
        '{"completed": 0, "failed": 8}',
    )
)
KB1103 = register(
    Rule(
        "KB1103",
        "intake-hardware-unresolved",
        "warning",
        "intake",
        "The hardware string names no accelerator in the KB, or several.",
        "hardware_raw is kept; the accelerator id stays empty until an alias resolves it (evidence must determine the value uniquely).",
        '"NVIDIA H100 80GB HBM3"',
        '"Apple M4" (no accelerator record)',
    )
)
KB1104 = register(
    Rule(
        "KB1104",
        "intake-summary-only",
        "info",
        "intake",
        "Statistics come from the file's own summary numbers, not from raw samples.",
        "Without the raw samples the stats cannot be cross-checked; the record says where they came from.",
        '{"latencies": [...]}',
        '{"avg_latency": 7.4} only',
    )
)
KB1105 = register(
    Rule(
        "KB1105",
        "intake-engine-unstated",
        "warning",
        "intake",
        "The file does not say which engine served the requests and no --engine was given.",
        "A client-side harness can drive any OpenAI-compatible server; engine_id stays null rather than assuming one.",
        '{"backend": "vllm"}',
        '{"backend": "openai"}',
    )
)

KB1106 = register(
    Rule(
        "KB1106",
        "intake-model-or-hardware-unstated",
        "warning",
        "intake",
        "The input names no model, or no hardware, and no command-line option supplied it.",
        "A measurement without its model or hardware cannot be compared with anything; the record keeps a condition_gaps "
        "entry saying so, and the import says it at once so the user can pass --model / --hardware-raw / --accelerator.",
        "a console log with a Namespace(model=...) line, imported with --hardware-raw 'NVIDIA H100 80GB HBM3'",
        "a bare 'Serving Benchmark Result' block imported with no options",
    )
)

_SLUG = re.compile(r"[^a-z0-9]+")
# The benchmark schema's string-valued ``environment`` keys (``extra`` is the object for everything else).
ENV_KEYS = object_keys("benchmark", "environment", accepts="string")


def slug(text: str, limit: int = 60) -> str:
    """Lower-case kebab slug of ``text`` (``"Llama-3.3 70B"`` -> ``"llama-3-3-70b"``), cut at ``limit`` chars."""
    out = _SLUG.sub("-", text.lower()).strip("-")
    return out[:limit].strip("-")


def make_id(fmt: str, *parts: str | None) -> str:
    """Deterministic record id ``<fmt>-<part>-<part>...`` from the non-empty parts; at most 120 chars."""
    pieces = [slug(fmt)] + [slug(str(p)) for p in parts if p not in (None, "")]
    return "-".join(p for p in pieces if p)[:120].strip("-")


def unique_ids(records: list[dict[str, Any]]) -> None:
    """Make benchmark ids within one batch unique by suffixing ``-2``, ``-3``... (in place)."""
    seen: dict[str, int] = {}
    for rec in records:
        rid = rec["id"]
        if rid in seen:
            seen[rid] += 1
            rec["id"] = f"{rid}-{seen[rid]}"
        else:
            seen[rid] = 1


def load_json(path: Path, raw: bytes | None = None) -> Any:
    """Parse ``path`` strictly; any JSON value may be on top. Raises :class:`InputError` with line/column."""
    raw = read_input(path) if raw is None else raw
    value, problem = parse_bytes(raw, require_object=False)
    if problem is not None:
        where = f" (line {problem.line}, column {problem.col})" if problem.line else ""
        hint = " — the file may be truncated" if problem.code == "invalid-json" and raw.rstrip()[-1:] not in (b"}", b"]") else ""
        raise InputError(f"not usable JSON: {problem.message}{where}{hint}", path=str(path))
    return value


def require_keys(doc: Any, expected: Iterable[str], path: Path, fmt: str, *, any_of: bool = False) -> None:
    """Raise :class:`InputError` unless ``doc`` is an object holding every key of ``expected`` (or one, ``any_of``).

    The message names the format, the keys expected and (up to 12 of) the keys found.
    """
    expected = list(expected)
    if not isinstance(doc, dict):
        kind = {"list": "array", "str": "string"}.get(type(doc).__name__, type(doc).__name__)
        raise InputError(
            f"not a {fmt} file: top level is a JSON {kind}; expected an object with keys {', '.join(expected)}", path=str(path)
        )
    missing = [k for k in expected if k not in doc]
    if (any_of and len(missing) == len(expected)) or (not any_of and missing):
        found = list(doc)[:12]
        more = f" (+{len(doc) - 12} more)" if len(doc) > 12 else ""
        need = "one of" if any_of else "keys"
        raise InputError(
            f"not a {fmt} file: expected {need} {', '.join(expected)}; missing {', '.join(missing)}; "
            f"found {', '.join(found) or 'no keys'}{more}",
            path=str(path),
            field=missing[0],
        )


def number(value: Any, path: Path, field: str, *, positive: bool = False, nonneg: bool = False) -> float:
    """Return ``value`` as a finite float or raise :class:`InputError` (bools and strings are not numbers).

    ``positive`` refuses <= 0 (latencies, durations); ``nonneg`` refuses < 0 (counts, rates).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected a number, found {value!r}", path=str(path), field=field)
    try:
        x = float(value)
    except OverflowError:  # an int of more than ~308 digits
        raise InputError(f"{shown(value)} is beyond the range of a float", path=str(path), field=field) from None
    if not math.isfinite(x):
        raise InputError(f"{value!r} is not a finite number", path=str(path), field=field)
    if positive and x <= 0:
        raise InputError(f"{value!r} is not positive; a latency or duration must be > 0", path=str(path), field=field)
    if nonneg and x < 0:
        raise InputError(f"{value!r} is negative", path=str(path), field=field)
    return x


def mapping(parent: Any, key: str, path: Path | str, where: str = "") -> dict[str, Any]:
    """``parent[key]`` when it is an object (``{}`` when absent or null); :class:`InputError` naming the field otherwise.

    For nested harness documents read with chained lookups: a value of the wrong
    type (``requests: inf`` where an object of counts belongs) is bad input, not a crash.
    """
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        field = f"{where}.{key}" if where else key
        raise InputError(f"expected an object, found {shown(value)}", path=str(path), field=field)
    return value


def shown(value: Any, limit: int = 40) -> str:
    """``value``'s type and a repr cut to ``limit`` characters, for messages; safe for any size of int."""
    kind = {"str": "a string", "list": "an array", "int": "a number", "float": "a number", "bool": "a boolean"}.get(
        type(value).__name__, type(value).__name__
    )
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"{kind} of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return f"{kind} {text[:limit] + '...' if len(text) > limit else text}"


def integer(value: Any) -> int | None:
    """``value`` as an int when it is a whole number >= 1 (bool excluded), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if value >= 1 else None


def close(a: float, b: float, *, rel: float = 1e-6, abs_: float = 1e-9) -> bool:
    """True when ``a`` and ``b`` agree within rounding (relative ``rel`` or absolute ``abs_``)."""
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def local_source(kb: KB, path: Path, raw: bytes, fmt: str) -> tuple[str, dict[str, Any] | None]:
    """Return ``(source_id, record_or_None)`` for a local input file (see the module docstring).

    The id is ``local-<file stem>-<first 10 hex of SHA-256>``; the record is
    ``None`` when a source with that id already exists in ``kb`` (same bytes imported before).
    """
    digest = hashlib.sha256(raw).hexdigest()
    sid = make_id("local", path.stem[:50], digest[:10])
    if sid in kb.ids_of_type("source"):
        return sid, None
    rec = {
        "id": sid,
        "type": "source",
        "name": f"Local {fmt} output file {path.name}",
        "url": path.resolve().as_uri(),
        "kind": "benchmark",
        "publisher": None,
        "published": None,
        "accessed": today(),
        "status": "draft",
        "confidence": 0.5,
        "updated": today(),
        "sources": [],
        "notes": f"Imported by inferkb intake {fmt}; sha256 {digest}; size {len(raw)} bytes. "
        "A local file, not a published document: cite a public source with --source when one exists.",
    }
    return sid, rec


def resolve_sources(kb: KB, options: IntakeOptions, path: Path, raw: bytes, fmt: str, out_records: list[dict[str, Any]]) -> list[str]:
    """Source ids for records built from ``path``; appends a new local source record to ``out_records`` when needed.

    Raises :class:`UsageError` when ``--source`` names no source record.
    """
    if options.source:
        if options.source not in kb.ids_of_type("source"):
            raise UsageError(f"--source {options.source!r} is not a source record id in this KB")
        return [options.source]
    sid, rec = local_source(kb, path, raw, fmt)
    if rec is not None and all(r.get("id") != sid for r in out_records):
        out_records.append(rec)
    return [sid]


def attach_env(record: dict[str, Any], env: dict[str, Any] | None, *, engine_package: str | None = None) -> None:
    """Set ``record["environment"]`` from an ``inferkb env`` dict (in place); no-op when ``env`` is ``None``.

    Schema keys are copied when they are strings; anything else goes under
    ``extra``. ``engine_version`` falls back to ``env["extra"]["packages"][engine_package]``.
    """
    if not env:
        return
    if not isinstance(env, dict):
        raise UsageError("--env must hold a JSON object as written by `inferkb env --format json`")
    out: dict[str, Any] = {}
    extra: dict[str, Any] = dict(env.get("extra") or {}) if isinstance(env.get("extra"), dict) else {}
    for key, value in env.items():
        if key == "extra":
            continue
        if key in ENV_KEYS and (value is None or isinstance(value, str)):
            out[key] = value
        else:
            extra[key] = value
    packages = extra.get("packages") if isinstance(extra.get("packages"), dict) else {}
    if engine_package and not out.get("engine_version") and isinstance(packages.get(engine_package), str):
        out["engine_version"] = packages[engine_package]
    if extra:
        out["extra"] = extra
    record["environment"] = out


def env_package(env: dict[str, Any] | None, name: str) -> str | None:
    """Version of package ``name`` recorded by ``inferkb env`` in ``env["extra"]["packages"]``, else ``None``."""
    extra = (env or {}).get("extra")
    pkgs = extra.get("packages") if isinstance(extra, dict) else None
    value = pkgs.get(name) if isinstance(pkgs, dict) else None
    return value if isinstance(value, str) else None


def engine_id(kb: KB, options: IntakeOptions, default: str | None) -> str | None:
    """``--engine`` (must be an engine id: :class:`UsageError` otherwise) or ``default``."""
    if options.engine:
        if options.engine not in kb.ids_of_type("engine"):
            raise UsageError(f"--engine {options.engine!r} is not an engine id in this KB")
        return options.engine
    return default


def option_conditions(options: IntakeOptions) -> dict[str, Any]:
    """Conditions stated explicitly on the command line (``None`` ones omitted)."""
    pairs = {
        "batch_size": options.batch_size,
        "concurrency": options.concurrency,
        "input_tokens": options.input_len,
        "output_tokens": options.output_len,
        "num_prompts": options.num_prompts,
        "dataset": options.dataset,
        "warmup": options.warmup,
        "engine_version": options.engine_version,
        "tensor_parallel": options.tensor_parallel,
        "pipeline_parallel": options.pipeline_parallel,
        "expert_parallel": options.expert_parallel,
        "data_parallel": options.data_parallel,
    }
    return {k: v for k, v in pairs.items() if v is not None}


def skeleton(
    *,
    rid: str,
    name: str,
    engine: str | None,
    metric: str,
    value: float | None,
    unit: str,
    value_scope: str | None,
    scenario: str | None,
    sources: list[str],
    options: IntakeOptions,
) -> dict[str, Any]:
    """A benchmark record with the common fields in schema order; importers fill the rest."""
    return {
        "id": options.record_id or rid,
        "type": "benchmark",
        "name": options.name or name,
        "status": "draft",
        "confidence": 0.7,
        "updated": today(),
        "sources": sources,
        "engine_id": engine,
        "model": options.model,
        "model_id": options.model_id,
        "metric": metric,
        "value": value,
        "unit": unit,
        "value_scope": value_scope,
        "scenario": scenario,
    }


def apply_hardware(
    record: dict[str, Any],
    kb: KB,
    options: IntakeOptions,
    raw_from_file: str | None,
    findings: list,
    *,
    path: Path,
    count_from_file: int | None = None,
) -> None:
    """Fill ``accelerator_ids``/``accelerator_count``/``accelerator_alternates``/``hardware_raw`` (in place).

    ``accelerator_count`` is ``--count`` or else ``count_from_file`` (a count the file states).

    Uses :func:`inferkb.intake.base.resolve_accelerator`; an unresolved or
    ambiguous string is kept in ``hardware_raw`` and reported as KB1103.
    """
    from .base import resolve_accelerator

    ids, alternates, hardware_raw, notes = resolve_accelerator(kb, options, raw_from_file)
    record["accelerator_ids"] = ids
    record["accelerator_count"] = options.count if options.count is not None else count_from_file
    record["accelerator_alternates"] = alternates
    record["hardware_raw"] = hardware_raw
    if hardware_raw is not None:
        for note in notes:
            findings.append(
                KB1103.finding(
                    note,
                    record=f"benchmarks/{record['id']}",
                    path=str(path),
                    field="hardware_raw",
                    extra={"hardware_raw": hardware_raw, "candidates": alternates},
                )
            )


def identity_gaps(record: dict[str, Any], fmt: str, checked: list[str], findings: list, *, path: Path, where: str = "run") -> None:
    """Record what the input leaves unknown about the run's identity (in place), with one KB1106 warning.

    A record without ``model`` and ``model_id`` gets ``condition_gaps.model``;
    one without ``accelerator_ids``, ``accelerator_alternates`` and
    ``hardware_raw`` gets ``condition_gaps.accelerator_ids``; a null
    ``accelerator_count`` gets ``condition_gaps.accelerator_count``. Existing
    gap entries are kept. The warning names model and/or hardware.
    """
    gaps = record.setdefault("condition_gaps", {})
    missing = []
    if not record.get("model") and not record.get("model_id"):
        gaps.setdefault(
            "model",
            {"reason": f"the {fmt} input does not name the model and no --model was given", "checked": checked, "recover": "pass --model"},
        )
        missing.append("model")
    if not record.get("accelerator_ids") and not record.get("accelerator_alternates") and not record.get("hardware_raw"):
        gaps.setdefault(
            "accelerator_ids",
            {
                "reason": f"the {fmt} input does not name the hardware and no --hardware-raw/--accelerator was given",
                "checked": checked,
                "recover": "pass --hardware-raw (the nvidia-smi/rocm-smi name) or --accelerator",
            },
        )
        missing.append("hardware")
    if record.get("accelerator_count") is None:
        gaps.setdefault(
            "accelerator_count",
            {"reason": f"the {fmt} input does not state how many accelerators ran", "checked": checked, "recover": "pass --count"},
        )
    if missing:
        findings.append(
            KB1106.finding(
                f"{where}: the input names no {' and no '.join(missing)}; the record keeps a condition_gaps entry "
                f"(pass {' / '.join('--model' if m == 'model' else '--hardware-raw or --accelerator' for m in missing)})",
                record=f"benchmarks/{record['id']}",
                path=str(path),
                field="model" if missing[0] == "model" else "accelerator_ids",
            )
        )


# Percentile number (as the harnesses spell it) -> the stats slot the record model has for it; others go under "percentiles".
PERCENTILE_SLOTS = {"50": "p50", "90": "p90", "95": "p95", "99": "p99", "99.9": "p999"}


def distribution(
    value: Any, path: Path, field: str, *, names: dict[str, str], percentiles: dict[str, str] | None = None, scale: float = 1.0
) -> dict[str, Any]:
    """A metric entry ``{"stats": {...}[, "percentiles": {...}]}`` from a harness's distribution object.

    ``names`` maps the harness's keys to stats slots (``{"avg": "mean", "std": "stdev", "count": "n", ...}``);
    ``percentiles`` maps its percentile keys to percentile numbers as text (``{"p001": "0.1", "p99": "99"}``):
    those with a stats slot (50, 90, 95, 99, 99.9) go there, the rest under ``percentiles`` as ``p<N>``.
    Every value is multiplied by ``scale`` except the count. Raises :class:`InputError` for a non-number.
    """
    if not isinstance(value, dict):
        raise InputError(f"expected an object of statistics, found {type(value).__name__}", path=str(path), field=field)
    stats: dict[str, Any] = {}
    extra: dict[str, float] = {}
    for key, slot in names.items():
        if value.get(key) is None:
            continue
        if slot == "n":
            count = integer(value[key])
            if count is not None:
                stats["n"] = count
            continue
        stats[slot] = number(value[key], path, f"{field}.{key}") * scale
    for key, pct in (percentiles or {}).items():
        raw = value.get(key)
        if raw is None and isinstance(value.get("percentiles"), dict):
            raw = value["percentiles"].get(key)
        if raw is None:
            continue
        x = number(raw, path, f"{field}.{key}") * scale
        if pct in PERCENTILE_SLOTS:
            stats.setdefault(PERCENTILE_SLOTS[pct], x)
        else:
            extra[f"p{pct}"] = x
    out: dict[str, Any] = {"stats": stats}
    if extra:
        out["percentiles"] = extra
    return out


def finish_batch(result: Any, extra: list[dict[str, Any]], bench: list[dict[str, Any]], options: Any, unit: str) -> Any:
    """Close an importer's batch: refuse ``--id`` for several records, make ids unique, names distinct, collapse repeated findings.

    Records of the batch that share a ``name`` gain the fact that tells them
    apart (:func:`inferkb.intake.distinct_names.apply_to`; the rule of the
    ``distinct-names`` derivation); ``stats["renamed"]`` counts them when any.

    ``extra`` (source records) come before ``bench`` in ``result.records``;
    ``stats["imported"]`` counts ``bench``. ``unit`` names what one record is
    ("runs", "test rows") in the error. Raises UsageError; returns ``result``.
    """
    from ..errors import UsageError

    if options.record_id and len(bench) > 1:
        raise UsageError(f"--id names one record but the input holds {len(bench)} {unit}")
    unique_ids(bench)
    from .distinct_names import apply_to

    renamed = apply_to(bench)
    if renamed:
        result.stats["renamed"] = renamed
    result.findings = dedupe_findings(result.findings)
    result.records = extra + bench
    result.stats["imported"] = len(bench)
    return result


def engine_unstated(result: Any, rec: dict[str, Any], path: Any, message: str) -> None:
    """Add the KB1105 finding for a record whose input names no engine (``engine_id`` left null) to ``result``."""
    result.findings.append(KB1105.finding(message, record=f"benchmarks/{rec['id']}", path=str(path), field="engine_id"))


def one_record_per_json_file(paths: list, options: Any, kb: Any, fmt: str, build: Any) -> Any:
    """The parse loop of an importer whose every input file is one JSON document giving one benchmark record.

    ``build(doc, path, options, kb, sources, result) -> dict`` makes the record
    (it may add findings to ``result``); source records resolved for each file
    come before the benchmarks. Returns the ``IntakeResult``; raises
    InputError (unreadable or non-JSON file, whatever ``build`` raises) or
    UsageError (``--id`` with several files).
    """
    from .base import IntakeResult, read_input

    result = IntakeResult(stats={"imported": 0, "skipped": {}})
    extra: list[dict[str, Any]] = []
    bench: list[dict[str, Any]] = []
    for path in paths:
        raw = read_input(path)
        doc = load_json(path, raw)
        sources = resolve_sources(kb, options, path, raw, fmt, extra)
        bench.append(build(doc, path, options, kb, sources, result))
    return finish_batch(result, extra, bench, options, "runs")


def dedupe_findings(findings: list) -> list:
    """Collapse findings with the same code and message into one; ``extra["occurrences"]`` counts them."""
    seen: dict[tuple[str, str], Any] = {}
    out = []
    for f in findings:
        key = (f.code, f.message)
        if key in seen:
            first = seen[key]
            first.extra = dict(first.extra or {})
            first.extra["occurrences"] = first.extra.get("occurrences", 1) + 1
            first.record = None
            continue
        seen[key] = f
        out.append(f)
    return out
