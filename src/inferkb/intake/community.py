"""Reproducible, idempotent import of the community data sets (``inferkb import-community``).

:func:`import_community` reads ``community_sets.toml`` (which importer, which
files, which origin, which source record, and the facts taken from the
publishers' documentation with their quotes), pins every file to its upstream
repository, path and commit from the corpus's ``community/SOURCES.md`` after
checking the file's SHA-256 against it, runs the registered importer, and
writes through :func:`inferkb.intake.base.commit`.

Idempotent: a record equal to the one on disk, ignoring import dates and the
fields a derivation backfilled afterwards (see :func:`inferkb.intake.base.without_backfills`), is
left alone; a changed one is replaced (validated, atomic). After writing, the
``interconnect-ids`` derivation runs again so the backfilled fields come back
with the same evidence.
"""

from __future__ import annotations

import hashlib
import time
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, UsageError
from .base import IntakeOptions, commit, stable_view, today, without_backfills
from .counts import count_by_type

if TYPE_CHECKING:
    from ..kb import KB

MANIFEST = Path(__file__).with_name("community_sets.toml")
SOURCE_FIELDS = ("id", "name", "url", "publisher", "kind", "published", "notes")


@dataclass
class SetReport:
    """What one data set's import did: counts, timing, the importer's stats and findings (as dicts).

    ``written`` and ``unchanged`` count every record of the batch (the set's
    source record too); ``built`` and ``written_by_type`` say of which types.
    """

    name: str
    format: str
    files: int = 0
    imported: int = 0  # benchmark records the importer made (its stats["imported"])
    built: dict[str, int] = field(default_factory=dict)  # every record of the batch by type: the source too
    written: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    wrote: list[str] = field(default_factory=list)  # KB-relative paths written (to write, in a dry run)
    written_by_type: dict[str, int] = field(default_factory=dict)


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    """The ``[[set]]`` tables of the manifest; raises InputError naming the file when it does not parse."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read the data-set manifest: {exc}", path=str(path)) from None
    sets = doc.get("set")
    if not isinstance(sets, list) or not sets:
        raise InputError("expected [[set]] tables", path=str(path), field="set")
    return sets


def read_sources_md(path: Path) -> dict[str, dict[str, str]]:
    """``{saved path: {"repo", "path", "commit", "sha256"}}`` from the table of ``community/SOURCES.md``.

    The repository cell may carry a note (``"argonne-lcf/LLM-Inference-Bench (branch gh-pages)"``):
    the repository is its first word. Raises InputError when the table is missing.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from None
    out: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in lines:
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if len(cells) < len(header):
            continue
        row = dict(zip(header, cells, strict=False))
        out[row["saved path"]] = {
            "repo": row["repository"].split()[0],
            "path": row["path in repository"],
            "commit": row["commit"],
            "sha256": row["sha256"],
        }
    if header is None or "saved path" not in header:
        raise InputError("no table with a 'saved path' column", path=str(path))
    return out


def _source_record(spec: dict[str, Any]) -> dict[str, Any]:
    missing = [k for k in ("id", "name", "url", "kind") if not spec.get(k)]
    if missing:
        raise InputError(f"[set.source] lacks {', '.join(missing)}", path=str(MANIFEST))
    return {
        "id": spec["id"],
        "type": "source",
        "name": spec["name"],
        "url": spec["url"],
        "publisher": spec.get("publisher"),
        "kind": spec["kind"],
        "published": spec.get("published"),
        "accessed": today(),
        "archived_url": None,
        "status": "verified",
        "confidence": 0.9,
        "updated": today(),
        "notes": spec.get("notes"),
    }


def set_files(spec: dict[str, Any], community: Path, pins: dict[str, dict[str, str]]) -> list[Path]:
    """The set's files in manifest order (globs sorted); each must be listed in SOURCES.md with a matching SHA-256."""
    files: list[Path] = []
    for pattern in spec["files"]:
        matches = sorted(p for p in pins if fnmatch(p, pattern)) if any(ch in pattern for ch in "*?[") else [pattern]
        if not matches:
            raise InputError(f"no file of SOURCES.md matches {pattern!r}", path=str(community / "SOURCES.md"))
        for rel in matches:
            path = community / rel
            if rel not in pins:
                raise InputError("not listed in community/SOURCES.md; its upstream repository and commit are unknown", path=str(path))
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                raise InputError(f"cannot read: {exc}", path=str(path)) from None
            if digest != pins[rel]["sha256"]:
                raise InputError(f"SHA-256 {digest} differs from the {pins[rel]['sha256']} of SOURCES.md", path=str(path))
            files.append(path)
    return files


def import_community(kb: KB, corpus: Path, *, dry_run: bool = False, only: list[str] | None = None) -> list[SetReport]:
    """Import every data set of the manifest (or the ``only`` ones) from ``corpus`` (the folder holding ``community/``).

    Returns one :class:`SetReport` per set. Raises :class:`InputError` for a
    missing or altered corpus file, :class:`UsageError` for an unknown set
    name; validation errors of a batch (:class:`RecordInvalid`) write nothing.
    """
    from . import load_all

    community = Path(corpus) / "community"
    sets = load_manifest()
    names = [s["name"] for s in sets]
    for name in only or []:
        if name not in names:
            raise UsageError(f"unknown data set {name!r}; sets: {', '.join(names)}")
    pins_all = read_sources_md(community / "SOURCES.md")
    registry = load_all()
    reports = []
    wrote_any = False
    for spec in sets:
        if only and spec["name"] not in only:
            continue
        started = time.perf_counter()
        files = set_files(spec, community, pins_all)
        source = _source_record(spec["source"])
        pins = {str(p): pins_all[str(p.relative_to(community))] for p in files}
        options = IntakeOptions(
            source=source["id"],
            hardware_raw=spec.get("hardware_raw"),
            count=spec.get("count"),
            engine_version=spec.get("engine_version"),
            dataset=spec.get("dataset"),
            extra={
                "pins": pins,
                "origin": spec["origin"],
                "hardware_map": spec.get("hardware_map") or {},
                "hardware_evidence": spec.get("hardware_evidence"),
                "option_evidence": spec.get("option_evidence") or [],
                "warmup_rule": spec.get("warmup_rule"),
                "harness_defaults": spec.get("harness_defaults") or [],
            },
        )
        existing = kb.resolve(f"sources/{source['id']}")
        # A not-yet-written source is made visible to the importer's --source check, never written here.
        with kb.index.staged([] if existing is not None else [_placeholder(source)]):
            result = registry[spec["format"]].parse(files, options, kb)
        _apply_gap_reasons(result.records, spec.get("gap_reasons") or {})
        records = [source, *result.records]
        changed, unchanged = [], 0
        for data in records:
            old = kb.resolve(f"{kb.profile.types[data['type']].dir}/{data['id']}")
            if old is not None and stable_view(without_backfills(old.data, data)) == stable_view(data):
                unchanged += 1
            else:
                changed.append(data)
        if changed and not dry_run:
            commit(kb, changed, update=True)
            wrote_any = True
        wrote = [str(kb.record_path(d["type"], d["id"]).relative_to(kb.root)) for d in changed]
        reports.append(
            SetReport(
                name=spec["name"],
                format=spec["format"],
                files=len(files),
                imported=result.stats.get("imported", 0),
                built=count_by_type(records),
                written=len(changed),
                unchanged=unchanged,
                seconds=time.perf_counter() - started,
                stats=result.stats,
                findings=[f.to_dict() for f in result.findings],
                wrote=wrote,
                written_by_type=count_by_type(changed),
            )
        )
    if wrote_any:
        from .. import derive
        from .. import open as open_kb

        derive.run(open_kb(None if kb.bundled else kb.root), "interconnect-ids", write=True)
    return reports


def _apply_gap_reasons(records: list[dict[str, Any]], reasons: dict[str, dict[str, Any]]) -> None:
    """Replace the importer's generic gap text with the set's own (manifest ``gap_reasons``), where that gap exists.

    ``reasons``: ``{condition: {"reason", "checked", "recover"}}``, written for a
    data set whose publisher or harness was searched further than the file.
    """
    for rec in records:
        gaps = rec.get("condition_gaps")
        if not isinstance(gaps, dict):
            continue
        for key, text in reasons.items():
            if key in gaps:
                gaps[key] = {k: text[k] for k in ("reason", "checked", "recover") if k in text}


def _placeholder(source: dict[str, Any]) -> Any:
    """A not-yet-written source record made visible to the importer's ``--source`` check (never written)."""
    from ..store import Record

    return Record(f"sources/{source['id']}", source["id"], "source", "sources", f"data/sources/{source['id']}.json", source)
