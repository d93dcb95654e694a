"""The loader's "no duration key here" flag: KB122's run-duration walk is skipped only where it cannot find anything.

The loader notes each benchmark whose bytes hold no ``"duration`` (every key of ``DURATION_KEYS`` serialises so);
``stat_findings`` then does not serialise and walk ``submission``/``environment``/``conditions``. The findings must
be those of the walk in every case: a duration key in a canonical file, in a compact one, spelled with escapes, or
in a record changed after loading.
"""

from __future__ import annotations

import json

import inferkb
from conftest import rec as make_rec
from conftest import write_kb
from inferkb import validate_stats


def _bench(rid: str, **fields) -> dict:
    return make_rec("benchmark", rid, **fields)


def _kb122(kb) -> list[tuple[str, str]]:
    return sorted((f.record, f.field) for f in kb.validate().findings if f.code == "KB122")


def test_a_zero_duration_is_found_whatever_the_file_layout(tmp_path):
    zero = {"submission": {"duration_s": 0}}
    root = write_kb(
        tmp_path,
        {
            "data/benchmarks/canonical.json": _bench("canonical", **zero),  # json.dumps indent=2: the canonical layout
            "data/benchmarks/compact.json": json.dumps(_bench("compact", **zero)),
            "data/benchmarks/escaped.json": json.dumps(_bench("escaped", **zero)).replace("duration_s", "\\u0064uration_s"),
            "data/benchmarks/nested.json": _bench("nested", conditions={"runs": [{"duration_ms": -1}]}),
            "data/benchmarks/plain.json": _bench("plain", submission={"division": "closed"}),
        },
    )
    kb = inferkb.open(root, cache=False)
    assert not kb.duration_scan_needed(kb.get("plain"))
    assert kb.duration_scan_needed(kb.get("canonical")) and kb.duration_scan_needed(kb.get("escaped"))
    assert _kb122(kb) == [
        ("benchmarks/canonical", "submission.duration_s"),
        ("benchmarks/compact", "submission.duration_s"),
        ("benchmarks/escaped", "submission.duration_s"),
        ("benchmarks/nested", "conditions.runs[0].duration_ms"),
    ]


def test_a_cleared_record_is_not_walked_for_durations(tmp_path, monkeypatch):
    root = write_kb(tmp_path, {f"data/benchmarks/b{i}.json": _bench(f"b{i}", submission={"division": "closed"}) for i in range(3)})
    kb = inferkb.open(root, cache=False)
    walked = []
    monkeypatch.setattr(validate_stats, "_may_hold_duration", lambda value: walked.append(value) or True)
    assert _kb122(kb) == []
    assert walked == []


def test_a_record_changed_after_loading_is_walked_again(tmp_path):
    root = write_kb(tmp_path, {"data/benchmarks/b.json": _bench("b", submission={"division": "closed"})})
    kb = inferkb.open(root, cache=False)
    rec = kb.get("b")
    assert not kb.duration_scan_needed(rec)
    changed = type(rec)(key=rec.key, id=rec.id, type=rec.type, dir=rec.dir, path=rec.path, data={**rec.data, "submission": {"duration": 0}})
    assert kb.duration_scan_needed(changed)  # not the indexed record: the loader's flag says nothing about it
    findings = validate_stats.stat_findings(changed.data, {}, record=rec.key, path=rec.path, durations=kb.duration_scan_needed(changed))
    assert [(f.code, f.field) for f in findings] == [("KB122", "submission.duration")]


def test_only_benchmarks_are_flagged(tmp_path):
    root = write_kb(tmp_path, {"data/engines/e.json": make_rec("engine", "e"), "data/benchmarks/b.json": _bench("b")})
    kb = inferkb.open(root, cache=False)
    assert kb.index.peek("duration_clear") == {"benchmarks/b"}
