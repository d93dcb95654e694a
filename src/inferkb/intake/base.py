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
from ..errors import PROCESSING, InputError, RecordExists, RecordInvalid, UsageError
from ..findings import Finding
from ..jsonio import NotRegularFile, read_regular
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

    def __post_init__(self) -> None:
        """Refuse a stated parallel layout that needs more devices than the stated count.

        TP x PP x DP (expert parallelism shards inside those devices and adds none; the
        same layout the ``device-count`` audit checks) above ``count`` is impossible.
        Raises UsageError naming the options; checked only when ``count`` and TP or PP are given.
        """
        if self.count is None or (self.tensor_parallel is None and self.pipeline_parallel is None):
            return
        factors = [("--tp", self.tensor_parallel), ("--pp", self.pipeline_parallel), ("--dp", self.data_parallel)]
        stated = [(flag, n) for flag, n in factors if n is not None]
        needed = math.prod(n for _, n in stated)
        if needed > self.count:
            layout = " x ".join(f"{flag} {n}" for flag, n in stated)
            raise UsageError(f"{layout} needs {needed} accelerators, more than --count {self.count}: the layout is impossible")


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
    ``--accelerator`` id wins (must exist: :class:`UsageError` otherwise); the raw
    string is ``--hardware-raw``, else the file's, else the GPU name ``inferkb env``
    captured (``options.env["gpu_raw"]``); it resolves through :func:`inferkb.resolve.resolve` (aliases, then
    normalised names; never a name covering only part of the string); several
    candidates give no id and all candidates as alternates; no match keeps only
    ``hardware_raw`` and a note.
    """
    from ..resolve import resolve

    notes: list[str] = []
    raw = options.hardware_raw or raw_from_file
    env_gpu = options.env.get("gpu_raw") if isinstance(options.env, dict) else None
    if not raw and isinstance(env_gpu, str) and env_gpu.strip():
        raw = env_gpu
        notes.append(f"hardware string {raw!r} taken from the environment capture (--env gpu_raw): the file names no hardware")
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


def link_models(kb: KB, records: list[dict[str, Any]], unlinked: list[str] | None = None) -> list[str]:
    """Fill ``model_id`` (in place) of benchmark records whose ``model`` names exactly one model record, through the
    resolver (an exact or normalised id, name or alias, e.g. ``meta-llama/Llama-2-70b-hf``); returns one note per id set.

    A record that already has a ``model_id``, or states a reasoned model gap (``condition_gaps.model``, e.g. MLPerf's
    open division where the model may be modified), is left alone; an ambiguous or unknown name stays null, and
    ``unlinked`` (when given) receives one note per such model string: how many records carry it and what the resolver
    found (``'meta-llama/X' matches no model id, name or alias of this KB``, or the candidates of an ambiguous name).
    """
    from ..resolve import resolve

    notes = []
    missed: dict[str, tuple[Any, int]] = {}
    for rec in records:
        model = rec.get("model")
        if rec.get("type") != "benchmark" or rec.get("model_id") or not isinstance(model, str) or not model.strip():
            continue
        if isinstance(rec.get("condition_gaps"), dict) and "model" in rec["condition_gaps"]:
            continue
        res = resolve(kb, "model", model)
        if res.resolved:
            rec["model_id"] = res.id
            notes.append(f"{rec.get('id')}: model {model!r} -> model_id {res.id} ({res.how} match)")
        else:
            seen = missed.get(model)
            missed[model] = (res, (seen[1] if seen else 0) + 1)
    if unlinked is not None:
        for res, n in missed.values():
            unlinked.append(f"{res.reason()}: model_id stays null ({n} record{'s' if n != 1 else ''})")
    return notes


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


def without_backfills(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` with the fields a derivation backfilled (provenance ``action: "backfill"``) and those provenance entries
    set back to what ``new`` has.

    So a record whose only difference from a fresh import of the same input is a
    derivation's backfill (``derive interconnect-ids --write``, ``per-accelerator``)
    compares equal under :func:`stable_view`, and the re-import is a no-op.

    A backfill entry that ``new`` carries too (same tag, field, method, evidence
    and basis: an importer that applies the derivation's own rule, such as
    ``base_model_id`` from the MLPerf label map) is kept, and the kept entries
    are put in ``new``'s order, so the place where each step appended its entry
    does not count as a change.

    A derivation's correction (tag ``derive:...``, ``action: "correction"``,
    ``numbers_changed: false``: ``llm-inference-bench-split`` replacing an
    earlier derived ``interconnect_exercised``) counts as a backfill here: it is
    derived metadata the derivation writes again, not an edit an import must keep.
    """
    from ..derive.base import same_entry

    def derived(entry: Any) -> bool:
        if not isinstance(entry, dict):
            return False
        if entry.get("action") == "backfill":
            return True
        return (
            entry.get("action") == "correction"
            and str(entry.get("tag") or "").startswith("derive:")
            and entry.get("numbers_changed") is False
        )

    out = dict(old)
    kept = []
    carried = False
    new_prov = [e for e in new.get("provenance") or [] if isinstance(e, dict)]
    for entry in old.get("provenance") or []:
        if derived(entry) and any(same_entry(entry, e) for e in new_prov):
            kept.append(entry)
            carried = True
        elif derived(entry):
            field = entry.get("field")
            if not isinstance(field, str):
                kept.append(entry)
            elif field in new:
                out[field] = new[field]
            else:
                out.pop(field, None)
        else:
            kept.append(entry)
    if kept or "provenance" in new:

        def place(entry: Any) -> int:
            at = next((i for i, e in enumerate(new_prov) if isinstance(entry, dict) and same_entry(entry, e)), None)
            return len(new_prov) if at is None else at

        out["provenance"] = sorted(kept, key=place) if carried else kept
    else:
        out.pop("provenance", None)
    return out


def commit(
    kb: KB,
    records: list[dict[str, Any]],
    *,
    update: bool = False,
    on_diff: Callable[[dict, dict], None] | None = None,
    unchanged: list[str] | None = None,
    dry_run: bool = False,
    existing: list[str] | None = None,
) -> list[str]:
    """Write ``records`` through the store; returns the keys written.

    Every record is validated and checked against an existing file BEFORE any
    is written, so a bad batch writes nothing. A record identical to the one on
    disk (ignoring import dates, see :func:`stable_view`, and what a derivation
    backfilled since, see :func:`without_backfills`) is skipped and its key
    appended to ``unchanged`` — so re-running an interrupted import completes
    it. A different existing record needs ``update`` (``on_diff(old, new)`` is
    called for each). Raises :class:`RecordExists`, :class:`RecordInvalid` or
    :class:`UsageError`.

    With ``dry_run`` nothing is written but every check of a write runs
    (validation of the batch as if written, serialisation), raising what the
    write would; returns the keys that would be written. A file that exists
    with different content raises as on a write unless ``existing`` is given:
    then its path is appended there and the preview goes on.
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
            if old is not None and stable_view(without_backfills(old.data, data)) == stable_view(data):
                if unchanged is not None:
                    unchanged.append(old.key)
                continue
            if not update and dry_run and existing is not None:
                existing.append(str(path))  # a preview goes on (no diff shown); the write would refuse this file
                old = None
            elif not update:
                raise RecordExists(
                    f"{path} exists with different content; refusing to overwrite (use --update to replace it and see the diff)"
                )
        planned.append((data, old.data if old is not None else None))

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
    if dry_run:
        return _check_batch(kb, [data for data, _ in planned], validate_then_show)
    written = kb.write_records([data for data, _ in planned], overwrite=update, check=validate_then_show)
    return [rec.key for rec in written]


def _check_batch(kb: KB, records: list[dict[str, Any]], check: Callable) -> list[str]:
    """What :meth:`inferkb.store.Store.write_records` checks before it writes, without writing: the dry run of :func:`commit`.

    Raises :class:`UsageError` (bad id or type, a key twice), :class:`RecordInvalid`
    (validation errors, the write's message) or ``ValueError``/``TypeError`` for a
    record the store could not serialise (an importer bug, as on a write).
    """
    from ..jsonio import dumps_record
    from ..store.writer import plan_record

    staged, seen = [], set()
    for data in records:
        rec, _ = plan_record(kb, data)
        if rec.key in seen:
            raise UsageError(f"record {rec.key} appears twice in one write")
        seen.add(rec.key)
        staged.append(rec)
    if staged:
        with kb.index.staged(staged):
            errors = [f for f in check(kb, staged) if f.severity == "error"]
        if errors:
            first = errors[0].record or staged[0].key
            detail = "; ".join(f"{f.field or '-'}: {f.message}" for f in errors[:5])
            raise RecordInvalid(f"record {first} is invalid and nothing was written: {detail}", errors)
    for rec in staged:
        dumps_record(rec.data).encode("utf-8")
    return [rec.key for rec in staged]


def read_input(path: Path, *, limit: int | None = None) -> bytes:
    """Read an input file; raises :class:`InputError` naming the file when it is missing, a directory, not a
    regular file (a FIFO would block forever), over ``limit`` bytes, or empty."""
    PROCESSING.what = str(path)
    try:
        if path.is_dir():
            raise InputError("is a directory, expected a file", path=str(path))
        size = path.stat().st_size
        if limit is not None and size > limit:
            raise InputError(f"is {size / 1048576:.0f} MiB, over the {limit / 1048576:.0f} MiB limit for this format", path=str(path))
        raw = read_regular(path, limit)
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", path=str(path)) from None
    except NotRegularFile:
        raise InputError("is not a regular file (a FIFO, socket or device); only regular files are read", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or exc}", path=str(path)) from None
    if not raw.strip():
        raise InputError("file is empty", path=str(path))
    return raw
