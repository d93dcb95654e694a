"""MLPerf records whose harness configuration contradicts the results table's weight data type.

The round's ``summary_results.json`` states ``weight_data_types`` per row; the
importer turns it into ``format_id`` (:func:`inferkb.intake.mlperf_maps.match_format`).
For NVIDIA's v4.1 TensorRT submissions the table says ``fp16`` while the
submission's own config classes set ``use_fp8 = True``. The evidence map
``mlperf_weight_formats.toml`` beside this module names, per (round,
submitter, division, platform, model), the config file read for each scenario
at a pinned commit, the deciding class and attributes, and what the harness
sets. The derivation ``mlperf-weight-format``
(:mod:`inferkb.derive.mlperf_weight_format`) and the MLPerf importer
(:func:`inferkb.intake.mlperf.build_record`, through :func:`fill`) both go
through :func:`decide`, so a fresh import already carries what the derivation
would write and a re-import after it compares equal.

Outcomes of :func:`decide` (``Decision.kind``):

- ``contradicted``: an entry covers the record, the record's ``format_id`` and
  ``submission.weight_data_types`` are the entry's ``table_says``; the harness
  dtype replaces it: a KB quantization id when the dtype names one exactly,
  else (``fp8``, :data:`~inferkb.intake.mlperf_maps._VAGUE`) ``format_id``
  null with a ``condition_gaps.format_id`` reason naming the file and commit;
- ``no-entry``: an MLPerf record whose ``format_id`` is the table's ``fp16``
  but no entry covers it (left exactly as it is);
- ``not-applicable``: anything else (other origin, another format, already
  resolved).
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..derive.base import Proposal, provenance_entry
from .evidence_map import Decision, err, require_commit, require_strings
from .evidence_map import entries as map_entries
from .mlperf_maps import _VAGUE

MAP_PATH = Path(__file__).with_name("mlperf_weight_formats.toml")
ORIGIN = "mlperf-inference"
NAME = "mlperf-weight-format"
TAG = f"derive:{NAME}"
FIELDS = ("format_id", "condition_gaps")
METHOD = (
    "evidence map inferkb/intake/mlperf_weight_formats.toml: the submission's harness config class for this platform, model and scenario"
)
RECOVER = "the submission's measurements/<system>/<model>/<scenario> files or engine build log naming the FP8 variant"
SCENARIOS = ("Offline", "Server", "SingleStream", "MultiStream")
DIVISIONS = ("closed", "open")
_STRINGS = ("round", "submitter", "division", "platform", "model", "repo", "table_says", "harness_says", "decides")
_ROUND = re.compile(r"^v\d+\.\d+$")
# How the format_id gap this module writes begins; table_contradicted() recognises it.
CONTRADICTED = "the results table says weight_data_types "


@dataclass(frozen=True, slots=True)
class Entry:
    """One map entry (see the TOML file's header)."""

    round: str
    submitter: str
    division: str
    platform: str
    model: str
    repo: str
    commit: str
    files: dict[str, str]
    classes: dict[str, str]
    table_says: str
    harness_says: str
    decides: str

    def covers(self, sub: dict[str, Any]) -> bool:
        """True when a record's ``submission`` block is this entry's round, submitter, division, platform, model and a listed scenario."""
        model = re.sub(r"-99(\.9)?$", "", str(sub.get("mlperf_model") or ""))
        return (sub.get("round"), sub.get("submitter"), sub.get("division"), sub.get("platform"), model) == (
            self.round,
            self.submitter,
            self.division,
            self.platform,
            self.model,
        ) and sub.get("scenario_raw") in self.files

    def cite(self, scenario: str) -> str:
        """``repo/path@commit`` of the config read for ``scenario``."""
        return f"{self.repo}/{self.files[scenario]}@{self.commit}"


def _scenario_table(e: dict[str, Any], key: str, path: str, where: str) -> dict[str, str]:
    v = e.get(key)
    if not isinstance(v, dict) or not v:
        raise err(f"expected {key!r} as a table {{scenario = text}}", path, f"{where}.{key}")
    for s, text in v.items():
        if s not in SCENARIOS:
            raise err(f"unknown scenario {s!r}; expected one of {', '.join(SCENARIOS)}", path, f"{where}.{key}.{s}")
        if not isinstance(text, str) or not text.strip():
            raise err("expected a non-empty string", path, f"{where}.{key}.{s}")
    return dict(v)


def parse_map(text: str, *, path: str = str(MAP_PATH)) -> tuple[Entry, ...]:
    """Entries of an evidence map given as TOML text (``[[entry]]`` tables, keys as in the bundled file's header).

    Raises :class:`InputError` naming ``path`` and the entry's field when the
    TOML does not parse, a required string is missing or empty, ``round`` is
    not ``vN.N``, ``division`` is not closed/open, ``commit`` is not 40 hex
    digits, ``files``/``classes`` are not tables keyed by MLPerf scenarios with
    the same scenarios, ``model`` keeps an accuracy suffix, ``table_says``
    equals ``harness_says``, or two entries cover the same records.
    """
    out: list[Entry] = []
    seen: dict[tuple[str, ...], int] = {}
    for i, (where, e) in enumerate(map_entries(text, "entry", path=path)):
        require_strings(e, _STRINGS, path, where)
        if not _ROUND.match(e["round"]):
            raise err(f"expected 'round' like 'v4.1', got {e['round']!r}", path, f"{where}.round")
        if e["division"] not in DIVISIONS:
            raise err(f"expected 'division' closed or open, got {e['division']!r}", path, f"{where}.division")
        if re.search(r"-99(\.9)?$", e["model"]):
            raise err(f"expected 'model' without the -99/-99.9 accuracy suffix, got {e['model']!r}", path, f"{where}.model")
        commit = require_commit(e, path, where)
        files = _scenario_table(e, "files", path, where)
        classes = _scenario_table(e, "classes", path, where)
        if set(files) != set(classes):
            raise err(f"'classes' names scenarios {sorted(classes)} but 'files' names {sorted(files)}", path, f"{where}.classes")
        if e["table_says"] == e["harness_says"]:
            raise err("'harness_says' equals 'table_says': an entry records a contradiction", path, f"{where}.harness_says")
        entry = Entry(
            e["round"], e["submitter"], e["division"], e["platform"], e["model"], e["repo"], commit, files, classes,
            e["table_says"], e["harness_says"], e["decides"],
        )  # fmt: skip
        for s in files:
            key = (entry.round, entry.submitter, entry.division, entry.platform, entry.model, s)
            if key in seen:
                raise err(f"covers the same records as entry[{seen[key]}] ({s})", path, f"{where}.files.{s}")
            seen[key] = i
        out.append(entry)
    return tuple(out)


@cache
def evidence_map() -> tuple[Entry, ...]:
    """The bundled map (:data:`MAP_PATH`), parsed once. Raises :class:`InputError` if it is unusable."""
    return parse_map(MAP_PATH.read_text(encoding="utf-8"))


def decide(data: dict[str, Any], format_ids: Collection[str], entries: tuple[Entry, ...]) -> Decision[Entry]:
    """What the map says of one benchmark record (dict); ``format_ids``: the KB's quantization ids."""
    sub = data.get("submission")
    if data.get("origin") != ORIGIN or not isinstance(sub, dict) or data.get("format_id") is None:
        return Decision("not-applicable")
    entry = next((e for e in entries if e.covers(sub)), None)
    if entry is None:
        return Decision("no-entry") if data.get("format_id") == "fp16" else Decision("not-applicable")
    if data.get("format_id") != entry.table_says or sub.get("weight_data_types") != entry.table_says:
        return Decision("not-applicable")
    scenario = sub["scenario_raw"]
    dtype = entry.harness_says
    cls = entry.classes[scenario]
    if dtype not in _VAGUE and dtype in format_ids:
        gaps = {k: v for k, v in (data.get("condition_gaps") or {}).items() if k != "format_id"}
        return Decision("contradicted", entry, dtype, gaps)
    why = _VAGUE.get(dtype, f"no quantization record for {dtype!r} in this KB")
    reason = (
        f"{CONTRADICTED}{entry.table_says!r}, but the harness config "
        f"{entry.cite(scenario)} runs this system as class {cls} ({entry.decides}), so the weights are "
        f"{dtype.upper()}, not {entry.table_says.upper()}; {why}"
    )
    gaps = dict(data.get("condition_gaps") or {})
    gaps["format_id"] = {"reason": reason, "checked": ["weight_data_types", entry.cite(scenario)], "recover": RECOVER}
    return Decision("contradicted", entry, None, gaps, reason)


def table_contradicted(data: dict[str, Any]) -> bool:
    """True when a record's ``condition_gaps.format_id`` records that the harness config contradicts the table's weight type."""
    gaps = data.get("condition_gaps")
    gap = gaps.get("format_id") if isinstance(gaps, dict) else None
    return isinstance(gap, dict) and isinstance(gap.get("reason"), str) and gap["reason"].startswith(CONTRADICTED)


def proposals(record_key: str, data: dict[str, Any], d: Decision[Entry]) -> list[Proposal]:
    """The two proposals (``format_id``, ``condition_gaps``) of a ``contradicted`` decision, each quoting the record's platform."""
    if d.kind != "contradicted" or d.entry is None:
        return []
    e = d.entry
    scenario = data["submission"]["scenario_raw"]
    evidence = {"field": "submission.platform", "quote": e.platform}
    basis = (
        f"{e.submitter} {e.round} {e.platform} {e.model} {scenario}: {e.cite(scenario)} class {e.classes[scenario]}: "
        f"{e.decides}; the table's weight_data_types {e.table_says!r} is kept raw in submission.weight_data_types"
    )
    return [
        Proposal(record_key, "format_id", d.format_id, METHOD, evidence, basis),
        Proposal(record_key, "condition_gaps", d.condition_gaps, METHOD, evidence, f"format_id gap: {d.why or 'filled'}"),
    ]


def fill(rec: dict[str, Any], format_ids: Collection[str], date: str, entries: tuple[Entry, ...] | None = None) -> Decision[Entry]:
    """Apply :func:`decide` to a freshly imported record (in place), for the importer; returns the decision.

    ``contradicted`` sets ``format_id`` and ``condition_gaps`` to the values the
    derivation writes and appends its two provenance entries (tag :data:`TAG`,
    dated ``date``, ISO ``YYYY-MM-DD``); any other outcome leaves the record as
    it is. ``entries`` defaults to the bundled map (:func:`evidence_map`, which
    raises :class:`InputError` naming the map file and field if it is unusable).
    """
    d = decide(rec, format_ids, evidence_map() if entries is None else entries)
    day = _dt.date.fromisoformat(date)
    for p in proposals(f"benchmarks/{rec.get('id')}", rec, d):
        rec[p.field] = copy.deepcopy(p.value)
        rec.setdefault("provenance", []).append(provenance_entry(p, TAG, day))
    return d
