"""Derivation mlperf-weight-format: MLPerf records whose harness config contradicts the table's weight_data_types."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest

import inferkb
from analysis_helpers import make_kb
from inferkb import derive
from inferkb.analysis.roofline import mfu_peak, stated_weight_bits
from inferkb.errors import InputError
from inferkb.intake import mlperf_weight_formats as W

TODAY = dt.date(2026, 12, 3)
SHA = "a2f5d66d17e8f75c02fd74dfe810ecca6a046696"
# Another stored commit of mlcommons/inference_results_v4.1: the one holding JuniperNetworks' llama2-70b builder and
# Dell's MI300X vLLM performance scripts.
F44 = "f44c9990849f372d2cb0ef614290c8ba4591459c"
COMMON = {"status": "draft", "confidence": 0.5, "updated": "2026-01-01", "sources": []}
MAP = f'''
[[entry]]
round = "v4.1"
submitter = "NVIDIA"
division = "closed"
platform = "H200-SXM-141GBx8_TRT"
model = "llama2-70b"
repo = "mlcommons/inference_results_v4.1"
commit = "{SHA}"
files = {{ Offline = "closed/NVIDIA/configs/llama2-70b/Offline/__init__.py" }}
classes = {{ Offline = "H200_SXM_141GBx8" }}
table_says = "fp16"
harness_says = "fp8"
decides = "H200_SXM_141GBx8 < H200_SXM_141GBx1, which sets use_fp8 = True"
'''
B200 = "benchmarks/mlperf-v4-1-closed-nvidia-b200-sxm-180gbx1-trt-llama2-70b-99-9-offline"
H100 = "benchmarks/mlperf-v4-1-closed-nvidia-dgx-h100-h100-sxm-80gbx8-trt-llama2-70b-99-offline"
GOTCHA = "gotchas/mlperf-v4-1-fp16-table-vs-fp8-harness"


def _row(rid: str, **sub) -> dict:
    return {
        "id": rid,
        "type": "benchmark",
        "name": rid,
        **COMMON,
        "origin": "mlperf-inference",
        "engine_id": None,
        "accelerator_ids": [],
        "accelerator_count": 8,
        "hardware_raw": "NVIDIA H200-SXM-141GB",
        "model": "llama2-70b-99",
        "model_id": None,
        "format_id": "fp16",
        "metric": "output_tok_s",
        "value": 31302.7,
        "unit": "tok/s",
        "value_scope": "per-system",
        "scenario": "offline",
        "conditions": {"batch_size": None},
        "condition_gaps": {"batch_size": {"reason": "the submitter's choice", "checked": ["rules"]}},
        "submission": {
            "round": "v4.1",
            "division": "closed",
            "submitter": "NVIDIA",
            "platform": "H200-SXM-141GBx8_TRT",
            "mlperf_model": "llama2-70b-99",
            "scenario_raw": "Offline",
            "weight_data_types": "fp16",
            **sub,
        },
        "provenance": [],
    }


ROWS = [
    _row("m-covered"),
    _row("m-covered-99-9", mlperf_model="llama2-70b-99.9"),
    _row("m-other-platform", platform="Partner_H200x8_TRT"),
    _row("m-other-scenario", scenario_raw="Server"),
    _row("m-table-says-fp8", weight_data_types="fp8"),
]


@pytest.fixture
def kb_root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(W, "evidence_map", lambda: W.parse_map(MAP, path="test-map.toml"))
    quant = [
        {"id": "fp16", "type": "quantization", "name": "FP16", "weight_bits": 16, **COMMON},
        {"id": "fp8-e4m3", "type": "quantization", "name": "FP8 E4M3", "weight_bits": 8, **COMMON},
    ]
    return make_kb(tmp_path / "kb", copy.deepcopy(ROWS), models=quant)


def _rec(root: Path, rid: str) -> dict:
    return json.loads((root / "data" / "benchmarks" / f"{rid}.json").read_text(encoding="utf-8"))


def test_a_covered_record_loses_the_tables_fp16_and_gains_a_gap_naming_the_config(kb_root):
    res = derive.run(inferkb.open(kb_root, cache=False), W.NAME, write=True, today=TODAY)
    assert res.written and res.proof.ok
    assert res.proof.to_dict()["ok"] is True and "0 changed" in res.proof.to_text()
    assert {c.record for c in res.changes} == {"benchmarks/m-covered", "benchmarks/m-covered-99-9"}
    rec = _rec(kb_root, "m-covered")
    assert rec["format_id"] is None
    assert rec["submission"]["weight_data_types"] == "fp16"  # the table's value stays raw
    gap = rec["condition_gaps"]["format_id"]
    assert gap["reason"].startswith("the results table says weight_data_types 'fp16', but the harness config ")
    assert f"closed/NVIDIA/configs/llama2-70b/Offline/__init__.py@{SHA}" in gap["reason"]
    assert "FP8 does not say E4M3, E5M2 or block-scaled" in gap["reason"]
    assert rec["condition_gaps"]["batch_size"] == ROWS[0]["condition_gaps"]["batch_size"]
    assert [(e["field"], e["tag"], e["numbers_changed"]) for e in rec["provenance"]] == [
        ("format_id", "derive:mlperf-weight-format", False),
        ("condition_gaps", "derive:mlperf-weight-format", False),
    ]
    assert "use_fp8 = True" in rec["provenance"][0]["basis"] and rec["provenance"][0]["evidence"]["quote"] == "H200-SXM-141GBx8_TRT"
    assert rec["value"] == ROWS[0]["value"]


@pytest.mark.parametrize("rid", ["m-other-platform", "m-other-scenario", "m-table-says-fp8"])
def test_an_uncovered_record_is_left_byte_for_byte(kb_root, rid):
    path = kb_root / "data" / "benchmarks" / f"{rid}.json"
    before = path.read_bytes()
    res = derive.run(inferkb.open(kb_root, cache=False), W.NAME, write=True, today=TODAY)
    assert path.read_bytes() == before
    if rid != "m-table-says-fp8":  # still the table's fp16 and uncovered: reported
        assert any(f.code == "KB1002" and f.record == f"benchmarks/{rid}" for f in res.findings)


def test_a_second_run_changes_nothing(kb_root):
    derive.run(inferkb.open(kb_root, cache=False), W.NAME, write=True, today=TODAY)
    again = derive.run(inferkb.open(kb_root, cache=False), W.NAME, today=TODAY)
    assert again.changes == [] and again.files == []


def test_mfu_does_not_fall_back_to_the_contradicted_table_value(kb_root):
    derive.run(inferkb.open(kb_root, cache=False), W.NAME, write=True, today=TODAY)
    kb = inferkb.open(kb_root, cache=False)
    changed, kept = kb.records["benchmarks/m-covered"].data, kb.records["benchmarks/m-other-platform"].data
    assert stated_weight_bits(kb, kept)[0] == 16
    bits, basis = stated_weight_bits(kb, changed)
    assert bits is None and "contradicted by the harness config" in basis
    flops = [{"precision": "bf16", "tflops": 989.0, "dense": True}, {"precision": "fp8", "tflops": 1979.0, "dense": True}]
    assert mfu_peak(kb, changed, {"flops": flops})[0] == (1979.0, "fp8")
    assert mfu_peak(kb, kept, {"flops": flops})[0] == (989.0, "bf16")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (MAP.replace("Offline = ", "Offlne = ", 1), "entry[0].files.Offlne"),
        (MAP.replace('division = "closed"', 'division = "closd"'), "entry[0].division"),
        (MAP.replace('round = "v4.1"', 'round = "4.1"'), "entry[0].round"),
        (MAP.replace('model = "llama2-70b"', 'model = "llama2-70b-99"'), "entry[0].model"),
        (MAP.replace('platform = "H200-SXM-141GBx8_TRT"', 'platform = ""'), "entry[0].platform"),
        (MAP.replace(f'commit = "{SHA}"', 'commit = "a2f5d66"'), "entry[0].commit"),
        (MAP.replace('classes = { Offline = "H200_SXM_141GBx8" }', 'classes = { Server = "H200_SXM_141GBx8" }'), "entry[0].classes"),
        (MAP.replace('harness_says = "fp8"', 'harness_says = "fp16"'), "entry[0].harness_says"),
        (MAP + MAP, "entry[1].files.Offline"),
    ],
)
def test_a_broken_map_entry_is_an_input_error_naming_it(text, field):
    with pytest.raises(InputError) as exc:
        W.parse_map(text, path="m.toml")
    assert exc.value.field == field and exc.value.path == "m.toml"
    assert "m.toml" in str(exc.value) and field in str(exc.value)


def test_a_map_that_is_not_toml_is_an_input_error():
    with pytest.raises(InputError, match="not valid TOML") as exc:
        W.parse_map("[[entry]\n", path="m.toml")
    assert exc.value.path == "m.toml"


def test_the_cli_reports_a_broken_map_with_exit_2_and_writes_nothing(kb_root, monkeypatch, capsys):
    from inferkb.cli import main

    monkeypatch.setattr(W, "evidence_map", lambda: W.parse_map(MAP.replace("Offline = ", "Offlne = ", 1), path="bad-map.toml"))
    path = kb_root / "data" / "benchmarks" / "m-covered.json"
    before = path.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["derive", W.NAME, "--kb", str(kb_root), "--write"])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert "bad-map.toml" in err and "entry[0].files.Offlne" in err and "unknown scenario" in err
    assert "Traceback" not in err
    assert path.read_bytes() == before


# ---- the bundled map and KB -------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> inferkb.KB:
    return inferkb.open()


def test_every_bundled_entry_cites_the_pinned_v4_1_results_and_covers_records(bundled):
    entries = W.evidence_map()
    assert len(entries) == 12 + 45 + 13 + 3
    subs = [r.data.get("submission") or {} for r in bundled.by_type("benchmark")]
    # Juniper x16 and x32 (its llama2-70b builder) and Dell's MI300X vLLM run scripts cite code, not configs
    from_code = [e for e in entries if e.commit == F44]
    assert sorted((e.submitter, e.platform) for e in from_code) == [
        ("Dell", "XE9680_MI300X_192GBx8"),
        ("JuniperNetworks", "DGX-H100_H100-SXM-80GBx16_TRT"),
        ("JuniperNetworks", "DGX-H100_H100-SXM-80GBx32_TRT"),
    ]
    for e in from_code:
        assert all(f.startswith(f"{e.division}/{e.submitter}/code/llama2-70b") for f in e.files.values()), e.platform
        assert ("Only fp8 supported as of now" in e.decides) != ("--quantization fp8" in e.decides)
        assert sum(e.covers(s) for s in subs) == 4
    for e in entries:
        if e.commit == F44:
            continue
        assert e.repo == "mlcommons/inference_results_v4.1" and e.commit == SHA
        assert "use_fp8 = True" in e.decides and (e.table_says, e.harness_says) == ("fp16", "fp8")
        # each scenario file is the submitter's own copy of the harness, in the record's division
        assert all(f.startswith(f"{e.division}/{e.submitter}/configs/{e.model}/{s}/") for s, f in e.files.items()), e.platform
        covered = sum(e.covers(s) for s in subs)
        # NVIDIA's entries: -99 and -99.9 x Offline and Server; a partner's: what the submission has (mixtral has no -99.9)
        assert covered == 4 if e.submitter == "NVIDIA" else 1 <= covered <= 4, (e.platform, e.model, covered)


def test_bundled_h100_record_is_fp8_gap_and_b200_stays_fp16_listed_in_the_gotcha(bundled):
    h100 = bundled.records[H100].data
    assert h100["format_id"] is None and h100["submission"]["weight_data_types"] == "fp16"
    gap = h100["condition_gaps"]["format_id"]
    assert f"closed/NVIDIA/configs/llama2-70b/Offline/__init__.py@{SHA}" in gap["reason"]
    assert "class H100_SXM_80GB_TP2x4" in gap["reason"] and "so the weights are FP8, not FP16" in gap["reason"]
    assert W.table_contradicted(h100)
    # No B200 class in the v4.1 llama2-70b configs read: the table's value stays, and the gotcha names the record.
    b200 = bundled.records[B200].data
    assert b200["format_id"] == "fp16" and "format_id" not in b200["condition_gaps"]
    assert B200.split("/")[1] in bundled.records[GOTCHA].data["affects"]
    assert H100.split("/")[1] not in bundled.records[GOTCHA].data["affects"]


def test_the_gotcha_lists_exactly_the_tensorrt_records_still_fp16_on_fp8_hardware(bundled):
    still = {
        r.id
        for r in bundled.by_type("benchmark")
        if r.id.startswith("mlperf-v4-1-")
        and r.data.get("format_id") == "fp16"
        and r.data.get("engine_id") == "tensorrt"
        and r.data.get("accelerator_ids") != ["nvidia-jetson-agx-orin-64gb"]
    }
    affects = set(bundled.records[GOTCHA].data["affects"]) - {"mlperf-inference-v4-1-summary-results"}
    assert affects == still and len(still) == 43


def test_no_changed_bundled_record_is_measured_against_the_fp16_peak(bundled):
    changed = [r for r in bundled.by_type("benchmark") if W.table_contradicted(r.data)]
    assert len(changed) == 48 + 153 + 32 + 12
    for r in changed:
        acc = bundled.resolve(r.data["accelerator_ids"][0], "accelerator")
        peak, basis = mfu_peak(bundled, r.data, acc.data)
        assert stated_weight_bits(bundled, r.data)[0] is None
        # no MFU at all where the accelerator record has no FLOPS table (GH200 144GB), never the 16-bit peak
        assert peak is None or peak[1] not in ("bf16", "fp16"), (r.id, peak)
        # GH200: its record marks the fp8 peak unrecorded (spec_gaps flops.fp8), so no MFU against bf16 989 at all
        assert basis.startswith("fastest datapath") or (peak is None and "incomplete" in basis), (r.id, basis)


def test_the_derivation_has_nothing_left_to_do_on_the_bundled_kb(bundled):
    res = derive.run(bundled, W.NAME)
    assert res.changes == [] and res.proof.ok


# ---- partner submissions: their own copy of the harness ---------------------------------------
PARTNER_CHANGED = {
    "Supermicro": 44,
    "Dell": 30,
    "Lenovo": 24,
    "Fujitsu": 18,
    "ASUSTeK": 16,
    "HPE": 16,
    "GigaComputing": 10,
    "Cisco": 10,
    "Quanta_Cloud_Technology": 10,
    "Sustainable_Metal_Cloud": 8,
    "Google": 3,
    "JuniperNetworks": 8,
}


def _by_submitter(records) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        who = r.data["submission"]["submitter"]
        out[who] = out.get(who, 0) + 1
    return out


def test_partner_records_whose_own_config_sets_use_fp8_are_fp8_gaps(bundled):
    changed = [r for r in bundled.by_type("benchmark") if W.table_contradicted(r.data)]
    assert _by_submitter(changed) == {"NVIDIA": 48, **PARTNER_CHANGED}
    for r in changed:
        sub = r.data["submission"]
        assert r.data["format_id"] is None and sub["weight_data_types"] == "fp16"
        # the submitter's own config, or (JuniperNetworks, Dell's MI300X vLLM) its own builder or run script
        reason = r.data["condition_gaps"]["format_id"]["reason"]
        assert any(f"{sub['division']}/{sub['submitter']}/{d}/" in reason for d in ("configs", "code")), r.id


def test_a_high_accuracy_partner_record_names_the_high_accuracy_class(bundled):
    rid = "benchmarks/mlperf-v4-1-closed-supermicro-sys-821ge-tnhr-h100-sxm-80gbx8-trt-llama2-70b-99-9-server"
    reason = bundled.records[rid].data["condition_gaps"]["format_id"]["reason"]
    assert f"closed/Supermicro/configs/llama2-70b/Server/custom.py@{SHA}" in reason
    assert "-99.9: SYS_821GE_TNHR_H100_SXM_80GBX8_HighAccuracy" in reason
    assert "H100_SXM_80GB_TP2x1, which sets use_fp8 = True" in reason


def test_a_partner_scenario_without_a_stored_config_keeps_the_table_value(bundled):
    # HPE Cray XD670 mixtral-8x7b: Offline/custom.py sets use_fp8 = True; the stored copy has no Server/custom.py.
    stem = "benchmarks/mlperf-v4-1-closed-hpe-hpe-cray-xd670-h100-sxm-80gbx8-trt-mixtral-8x7b-"
    offline, server = bundled.records[stem + "offline"].data, bundled.records[stem + "server"].data
    assert offline["format_id"] is None and W.table_contradicted(offline)
    assert server["format_id"] == "fp16" and "format_id" not in server["condition_gaps"]
    assert (stem + "server").split("/")[1] in bundled.records[GOTCHA].data["affects"]


def test_the_gotcha_names_what_stays_uncovered_per_submitter(bundled):
    affects = [a for a in bundled.records[GOTCHA].data["affects"] if a.startswith("mlperf-v4-1-")]
    assert _by_submitter(bundled.records[f"benchmarks/{a}"] for a in affects) == {
        "NVIDIA": 12,
        "HPE": 10,
        "ASUSTeK": 8,
        "Dell": 6,
        "Oracle": 4,
        "Google": 3,
    }


def test_a_partner_config_read_in_an_init_file_names_that_file_and_class(bundled):
    # Cisco's gptj classes live in its own copy of __init__.py, which sets use_fp8 = True on the class itself.
    rec = bundled.records["benchmarks/mlperf-v4-1-closed-cisco-c240m7-l40sx2-trt-gptj-99-server"].data
    reason = rec["condition_gaps"]["format_id"]["reason"]
    assert rec["format_id"] is None and W.table_contradicted(rec)
    assert f"closed/Cisco/configs/gptj/Server/__init__.py@{SHA} runs this system as class C240M7_L40Sx2 " in reason


def test_only_the_scenario_whose_config_is_stored_is_covered(bundled):
    # Google: only the llama2-70b and mixtral-8x7b Server configs are stored; the Offline rows keep the table's fp16.
    stem = "benchmarks/mlperf-v4-1-closed-google-dgx-h100-h100-sxm-80gbx8-trt-"
    for model in ("llama2-70b-99", "llama2-70b-99-9", "mixtral-8x7b"):
        server, offline = bundled.records[f"{stem}{model}-server"].data, bundled.records[f"{stem}{model}-offline"].data
        assert server["format_id"] is None and W.table_contradicted(server), model
        assert offline["format_id"] == "fp16" and "format_id" not in offline["condition_gaps"], model
        assert f"{stem}{model}-offline".split("/")[1] in bundled.records[GOTCHA].data["affects"]


def test_an_open_division_entry_cites_the_open_division_config(bundled):
    rid = "benchmarks/mlperf-v4-1-open-hpe-hpe-proliant-dl380a-h100-nvl-94gbx4-trt-mixtral-8x7b-"
    server, offline = bundled.records[rid + "server"].data, bundled.records[rid + "offline"].data
    assert f"open/HPE/configs/mixtral-8x7b/Server/custom.py@{SHA}" in server["condition_gaps"]["format_id"]["reason"]
    assert offline["format_id"] == "fp16"


def test_a_multi_node_system_with_no_class_of_its_own_is_covered_by_its_builder_not_a_class(bundled):
    # JuniperNetworks' configs register classes for at most 8 GPUs; its entries cite its llama2-70b builder instead.
    juniper = [e for e in W.evidence_map() if e.submitter == "JuniperNetworks"]
    assert {e.platform for e in juniper} == {"DGX-H100_H100-SXM-80GBx16_TRT", "DGX-H100_H100-SXM-80GBx32_TRT"}
    assert all(set(e.classes.values()) == {"LLAMA2EngineBuilderOp"} for e in juniper)
    rid = "benchmarks/mlperf-v4-1-closed-junipernetworks-dgx-h100-h100-sxm-80gbx16-trt-llama2-70b-99-offline"
    assert bundled.records[rid].data["format_id"] is None
    assert rid.split("/")[1] not in bundled.records[GOTCHA].data["affects"]


# ---- the MLPerf importer applies the same map ---------------------------------------------
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "mlperf"
V41_JSON = CORPUS / "inference_results_v4.1" / "summary_results.json"
V61_CSV = CORPUS / "inference_results_v6.1" / "summary.csv"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus not found at {path}")
    return path


@pytest.fixture(scope="module")
def imported_v41(bundled) -> dict[str, dict]:
    """The corpus v4.1 round table imported afresh (as scripts/import_mlperf.py reads it), by record id."""
    from inferkb.intake.base import IntakeOptions
    from inferkb.intake.mlperf_json import import_round_json

    options = IntakeOptions(
        source="mlperf-inference-v4-1-summary-results",
        extra={"mlperf_commit": SHA, "mlperf_repo_url": "https://github.com/mlcommons/inference_results_v4.1"},
    )
    res = import_round_json(bundled, _need(V41_JSON), options, rel="inference_results_v4.1/summary_results.json")
    return {r["id"]: r for r in res.records if r["type"] == "benchmark"}


def test_an_imported_row_the_map_covers_carries_the_null_format_and_the_gap(imported_v41, bundled):
    rid = "mlperf-v4-1-closed-cisco-c240m7-l40sx2-trt-gptj-99-server"
    rec, kept = imported_v41[rid], bundled.records[f"benchmarks/{rid}"].data
    assert rec["format_id"] is None and rec["submission"]["weight_data_types"] == "fp16" and W.table_contradicted(rec)
    assert rec["condition_gaps"]["format_id"] == kept["condition_gaps"]["format_id"]
    assert f"closed/Cisco/configs/gptj/Server/__init__.py@{SHA}" in rec["condition_gaps"]["format_id"]["reason"]
    from inferkb.derive.base import same_entry

    mine = [e for e in rec["provenance"] if e["tag"] == W.TAG]
    theirs = [e for e in kept["provenance"] if e["tag"] == W.TAG]
    assert [e["field"] for e in mine] == ["format_id", "condition_gaps"]
    assert len(mine) == len(theirs) and all(same_entry(a, b) for a, b in zip(mine, theirs, strict=True))


def test_an_imported_row_no_entry_covers_keeps_the_tables_fp16(imported_v41):
    rec = imported_v41["mlperf-v4-1-closed-google-dgx-h100-h100-sxm-80gbx8-trt-llama2-70b-99-offline"]
    assert rec["format_id"] == "fp16" and "format_id" not in rec["condition_gaps"]
    assert not [e for e in rec["provenance"] if e["tag"] == W.TAG]


def test_the_importer_alone_gives_every_bundled_fp8_gap(imported_v41, bundled):
    changed = {r.id: r.data for r in bundled.by_type("benchmark") if W.table_contradicted(r.data)}
    fresh = {rid for rid, rec in imported_v41.items() if W.table_contradicted(rec)}
    assert fresh == set(changed) and len(fresh) == 48 + 153 + 32 + 12
    for rid in fresh:
        assert imported_v41[rid]["format_id"] is None
        assert imported_v41[rid]["condition_gaps"]["format_id"] == changed[rid]["condition_gaps"]["format_id"], rid


def test_a_reimport_of_the_mlperf_corpus_writes_nothing_on_the_bundled_kb():
    import subprocess
    import sys

    _need(V41_JSON)
    script = Path(__file__).resolve().parents[1] / "scripts" / "import_mlperf.py"
    proc = subprocess.run([sys.executable, str(script), "--dry-run"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["to_write"] == 0 and report["paths_to_write"] == [] and report["unchanged"] == report["records"] > 1500


def test_the_importer_reports_a_broken_map_as_an_input_error_naming_it(monkeypatch, capsys):
    from inferkb.cli import main

    monkeypatch.setattr(W, "evidence_map", lambda: W.parse_map(MAP.replace(f'commit = "{SHA}"', 'commit = "a2f5d66"'), path="bad-map.toml"))
    with pytest.raises(SystemExit) as exc:
        main(["intake", "mlperf", str(_need(V61_CSV)), "--dry-run"])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert "bad-map.toml" in err and "entry[0].commit" in err and "40 lower-case hex digits" in err
    assert "Traceback" not in err


# ---- code, not configs: JuniperNetworks' builder and Dell's vLLM run scripts (at another stored commit) ----------


def test_juniper_16_and_32_gpu_records_cite_the_builder_that_refuses_non_fp8(bundled):
    for n in (16, 32):
        for target in ("99", "99-9"):
            for scenario in ("offline", "server"):
                rid = f"benchmarks/mlperf-v4-1-closed-junipernetworks-dgx-h100-h100-sxm-80gbx{n}-trt-llama2-70b-{target}-{scenario}"
                data = bundled.records[rid].data
                assert data["format_id"] is None and W.table_contradicted(data), rid
                reason = data["condition_gaps"]["format_id"]["reason"]
                assert f"closed/JuniperNetworks/code/llama2-70b/tensorrt/builder.py@{F44}" in reason
                assert "Only fp8 supported as of now" in reason


def test_dell_mi300x_vllm_records_cite_the_run_scripts_that_pass_quantization_fp8(bundled):
    for target in ("99", "99-9"):
        for scenario, script in (("offline", "test_VllmFp8_Offline_perf.sh"), ("server", "test_VllmFp8_AsyncServer_perf.sh")):
            rid = f"benchmarks/mlperf-v4-1-closed-dell-xe9680-mi300x-192gbx8-llama2-70b-{target}-{scenario}"
            data = bundled.records[rid].data
            assert data["engine_id"] == "vllm" and data["format_id"] is None and W.table_contradicted(data), rid
            reason = data["condition_gaps"]["format_id"]["reason"]
            assert f"closed/Dell/code/llama2-70b-99/test_VllmFp8/{script}@{F44}" in reason and "--quantization fp8" in reason
