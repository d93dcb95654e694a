"""Shared pieces of every importer: options, result, record skeleton, stats, commit.

The rule every importer follows (DESIGN.md rule 1): a condition is filled only
from what the file or an explicit command-line option states; anything else
stays null with a ``condition_gaps`` reason — never a harness default.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import InputError, RecordExists, UsageError
from ..findings import Finding
from ..schemas import object_keys
from ..store import check_id

if TYPE_CHECKING:
    from ..kb import KB

# The benchmark schema's ``conditions`` keys (the schema is the contract; they are not restated here).
CONDITION_KEYS = object_keys("benchmark", "conditions")


@dataclass
class IntakeOptions:
    """What the user states on the command line; ``None`` = not stated.

    ``arms`` is ``[(arm_id, path)]`` for multi-arm formats; ``env`` is a dict
    from ``inferkb env --format json``; ``record_id``/``name`` override the
    generated ones; ``source`` is a source record id to cite.
    """

    model: str | None = None
    model_id: str | None = None
    accelerator: str | None = None
    hardware_raw: str | None = None
    count: int | None = None
    engine: str | None = None
    engine_version: str | None = None
    input_len: int | None = None
    output_len: int | None = None
    batch_size: int | None = None
    concurrency: int | None = None
    num_prompts: int | None = None
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    expert_parallel: int | None = None
    data_parallel: int | None = None
    warmup: str | None = None
    dataset: str | None = None
    source: str | None = None
    record_id: str | None = None
    name: str | None = None
    env: dict[str, Any] | None = None
    arms: list[tuple[str, Path]] = field(default_factory=list)
    baseline: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class IntakeResult:
    """Records built by an importer plus what it noticed.

    ``records``: benchmark (and other) record dicts ready for the store.
    ``findings``: e.g. unresolved hardware, contradictions inside the file.
    ``stats``: ``{"imported": n, "skipped": {reason: n}, "unresolved_hardware": [...], ...}``.
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


class Importer:
    """Base class: subclasses set ``name``/``description`` and implement :meth:`parse`."""

    name: str = ""
    description: str = ""
    multi_arm: bool = False

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:  # pragma: no cover - abstract
        """Parse ``paths`` into records. Raises InputError for unusable input, UsageError for bad options; never writes."""
        raise NotImplementedError


# The importers extension point's items: ``{format name: Importer instance}``.
IMPORTERS: dict[str, Importer] = plugins.IMPORTERS.items


def register(cls: type[Importer]) -> type[Importer]:
    """Class decorator: instantiate and register an importer under its ``name`` (the one registration style for importers)."""
    inst = cls()
    if not inst.name:
        raise ValueError(f"{cls.__name__} has no name")
    plugins.IMPORTERS.register(inst.name, inst, module=cls.__module__)
    return cls


importer = register  # the same decorator under the name the other extension points' decorators follow


# ---- statistics -----------------------------------------------------------


def percentile(sorted_values: list[float], p: float) -> float:
    """Linear-interpolation percentile of already sorted values (``p`` in 0..100).

    Same definition as NumPy's default ``np.percentile`` (method "linear"),
    which the vLLM harness uses for its own percentiles, so recomputed values
    can be cross-checked against the file's. Raises ``ValueError`` on empty input.
    """
    if not sorted_values:
        raise ValueError("percentile of no values")
    rank = (len(sorted_values) - 1) * p / 100.0
    lo = math.floor(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def sample_stats(values: list[float], *, scale: float = 1.0) -> dict[str, Any]:
    """Arm stats ``{mean, p50, p90, p99, min, max, stdev, n}`` of ``values`` times ``scale``.

    ``stdev`` is the population standard deviation (what vLLM writes as
    ``std_latency``). Raises ``ValueError`` on an empty list.
    """
    if not values:
        raise ValueError("no samples")
    xs = sorted(v * scale for v in values)
    n = len(xs)
    mean = math.fsum(xs) / n
    var = math.fsum((x - mean) ** 2 for x in xs) / n
    return {
        "mean": mean,
        "p50": percentile(xs, 50),
        "p90": percentile(xs, 90),
        "p99": percentile(xs, 99),
        "min": xs[0],
        "max": xs[-1],
        "stdev": math.sqrt(var),
        "n": n,
    }


# ---- record building --------------------------------------------------------

_GAP_RECOVER = {
    "batch_size": "the harness command line (--batch-size) or pass --batch-size",
    "concurrency": "the harness command line (--max-concurrency) or pass --concurrency",
    "input_tokens": "the harness command line (--input-len) or pass --input-len",
    "output_tokens": "the harness command line (--output-len) or pass --output-len",
    "num_prompts": "the harness command line (--num-prompts)",
    "dataset": "the harness command line (--dataset-name / --dataset-path)",
    "warmup": "the harness command line (--num-iters-warmup) or the log's warmup phase; pass --warmup",
    "engine_version": "the engine's version or commit (pip show / git rev-parse) or pass --engine-version",
    "tensor_parallel": "the server launch command (-tp / --tensor-parallel-size)",
    "pipeline_parallel": "the server launch command (-pp / --pipeline-parallel-size)",
    "expert_parallel": "the server launch command (--enable-expert-parallel and its size)",
    "data_parallel": "the server launch command (-dp / --data-parallel-size)",
    "max_model_len": "the server launch command (--max-model-len)",
    "request_rate": "the harness command line (--request-rate)",
}


def build_conditions(stated: dict[str, Any], fmt: str, checked: list[str], relevant: tuple[str, ...]) -> tuple[dict, dict]:
    """Return ``(conditions, condition_gaps)``.

    ``stated`` holds the conditions the file or options establish. Every key
    of :data:`CONDITION_KEYS` appears in ``conditions`` (null when not stated);
    each null key in ``relevant`` gets a gap ``{reason, checked, recover}``.
    """
    conditions = {k: stated.get(k) for k in CONDITION_KEYS}
    gaps = {}
    for key in relevant:
        if conditions.get(key) is None:
            gaps[key] = {
                "reason": f"not stated in the {fmt} output nor given as an option",
                "checked": checked,
                "recover": _GAP_RECOVER.get(key, "the run's command line or log"),
            }
    return conditions, gaps


def resolve_accelerator(kb: KB, options: IntakeOptions, raw_from_file: str | None) -> tuple[list[str], list[str], str | None, list[str]]:
    """Decide ``accelerator_ids``, ``accelerator_alternates`` and ``hardware_raw``.

    Returns ``(ids, alternates, hardware_raw, notes)``. An explicit
    ``--accelerator`` id wins (must exist: :class:`UsageError` otherwise); a raw
    string resolves through :func:`inferkb.resolve.resolve` (aliases, then
    normalised names; never a name covering only part of the string); several
    candidates give no id and all candidates as alternates; no match keeps only
    ``hardware_raw`` and a note.
    """
    from ..resolve import resolve

    raw = options.hardware_raw or raw_from_file
    notes: list[str] = []
    res = resolve(kb, "accelerator", raw) if raw else None
    if options.accelerator:
        if options.accelerator not in kb.ids_of_type("accelerator"):
            raise UsageError(f"--accelerator {options.accelerator!r} is not an accelerator id in this KB")
        alts = [c for c in res.ids if c != options.accelerator] if res is not None and res.how != "parts" else []
        return [options.accelerator], alts, raw, notes
    if res is None:
        notes.append("no hardware string in the file and no --accelerator/--hardware-raw given")
        return [], [], None, notes
    if res.resolved:
        if res.how == "name":
            notes.append(f"hardware string {raw!r} resolved to {res.id} by its name without vendor words")
        return [res.id], [], raw, notes
    if res.ambiguous:
        notes.append(f"hardware string {res.reason()}")
        return [], list(res.ids), raw, notes
    notes.append(f"hardware string {res.reason()}")
    return [], [], raw, notes


def today() -> str:
    """Today's date as ISO ``YYYY-MM-DD`` (the ``updated``/``accessed`` of imported records)."""
    return _dt.date.today().isoformat()


VOLATILE_FIELDS = frozenset({"updated", "accessed"})


def stable_view(data: dict[str, Any]) -> str:
    """A record as canonical JSON without the fields that only say when it was imported.

    Two imports of the same input on different days give the same view, so a
    re-import can tell "identical" from "changed". ``updated``/``accessed`` and
    provenance ``date`` are left out.
    """
    d = {k: v for k, v in data.items() if k not in VOLATILE_FIELDS}
    if isinstance(d.get("provenance"), list):
        d["provenance"] = [{k: v for k, v in p.items() if k != "date"} if isinstance(p, dict) else p for p in d["provenance"]]
    return json.dumps(d, sort_keys=True, ensure_ascii=False)


def commit(
    kb: KB,
    records: list[dict[str, Any]],
    *,
    update: bool = False,
    on_diff: Callable[[dict, dict], None] | None = None,
    unchanged: list[str] | None = None,
) -> list[str]:
    """Write ``records`` through the store; returns the keys written.

    Every record is validated and checked against an existing file BEFORE any
    is written, so a bad batch writes nothing. A record identical to the one on
    disk (ignoring import dates, see :func:`stable_view`) is skipped and its key
    appended to ``unchanged`` — so re-running an interrupted import completes
    it. A different existing record needs ``update`` (``on_diff(old, new)`` is
    called for each). Raises :class:`RecordExists`, :class:`RecordInvalid` or
    :class:`UsageError`.
    """
    planned = []
    for data in records:
        rid, rtype = data.get("id"), data.get("type")
        if not isinstance(rid, str) or not isinstance(rtype, str):
            raise UsageError("importer produced a record without string id/type")
        check_id(rid)
        path = kb.record_path(rtype, rid)
        old = None
        if path.exists():
            old = kb.resolve(f"{kb.profile.types[rtype].dir}/{rid}")
            if old is not None and stable_view(old.data) == stable_view(data):
                if unchanged is not None:
                    unchanged.append(old.key)
                continue
            if not update:
                raise RecordExists(
                    f"{path} exists with different content; refusing to overwrite (use --update to replace it and see the diff)"
                )
        planned.append((data, old.data if path.exists() and old is not None else None))

    def validate_then_show(store, staged):
        from ..validate import validate_records

        findings = validate_records(store, staged)
        if on_diff is not None and not any(f.severity == "error" for f in findings):
            for data, old_data in planned:
                if old_data is not None:
                    on_diff(old_data, data)
        return findings

    # One batch through the store: validated as if written (records may reference each other), all or nothing;
    # the diffs of replaced records are shown once the batch is known to be valid, before anything is written.
    written = kb.write_records([data for data, _ in planned], overwrite=update, check=validate_then_show)
    return [rec.key for rec in written]


def read_input(path: Path, *, limit: int | None = None) -> bytes:
    """Read an input file; raises :class:`InputError` naming the file when it is missing, a directory or empty."""
    try:
        if path.is_dir():
            raise InputError("is a directory, expected a file", path=str(path))
        size = path.stat().st_size
        if limit is not None and size > limit:
            raise InputError(f"is {size / 1048576:.0f} MiB, over the {limit / 1048576:.0f} MiB limit for this format", path=str(path))
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", path=str(path)) from None
    if not raw.strip():
        raise InputError("file is empty", path=str(path))
    return raw
