"""Comparability data of the site, computed once per build: classes per model and lens, and each benchmark's place.

Built on :func:`inferkb.analysis.compare.compare` and
:mod:`inferkb.analysis.comparability` (DESIGN.md rule 6: ranked together only
when the load conditions match or are declared irrelevant). Benchmarks are
grouped by their ``model`` condition (``model_id``, else the ``model`` text,
compared case-insensitively, as the class key does), and each group is
compared under every :data:`LENSES` entry:

- ``strict``: nothing declared irrelevant;
- ``across-hardware``: the README's hardware-against-hardware view — hardware,
  device count, weight format, engine and engine version may differ (they
  become columns) and the ranked value is throughput per accelerator.

:func:`comparisons` returns a :class:`Comparisons` (cached on the KB until a
write); :meth:`Comparisons.placement` tells a record page which benchmarks
share its strict class, or why none does (the conditions it does not state,
with the record's own ``condition_gaps`` reasons, or the single conditions
that separate it from its nearest neighbours).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..analysis.comparability import CONDITION_NAMES, LOAD_FIELDS, conditions_of
from ..analysis.compare import CompareResult, compare

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record


@dataclass(frozen=True, slots=True)
class Lens:
    """A way of comparing: ``name``, human ``label``, conditions it ``vary``-s, whether it ranks ``per_accelerator``."""

    name: str
    label: str
    vary: tuple[str, ...]
    per_accelerator: bool
    suffix: str


LENSES = (
    Lens("strict", "strict: every condition matches", (), False, ""),
    Lens(
        "across-hardware",
        "across hardware: per accelerator; hardware, device count, weight format, engine and version may differ",
        ("hardware", "accelerator_count", "format", "engine", "engine_version"),
        True,
        "--across-hardware",
    ),
)

CONDITION_LABELS = {
    "model": "model",
    "metric": "metric (token basis)",
    "value_scope": "value scope",
    "format": "weight format",
    "hardware": "hardware",
    "accelerator_count": "accelerator count",
    "scenario": "scenario",
    "division": "MLPerf division",
    "benchmark_definition": "benchmark definition",
    "input_tokens": "input length (ISL)",
    "output_tokens": "output length (OSL)",
    "load": "load (concurrency, batch or request rate)",
    "warmup": "warmup",
    "engine": "engine",
    "engine_version": "engine version",
}
# Class conditions -> the record fields whose condition_gaps entry explains their absence.
GAP_FIELDS = {
    "model": ("model", "model_id"),
    "value_scope": ("value_scope",),
    "format": ("format_id",),
    "hardware": ("accelerator_ids",),
    "accelerator_count": ("accelerator_count",),
    "scenario": ("scenario",),
    "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",),
    "load": LOAD_FIELDS,
    "warmup": ("warmup",),
    "engine": ("engine_id",),
    "engine_version": ("engine_version",),
}
MODEL_NOT_STATED = "(model not stated)"
MAX_LISTED = 20


def _norm(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else str(value)


def slugify(text: str) -> str:
    """A file-name-safe lower-case slug: runs of other characters become one ``-``."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "x"


@dataclass(slots=True)
class ModelGroup:
    """The benchmarks of one model: ``key`` (normalised model condition), ``name`` shown, ``slug`` of its pages,
    ``model_id`` (when a model record names it), ``records``, and ``results`` (lens name -> :class:`CompareResult`)."""

    key: str
    name: str
    slug: str
    model_id: str | None
    records: list[Record]
    results: dict[str, CompareResult] = field(default_factory=dict)

    def href(self, lens: Lens) -> str:
        """Site-root-relative URL of this model's compare page under ``lens``."""
        return f"compare/{self.slug}{lens.suffix}.html"


@dataclass(slots=True)
class Placement:
    """Where one benchmark stands in the strict lens.

    ``status``: ``"class"`` (shares a class), ``"alone"`` (every condition
    stated, no other record matches), ``"not-comparable"`` (a condition not
    stated, or no value). ``others`` are the other ids of its class (and
    ``folded`` the ids counted once with it by ``same_measurement_as``);
    ``missing`` pairs of (condition, why); ``nearest`` triples of
    (condition, ids that differ only in it, how many); ``href`` its class on
    the model's compare page.
    """

    status: str
    group: ModelGroup
    class_id: str | None = None
    others: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""
    nearest: list[tuple[str, list[str], int]] = field(default_factory=list)
    href: str = ""


class Comparisons:
    """Every model group compared under every lens, and an index from benchmark id to its strict :class:`Placement`."""

    def __init__(self, kb: KB) -> None:
        self.kb = kb
        self.groups: list[ModelGroup] = []
        by_key: dict[str, ModelGroup] = {}
        slugs: set[str] = set()
        benchmarks = list(kb.by_type("benchmark")) if "benchmark" in kb.profile.types else []
        for rec in benchmarks:
            raw = conditions_of(rec.data).values.get("model")
            key = _norm(raw) if raw is not None else MODEL_NOT_STATED
            grp = by_key.get(key)
            if grp is None:
                grp = by_key[key] = self._group(key, raw, rec, slugs)
                self.groups.append(grp)
            grp.records.append(rec)
        for grp in self.groups:
            for lens in LENSES:
                grp.results[lens.name] = compare(kb, records=grp.records, vary=lens.vary, per_accelerator_basis=lens.per_accelerator)
        self.groups.sort(key=lambda g: (-len(g.records), g.name.lower()))
        self._placements: dict[str, Placement] = {}
        for grp in self.groups:
            self._place(grp)

    def _group(self, key: str, raw: Any, rec: Record, slugs: set[str]) -> ModelGroup:
        mid = rec.data.get("model_id") if isinstance(rec.data.get("model_id"), str) else None
        model = self.kb.resolve(mid, "model") if mid else None
        if raw is None:
            name = MODEL_NOT_STATED
        elif model is not None and _norm(model.id) == key:
            name = str(model.data.get("name") or model.id)
        else:
            name, model = str(raw), None
        base = slugify(model.id if model is not None else ("model-not-stated" if raw is None else str(raw)))
        slug, n = base, 1
        while slug in slugs:
            n += 1
            slug = f"{base}-{n}"
        slugs.add(slug)
        return ModelGroup(key, name, slug, model.id if model is not None else None, [])

    def _place(self, grp: ModelGroup) -> None:
        strict = LENSES[0]
        res = grp.results[strict.name]
        full_keys: dict[str, tuple] = {}
        by_id = {r.id: r for r in grp.records}
        for cls in res.classes:
            href = f"{grp.href(strict)}#class-{cls.id}"
            # The compared form (engine versions canonical), as the class itself was formed: not the spelling shown.
            key = tuple(v for _, v in conditions_of(by_id[cls.rows[0].id].data).key())
            for row in cls.rows:
                same = [row.id, *row.same_measurement, *(row.repeats or {}).get("ids", [])[1:]]  # one configuration, counted once
                others = [m for r in cls.rows if r is not row for m in (r.id, *r.same_measurement, *(r.repeats or {}).get("ids", [])[1:])]
                for rid in same:
                    folded = [x for x in same if x != rid]
                    self._placements[rid] = Placement("class" if others else "alone", grp, cls.id, others, folded, href=href)
                    full_keys[rid] = key
        for nc in res.not_comparable:
            rec = by_id.get(nc.id)
            missing = [(m, self.why_missing(rec, m) if rec is not None else "") for m in nc.missing]
            self._placements[nc.id] = Placement("not-comparable", grp, missing=missing, reason=nc.reason)
        # Nearest neighbours of a record alone in its class: records whose key differs in exactly one condition.
        index: list[dict[tuple, list[str]]] = [{} for _ in CONDITION_NAMES]
        for rid, key in full_keys.items():
            for i in range(len(CONDITION_NAMES)):
                index[i].setdefault(_without(key, i), []).append(rid)
        for rid, key in full_keys.items():
            pl = self._placements[rid]
            if pl.status != "alone":
                continue
            same = {rid, *pl.folded}
            for i, name in enumerate(CONDITION_NAMES):
                near = sorted(x for x in index[i].get(_without(key, i), []) if x not in same)
                if near:
                    pl.nearest.append((name, near[:3], len(near)))

    def why_missing(self, rec: Record, condition: str) -> str:
        """Why ``rec`` does not state ``condition``: its ``condition_gaps`` reason, the hardware alternates, or "no reason recorded"."""
        d = rec.data
        if condition == "hardware" and d.get("accelerator_alternates"):
            alts = ", ".join(str(a) for a in d["accelerator_alternates"])
            return f"the hardware string {d.get('hardware_raw')!r} fits several parts ({alts}); none is picked"
        gaps = d.get("condition_gaps") if isinstance(d.get("condition_gaps"), dict) else {}
        for fld in GAP_FIELDS.get(condition, ()):
            gap = gaps.get(fld)
            if isinstance(gap, dict) and str(gap.get("reason") or "").strip():
                return str(gap["reason"]).strip()
        return "not stated; no reason recorded"

    def placement(self, rec: Record) -> Placement | None:
        """The strict placement of a benchmark record (``None`` for another type)."""
        return self._placements.get(rec.id) if rec.type == "benchmark" else None

    def group_of(self, rec: Record) -> ModelGroup | None:
        """The model group holding a benchmark record."""
        pl = self.placement(rec)
        return pl.group if pl else None


def _without(key: tuple, i: int) -> tuple:
    return key[:i] + key[i + 1 :]


def comparisons(kb: KB) -> Comparisons:
    """The KB's :class:`Comparisons`, built once and kept until the records change (``kb.cached``)."""
    return kb.cached("site.comparisons", lambda: Comparisons(kb))
