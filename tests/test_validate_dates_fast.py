"""The values-only pass of the date rules (KB105, KB106) gives what the field walk gives (speed pass 10)."""

from __future__ import annotations

import datetime as _dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inferkb
from conftest import BUNDLED, CORPUS
from inferkb.store import Record
from inferkb.validate import _date_findings, _date_walk

TODAY = _dt.date(2026, 12, 3)
DATES = st.sampled_from(
    ["2026-12-03", "2026-12-04", "2031-01-01", "2026-02-31", "2026-13-01", "2026-1-011", "1999-12-31", "2026-12-0x", "abcd-ef-gh"]
) | st.text(alphabet="0123456789-", min_size=10, max_size=10)
VALUES = DATES | st.none() | st.integers(-2, 2) | st.text(max_size=12)
KEYS = st.sampled_from(["updated", "accessed", "date", "published", "name", "notes", "run_date"])
PROVENANCE = st.lists(st.fixed_dictionaries({}, optional={"date": VALUES, "tag": st.just("t")}) | VALUES, max_size=3)
DATA = st.dictionaries(KEYS, VALUES, max_size=6).flatmap(lambda d: st.one_of(st.just(d), PROVENANCE.map(lambda p: {**d, "provenance": p})))


def _as_dicts(found):
    return [f.to_dict() for f in found]


@settings(max_examples=500, deadline=None)
@given(DATA)
def test_values_pass_equals_the_field_walk(data):
    rec = Record(key="sources/x", id="x", type="source", dir="sources", path="data/sources/x.json", data=data)
    assert _as_dicts(_date_findings(rec, TODAY)) == _as_dicts(_date_walk(rec, TODAY))


@pytest.mark.parametrize("root", [BUNDLED, CORPUS / "inference-research"], ids=["bundled", "corpus"])
def test_values_pass_equals_the_field_walk_on_real_records(root):
    if not root.exists():
        pytest.skip(f"{root} is absent")
    kb = inferkb.open(root)
    for today in (TODAY, _dt.date(2020, 1, 1)):  # 2020: most of the real dates are then in the future
        for rec in kb.records.values():
            assert _as_dicts(_date_findings(rec, today)) == _as_dicts(_date_walk(rec, today)), rec.key
