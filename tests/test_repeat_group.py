"""repeat_group: CSV rows that measured one configuration twice are linked, validated, and counted once by compare and pareto.

The real pair: KV_Cache_Dtype/All_results.csv lines 38 and 39 (A100, vLLM,
Llama-2-7b-hf, 1024/1024, batch 64, ``Weight = fp16, KV Cache = fp16``) print
Throughput 1485.3514165098256 and 1485.367278207318; line 40 is the same
setup with an fp8 KV cache (724.9970391172717), a different configuration.
"""

from __future__ import annotations

import copy
import csv
import datetime as dt
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from conftest import CORPUS
from inferkb import derive
from inferkb.analysis.compare import compare
from inferkb.analysis.pareto import pareto
from inferkb.intake import repeats as RP
from inferkb.intake.base import IntakeOptions, stable_view, without_backfills
from inferkb.intake.llm_inference_bench import LLMInferenceBench

CSV = CORPUS / "community" / "argonne-LLM-Inference-Bench" / "gh-pages" / "docs" / "data" / "KV_Cache_Dtype" / "All_results.csv"
FIRST = "lib-kv-cache-dtype-nvidia-a100-x1-vllm-llama-2-7b-hf-in1024-out1024-bs64-weight-fp16-kv-cache-fp16"
SECOND = FIRST + "-2"
FP8 = "lib-kv-cache-dtype-nvidia-a100-x1-vllm-llama-2-7b-hf-in1024-out1024-bs64-weight-fp16-kv-cache-fp8"
TODAY = dt.date(2026, 12, 3)
VARY = ("hardware", "warmup", "engine_version")


def _import(tmp_path: Path) -> tuple[dict[str, dict], object]:
    """Lines 38-40 of the real CSV (behind its header) imported; records by id."""
    if not CSV.is_file():
        pytest.skip(f"LLM-Inference-Bench corpus not found at {CSV}")
    lines = CSV.read_text(encoding="utf-8-sig").splitlines()
    path = tmp_path / "KV_Cache_Dtype" / "All_results.csv"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([lines[0], *lines[37:40]]) + "\n", encoding="utf-8")
    res = LLMInferenceBench().parse([path], IntakeOptions(), inferkb.open())
    return {r["id"]: r for r in res.records if r["type"] == "benchmark"}, res


# ---- the rule and the importer -------------------------------------------------------------


def test_two_rows_of_one_configuration_are_linked_at_import(tmp_path):
    recs, res = _import(tmp_path)
    assert recs[FIRST]["value"] == 1485.3514165098256 and recs[SECOND]["value"] == 1485.367278207318
    assert recs[FIRST][RP.FIELD] == FIRST and recs[SECOND][RP.FIELD] == FIRST
    assert res.stats["repeat_groups"] == 1
    (entry,) = [e for e in recs[SECOND]["provenance"] if e["tag"] == RP.TAG]
    assert entry["action"] == "backfill" and entry["numbers_changed"] is False
    assert entry["evidence"] == {"field": "submission.line", "quote": "3"}
    assert "line 2 (" + FIRST in entry["basis"]


def test_a_row_differing_in_one_condition_is_not_a_repeat(tmp_path):
    recs, _ = _import(tmp_path)
    assert RP.FIELD not in recs[FP8]  # KV cache fp8 vs fp16: another configuration


def test_rows_of_different_files_or_conditions_are_not_repeats(tmp_path):
    recs, _ = _import(tmp_path)
    a, b = (copy.deepcopy(recs[i]) for i in (FIRST, SECOND))
    b["submission"]["table"] = "Throughput"
    assert RP.repeat_groups([a, b]) == []
    b = copy.deepcopy(recs[SECOND])
    b["conditions"]["batch_size"] = 32
    assert RP.repeat_groups([a, b]) == []
    b = copy.deepcopy(recs[SECOND])
    b["submission"]["line"] = a["submission"]["line"]  # one line twice is not two measurements
    assert RP.repeat_groups([a, b]) == []


# ---- the derivation ------------------------------------------------------------------------


def _stripped(recs: dict[str, dict]) -> list[dict]:
    out = []
    for r in recs.values():
        r = copy.deepcopy(r)
        r.pop(RP.FIELD, None)
        r["provenance"] = [e for e in r["provenance"] if e["tag"] != RP.TAG]
        out.append(r)
    return out


def test_the_derivation_sets_what_the_importer_sets_and_touches_no_number(tmp_path):
    imported, _ = _import(tmp_path / "csv")
    kb = inferkb.open(make_kb(tmp_path / "kb", _stripped(imported)))
    result = derive.run(kb, "repeat-group", write=True, today=TODAY)
    proof = result.proof.to_dict()
    assert result.written and proof["ok"] and proof["violations"] == {} and proof["numbers_compared"] > 0
    assert set(proof["changed_fields"]) == {"repeat_group", "provenance"}
    assert sorted(c.record for c in result.changes) == [f"benchmarks/{FIRST}", f"benchmarks/{SECOND}"]
    kb = inferkb.open(tmp_path / "kb")
    for rid in (FIRST, SECOND):
        derived = kb.records[f"benchmarks/{rid}"].data
        assert derived[RP.FIELD] == FIRST
        # A re-import of the derived record is a no-op: the importer writes the derivation's own entry.
        assert stable_view(without_backfills(derived, imported[rid])) == stable_view(imported[rid])
    assert RP.FIELD not in kb.records[f"benchmarks/{FP8}"].data
    assert derive.run(kb, "repeat-group").changes == []


def test_bundled_kb_links_every_named_repeat_pair_and_nothing_else():
    kb = inferkb.open()
    res = derive.run(kb, "repeat-group")
    assert res.proof.ok and res.changes == []  # the data commit carries every value
    named = {r.id for r in kb.by_type("benchmark") if re.search(r"repeat \d of \d, CSV line \d+\)", r.data.get("name", ""))}
    linked = {r.id: r.data[RP.FIELD] for r in kb.by_type("benchmark") if RP.FIELD in r.data}
    assert set(linked) == named and len(named) == 128
    sizes: dict[str, int] = {}
    for gid in linked.values():
        sizes[gid] = sizes.get(gid, 0) + 1
    assert len(sizes) == 64 and set(sizes.values()) == {2}
    assert RP.FIELD not in kb.records[f"benchmarks/{FP8}"].data
    codes = {f.code for f in inferkb.open().validate().findings}
    assert not codes & {"KB126", "KB127"}


# ---- validation ----------------------------------------------------------------------------


def _codes(kb_root: Path) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.record, f.field) for f in inferkb.open(kb_root).validate().findings if f.code in ("KB126", "KB127"))


def test_a_group_whose_members_share_every_condition_validates(tmp_path):
    root = make_kb(tmp_path, [bench("a", 100.0, repeat_group="a"), bench("a-2", 300.0, repeat_group="a")])
    assert _codes(root) == []


def test_members_that_differ_in_a_condition_or_unit_are_an_error(tmp_path):
    other = bench("a-2", 300.0, repeat_group="a")
    other["conditions"]["concurrency"] = 32
    root = make_kb(tmp_path / "load", [bench("a", 100.0, repeat_group="a"), other])
    assert _codes(root) == [("KB127", "benchmarks/a-2", "repeat_group")]
    (f,) = [f for f in inferkb.open(root).validate().findings if f.code == "KB127"]
    assert "load" in f.message and f.path.endswith("data/benchmarks/a-2.json")
    root = make_kb(tmp_path / "unit", [bench("a", 100.0, repeat_group="a"), bench("a-2", 300.0, repeat_group="a", unit="req/s")])
    assert _codes(root) == [("KB127", "benchmarks/a-2", "repeat_group")]


def test_a_dangling_group_id_is_an_error_naming_file_and_field(tmp_path):
    root = make_kb(tmp_path, [bench("a", 100.0, repeat_group="nope"), bench("b", 1.0), bench("c", 2.0, repeat_group="b")])
    assert _codes(root) == [("KB126", "benchmarks/a", "repeat_group"), ("KB126", "benchmarks/c", "repeat_group")]
    out = subprocess.run(
        [sys.executable, "-m", "inferkb", "validate", "--kb", str(root), "--select", "KB126"], capture_output=True, text=True
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "data/benchmarks/a.json" in out.stdout and "repeat_group" in out.stdout and "'nope' is not a benchmark record" in out.stdout


def test_a_repeat_group_of_the_wrong_type_is_a_schema_error(tmp_path):
    root = make_kb(tmp_path, [bench("a", 100.0, repeat_group=5), bench("b", 1.0, repeat_group="Not An Id")])
    findings = [f for f in inferkb.open(root).validate().findings if f.severity == "error"]
    fields = sorted({(f.record, f.field) for f in findings if "repeat_group" in (f.field or "")})
    assert fields == [("benchmarks/a", "repeat_group"), ("benchmarks/b", "repeat_group")]
    # A number is no id: only the schema speaks; a string that is no record's id also dangles.
    assert [(f.code, f.record) for f in findings if f.code in ("KB126", "KB127")] == [("KB126", "benchmarks/b")]


# ---- compare and pareto ---------------------------------------------------------------------


def _repeat_kb(tmp_path: Path) -> Path:
    # a and a-2 repeat one setup (100 and 300); b is another engine version at 250.
    return make_kb(
        tmp_path,
        [
            bench("a", 100.0, repeat_group="a", submission={"line": 7}),
            bench("a-2", 300.0, repeat_group="a", submission={"line": 9}),
            bench("b", 250.0, conditions={**bench("x", 0)["conditions"], "engine_version": "0.12.0"}),
        ],
    )


def test_compare_ranks_a_repeat_group_once_on_its_median(tmp_path):
    kb = inferkb.open(_repeat_kb(tmp_path))
    (cls,) = compare(kb, model="m70", vary=("engine_version",)).classes
    assert [(r.id, r.rank, r.value) for r in cls.rows] == [("b", 1, 250.0), ("a", 2, 200.0)]
    row = cls.rows[1]
    assert row.headline == 200.0
    assert row.repeats == {"group": "a", "n": 2, "ids": ["a", "a-2"], "values": [100.0, 300.0], "min": 100.0, "median": 200.0, "max": 300.0}
    assert cls.rows[0].repeats is None
    raw = compare(kb, model="m70", vary=("engine_version",)).to_dict()["classes"][0]["rows"]
    assert raw[1]["repeats"]["ids"] == ["a", "a-2"] and raw[0]["repeats"] is None  # JSON: one key more, nothing renamed


def test_a_not_comparable_repeat_is_marked_with_its_place(tmp_path):
    kb = inferkb.open(_repeat_kb(tmp_path))
    res = compare(kb, model="m70")  # engine_version not varied: a/a-2 and b are separate classes
    (cls,) = [c for c in res.classes if any(r.id == "a" for r in c.rows)]
    assert len(cls.rows) == 1 and cls.rows[0].repeats["n"] == 2
    gone = make_kb(tmp_path / "nc", [bench("a", 100.0, repeat_group="a", warmup=None), bench("a-2", 300.0, repeat_group="a")])
    for r in ("a", "a-2"):
        path = gone / "data" / "benchmarks" / f"{r}.json"
        d = json.loads(path.read_text())
        d["conditions"]["warmup"] = None
        path.write_text(json.dumps(d))
    nc = {n.id: n.repeat for n in compare(inferkb.open(gone), model="m70").not_comparable}
    assert nc == {"a": {"group": "a", "index": 1, "n": 2}, "a-2": {"group": "a", "index": 2, "n": 2}}


def test_compare_cli_marks_repeats_in_text_and_csv(tmp_path):
    root = _repeat_kb(tmp_path)
    base = [sys.executable, "-m", "inferkb", "compare", "--kb", str(root), "--model", "m70", "--vary", "engine_version"]
    text = subprocess.run(base, capture_output=True, text=True)
    assert text.returncode == 0 and "median of 2 repeats (min 100, max 300): a, a-2" in text.stdout
    csv_out = subprocess.run([*base, "--format", "csv"], capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(csv_out.stdout)))
    assert {"repeat_group", "repeats", "repeat_min", "repeat_max"} <= set(rows[0])
    a_row = next(r for r in rows if r["id"] == "a")
    assert (a_row["value"], a_row["repeats"], a_row["repeat_min"], a_row["repeat_max"]) == ("200.0", "2", "100.0", "300.0")


def test_compare_with_an_unknown_condition_to_vary_still_exits_2(tmp_path):
    root = _repeat_kb(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "inferkb", "compare", "--kb", str(root), "--vary", "repeat_group"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr and "unknown condition" in out.stderr


def test_pareto_draws_a_repeat_group_as_one_point_at_its_medians(tmp_path):
    cond = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 16, "warmup": 10, "engine_version": "0.11.0"}

    def point(rid, total, per_user, **kw):
        return bench(
            rid, total, conditions=dict(cond, **kw.pop("c", {})), metrics={"tok_s_per_user": {"value": per_user, "unit": "tok/s"}}, **kw
        )

    # Alone, the lucky repeat r-2 (16000, 80) would beat the other setup o (12000, 70) on both axes; the median (12000, 60) does not.
    recs = [
        point("r", 8000.0, 40.0, repeat_group="r", submission={"line": 1}),
        point("r-2", 16000.0, 80.0, repeat_group="r", submission={"line": 2}),
        point("o", 12000.0, 70.0, c={"concurrency": 32}),
    ]
    res = pareto(inferkb.open(make_kb(tmp_path, recs)), model="m70", x="tok_s_per_user")
    (cls,) = res.classes
    pts = {p.id: p for p in cls.points}
    assert set(pts) == {"r", "o"} and pts["r"].repeats == ["r", "r-2"]
    assert (pts["r"].x, pts["r"].y) == (60.0, 12000.0 / 8)
    assert cls.frontier == ["o"]
