"""LLM-Inference-Bench rows -> ``format_id``: the weight format the repository's run script for the row's group sets.

The dashboard CSVs never state the weight precision (only the KV_Cache_Dtype
table has a "Weight = ..." column, which the importer reads first). The map
``llm_inference_bench_formats.toml`` beside this module ties a (table,
framework, hardware) group to the run script that produced it, the script's
loops (models, device counts, batch sizes, input = output lengths) and the
quoted line that sets the format (``--dtype="float16"``, a ``*_f16.gguf``
file). The importer (:func:`inferkb.intake.llm_inference_bench.row_record`)
and the derivation ``llm-inference-bench-format``
(:mod:`inferkb.derive.llm_inference_bench_format`) both go through
:func:`decide`, so they write the same ``format_id``, the same
``condition_gaps`` and the same provenance entries, and a re-import after the
derivation changes nothing.

Outcomes of :func:`decide` (``Decision.kind``):

- ``filled``: the group has an entry with a format, the row lies inside the
  script's loops and the format is a quantization record of the KB;
- ``outside``: the group has an entry but the row's model, device count, batch
  size or lengths are outside the script's loops (another run produced it), or
  the entry states no format: null, with a ``condition_gaps.format_id`` reason
  naming the script checked;
- ``unknown-format``: the entry's format is not a quantization record of the KB;
- ``no-entry``: no entry for the group (the record is left exactly as it is);
- ``not-applicable``: not an llm-inference-bench record, or its format_id is
  already set, or it has no ``condition_gaps.format_id`` to resolve.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..derive.base import Proposal, provenance_entry
from .evidence_map import Decision, err, require_commit, require_strings
from .evidence_map import entries as map_entries

MAP_PATH = Path(__file__).with_name("llm_inference_bench_formats.toml")
ORIGIN = "llm-inference-bench"
NAME = "llm-inference-bench-format"
# The derivation's provenance tag (inferkb.derive.run tags entries "derive:<name>"); the importer writes the same entries.
TAG = f"derive:{NAME}"
FIELDS = ("format_id", "condition_gaps")
METHOD = "group map inferkb/intake/llm_inference_bench_formats.toml: the run script of the row's (table, framework, hardware)"
RECOVER = "the authors' run logs for this row, or a published script whose loops include it"
_STRINGS = ("table", "framework", "hardware", "repo", "path", "quote", "evidence")
_LISTS = ("device_counts", "batch_sizes", "lengths")


@dataclass(frozen=True, slots=True)
class GroupEntry:
    """One map entry (see the TOML file's header): the group, the script's loops, the format it sets and the cited line."""

    table: str
    framework: str
    hardware: str
    format: str | None
    models: tuple[str, ...]
    device_counts: tuple[int, ...]
    batch_sizes: tuple[int, ...]
    lengths: tuple[int, ...]
    output_lengths: tuple[int, ...] | None
    repo: str
    path: str
    commit: str
    quote: str
    evidence: str
    # Script devices per unit of the CSV's "Num of Hardware" (2 for the MI250: the CSV counts OAM packages, the scripts
    # count the two GCDs of each, which ROCm shows as two devices), and why; 1 and "" when they count alike.
    devices_per_count: int = 1
    devices_per_count_evidence: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.table, self.framework, self.hardware)

    def cite(self) -> str:
        """``repo/path@commit`` of the script."""
        return f"{self.repo}/{self.path}@{self.commit}"


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 0


def parse_map(text: str, *, path: str = str(MAP_PATH)) -> tuple[GroupEntry, ...]:
    """Entries of a group map given as TOML text (``[[group]]`` tables, keys as in the bundled file's header).

    Raises :class:`InputError` naming ``path`` and the entry's field when the
    TOML does not parse, a required string is missing or empty, a loop list is
    not a non-empty list of positive whole numbers (so is ``output_lengths``, when
    given), ``models`` is not a
    non-empty list of strings, ``commit`` is not 40 hex digits, ``format`` is
    given but not a non-empty string, ``devices_per_count`` is given but not a
    positive whole number, or is not 1 without a non-empty
    ``devices_per_count_evidence``, or two entries of one group name the same
    model (a row must find at most one script).
    """
    out: list[GroupEntry] = []
    seen: dict[tuple[tuple[str, str, str], str], int] = {}
    for i, (where, e) in enumerate(map_entries(text, "group", path=path)):
        require_strings(e, _STRINGS, path, where)
        commit = require_commit(e, path, where)
        fmt = e.get("format")
        if fmt is not None and (not isinstance(fmt, str) or not fmt.strip()):
            raise err(f"expected 'format' as a quantization id (a non-empty string), got {fmt!r}", path, f"{where}.format")
        models = e.get("models")
        if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
            raise err("expected 'models' as a non-empty list of Model column values", path, f"{where}.models")
        loops = {}
        for key in _LISTS:
            v = e.get(key)
            if not isinstance(v, list) or not v or not all(_whole(x) for x in v):
                raise err(f"expected {key!r} as a non-empty list of positive whole numbers, got {v!r}", path, f"{where}.{key}")
            loops[key] = tuple(v)
        outs = e.get("output_lengths")
        if outs is not None and (not isinstance(outs, list) or not outs or not all(_whole(x) for x in outs)):
            raise err(
                f"expected 'output_lengths' as a non-empty list of positive whole numbers, got {outs!r}", path, f"{where}.output_lengths"
            )
        per = e.get("devices_per_count", 1)
        if not _whole(per):
            raise err(f"expected 'devices_per_count' as a positive whole number, got {per!r}", path, f"{where}.devices_per_count")
        per_why = e.get("devices_per_count_evidence", "")
        if not isinstance(per_why, str) or (per != 1 and not per_why.strip()):
            raise err(
                f"expected 'devices_per_count_evidence' as a non-empty string saying why the script counts {per} devices per CSV count",
                path,
                f"{where}.devices_per_count_evidence",
            )
        entry = GroupEntry(
            e["table"], e["framework"], e["hardware"], fmt, tuple(models), loops["device_counts"], loops["batch_sizes"],
            loops["lengths"], tuple(outs) if outs is not None else None, e["repo"], e["path"], commit, e["quote"], e["evidence"],
            per, per_why,
        )  # fmt: skip
        for m in entry.models:
            if (entry.key, m) in seen:
                raise err(
                    f"model {m!r} of group {entry.key} is also in entry group[{seen[(entry.key, m)]}]; a group's entries "
                    "must name disjoint models",
                    path,
                    f"{where}.models",
                )
            seen[(entry.key, m)] = i
        out.append(entry)
    return tuple(out)


@cache
def group_map() -> tuple[GroupEntry, ...]:
    """The bundled map (:data:`MAP_PATH`), parsed once. Raises :class:`InputError` if it is unusable."""
    return parse_map(MAP_PATH.read_text(encoding="utf-8"))


def _row(data: dict[str, Any]) -> tuple[str, str, str, str, Any, Any, Any, Any] | None:
    sub, env, cond = data.get("submission"), data.get("environment"), data.get("conditions")
    if not (isinstance(sub, dict) and isinstance(env, dict) and isinstance(cond, dict)):
        return None
    return (
        sub.get("table"),
        env.get("framework"),
        data.get("hardware_raw"),
        data.get("model"),
        data.get("accelerator_count"),
        cond.get("batch_size"),
        cond.get("input_tokens"),
        cond.get("output_tokens"),
    )


def _outside(entry: GroupEntry, count: Any, batch: Any, isl: Any, osl: Any) -> list[str]:
    why = []
    per = entry.devices_per_count
    devices = count * per if _whole(count) else count
    if devices not in entry.device_counts:
        shown = f"{count} device(s)" if per == 1 else f"{count} x {per} = {devices} script device(s)"
        why.append(f"{shown} is not among its device counts {list(entry.device_counts)}")
    if batch not in entry.batch_sizes:
        why.append(f"batch size {batch} is not among {list(entry.batch_sizes)}")
    if entry.output_lengths is not None:
        if isl not in entry.lengths or osl not in entry.output_lengths:
            why.append(
                f"input/output {isl}/{osl} is not among its input lengths {list(entry.lengths)} x output lengths {list(entry.output_lengths)}"
            )
    elif isl != osl or isl not in entry.lengths:
        why.append(f"input/output {isl}/{osl} is not among its input = output lengths {list(entry.lengths)}")
    return why


def run_script(data: dict[str, Any], entries: tuple[GroupEntry, ...] | None = None) -> GroupEntry | None:
    """The map entry whose script's loops hold this llm-inference-bench row (group, model, device count, batch size,
    lengths), whatever its ``format_id`` now is; ``None`` when no entry's loops hold it. The same tests as :func:`decide`.
    """
    if data.get("origin") != ORIGIN:
        return None
    row = _row(data)
    if row is None:
        return None
    table, fw, hw, model, count, batch, isl, osl = row
    entry = next((e for e in (group_map() if entries is None else entries) if e.key == (table, fw, hw) and model in e.models), None)
    if entry is None or _outside(entry, count, batch, isl, osl):
        return None
    return entry


def decide(data: dict[str, Any], format_ids: Collection[str], entries: tuple[GroupEntry, ...] | None = None) -> Decision[GroupEntry]:
    """What the map says of one benchmark record (dict); ``format_ids``: the KB's quantization ids (see the module docstring)."""
    gaps = data.get("condition_gaps")
    if data.get("origin") != ORIGIN or data.get("format_id") is not None or not isinstance(gaps, dict) or "format_id" not in gaps:
        return Decision("not-applicable")
    row = _row(data)
    if row is None:
        return Decision("not-applicable")
    table, fw, hw, model, count, batch, isl, osl = row
    group = [e for e in (group_map() if entries is None else entries) if e.key == (table, fw, hw)]
    if not group:
        return Decision("no-entry")
    entry = next((e for e in group if model in e.models), None)
    old = gaps["format_id"] if isinstance(gaps["format_id"], dict) else {}
    scripts = list(dict.fromkeys(f"{e.path} (at {e.commit[:12]})" for e in ([entry] if entry else group)))
    checked = [c for c in old.get("checked") or [] if c not in scripts] + scripts  # a re-run adds nothing
    if entry is None:
        reason = (
            f"the group's run scripts ({', '.join(scripts)}) do not run model {model!r}: another run, whose script the "
            "repository does not publish, produced this row"
        )
        new_gaps = dict(gaps)
        new_gaps["format_id"] = {"reason": reason, "checked": checked, "recover": RECOVER}
        return Decision("outside", group[0], None, new_gaps, reason)
    why = _outside(entry, count, batch, isl, osl) if entry.format else []
    if entry.format is None or why:
        reason = (
            f"{entry.path} at {entry.commit[:12]} does not settle the weight format for this group: {entry.evidence}"
            if entry.format is None
            else f"the run script of {model} in this group, {entry.path} (at {entry.commit[:12]}), sets {entry.format} but "
            f"this row is outside its loops ({'; '.join(why)}): another run, whose script the repository does not publish, "
            "produced it"
        )
        new_gaps = dict(gaps)
        new_gaps["format_id"] = {"reason": reason, "checked": checked, "recover": RECOVER}
        return Decision("outside", entry, None, new_gaps, reason)
    if entry.format not in format_ids:
        return Decision("unknown-format", entry, why=f"the map names {entry.format!r}, which is not a quantization record of this KB")
    new_gaps = {k: v for k, v in gaps.items() if k != "format_id"}
    # Said only where the scaling decides: a row whose raw count also lies in the loops (filled before the field
    # existed) keeps the basis it was written with, which a re-import reproduces.
    note = ""
    if entry.devices_per_count != 1 and count not in entry.device_counts:
        note = (
            f"the row's count {count} is compared as {count} x {entry.devices_per_count} = {count * entry.devices_per_count} "
            f"script devices: {entry.devices_per_count_evidence}"
        )
    return Decision("filled", entry, entry.format, new_gaps, note)


def proposals(record_key: str, d: Decision[GroupEntry]) -> list[Proposal]:
    """The derived values of a ``filled`` or ``outside`` decision, each with its evidence (the record's group) and basis."""
    if d.entry is None or d.condition_gaps is None:
        return []
    e = d.entry
    evidence = {"field": "hardware_raw", "quote": e.hardware}
    out = []
    if d.format_id is not None:
        basis = (
            f"{e.framework} on {e.hardware}, {e.table} table, inside the loops of {e.cite()}, which says: {e.quote.strip()!r}; {e.evidence}"
        )
        if d.why:
            basis += f"; {d.why}"
        out.append(Proposal(record_key, "format_id", d.format_id, METHOD, evidence, basis))
        gap_basis = f"format_id is now filled from {e.cite()}; its condition_gaps entry is removed"
    else:
        gap_basis = f"the row is checked against {e.cite()}: {d.why}"
    out.append(Proposal(record_key, "condition_gaps", d.condition_gaps, METHOD, evidence, gap_basis))
    return out


def fill(
    rec: dict[str, Any], format_ids: Collection[str], date: str, entries: tuple[GroupEntry, ...] | None = None
) -> Decision[GroupEntry]:
    """Apply :func:`decide` to a fresh record (in place), for the importer; returns the decision.

    ``filled`` sets ``format_id`` and drops ``condition_gaps.format_id``;
    ``outside`` rewrites that gap's reason; each appends the provenance entry
    the derivation would (dated ``date``, ISO ``YYYY-MM-DD``). Any other
    outcome leaves the record as it is.
    """
    d = decide(rec, format_ids, entries)
    day = _dt.date.fromisoformat(date)
    for p in proposals(f"benchmarks/{rec.get('id')}", d):
        rec[p.field] = copy.deepcopy(p.value)
        rec.setdefault("provenance", []).append(provenance_entry(p, TAG, day))
    return d
