"""The ``hint:`` compare gives when most selected records are not comparable: what keeps them out, and what to vary.

:func:`vary_hint` counts, over the not-comparable records, how often each
unstated condition is the reason, then finds the smallest ``--vary`` set (of
the conditions it may suggest) that puts more than half of those records into
classes of two or more rows, counted with compare's own grouping: the
records' :class:`~inferkb.analysis.comparability.ConditionSet` keys and
:func:`~inferkb.analysis.fold.fold_rows` (``same_measurement_as`` and repeat
groups fold within a class, so a set that joins two repeats in one class folds
them into one row). A class of one row ranks nothing, so it does not count.
When no set reaches half, the set with the most (all the suggestable missing
conditions: varying more only merges classes) is given, if it places any.

Search: every subset of the suggestable missing conditions (at most 6, so at
most 63 sets), smallest first, stopping at the first size that reaches the
goal; a set that cannot make enough of them comparable (counted from their
missing conditions alone) is skipped, and each set counted is one pass over
the records with their keys computed once (no re-extraction, no ranking).

Conditions suggested (:data:`SUGGESTED`): ``warmup`` and ``engine_version``
(how a run was prepared and which build ran: a reader may choose to ignore
them), ``engine``, ``format`` and ``hardware`` (what a comparison is usually
across); ``accelerator_count`` only when ranking per accelerator. Never
suggested (:data:`NOT_SUGGESTED`, each with its reason): ranking across them
compares different workloads or different quantities, which is not a choice
a hint should make for the reader.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from .comparability import CONDITION_NAMES
from .fold import fold_rows

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .compare import Entry, NotComparable
    from .repeats import Membership

SUGGESTED = ("warmup", "engine_version", "engine", "format", "hardware")
PER_ACCELERATOR_SUGGESTED = ("accelerator_count",)
NOT_SUGGESTED: dict[str, str] = {
    "model": "cannot be varied: a number for one model says nothing about another",
    "metric": "cannot be varied: two metrics are two quantities",
    "division": "cannot be varied: MLPerf closed and open results follow different rules",
    "value_scope": "a per-system and a per-device figure are different quantities",
    "scenario": "Offline, Server and per-request runs load a system in different ways",
    "benchmark_definition": "two suite definitions are two workloads",
    "input_tokens": "throughput and latency move with the prompt length: a workload difference, not a setup one",
    "output_tokens": "throughput and latency move with the output length: a workload difference, not a setup one",
    "load": "throughput and latency move with concurrency or batch size by design",
    "accelerator_count": "a system's throughput grows with its device count (suggested only with --per-accelerator)",
}
SHOWN = 5  # missing conditions named in the text


@dataclass
class VaryHint:
    """What keeps most of a selection out of classes, and the ``--vary`` set that would place most of it.

    ``selected`` and ``not_comparable`` records; ``missing``: unstated condition -> not-comparable records lacking it,
    most first; ``excluded``: the missing conditions never suggested (:data:`NOT_SUGGESTED`), same counts; ``vary``:
    the whole ``--vary`` value to try (the caller's varied conditions first), ``None`` when no suggestable set places
    any; ``placed``: not-comparable records that set puts into classes of two or more rows; ``classes``: such classes
    then; ``in_classes``: selected records in them; ``repeats_folded``: repeat groups of not-comparable
    records that set folds into one row each (a repeat folds only within a class, so until then each member is listed
    apart); ``sets_tried``: vary sets grouped (the cost).
    """

    selected: int
    not_comparable: int
    missing: dict[str, int]
    excluded: dict[str, int]
    vary: list[str] | None = None
    placed: int = 0
    classes: int = 0
    in_classes: int = 0
    repeats_folded: int = 0
    sets_tried: int = 0
    text: str = field(default="")


def _missing_text(counts: dict[str, int]) -> str:
    shown = [f"{k} ({n:,})" for k, n in list(counts.items())[:SHOWN]]
    more = f" and {len(counts) - SHOWN} more" if len(counts) > SHOWN else ""
    return ", ".join(shown) + more


def _text(h: VaryHint) -> str:
    head = f"hint: {h.not_comparable:,} of {h.selected:,} records are not comparable"
    head += f", most often for lack of {_missing_text(h.missing)}" if h.missing else ""
    if h.vary:
        classes = f"{h.classes:,} class{'es' if h.classes != 1 else ''}"
        head += f"; --vary {','.join(h.vary)} puts {h.placed:,} of them into classes ({classes} of 2+ rows)"
        if h.repeats_folded:
            groups = f"{h.repeats_folded:,} repeat group{'s' if h.repeats_folded != 1 else ''}"
            head += f" and folds {groups}, now listed apart, into one row each"
    elif h.missing:
        head += "; no --vary set this hint may suggest puts them into classes of 2+ rows"
    if h.excluded:
        head += f"; never suggested: {', '.join(h.excluded)} (see compare --help)"
    return head


class _Count(NamedTuple):
    """For one vary set: ``placed`` (records of the not-comparable ones in classes of 2+ rows), ``classes`` (of 2+
    rows), ``in_classes`` (selected records in them), ``repeats`` (repeat groups of not-comparable records folded into
    one row, in any class)."""

    placed: int
    classes: int
    in_classes: int
    repeats: int


class _Placer:
    """Counts, for a vary set, the classes of two or more rows and the records in them.

    compare's grouping: a record joins when its missing conditions are all varied, under its
    :meth:`~inferkb.analysis.comparability.ConditionSet.key` without the varied conditions (the full key built once per
    record); a class's rows are :func:`~inferkb.analysis.fold.fold_rows`."""

    def __init__(self, entries: list[Entry], outside: set[str], repeat_of: dict[str, Membership], universe: Iterable[str]) -> None:
        self.repeat_of = repeat_of
        self.outside = outside
        most = frozenset(universe)
        # (entry, its missing conditions, its full key, whether it is outside, whether folding can touch it)
        self.rows: list[tuple[Entry, frozenset[str], tuple, bool, bool]] = []
        for e in entries:
            missing = frozenset(e.cs.missing())
            if missing <= most:  # else no set within ``universe`` makes it comparable
                plain = e.rec.id not in repeat_of and not e.rec.data.get("same_measurement_as")
                self.rows.append((e, missing, e.cs.key(), e.rec.id in outside, plain))
        self.outside_missing = Counter(r[1] for r in self.rows if r[3])

    def bound(self, vary: Iterable[str]) -> int:
        """Records of ``outside`` that ``vary`` makes comparable: the most :meth:`count` can place (no grouping)."""
        skip = frozenset(vary)
        return sum(n for missing, n in self.outside_missing.items() if missing <= skip)

    def count(self, vary: Iterable[str]) -> _Count:
        """What ``vary`` would give (see :class:`_Count`).

        A full key holds every condition in :data:`CONDITION_NAMES` order, so the class key without ``vary`` is the
        pairs at the kept positions (an item getter, not a rebuilt tuple). A class whose members no
        ``same_measurement_as`` or repeat group joins has one row per member, so it skips :func:`fold_rows`."""
        skip = frozenset(vary)
        project = itemgetter(*(i for i, name in enumerate(CONDITION_NAMES) if name not in skip))
        groups: dict[Any, list[tuple[Entry, frozenset[str], tuple, bool, bool]]] = {}
        for row in self.rows:
            if row[1] <= skip:
                groups.setdefault(project(row[2]), []).append(row)
        placed = classes = in_classes = repeats = 0
        for group in groups.values():
            if len(group) < 2:
                continue
            if all(row[4] for row in group):
                classes += 1
                in_classes += len(group)
                placed += sum(1 for row in group if row[3])
                continue
            members = [row[0] for row in group]
            rows, _, folded = fold_rows([(e.rec, e.pa, e.value) for e in members], self.repeat_of)
            repeats += sum(1 for root in folded if rows[root][0].id in self.outside)
            if len(rows) < 2:
                continue
            classes += 1
            in_classes += len(members)
            placed += sum(1 for e in members if e.rec.id in self.outside)
        return _Count(placed, classes, in_classes, repeats)


def vary_hint(
    entries: list[Entry],
    not_comparable: list[NotComparable],
    selected: int,
    varied: Iterable[str],
    repeat_of: dict[str, Membership],
    per_accelerator_basis: bool = False,
) -> VaryHint | None:
    """The hint for one compare run, or ``None`` unless more than half of the ``selected`` records are not comparable.

    ``entries`` are every selected record that has a value (:func:`~inferkb.analysis.compare.entry_of`), comparable or
    not; ``not_comparable`` and ``varied`` are what compare found and was given; ``repeat_of`` its repeat memberships.
    """
    if not selected or len(not_comparable) * 2 <= selected:
        return None
    varied = list(varied)
    order = {n: i for i, n in enumerate(CONDITION_NAMES)}
    tally = Counter(m for nc in not_comparable for m in nc.missing)
    missing = dict(sorted(tally.items(), key=lambda kv: (-kv[1], order[kv[0]])))
    allowed = set(SUGGESTED) | (set(PER_ACCELERATOR_SUGGESTED) if per_accelerator_basis else set())
    excluded = {k: n for k, n in missing.items() if k not in allowed}
    hint = VaryHint(selected, len(not_comparable), missing, excluded)
    candidates = sorted((c for c in missing if c in allowed and c not in varied), key=order.__getitem__)
    if candidates:
        outside = {nc.id for nc in not_comparable if nc.missing}
        placer = _Placer(entries, outside, repeat_of, [*varied, *candidates])
        best = placer.count([*varied, *candidates])
        hint.sets_tried = 1
        goal = min(best.placed, len(not_comparable) // 2 + 1)
        if best.placed:
            chosen = list(candidates)
            for size in range(1, len(candidates)):
                found = None
                for subset in combinations(candidates, size):
                    if placer.bound([*varied, *subset]) < goal:
                        continue
                    got = placer.count([*varied, *subset])
                    hint.sets_tried += 1
                    if got.placed >= goal and (found is None or got.placed > found[1].placed):
                        found = (list(subset), got)
                if found is not None:
                    chosen, best = found
                    break
            hint.vary = [*varied, *chosen]
            hint.placed, hint.classes, hint.in_classes, hint.repeats_folded = best
    hint.text = _text(hint)
    return hint
