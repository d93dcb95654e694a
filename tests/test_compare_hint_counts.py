"""compare's hint counts each --vary set the fast way and gets the answer of the plain grouping (compare_hint._Placer).

The plain grouping is the definition: records whose missing conditions are all varied, grouped by
ConditionSet.key(vary), each class folded by fold_rows. _Placer.count projects each record's full key by position and
skips fold_rows for classes no same_measurement_as or repeat group joins; ConditionSet.key remembers match_value's
pairs. Both must change nothing.
"""

from __future__ import annotations

from itertools import combinations

import pytest

import inferkb
from inferkb.analysis import compare_hint as H
from inferkb.analysis.comparability import ConditionSet, match_value
from inferkb.analysis.compare import Entry, NotComparable, entry_of
from inferkb.analysis.fold import fold_rows
from inferkb.analysis.repeats import memberships


def _plain_count(entries, outside, repeat_of, vary):
    """The hint's counts computed the plain way: compare's own key with ``vary`` left out, every class folded."""
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        if not e.cs.missing(vary):
            groups.setdefault(e.cs.key(vary), []).append(e)
    placed = classes = in_classes = repeats = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        rows, _, folded = fold_rows([(e.rec, e.pa, e.value) for e in members], repeat_of)
        repeats += sum(1 for root in folded if rows[root][0].id in outside)
        if len(rows) < 2:
            continue
        classes += 1
        in_classes += len(members)
        placed += sum(1 for e in members if e.rec.id in outside)
    return (placed, classes, in_classes, repeats)


@pytest.fixture(scope="module")
def whole_kb():
    kb = inferkb.open()
    records = list(kb.by_type("benchmark"))
    entries = [e for e in (entry_of(r) for r in records) if not isinstance(e, NotComparable)]
    outside = {e.rec.id for e in entries if e.cs.missing()}
    return entries, outside, memberships(records)


def test_fast_counts_equal_the_plain_grouping_on_the_whole_bundled_kb(whole_kb):
    entries, outside, repeat_of = whole_kb
    assert len(entries) > 5000 and any(e.rec.id in repeat_of for e in entries)  # repeat groups are exercised
    placer = H._Placer(entries, outside, repeat_of, H.SUGGESTED)
    for size in (1, 2, len(H.SUGGESTED)):
        for vary in combinations(H.SUGGESTED, size):
            assert tuple(placer.count(vary)) == _plain_count(entries, outside, repeat_of, vary), vary


def test_remembered_key_pairs_keep_equal_but_different_inputs_apart():
    for values in ({"accelerator_count": 1}, {"accelerator_count": 1.0}, {"accelerator_count": True}, {"load": ["a", 1]}):
        cs = ConditionSet(dict(values))
        want = tuple((n, match_value(n, cs.values.get(n))) for n in H.CONDITION_NAMES)
        assert cs.key() == want and cs.key() == want  # the second call reads the memo
    assert dict(ConditionSet({"accelerator_count": True}).key())["accelerator_count"] is True
    assert dict(ConditionSet({"accelerator_count": 1}).key())["accelerator_count"] == 1.0
