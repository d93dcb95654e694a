"""Shared pieces of every derivation: proposals, provenance entries, schema capabilities, sidecars, rules.

A derivation never writes. It returns :class:`Proposal` objects (one derived
value for one field of one record, with its evidence) and findings; the
engine in :mod:`inferkb.derive.apply` decides *where* each value and its
provenance entry go, using what the KB's own schema allows
(:class:`SchemaCaps`), and writes them.

Sidecars: when a record's schema does not admit a ``provenance`` field (the
inference-research corpus: ``additionalProperties: false`` and no
``provenance`` property), provenance entries go to
``<kb>/provenance/<type-dir>/<id>.json``; a derived value whose field the
schema does not admit goes there too, under ``derived``. Sidecars live
outside ``data/`` so ``validate`` never sees them as unknown record files
(KB010). Sidecar shape::

    {"record": "benchmarks/<id>", "derived": {field: value}, "provenance": [entry, ...]}
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from ..jsonio import parse_bytes, read_regular
from ..rules import Rule, register
from ..schemas import schema_doc
from ..store import bundled_root

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

SIDECAR_DIR = "provenance"
# Fields a derivation may touch besides its target fields (DESIGN.md rule 3; the proof enforces it).
ALWAYS_ALLOWED = ("provenance", "updated")

KB1001 = register(
    Rule(
        "KB1001",
        "derive-ambiguous",
        "warning",
        "derive",
        "The record's evidence names several candidate values; nothing was derived.",
        "Evidence must determine a value uniquely (evidence must determine the value). 'FP8' alone does not say E4M3, E5M2 or block-scaled, "
        "and an nvidia-smi 'H100' does not say SXM or PCIe; a pick would be a plausible guess that readers then trust.",
        '"model": "Llama-3.1-8B-Instruct-FP8-E4M3"  ->  format_id fp8-e4m3',
        '"model": "Llama-3.1-8B-Instruct-FP8"  ->  candidates fp8-e4m3, fp8-e5m2, fp8-blockwise; no value',
    )
)
KB1002 = register(
    Rule(
        "KB1002",
        "derive-no-evidence",
        "info",
        "derive",
        "A derivation found nothing in the record (or the records it references) that establishes the value.",
        "A null with a reason beats a plausible value: the finding says what was searched and what would recover the value.",
        '"accelerator_ids": ["nvidia-h100-sxm"] and that record lists its interconnects',
        '"accelerator_ids": ["x"] where accelerator x has no interconnect list',
    )
)
KB1003 = register(
    Rule(
        "KB1003",
        "derive-conflict",
        "warning",
        "derive",
        "The record's own fields contradict each other or an existing value; nothing was derived.",
        "A derivation that overrode or ignored a contradiction would hide an error in the record.",
        '"accelerator_count": 4, "conditions": {"tensor_parallel": 4}',
        '"accelerator_count": 1, "conditions": {"tensor_parallel": 4}',
    )
)
KB1004 = register(
    Rule(
        "KB1004",
        "derive-refused",
        "error",
        "derive",
        "A derived write was refused: it would make a record invalid or the no-number-changed proof failed.",
        "A derivation may only add metadata with its provenance; anything else is a correction and needs a human.",
        "(proof: only interconnect_ids and provenance changed)",
        "(proof: value changed from 894.0 to 1578.0)",
    )
)


@dataclass(slots=True)
class Proposal:
    """One derived value: ``record`` key (``dir/id``), top-level ``field``, ``value`` and its provenance.

    ``evidence`` is ``{"field": dotted path in the record, "quote": exact
    substring of that field's text}`` (for a non-string field, of its compact
    JSON text, see :func:`field_text`); ``method`` says how, ``basis`` why.
    """

    record: str
    field: str
    value: Any
    method: str
    evidence: dict[str, str] | None
    basis: str
    # "correction" when the value replaces a stated one on cited evidence (llm-inference-bench-split); numbers never change.
    action: str = "backfill"


@dataclass
class DerivationOutput:
    """What a derivation function returns: proposals to apply and findings to report."""

    proposals: list[Proposal] = field(default_factory=list)
    findings: list[Any] = field(default_factory=list)


def get_path(data: Any, dotted: str) -> Any:
    """Value at a dotted path (``conditions.tensor_parallel``, ``accelerator_ids[0]``); ``None`` when absent."""
    cur = data
    for part in dotted.replace("]", "").replace("[", ".").split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return None
    return cur


def field_text(value: Any) -> str:
    """The text a quote must be a substring of: the string itself, else its compact JSON (``["a", "b"]``, ``4``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def provenance_entry(p: Proposal, tag: str, date: _dt.date) -> dict[str, Any]:
    """The ``$defs/provenance_entry`` object (bundled benchmark schema) for one proposal."""
    return {
        "date": date.isoformat(),
        "tag": tag,
        "field": p.field,
        "action": p.action,
        "method": p.method,
        "evidence": p.evidence,
        "basis": p.basis,
        "numbers_changed": False,
    }


def same_entry(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two provenance entries record the same derivation (the date is ignored, so re-runs do not duplicate)."""
    keys = ("tag", "field", "action", "method", "evidence", "basis")
    return all(a.get(k) == b.get(k) for k in keys)


@cache
def _entry_validator() -> Any:
    schema = json.loads((bundled_root() / "schemas" / "benchmark.schema.json").read_text(encoding="utf-8"))
    entry = dict(schema["$defs"]["provenance_entry"])
    return jsonschema_rs.validator_for(entry)


def entry_errors(entry: dict[str, Any]) -> list[str]:
    """Messages for ways ``entry`` breaks the bundled schema's ``$defs/provenance_entry`` (``[]`` when valid)."""
    return [e.message for e in _entry_validator().iter_errors(entry)]


class SchemaCaps:
    """Which top-level fields each record type's schema admits, read from the KB's own schemas.

    Mirrors :class:`inferkb.validate.SchemaSet`'s choice of schema: the KB's
    ``schemas/<type>.schema.json``, else the bundled one, else none (any
    field admitted). A field is admitted when it is a declared property, or
    when ``additionalProperties`` / ``unevaluatedProperties`` is not ``false``.
    """

    def __init__(self, kb: KB) -> None:
        self._kb = kb
        self._schemas: dict[str, dict[str, Any] | None] = {}

    def schema(self, type_name: str) -> dict[str, Any] | None:
        return schema_doc(self._kb, type_name)

    def allows(self, type_name: str, field_name: str) -> bool:
        schema = self.schema(type_name)
        if not isinstance(schema, dict):
            return True
        if field_name in (schema.get("properties") or {}):
            return True
        closed = schema.get("additionalProperties") is False or schema.get("unevaluatedProperties") is False
        return not closed


def sidecar_path(kb: KB, rec: Record) -> Path:
    """``<kb>/provenance/<dir>/<id>.json`` for a record."""
    return kb.root / SIDECAR_DIR / rec.dir / f"{rec.id}.json"


def read_sidecar(kb: KB, rec: Record) -> tuple[dict[str, Any] | None, str | None]:
    """``(parsed sidecar, raw text)`` for a record, ``(None, None)`` when it has none.

    A sidecar that does not parse raises ``InputError`` (never overwritten blindly).
    """
    from ..errors import InputError

    path = sidecar_path(kb, rec)
    if not os.path.lexists(path):
        return None, None
    try:
        raw = read_regular(path, kb.profile.max_record_bytes)
    except OSError as exc:
        raise InputError(f"sidecar cannot be read: {exc.strerror or exc}", path=str(path)) from None
    data, problem = parse_bytes(raw)
    if problem is not None:
        raise InputError(problem.message, path=str(path))
    return data, raw.decode("utf-8")


def current_value(kb: KB, rec: Record, field_name: str) -> Any:
    """The value a record has for ``field_name``: in the record, else in its sidecar's ``derived``; ``None`` if neither."""
    if field_name in rec.data:
        return rec.data[field_name]
    side, _ = read_sidecar(kb, rec)
    if side and isinstance(side.get("derived"), dict):
        return side["derived"].get(field_name)
    return None


def has_value(kb: KB, rec: Record, field_name: str) -> bool:
    """True when ``field_name`` is present (even as ``null``) in the record or in its sidecar's ``derived``."""
    if field_name in rec.data:
        return True
    side, _ = read_sidecar(kb, rec)
    return bool(side and isinstance(side.get("derived"), dict) and field_name in side["derived"])
