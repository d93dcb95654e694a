"""The analysis and export commands as a user runs them: output formats, exit codes, clear errors, nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys

import inferkb
from analysis_helpers import bench, make_kb

AMD = "mlperf-v6-1-closed-amd-8xmi355x-2xepyc-9575f-llama2-70b-99-9-offline"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_compare_json_is_one_document_with_classes():
    proc = run(
        "compare",
        "--model",
        "llama-2-70b",
        "--scenario",
        "offline",
        "--per-accelerator",
        "--vary",
        "hardware,accelerator_count,format,engine,engine_version",
        "--format",
        "json",
    )
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["classes"] and doc["classes"][0]["rows"][0]["rank"] == 1 and "key" in doc["classes"][0]


def test_compare_csv_and_markdown(tmp_path):
    root = make_kb(tmp_path, [bench("a", 1.0, name="=cmd"), bench("b", 2.0)])
    csv_out = run("compare", "--model", "m70", "--kb", root, "--format", "csv")
    assert csv_out.returncode == 0 and csv_out.stdout.splitlines()[0].startswith("class,rank,id,value")
    md = run("compare", "--model", "m70", "--kb", root, "--format", "markdown")
    assert md.returncode == 0 and md.stdout.splitlines()[1].startswith("|---")


def test_compare_why_lists_the_splitting_conditions(tmp_path):
    root = make_kb(tmp_path, [bench("a", 1.0), bench("b", 2.0, engine_id="sglang", conditions={"input_tokens": 1024})])
    proc = run("compare", "--kb", root, "--why", "a", "b")
    assert proc.returncode == 0
    assert "differs  engine: 'vllm' vs 'sglang'" in proc.stdout and "missing  warmup: not stated by the second" in proc.stdout


def test_compare_why_refuses_an_id_that_is_not_a_benchmark(tmp_path):
    root = make_kb(tmp_path, [bench("a", 1.0)])
    for pair in (("acc", "a"), ("a", "m70")):
        proc = run("compare", "--kb", root, "--why", *pair)
        assert proc.returncode == 2 and proc.stdout == ""
    assert "acc is an accelerator, not a benchmark" in run("compare", "--kb", root, "--why", "acc", "a").stderr
    assert "m70 is a model, not a benchmark" in run("compare", "--kb", root, "--why", "a", "m70").stderr


def test_compare_text_names_the_version_spellings_a_class_merged(tmp_path):
    cond = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "warmup": 10}
    root = make_kb(
        tmp_path,
        [bench("a", 1.0, conditions=dict(cond, engine_version="v0.9.2")), bench("b", 2.0, conditions=dict(cond, engine_version="0.9.2"))],
    )
    proc = run("compare", "--model", "m70", "--kb", root)
    assert proc.returncode == 0, proc.stderr
    assert "1 comparability class(es)" in proc.stdout
    assert "merged spellings: engine_version: 0.9.2 = v0.9.2" in proc.stdout
    why = run("compare", "--why", "a", "b", "--kb", root)
    assert "comparable: every condition is stated and equal" in why.stdout


def test_compare_plot_writes_svg(tmp_path):
    out = tmp_path / "c.svg"
    proc = run("compare", "--model", "llama-2-70b", "--scenario", "offline", "--vary", "format,engine,engine_version", "--plot", out)
    assert proc.returncode == 0 and out.read_text().lstrip().startswith("<svg")


def test_bad_plot_suffix_exits_2():
    proc = run("compare", "--model", "llama-2-70b", "--plot", "x.gif")
    assert proc.returncode == 2 and "unknown chart format" in proc.stderr


def test_cost_needs_a_price_basis_and_exits_2():
    proc = run("cost", "--benchmark", AMD, "--price-per-hour", "2.5")
    assert proc.returncode == 2 and "without a basis is refused" in proc.stderr


def test_cost_refuses_devices_per_instance_beside_a_per_device_price():
    """`--price-basis per-device --devices-per-instance 8` priced 32 devices at $3 each and dropped the 8 without a word:
    the two options contradict each other, which is a usage error (exit 2), not a guess."""
    proc = run("cost", "--benchmark", AMD, "--price-per-hour", "3", "--price-basis", "per-device", "--devices-per-instance", "8")
    assert proc.returncode == 2 and "--devices-per-instance" in proc.stderr and proc.stdout == ""
    proc = run("cost", "--benchmark", AMD, "--supply", "vultr-mi300x-2026-05", "--devices-per-instance", "8", "--allow-other-hardware")
    assert proc.returncode == 2 and "--devices-per-instance" in proc.stderr


def test_cost_with_supply_prints_formula_and_assumptions():
    proc = run(
        "cost",
        "--benchmark",
        "mlperf-v6-1-open-hpe-hpe-gb200-nvl72-gb200-186gb-aarch64x32-trt-deepseek-r1-offline",
        "--supply",
        "spheron-gb200-superchip-on-demand-2026-03",
    )
    assert proc.returncode == 0
    assert "units rented = ceil(32 devices / 2 per module) = 16" in proc.stdout and "assumes: utilisation 1" in proc.stdout


def test_fit_and_roofline_json():
    fit = json.loads(
        run(
            "fit",
            "--model",
            "deepseek-r1",
            "--accelerator",
            "nvidia-b200",
            "--count",
            "8",
            "--weights",
            "fp8-block-scaled",
            "--context",
            "32768",
            "--format",
            "json",
        ).stdout
    )
    assert fit["kv_bytes_per_token"] == 70272 and fit["fits"] is True
    roof = json.loads(
        run(
            "roofline",
            "--model",
            "llama-2-70b",
            "--accelerator",
            "nvidia-h100-sxm",
            "--count",
            "8",
            "--weights",
            "fp8-e4m3",
            "--format",
            "json",
        ).stdout
    )
    assert round(roof["decode_per_request_tok_s"], 1) == 382.9


def test_fit_unknown_model_suggests_and_zero_count_exits_2():
    proc = run("fit", "--model", "llama-3-3-70", "--accelerator", "nvidia-h100-sxm", "--weights", "bf16")
    assert proc.returncode == 2 and "did you mean: llama-3-3-70b" in proc.stderr
    proc = run("fit", "--model", "llama-3-3-70b", "--accelerator", "nvidia-h100-sxm", "--weights", "bf16", "--count", "0")
    assert proc.returncode == 2 and "count must be a positive integer" in proc.stderr


def test_sql_json_and_refused_write():
    models = sum(1 for _ in inferkb.open().by_type("model"))
    proc = run("sql", "SELECT count(*) AS n FROM models", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["rows"] == [[models]]
    proc = run("sql", "DELETE FROM models")
    assert proc.returncode == 2 and "query failed" in proc.stderr


def test_export_sqlite_then_sql_on_the_file(tmp_path):
    out = tmp_path / "kb.duckdb"
    assert run("export", "--to", "duckdb", "--out", out, "--findings", "none").returncode == 0
    proc = run("sql", "SELECT count(*) FROM benchmarks", "--db", out, "--format", "csv")
    import inferkb

    assert proc.returncode == 0 and proc.stdout.splitlines()[1] == str(len(list(inferkb.open().by_type("benchmark"))))
    again = run("export", "--to", "duckdb", "--out", out)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr


def test_plot_formats_by_suffix(tmp_path):
    import inferkb
    from inferkb.analysis import plot
    from inferkb.analysis.compare import compare

    res = compare(inferkb.open(), model="llama-2-70b", scenario="offline", vary=["format", "engine", "engine_version"])
    spec = json.loads(plot.write(plot.compare_spec(res), tmp_path / "c.json").read_text())
    assert spec["$schema"].endswith("vega-lite/v5.json") and spec["data"]["values"]
    assert plot.write(plot.compare_spec(res), tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<html" in plot.write(plot.compare_spec(res), tmp_path / "c.html").read_text()[:500].lower()


def test_pareto_and_history_modes_print_json(tmp_path):
    def sweep(rid, conc, total, per_user):
        cond = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": conc, "warmup": 10, "engine_version": "0.11.0"}
        return bench(rid, total, conditions=cond, metrics={"tok_s_per_user": {"value": per_user, "unit": "tok/s"}})

    root = make_kb(tmp_path, [sweep("c4", 4, 4000.0, 100.0), sweep("c16", 16, 12000.0, 60.0), sweep("d", 32, 8000.0, 50.0)])
    doc = json.loads(run("compare", "--kb", root, "--model", "m70", "--pareto", "tok_s_per_user", "--format", "json").stdout)
    assert doc["classes"][0]["frontier"] == ["c4", "c16"]
    hist = json.loads(run("compare", "--kb", root, "--history", "--format", "json").stdout)
    assert hist["lines"] == [] and hist["without_series"] == 3
    bad = run("compare", "--kb", root, "--pareto", "no_such_metric")
    assert bad.returncode == 2 and "unknown metric" in bad.stderr


def test_compare_header_names_the_filters_in_words_not_a_python_dict():
    proc = run("compare", "--model", "llama-2-70b", "--scenario", "offline")
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[0]
    assert "selected by model = llama-2-70b, scenario = offline;" in head, head
    assert "{" not in head


def test_sql_syntax_error_is_one_readable_line():
    proc = run("sql", "SELEC x")
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "\\n" not in line and 'syntax error at or near "SELEC"' in line and "LINE 1: SELEC x" in line


def test_fit_warns_about_inputs_an_engine_refuses_and_exits_0():
    base = ("fit", "--model", "gpt-oss-120b", "--accelerator", "nvidia-h100-sxm", "--weights", "mxfp4")
    proc = run(*base, "--context", "10000000")
    assert proc.returncode == 0
    assert "warning: context 10,000,000 exceeds gpt-oss-120b's maximum of 131,072 tokens" in proc.stdout
    proc = run(*base, "--count", "3", "--format", "json")
    assert proc.returncode == 0
    assert len(json.loads(proc.stdout)["warnings"]) == 2
