"""compare: comparability classes, what splits rows, ranking rules (same measurement, experimental, divisions), arms."""

from __future__ import annotations

import pytest

import inferkb
from analysis_helpers import bench, make_kb
from inferkb.analysis.common import AnalysisError, per_accelerator
from inferkb.analysis.comparability import conditions_of, split
from inferkb.analysis.compare import compare


def test_equal_conditions_form_one_class_ranked_by_direction(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1000.0), bench("b", 3000.0), bench("c", 2000.0)]))
    res = compare(kb, model="m70")
    assert len(res.classes) == 1 and not res.not_comparable
    assert [(r.rank, r.id) for r in res.classes[0].rows] == [(1, "b"), (2, "c"), (3, "a")]


def test_a_missing_condition_makes_a_row_not_comparable_even_when_both_lack_it(tmp_path):
    no_warmup = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "engine_version": "0.11.0"}
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0, conditions=no_warmup), bench("b", 2.0, conditions=no_warmup)]))
    res = compare(kb, model="m70")
    assert res.classes == []
    assert {n.id: n.missing for n in res.not_comparable} == {"a": ["warmup"], "b": ["warmup"]}
    s = split("a", kb.get("a").data, "b", kb.get("b").data)
    assert not s.comparable and s.missing == {"warmup": "both"} and s.differ == {}


def test_split_names_each_differing_condition(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0), bench("b", 2.0, engine_id="sglang", accelerator_count=4)]))
    s = split("a", kb.get("a").data, "b", kb.get("b").data)
    assert s.differ == {"accelerator_count": (8, 4), "engine": ("vllm", "sglang")}
    res = compare(kb, model="m70")
    assert len(res.classes) == 2 and res.split_by == {"accelerator_count": 2, "engine": 2}


def test_varied_conditions_leave_the_key_and_become_columns(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0), bench("b", 2.0, engine_id="sglang")]))
    res = compare(kb, model="m70", vary=["engine"])
    assert len(res.classes) == 1
    assert {r.id: r.varied for r in res.classes[0].rows} == {"a": {"engine": "vllm"}, "b": {"engine": "sglang"}}


def test_division_cannot_be_varied_so_closed_and_open_never_rank_together(tmp_path):
    closed = {"suite": "MLPerf Inference", "round": "v6.1", "division": "closed", "mlperf_model": "x", "scenario_raw": "Offline"}
    opened = dict(closed, division="open")
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0, submission=closed), bench("b", 2.0, submission=opened)]))
    with pytest.raises(AnalysisError, match="cannot be varied"):
        compare(kb, model="m70", vary=["division"])
    assert len(compare(kb, model="m70").classes) == 2


def test_mlperf_definition_fixes_sequence_lengths_load_and_warmup(tmp_path):
    sub = {"suite": "MLPerf Inference", "round": "v6.1", "division": "closed", "mlperf_model": "llama2-70b-99.9", "scenario_raw": "Offline"}
    rec = bench("a", 1.0, submission=sub, conditions={"engine_version": "1.0"})
    cs = conditions_of(rec)
    assert cs.missing() == []
    assert cs.fixed_by == {n: "MLPerf Inference v6.1 llama2-70b-99.9 Offline" for n in ("input_tokens", "output_tokens", "load", "warmup")}


def test_same_measurement_group_counts_once(tmp_path):
    kb = inferkb.open(
        make_kb(
            tmp_path,
            [bench("a", 5.0, same_measurement_as=["b"]), bench("b", 5.0), bench("c", 4.0, same_measurement_as=["b"]), bench("d", 1.0)],
        )
    )
    rows = compare(kb, model="m70").classes[0].rows
    assert [(r.id, r.same_measurement) for r in rows] == [("a", ["b", "c"]), ("d", [])]


def test_experimental_rows_are_labelled(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 5.0, experimental=True), bench("b", 4.0)]))
    assert {r.id: r.experimental for r in compare(kb, model="m70").classes[0].rows} == {"a": True, "b": False}


def test_per_accelerator_divides_by_nodes_times_accelerators_per_node():
    # 245,352 tok/s per system on 8 nodes x 4 GPUs -> 245352 / 32 = 7667.25 tok/s per GPU.
    rec = bench("x", 245352.0, accelerator_count=32, submission={"number_of_nodes": 8, "accelerators_per_node": 4})
    pa, _ = per_accelerator(rec)
    assert pa.value == pytest.approx(7667.25) and pa.divisor == 32
    assert per_accelerator(bench("y", 10.0, value_scope="per-user"))[0] is None


def test_per_accelerator_ranking_treats_counts_as_one_scope_when_count_is_varied(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("eight", 8000.0), bench("one", 1500.0, accelerator_count=1)]))
    res = compare(kb, model="m70", vary=["accelerator_count"], per_accelerator_basis=True)
    assert [(r.id, r.value) for r in res.classes[0].rows] == [("one", 1500.0), ("eight", 1000.0)]


def test_arms_get_computed_deltas_with_direction(tmp_path):
    arms = [
        {"id": "base", "stats": {"mean": 894.0}, "unit": "ms"},
        {"id": "mtp", "stats": {"mean": 1578.0}, "unit": "ms"},
    ]
    rec = bench("a", 894.0, metric="e2e_latency_ms", unit="ms", value_scope="per-request", arms=arms, baseline_arm="base")
    kb = inferkb.open(make_kb(tmp_path, [rec]))
    row = compare(kb, model="m70").classes[0].rows[0]
    mtp = next(a for a in row.arms if a.arm_id == "mtp")
    # (1578 - 894) / 894 x 100 = 76.51 %; latency is lower-is-better, so the arm is worse.
    assert mtp.delta_pct["mean_delta_pct"] == pytest.approx(76.51, abs=0.01) and mtp.better is False


def test_unknown_model_suggests_near_matches(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, []))
    with pytest.raises(AnalysisError, match="did you mean: m70"):
        compare(kb, model="m7")


def test_model_alias_selects_records_by_model_text(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0, model_id=None, model="org/M-70B")]))
    assert compare(kb, model="m70").selected == 1


def test_bundled_llama2_offline_ranks_closed_division_per_accelerator():
    kb = inferkb.open()
    res = compare(
        kb,
        model="llama-2-70b",
        scenario="offline",
        per_accelerator_basis=True,
        vary=["hardware", "accelerator_count", "format", "engine", "engine_version"],
    )
    # Open-division rows name no model (the model may be modified), so only closed rows are selected here.
    assert {c.key["division"] for c in res.classes} == {"closed"}
    closed = res.classes[0]
    values = [r.value for r in closed.rows]
    assert values == sorted(values, reverse=True) and all(r.label.endswith("per accelerator") for r in closed.rows)
    assert res.to_dict()["classes"][0]["size"] == closed.size


def test_ambiguous_hardware_is_not_comparable(tmp_path):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0, accelerator_alternates=["acc2"]), bench("b", 2.0)]))
    res = compare(kb, model="m70")
    assert [(n.id, n.missing) for n in res.not_comparable] == [("a", ["hardware"])]


def test_mixed_hardware_systems_get_no_per_accelerator_figure_and_are_not_ranked():
    # MLPerf v5.1 MangoBoost: 32 x MI300X + 16 x MI325X in one system. Dividing its 169,197 tok/s by 48
    # would average two parts; the per-accelerator derivation refuses that, and so must compare.
    from inferkb.analysis.common import per_accelerator

    kb = inferkb.open()
    rid = "mlperf-v5-1-closed-mangoboost-32xmi300x-2xepyc-9534-16xmi325x-2xepyc-9655-llama2-70b-99-9-offline"
    rec = kb.records[f"benchmarks/{rid}"] if f"benchmarks/{rid}" in kb.records else kb.resolve(rid, "benchmark")
    pa, why = per_accelerator(rec.data)
    assert pa is None and "mixed hardware (amd-instinct-mi300x + amd-instinct-mi325x)" in why
    res = compare(kb, model="llama-2-70b", scenario="offline", per_accelerator_basis=True)
    ranked = {r.id for c in res.classes for r in c.rows}
    assert rid not in ranked
    assert any(n.id == rid and "mixed hardware" in n.reason for n in res.not_comparable)


def _with_version(version: str) -> dict:
    return {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "warmup": 10, "engine_version": version}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("v0.9.2", "0.9.2", True),  # a leading "v" is not part of the version
        ("10.2", "10.2.0", True),  # PEP 440: release segments compare with zero padding
        ("1.3.0rc0", "1.3rc0", True),
        ("10.2.0.19", "10.2.0", False),  # a more precise build is another version
        ("0.9.2", "0.9.2.post1", False),
        ("nightly, commit dea63512", "nightly, commit dea63512", True),
        ("nightly, commit dea63512", "Nightly, commit DEA63512", False),  # not a version: the exact string
        ("feat/1.2-mlpinf", "1.2", False),
        ("0123456", "123456", False),  # a commit id, not the release number 123456
    ],
)
def test_engine_versions_are_compared_as_versions_and_other_strings_exactly(tmp_path, a, b, same):
    kb = inferkb.open(make_kb(tmp_path, [bench("a", 1.0, conditions=_with_version(a)), bench("b", 2.0, conditions=_with_version(b))]))
    res = compare(kb, model="m70")
    assert len(res.classes) == (1 if same else 2)
    s = split("a", kb.get("a").data, "b", kb.get("b").data)
    assert s.comparable is same
    if not same:
        assert s.differ == {"engine_version": (a, b)}


def test_a_class_names_the_version_spellings_it_merged(tmp_path):
    records = [
        bench("a", 1.0, conditions=_with_version("10.2.0")),
        bench("b", 2.0, conditions=_with_version("10.2")),
        bench("c", 3.0, conditions=_with_version("10.2.0")),
        bench("d", 4.0, conditions=_with_version("10.2.0.19")),
    ]
    kb = inferkb.open(make_kb(tmp_path, records))
    res = compare(kb, model="m70")
    merged = next(c for c in res.classes if c.size == 3)
    assert merged.key["engine_version"] == "10.2.0"  # the spelling most of its rows use
    assert merged.spellings == {"engine_version": ["10.2.0", "10.2"]}
    alone = next(c for c in res.classes if c.size == 1)
    assert alone.spellings == {} and alone.key["engine_version"] == "10.2.0.19"
    assert res.split_by == {"engine_version": 2}
    assert res.to_dict()["classes"][0]["spellings"] == {"engine_version": ["10.2.0", "10.2"]}


def test_bundled_kb_merges_tensorrt_10_2_and_10_2_0_when_hardware_and_format_are_varied():
    # MLPerf v4.1: Fujitsu's rows say "TensorRT 10.2", every other TensorRT row of the round "TensorRT 10.2.0".
    # Format is varied too: since derive mlperf-weight-format every Fujitsu row is FP8 (format_id null, its
    # harness config sets use_fp8 = True) and no longer shares the table's fp16 with other submitters' rows.
    kb = inferkb.open()
    res = compare(kb, model="llama-2-70b", scenario="offline", vary=["hardware", "format"])
    merged = [c for c in res.classes if "engine_version" in c.spellings]
    assert merged, "no class merged two spellings of one engine version"
    for cls in merged:
        assert sorted(cls.spellings["engine_version"]) == ["10.2", "10.2.0"]
        ids = {r.id for r in cls.rows} | {x for r in cls.rows for x in r.same_measurement}
        assert any("fujitsu" in i for i in ids) and any("fujitsu" not in i for i in ids)
