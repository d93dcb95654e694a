"""Helpers shared by the harness importers: strict reading, key checks, ids, sources, environment.

What every importer here does the same way:

- **Reading.** Strict reading of the file and its values (:func:`load_json`,
  :func:`require_keys`, :func:`number`, :func:`mapping`, ...) lives in
  :mod:`inferkb.intake.values` and is re-exported here.
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
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..rules import Rule, register
from ..schemas import object_keys
from .base import IntakeOptions, today
from .batch import dedupe_findings, finish_batch, unique_ids  # noqa: F401 - re-exported: importers call C.<name>
from .values import (  # noqa: F401 - re-exported: importers call C.<name>
    PERCENTILE_SLOTS,
    close,
    distribution,
    integer,
    load_json,
    mapping,
    number,
    require_keys,
    shown,
)

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
