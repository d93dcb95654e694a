"""Turn proposals into file contents, prove them, diff them, and write them atomically.

Placement follows the KB's own schema (:class:`~inferkb.derive.base.SchemaCaps`):
a derived value goes into the record when its type's schema admits the field,
else into the record's sidecar under ``derived``; a provenance entry goes
into the record's ``provenance`` list when the schema admits that field,
else into the sidecar. Nothing is ever appended to ``notes``.

Each record file is re-serialised in the style it already has (indent,
ASCII escaping, trailing newline) when that style reproduces the old bytes
exactly, so a dry-run diff shows only what changed; otherwise the canonical
KB style (:func:`inferkb.jsonio.dumps_record`) is used.

Write order: every sidecar first, then the records, each file atomically,
through the store's one batch writer (:meth:`inferkb.KB.write_records`). An
interrupted run therefore leaves every file old or new, and never a derived
value without its provenance (a re-run finds the sidecar entry and does not
duplicate it).
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..jsonio import dumps_record
from ..store import Record
from . import base
from .proof import Proof, prove_file

if TYPE_CHECKING:
    from ..kb import KB


@dataclass(slots=True)
class Change:
    """One derived value as applied: ``record`` key, ``field``, ``old`` -> ``new``, ``placement`` (``record`` | ``sidecar``)."""

    record: str
    field: str
    old: Any
    new: Any
    placement: str

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record, "field": self.field, "old": self.old, "new": self.new, "placement": self.placement}


@dataclass(slots=True)
class FileWrite:
    """One file to write: absolute ``path``, KB-relative ``rel``, old/new text and data, and the prefixes it may change."""

    path: Path
    rel: str
    record: str
    kind: str
    old_text: str | None
    new_text: str
    old_data: Any
    new_data: Any
    allowed: tuple[str, ...]


def dumps_like(old_text: str | None, old_data: Any, new_data: Any) -> str:
    """Serialise ``new_data`` in the style that reproduces ``old_text`` from ``old_data``, else canonically."""
    if old_text is not None:
        for indent in (2, 1, 4):
            for ascii_only in (False, True):
                body = json.dumps(old_data, indent=indent, ensure_ascii=ascii_only, allow_nan=False)
                for tail in ("\n", ""):
                    if body + tail == old_text:
                        return json.dumps(new_data, indent=indent, ensure_ascii=ascii_only, allow_nan=False) + tail
    return dumps_record(new_data)


def _quote_ok(data: dict[str, Any], evidence: dict[str, str] | None) -> bool:
    if evidence is None:
        return True
    value = base.get_path(data, evidence.get("field", ""))
    quote = evidence.get("quote", "")
    return value is not None and bool(quote) and quote in base.field_text(value)


def plan(
    kb: KB, tag: str, targets: tuple[str, ...], proposals: list[base.Proposal], today: _dt.date
) -> tuple[list[Change], list[FileWrite], list[Finding]]:
    """Place every proposal; returns the changes, the files to write (sidecar before record) and refusal findings."""
    caps = base.SchemaCaps(kb)
    by_record: dict[str, list[base.Proposal]] = {}
    for p in proposals:
        by_record.setdefault(p.record, []).append(p)
    changes: list[Change] = []
    writes: list[FileWrite] = []
    refusals: list[Finding] = []
    for key, props in by_record.items():
        rec = kb.records[key]
        new = copy.deepcopy(rec.data)
        side_old, side_text = base.read_sidecar(kb, rec)
        side_new = copy.deepcopy(side_old) if side_old else {"record": key, "derived": {}, "provenance": []}
        side_new["derived"] = dict(side_new.get("derived") or {})
        side_new.setdefault("provenance", [])
        prov_here = caps.allows(rec.type, "provenance") and isinstance(rec.data.get("provenance", []), list)
        for p in props:
            entry = base.provenance_entry(p, tag, today)
            problems = base.entry_errors(entry)
            if not _quote_ok(rec.data, p.evidence):
                problems.append(f"quote {p.evidence!r} is not an exact substring of the record's field")
            if problems:
                refusals.append(
                    base.KB1004.finding(
                        f"{p.field}: not derived, its provenance entry is unusable: {'; '.join(problems)}",
                        record=key,
                        path=rec.path,
                        field=p.field,
                    )
                )
                continue
            if caps.allows(rec.type, p.field):
                old, placement = rec.data.get(p.field), "record"
                new[p.field] = p.value
            else:
                old, placement = side_new["derived"].get(p.field), "sidecar"
                side_new["derived"][p.field] = p.value
            prov = new.setdefault("provenance", []) if prov_here else side_new["provenance"]
            if not any(isinstance(e, dict) and base.same_entry(e, entry) for e in prov):
                prov.append(entry)
            if old != p.value or (placement == "record" and p.field not in rec.data):
                changes.append(Change(key, p.field, old, p.value, placement))
        if not side_new["derived"] and not (side_old or {}).get("derived"):
            del side_new["derived"]
        if side_new != (side_old or None) and (side_new.get("derived") or side_new["provenance"]):
            spath = base.sidecar_path(kb, rec)
            allowed = ("record", "provenance") + tuple(f"derived.{t}" for t in targets)
            writes.append(
                FileWrite(
                    spath,
                    str(spath.relative_to(kb.root)),
                    key,
                    "sidecar",
                    side_text,
                    dumps_like(side_text, side_old, side_new),
                    side_old,
                    side_new,
                    allowed,
                )
            )
        if new != rec.data:
            path = kb.root / rec.path
            old_text = path.read_text(encoding="utf-8") if path.is_file() else None
            writes.append(
                FileWrite(
                    path,
                    rec.path,
                    key,
                    "record",
                    old_text,
                    dumps_like(old_text, rec.data, new),
                    rec.data,
                    new,
                    targets + base.ALWAYS_ALLOWED,
                )
            )
    return changes, writes, refusals


def validation_regressions(kb: KB, writes: list[FileWrite]) -> list[Finding]:
    """KB1004 findings for record writes that would add validation errors the record did not have."""
    from ..validate import validate_record

    out: list[Finding] = []
    for w in writes:
        if w.kind != "record":
            continue
        old_rec = kb.records[w.record]
        new_rec = Record(old_rec.key, old_rec.id, old_rec.type, old_rec.dir, old_rec.path, w.new_data)

        def errors(r: Record) -> Counter:
            return Counter((f.code, f.field) for f in validate_record(kb, r) if f.severity == "error")

        added = errors(new_rec) - errors(old_rec)
        if added:
            what = ", ".join(f"{code} at {fld or '(record)'}" for code, fld in sorted(added, key=str))
            out.append(base.KB1004.finding(f"writing would add validation errors: {what}", record=w.record, path=w.rel))
    return out


def prove(writes: list[FileWrite], computed: tuple[str, ...] = ()) -> Proof:
    """Structural proof over every planned file (see :mod:`inferkb.derive.proof`)."""
    prefixes = computed + tuple(f"derived.{c}" for c in computed)
    return Proof([prove_file(w.rel, w.old_data, w.new_data, w.allowed, prefixes) for w in writes])


def _lines(text: str | None) -> list[str]:
    if not text:
        return []
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def unified_diff(writes: list[FileWrite]) -> str:
    """One unified diff (difflib) per file, ``a/<rel>`` -> ``b/<rel>`` (``/dev/null`` for a new file)."""
    parts: list[str] = []
    for w in writes:
        parts.extend(
            difflib.unified_diff(
                _lines(w.old_text),
                _lines(w.new_text),
                fromfile=f"a/{w.rel}" if w.old_text is not None else "/dev/null",
                tofile=f"b/{w.rel}",
            )
        )
    return "".join(parts)


def _short(value: Any, width: int = 48) -> str:
    text = "(absent)" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def summary_table(changes: list[Change]) -> str:
    """A plain-text table: record | field | old | new | where."""
    if not changes:
        return "no changes"
    rows = [("record", "field", "old", "new", "where")]
    rows += [(c.record, c.field, _short(c.old), _short(c.new), c.placement) for c in changes]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_all(kb: KB, writes: list[FileWrite]) -> list[str]:
    """Write every planned file through the store's one batch writer and update the loaded KB.

    Sidecars are written first, then the records (each file atomically; a failed
    write restores the files already written), so a derived value never lands
    without its provenance. Validation already ran in :func:`validation_regressions`,
    so the writer does not re-validate. Compare-and-swap: the writer refuses
    (:class:`~inferkb.errors.WriteConflict`, nothing written) when a record
    file no longer holds what the KB was loaded with, or a sidecar no longer
    holds the text read while planning. Returns the KB-relative paths written.
    """
    records = [w for w in writes if w.kind == "record"]
    sidecars = [w for w in writes if w.kind != "record"]
    kb.write_records(
        [w.new_data for w in records],
        overwrite=True,
        validate=False,
        texts={w.record: w.new_text for w in records},
        files=[(w.rel, w.new_text) for w in sidecars],
        basis={w.rel: w.old_text for w in sidecars},
    )
    return [w.rel for w in sidecars] + [w.rel for w in records]
