"""The one-set-test pass in front of the reference rules (KB201-KB203) never hides or adds a finding.

``reference_findings`` clears a record whose ``sources`` and reference fields all name known ids with one set test
per field, and walks (``_record_references``) only the others. The reference is the walk over every record: on
generated records (strings, lists with unhashable or non-string items, ``dir/id`` forms, references to any type)
and on the real research corpus the findings and the dangling count must be the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inferkb
from inferkb import validate
from inferkb.kb import KB
from inferkb.profile import BUILTIN_TYPES, Profile
from inferkb.store import Record
from inferkb.store.loader import Loaded

_IDS = ["a", "b", "src-a", "gpu-x", "vllm"]
_TYPES = {t.name: t for t in BUILTIN_TYPES}
_REF_VALUE = st.one_of(
    st.none(),
    st.sampled_from([*_IDS, "missing", "", "engines/vllm", "sources/src-a", "engines/missing"]),
    st.integers(0, 3),
    st.lists(
        st.one_of(st.sampled_from([*_IDS, "missing", "engines/vllm"]), st.integers(0, 2), st.just({"id": "a"}), st.just(["a"])),
        max_size=3,
    ),
    st.just({"id": "a"}),
)


def _walk_every_record(kb: KB) -> tuple[list, int]:
    """The reference: the full per-record walk of every record, no pre-filter."""
    sources = kb.ids_of_type("source")
    id_sets = {t: kb.ids_of_type(t) for t in kb.profile.types}
    out: list = []
    dangling = sum(validate._record_references(kb, rec, sources, id_sets, out) for rec in kb.records.values())
    return out, dangling


def _kb(records: list[Record]) -> KB:
    kb = KB(Path("/nonexistent-kb"), Profile(types=dict(_TYPES), origin="built-in"))
    kb.install(Loaded(records={r.key: r for r in records}))
    return kb


@st.composite
def _records(draw) -> list[Record]:
    out = []
    for n in range(draw(st.integers(1, 8))):
        spec = draw(st.sampled_from(sorted(_TYPES.values(), key=lambda t: t.name)))
        rid = draw(st.sampled_from(_IDS)) if n < 4 else f"r{n}"
        data = {"id": rid, "type": spec.name, "sources": draw(_REF_VALUE)}
        for fld in spec.refs:
            if draw(st.booleans()):
                data[fld] = draw(_REF_VALUE)
        key = f"{spec.dir}/{rid}"
        out.append(Record(key=key, id=rid, type=spec.name, dir=spec.dir, path=f"data/{key}.json", data=data))
    return list({r.key: r for r in out}.values())


@settings(max_examples=400, deadline=None)
@given(_records())
def test_the_set_test_pass_gives_the_walks_findings(records):
    kb = _kb(records)
    got, dangling = validate.reference_findings(kb, list(kb.records.values()))
    want, want_dangling = _walk_every_record(kb)
    assert [f.to_dict() for f in got] == [f.to_dict() for f in want]
    assert dangling == want_dangling


def test_a_kb_whose_references_all_resolve_is_never_walked(monkeypatch):
    kb = inferkb.open()  # the bundled KB: every reference resolves
    walked = []
    monkeypatch.setattr(validate, "_record_references", lambda *a: walked.append(a[1]) or 0)
    assert validate.reference_findings(kb, list(kb.records.values())) == ([], 0)
    assert walked == []


def test_the_research_corpus_gives_the_walks_findings(research_kb):
    kb = inferkb.open(research_kb)
    got, dangling = validate.reference_findings(kb, list(kb.records.values()))
    want, want_dangling = _walk_every_record(kb)
    assert got and [f.to_dict() for f in got] == [f.to_dict() for f in want]
    assert dangling == want_dangling


def test_one_record_gives_the_walks_findings_without_the_bulk_pass(monkeypatch):
    """validate_record (run for each record a write checks) walks the record itself: reference_findings' per-call
    tables (one set per type, every bare id) would be built again for each record of a batch."""
    kb = inferkb.open()
    rec = next(r for r in kb.records.values() if r.type == "gotcha")
    bad = Record(
        rec.key, rec.id, rec.type, rec.dir, rec.path, {**rec.data, "sources": ["no-such-source"], "affects": ["nothing-here", rec.id]}
    )
    want = [f.to_dict() for f in validate.reference_findings(kb, [bad])[0]]
    monkeypatch.setattr(validate, "reference_findings", lambda *a: pytest.fail("validate_record used the bulk pass"))
    got = [f.to_dict() for f in validate.validate_record(kb, bad) if f.code in ("KB201", "KB202", "KB203")]
    assert got == want and [f["code"] for f in got] == ["KB201", "KB203"]
