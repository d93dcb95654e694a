"""runtime_devices: an accelerator the runtime exposes as several devices (MI250: 2 GCDs per module), and who reads it.

KB1201 and interconnect-ids count a layout's TP x PP x DP against accelerator_count x runtime_devices; the map
derivation runtime-devices writes the field from a cited source; llm-inference-bench-tp fills the MI250 rows' TP in
runtime devices once the accelerator record states it.
"""

from __future__ import annotations

import copy
import json

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb import derive
from inferkb.derive import runtime_devices as RD
from inferkb.derive.interconnect_ids import exercised
from inferkb.errors import InputError

SOURCE = {
    "id": "src-gcd",
    "type": "source",
    "name": "a vendor page",
    "url": "https://example.com/gcd",
    "kind": "vendor-docs",
    "status": "draft",
    "confidence": 0.5,
    "updated": "2026-01-01",
}
BASIS = {"source_id": "src-gcd", "quote": "each GCD is one GPU device"}


def _acc(**over) -> dict:
    acc = {
        "id": "acc",
        "type": "accelerator",
        "name": "Acc 3350",
        "vram_gb": 80,
        "memory_bandwidth_gbps": 3350,
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": ["src-gcd"],
        "notes": "two GCDs; software sees two devices",
    }
    acc.update(over)
    return {k: v for k, v in acc.items() if v is not None}


def _kb(tmp_path, acc: dict, records: list[dict]) -> inferkb.KB:
    root = make_kb(tmp_path / "kb", records, models=[acc])
    (root / "data" / "sources").mkdir(exist_ok=True)
    (root / "data" / "sources" / "src-gcd.json").write_text(json.dumps(SOURCE), encoding="utf-8")
    return inferkb.open(root, cache=False)


def _tp(rid: str, count: int, tp: int) -> dict:
    return bench(rid, 1.0, accelerator_count=count, conditions={"tensor_parallel": tp, "concurrency": 1})


def _kb1201(kb) -> dict[str, str]:
    return {f.record: f.message for f in kb.audit("device-count").findings if f.code == "KB1201"}


# ---- KB1201 ---------------------------------------------------------------------------------


def test_tp8_on_four_modules_of_two_runtime_devices_is_no_conflict(tmp_path):
    kb = _kb(tmp_path, _acc(runtime_devices=2, runtime_devices_basis=BASIS), [_tp("tp8", 4, 8)])
    assert _kb1201(kb) == {}
    assert kb.audit("device-count").summary()["figures"]["device-count"]["checked_parallelism"] == 1


def test_without_the_field_tp8_on_four_accelerators_is_a_conflict(tmp_path):
    kb = _kb(tmp_path, _acc(), [_tp("tp8", 4, 8)])
    assert _kb1201(kb) == {"benchmarks/tp8": "accelerator_count 4 vs TP 8 x PP 1 x DP 1 = 8: more devices than the count"}


def test_runtime_devices_also_count_devices_left_unexplained(tmp_path):
    # TP 4 on 3 modules (6 GCDs) does not divide them: 2 are unexplained, as 2 of 6 cards would be.
    kb = _kb(tmp_path, _acc(runtime_devices=2, runtime_devices_basis=BASIS), [_tp("tp4", 3, 4)])
    assert _kb1201(kb) == {
        "benchmarks/tp4": "accelerator_count 3 x 2 runtime devices = 6 vs TP 4 x PP 1 x DP 1 = 4: 2 of 6 devices unexplained"
    }


# ---- the schema: bad values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"runtime_devices": 0, "runtime_devices_basis": BASIS}, "runtime_devices"),
        ({"runtime_devices": 1.5, "runtime_devices_basis": BASIS}, "runtime_devices"),
        ({"runtime_devices": "2", "runtime_devices_basis": BASIS}, "runtime_devices"),
        ({"runtime_devices": 2}, "runtime_devices"),  # a value without its source
        ({"runtime_devices": 2, "runtime_devices_basis": {"source_id": "src-gcd"}}, "runtime_devices_basis"),
    ],
)
def test_validate_refuses_a_bad_runtime_devices(tmp_path, over, field):
    kb = _kb(tmp_path, _acc(**over), [])
    errors = [f for f in kb.validate().findings if f.record == "accelerators/acc" and f.severity == "error"]
    assert errors and all(field in (f.field or "") or field in f.message for f in errors), [(f.field, f.message) for f in errors]


def test_validate_accepts_the_field_with_its_basis_and_its_absence(tmp_path):
    for i, acc in enumerate((_acc(runtime_devices=2, runtime_devices_basis=BASIS), _acc())):
        kb = _kb(tmp_path / str(i), acc, [])
        assert not [f for f in kb.validate().findings if f.record == "accelerators/acc" and f.severity == "error"]


# ---- interconnect-ids ------------------------------------------------------------------------


def test_exercised_holds_a_split_over_runtime_devices():
    data = {"accelerator_count": 4, "conditions": {"tensor_parallel": 8}}
    assert exercised(data)[3] is True  # a conflict on one device per accelerator
    value, reason, _, conflict = exercised(data, 2)
    assert value is True and not conflict and "across 8 runtime devices (4 accelerator(s) x 2 runtime_devices" in reason
    assert "spans accelerators" in reason  # 8 GCDs, two per module: the split leaves the package


def test_a_split_over_one_modules_devices_stays_inside_it():
    value, reason, _, conflict = exercised({"accelerator_count": 1, "conditions": {"tensor_parallel": 2}}, 2)
    assert value is True and not conflict and "(1 accelerator(s) x 2 runtime_devices)" in reason
    assert "spans accelerators" not in reason
    one = exercised({"accelerator_count": 1, "conditions": {}}, 2)
    assert one[0] is None and "2 runtime devices" in one[1]  # one module may have split over its two GCDs


# ---- the map derivation runtime-devices ------------------------------------------------------

ENTRY = RD.Entry("acc", 2, "src-gcd", "each GCD is one GPU device", "notes", "software sees two devices")


def test_the_map_writes_the_value_and_its_basis_with_provenance(tmp_path):
    kb = _kb(tmp_path, _acc(), [])
    out = RD.propose(kb, [ENTRY])
    assert [(p.field, p.value) for p in out.proposals] == [("runtime_devices", 2), ("runtime_devices_basis", BASIS)]
    assert out.proposals[0].evidence == {"field": "notes", "quote": "software sees two devices"}


def test_a_source_the_record_does_not_cite_writes_nothing(tmp_path):
    kb = _kb(tmp_path, _acc(sources=[]), [])
    out = RD.propose(kb, [ENTRY])
    assert out.proposals == [] and [f.code for f in out.findings] == ["KB1002"]


def test_a_record_stating_another_value_is_a_conflict(tmp_path):
    kb = _kb(tmp_path, _acc(runtime_devices=4, runtime_devices_basis=BASIS), [])
    out = RD.propose(kb, [ENTRY])
    assert out.proposals == [] and [f.code for f in out.findings] == ["KB1003"]


GOOD = 'id = "acc"\nruntime_devices = 2\nsource_id = "s"\nquote = "q"\nevidence_field = "notes"\nevidence_quote = "e"\n'


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD.replace("runtime_devices = 2", "runtime_devices = 0"), "accelerator[0].runtime_devices"),
        (GOOD.replace("runtime_devices = 2", "runtime_devices = 1"), "accelerator[0].runtime_devices"),
        (GOOD.replace("runtime_devices = 2", "runtime_devices = 2.5"), "accelerator[0].runtime_devices"),
        (GOOD.replace('source_id = "s"\n', ""), "accelerator[0].source_id"),
        (GOOD.replace('quote = "q"', 'quote = ""'), "accelerator[0].quote"),
        (GOOD + "[[accelerator]]\n" + GOOD, "accelerator[1].id"),
    ],
)
def test_a_bad_map_entry_is_an_input_error_naming_the_field(text, field):
    with pytest.raises(InputError) as exc:
        RD.parse("[[accelerator]]\n" + text, path="bad.toml")
    assert exc.value.path == "bad.toml" and exc.value.field == field


def test_the_cli_reports_a_bad_map_with_exit_2_and_no_traceback(tmp_path, monkeypatch):
    import subprocess
    import sys

    bad = tmp_path / "runtime_devices.toml"
    bad.write_text("[[accelerator]]\n" + GOOD.replace("runtime_devices = 2", "runtime_devices = 0"), encoding="utf-8")
    code = f"import inferkb.derive.runtime_devices as R, pathlib; R.MAP_PATH = pathlib.Path({str(bad)!r}); from inferkb.cli import main; main()"
    proc = subprocess.run([sys.executable, "-c", code, "derive", "runtime-devices"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "runtime_devices.toml" in proc.stderr and "accelerator[0].runtime_devices" in proc.stderr


# ---- the bundled KB ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def test_bundled_mi250_states_two_runtime_devices_from_its_rocm_source(bundled):
    acc = bundled.records["accelerators/amd-instinct-mi250"].data
    assert acc["runtime_devices"] == 2
    assert acc["runtime_devices_basis"]["source_id"] in acc["sources"]
    assert "each of which constitutes one GPU device" in acc["runtime_devices_basis"]["quote"]
    assert derive.run(bundled, "runtime-devices").changes == []


def test_bundled_mi250_tp_rows_pass_kb1201_and_would_not_without_the_field(bundled, tmp_path):
    mi250 = [r for r in bundled.by_type("benchmark") if r.data.get("accelerator_ids") == ["amd-instinct-mi250"]]
    with_tp = [r for r in mi250 if r.data["conditions"].get("tensor_parallel") is not None]
    assert len(with_tp) == 272
    assert all(r.data["conditions"]["tensor_parallel"] == 2 * r.data["accelerator_count"] for r in with_tp)
    ids = {r.key for r in with_tp}
    assert not ids & set(_kb1201(bundled))
    # The same rows against an accelerator record without the field: every one is a KB1201 conflict.
    acc = copy.deepcopy(bundled.records["accelerators/amd-instinct-mi250"].data)
    acc = {k: v for k, v in acc.items() if not k.startswith("runtime_devices") and k != "provenance"}
    rows = [dict(copy.deepcopy(r.data), accelerator_ids=["acc"]) for r in with_tp[:5]]
    kb = _kb(tmp_path, dict(acc, id="acc", sources=["src-gcd"]), rows)
    assert len(_kb1201(kb)) == 5
