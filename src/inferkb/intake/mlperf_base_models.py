"""Open-division MLPerf labels -> ``base_model_id``: the published model a result was derived from.

An open-division submission may prune, retrain or requantise the model, so the
importer leaves ``model_id`` null (it would claim "this is the model") and keeps
the submitter's label in ``submission.used_model``. This module reads the label
map ``mlperf_base_models.toml`` beside it (pattern -> model id, with the
evidence) and matches a label against it. The MLPerf importer
(:func:`inferkb.intake.mlperf.build_record`) and the derivation ``base-model-id``
(:mod:`inferkb.derive.base_model_id`) both go through :func:`match_label` and
:func:`proposal`, so they write the same value with the same provenance entry and
a re-import after the derivation changes nothing.

Outcomes of :func:`match_label` (``Match.kind``):

- ``filled``: exactly one entry matches and its model id is a model record;
- ``ambiguous``: two or more entries match (nothing picked; the candidates are listed);
- ``unknown-model``: one entry matches but the KB has no model record with its id;
- ``no-match``: no entry matches the label.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..derive.base import KB1001, KB1002, Proposal, provenance_entry
from .evidence_map import entries as map_entries
from .evidence_map import err, require_strings

MAP_PATH = Path(__file__).with_name("mlperf_base_models.toml")
FIELD = "base_model_id"
LABEL_FIELD = "submission.used_model"
# The derivation's provenance tag (inferkb.derive.run tags entries "derive:<name>"); the importer writes the same entry.
TAG = "derive:base-model-id"
METHOD = "label map inferkb/intake/mlperf_base_models.toml: the one entry whose pattern matches the whole label"


@dataclass(frozen=True, slots=True)
class LabelRule:
    """One map entry: ``pattern`` (matches a whole label), ``model`` (model record id), ``evidence`` (why)."""

    pattern: str
    model: str
    evidence: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class Match:
    """What the map says of one label: ``kind`` (see the module docstring), the matching ``rules`` and ``model_id``."""

    label: str
    kind: str
    rules: tuple[LabelRule, ...]
    model_id: str | None = None

    def reason(self) -> str:
        """One sentence for a finding: why nothing was filled (empty for ``filled``)."""
        if self.kind == "ambiguous":
            pats = ", ".join(f"{r.pattern!r} -> {r.model}" for r in self.rules)
            return f"label {self.label!r} matches {len(self.rules)} entries of the label map ({pats}); nothing picked"
        if self.kind == "unknown-model":
            r = self.rules[0]
            return f"label {self.label!r} matches {r.pattern!r}, whose model {r.model!r} is not a model record of this KB"
        if self.kind == "no-match":
            return f"label {self.label!r} matches no entry of the label map ({MAP_PATH.name})"
        return ""


def parse_map(text: str, *, path: str = str(MAP_PATH)) -> tuple[LabelRule, ...]:
    """Entries of a label map given as TOML text (``[[label]]`` tables with ``pattern``, ``model``, ``evidence``).

    Raises :class:`InputError` naming ``path`` and the entry when the TOML does
    not parse, a key is missing or not a non-empty string, or a pattern is not a
    valid regular expression.
    """
    rules = []
    for where, entry in map_entries(text, "label", path=path):
        require_strings(entry, ("pattern", "model", "evidence"), path, where)
        try:
            regex = re.compile(entry["pattern"])
        except re.error as exc:
            raise err(f"pattern {entry['pattern']!r} is not a regular expression: {exc}", path, f"{where}.pattern") from None
        rules.append(LabelRule(entry["pattern"], entry["model"], entry["evidence"], regex))
    return tuple(rules)


@cache
def label_map() -> tuple[LabelRule, ...]:
    """The bundled label map (:data:`MAP_PATH`), parsed once. Raises :class:`InputError` if it is unusable."""
    return parse_map(MAP_PATH.read_text(encoding="utf-8"))


def match_label(label: str, rules: tuple[LabelRule, ...], model_ids: Collection[str]) -> Match:
    """Match ``label`` (a ``submission.used_model`` string) against ``rules``; ``model_ids``: the KB's model record ids."""
    hits = tuple(r for r in rules if r.regex.fullmatch(label))
    if not hits:
        return Match(label, "no-match", ())
    if len(hits) > 1:
        return Match(label, "ambiguous", hits)
    if hits[0].model not in model_ids:
        return Match(label, "unknown-model", hits)
    return Match(label, "filled", hits, hits[0].model)


def is_open(data: dict[str, Any]) -> bool:
    """True for an MLPerf benchmark record outside the closed division (a division is stated and is not ``closed``)."""
    sub = data.get("submission")
    return data.get("origin") == "mlperf-inference" and isinstance(sub, dict) and sub.get("division") not in (None, "closed")


def open_label(data: dict[str, Any]) -> str | None:
    """The label of a non-closed MLPerf benchmark record (``submission.used_model``), else ``None``.

    Closed-division rows run the reference model (their ``model_id`` says so);
    a record without a label has nothing to match.
    """
    if not is_open(data):
        return None
    label = data["submission"].get("used_model")
    return label if isinstance(label, str) and label.strip() else None


def proposal(record_key: str, match: Match) -> Proposal:
    """The derived value for a ``filled`` match, with its evidence (the quoted label) and basis (the entry's evidence)."""
    rule = match.rules[0]
    return Proposal(
        record_key,
        FIELD,
        match.model_id,
        method=METHOD,
        evidence={"field": LABEL_FIELD, "quote": match.label},
        basis=f"the submitter's model label matches {rule.pattern!r} -> {rule.model}: {rule.evidence}",
    )


def finding(match: Match, **where: Any) -> Any:
    """KB1001 (ambiguous, with the candidates) or KB1002 (no entry, unknown model) for a match that fills nothing."""
    evidence = {"field": LABEL_FIELD, "quote": match.label}
    message = f"{FIELD} not filled: {match.reason()}"
    if match.kind == "ambiguous":
        return KB1001.finding(message, evidence=evidence, extra={"candidates": sorted({r.model for r in match.rules})}, **where)
    hint = "; add the model record" if match.kind == "unknown-model" else "; add a map entry if the label names one published model"
    return KB1002.finding(message + hint, evidence=evidence, **where)


def fill(rec: dict[str, Any], model_ids: Collection[str], date: str, rules: tuple[LabelRule, ...] | None = None) -> Match | None:
    """Set ``rec["base_model_id"]`` (in place) of an open-division MLPerf record from its label, for the importer.

    Returns ``None`` for a record with no label to match (closed division, no
    ``submission.used_model``); otherwise the :class:`Match`. Only a ``filled``
    match writes: the field (placed after ``model_id``) and the same provenance
    entry the derivation would append (dated ``date``, ISO ``YYYY-MM-DD``); every
    other outcome leaves the field absent, as the derivation does.
    """
    label = open_label(rec)
    if label is None:
        return None
    match = match_label(label, label_map() if rules is None else rules, model_ids)
    if match.model_id is None:
        return match
    # Beside model_id, where a reader looks for it (the derivation appends it at the end; key order is not compared).
    items = list(rec.items())
    at = next((i + 1 for i, (k, _) in enumerate(items) if k == "model_id"), len(items))
    items.insert(at, (FIELD, match.model_id))
    rec.clear()
    rec.update(items)
    entry = provenance_entry(proposal(f"benchmarks/{rec.get('id')}", match), TAG, _dt.date.fromisoformat(date))
    rec.setdefault("provenance", []).append(entry)
    return match
