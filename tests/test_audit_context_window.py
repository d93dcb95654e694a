"""Audit context-window (KB512): stated input + output lengths vs the model's max_position_embeddings."""

from __future__ import annotations

import inferkb
from analysis_helpers import bench, make_kb


def small_model(**fields):
    base = {"id": "m2k", "type": "model", "name": "M2K", "status": "draft", "confidence": 0.5, "updated": "2026-01-01"}
    return {**base, "sources": [], "architecture": "dense", "params_b": 7, "max_position_embeddings": 2048, **fields}


def conds(isl, osl, **more):
    return {"input_tokens": isl, "output_tokens": osl, "concurrency": 1, "warmup": 1, "engine_version": "0.5.0", **more}


def findings(tmp_path, records, models):
    report = inferkb.open(make_kb(tmp_path, records, models=models)).audit("context-window")
    return report, [(f.code, f.record) for f in report.findings]


def test_lengths_over_the_window_are_flagged_and_within_are_not(tmp_path):
    over = bench("over", 100.0, model_id="m2k", conditions=conds(2048, 2048))
    edge = bench("edge", 100.0, model_id="m2k", conditions=conds(1024, 1024))  # 2048 = the window: fits
    big = bench("big", 100.0, conditions=conds(2048, 2048))  # m70: 131,072 positions
    report, flagged = findings(tmp_path, [over, edge, big], [small_model()])
    assert flagged == [("KB512", "benchmarks/over")]
    f = report.findings[0]
    assert f.severity == "warning" and "4096 tokens exceed m2k's context window of 2048" in f.message
    fig = report.figures["context-window"]
    assert fig["checked"] == 3 and fig["exceeded"] == 1 and fig["by_model"] == {"m2k": 1}


def test_a_stated_longer_max_model_len_or_context_scaling_extends_the_window(tmp_path):
    stated = bench("stated", 1.0, model_id="m2k", conditions=conds(2048, 2048, max_model_len=4096))
    short = bench("short", 1.0, model_id="m2k", conditions=conds(2048, 2048, max_model_len=3000))
    scaled = bench("scaled", 1.0, model_id="m2k-rope", conditions=conds(2048, 2048))
    models = [small_model(), small_model(id="m2k-rope", name="M2K rope", context_scaling="rope linear x2")]
    report, flagged = findings(tmp_path, [stated, short, scaled], models)
    assert flagged == [("KB512", "benchmarks/short")]
    assert report.figures["context-window"]["extended"] == 2


def test_unusable_inputs_are_skipped_not_guessed(tmp_path):
    no_window = bench("nowin", 1.0, model_id="m2k", conditions=conds(4096, 4096))
    text_len = bench("text", 1.0, model_id="m2k", conditions=conds("2048", 2048))
    boolean = bench("bool", 1.0, model_id="m2k", conditions=conds(True, 4096))
    unknown = bench("unknown", 1.0, model_id="no-such-model", conditions=conds(9999, 9999))
    report, flagged = findings(tmp_path, [no_window, text_len, boolean, unknown], [small_model(max_position_embeddings=None)])
    assert flagged == []
    assert report.figures["context-window"]["unchecked_no_window"] == 1


def test_bundled_kb_flags_the_argonne_gh200_rows_that_read_above_the_roofline():
    # LLM-Inference-Bench's GH200 vLLM rows at 2048/2048 on 2,048-position models read 81,000-96,000 tok/s at
    # batch 1-64 (the CSV's latency is about 0.05 s for 4,096 tokens a request): runs that cannot have done the work.
    report = inferkb.open().audit("context-window")
    fig = report.figures["context-window"]
    assert fig["by_model"] == {"aquila-7b": 4, "gpt-j-6b": 4, "llama-7b": 4, "opt-6-7b": 4}
    ids = {f.record for f in report.findings}
    assert "benchmarks/lib-throughput-nvidia-gh200-x1-vllm-aquila-7b-in2048-out2048-bs1" in ids
    assert all("gh200" in i and "in2048-out2048" in i for i in ids)


def test_rule_is_registered_after_open():
    from inferkb import rules

    inferkb.open()
    assert rules.get("KB512").slug == "run-exceeds-context-window"


def test_compare_shows_the_flag_beside_ranked_and_not_comparable_rows(tmp_path):
    import json
    import subprocess
    import sys

    from inferkb.analysis.compare import compare

    over = bench("over", 900.0, model_id="m2k", conditions=conds(2048, 2048))
    ok = bench("ok", 100.0, model_id="m2k", conditions=conds(2048, 2048, max_model_len=4096))
    loose = bench("loose", 50.0, model_id="m2k", conditions={"input_tokens": 2048, "output_tokens": 4096})
    root = make_kb(tmp_path / "kb", [over, ok, loose], models=[small_model()])
    result = compare(inferkb.open(root), model="m2k", vary=("engine_version",))
    rows = {r.id: r for c in result.classes for r in c.rows}
    assert rows["over"].flags == ["KB512: 2048 + 2048 tokens exceed m2k's 2048-position window"]
    assert rows["ok"].flags == [] and rows["over"].rank == 1  # still ranked on its value, with the flag beside it
    (nc,) = result.not_comparable
    assert nc.id == "loose" and nc.flags and "2048 + 4096" in nc.flags[0]

    def cli(*args):
        cmd = [sys.executable, "-m", "inferkb", "compare", "--kb", str(root), "--model", "m2k", "--vary", "engine_version", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    text = cli().stdout
    assert "KB512: 2048 + 2048 tokens exceed m2k's 2048-position window" in text
    doc = json.loads(cli("--format", "json").stdout)
    flagged = [r["id"] for c in doc["classes"] for r in c["rows"] if r["flags"]]
    assert flagged == ["over"]
    csv_text = cli("--format", "csv").stdout
    assert "flags" in csv_text.splitlines()[0] and "KB512" in csv_text
