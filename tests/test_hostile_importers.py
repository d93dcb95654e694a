"""Importers on hostile harness files (issue 12, QA re-run): a clear input error (exit 2 naming file and field)
or a finding, never an internal error (exit 3); a dry run refuses what the write refuses.

Fixtures under tests/data/intake/hostile/ are the QA reproducers (synthetic edits of harness outputs); the
deep-nesting, SQLite and p99/throughput cases are built here from the shared corpus (skipped without it).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS, REPO
from inferkb.errors import InputError
from inferkb.jsonio import parse_bytes

MAX_DEPTH = 200  # inferkb.jsonio.MAX_DEPTH, stated here so this file also runs against code without it
HOSTILE = REPO / "tests" / "data" / "intake" / "hostile"
HARNESS = CORPUS / "harness"
LOCALSCORE_DB = CORPUS / "community" / "localscore" / "db.sqlite"


def run(*args, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, timeout=timeout)
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    return proc.returncode, out, err


def corpus_file(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"corpus file {path} not found (shared corpus at {CORPUS}?)")
    return path


def assert_input_error(args, field: str, *words: str) -> None:
    """Text and JSON modes both exit 2 with one message naming the file and ``field``."""
    code, _, err = run(*args)
    assert code == 2, err
    assert f": {field}: " in err and str(args[2]) in err, err
    for word in words:
        assert word in err, err
    code, out, _ = run(*args, "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["exit_code"] == 2 and doc["error"] == "input" and doc["field"] == field, doc


# ---- D7-D9: a value of the wrong kind -------------------------------------------------------------------


def test_a_loadgen_value_of_5000_digits_is_an_input_error():
    # 'Min latency (ns) : ' followed by 5,000 nines: past Python's int <-> str limit and any float
    assert_input_error(("intake", "mlperf", HOSTILE / "mlperf_summary_hugeint.txt", "--dry-run"), "Min latency (ns)", "5000 characters")


def test_llmd_requests_as_a_string_is_an_input_error():
    # `requests: inf` is the YAML string 'inf' where an object of counts belongs
    assert_input_error(
        ("intake", "llmd-report", HOSTILE / "llmd_requests_str.yaml", "--dry-run"),
        "results.request_performance.aggregate.requests",
        "expected an object",
        "'inf'",
    )


def test_llmperf_text_where_a_number_belongs_is_an_input_error():
    assert_input_error(
        ("intake", "llmperf", HOSTILE / "llmperf_itl_min_str.json", "--dry-run"), "results_inter_token_latency_s_min", "'abc'"
    )


# ---- D10: nesting ------------------------------------------------------------------------------------------


def test_nesting_depth_counts_containers():
    from inferkb.jsonio import MAX_DEPTH as limit
    from inferkb.jsonio import nesting_depth

    assert limit == MAX_DEPTH
    assert [nesting_depth(v) for v in (1, [], {}, [[1]], {"a": [{"b": 2}]}, [1, [2, [3]], 4])] == [0, 1, 1, 2, 3, 3]
    assert nesting_depth(json.loads("[" * 500 + "]" * 500), limit=10) == 11  # stops once past the limit


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5000, 100_000])
def test_json_nested_past_the_limit_is_invalid_json_on_both_parse_paths(depth):
    raw = b'{"a": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"
    value, problem = parse_bytes(raw)
    assert value is None and problem.code == "invalid-json" and f"deeper than {MAX_DEPTH}" in problem.message


def test_json_at_the_limit_parses():
    raw = b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    value, problem = parse_bytes(raw)
    assert problem is None and json.dumps(value).count("[") == MAX_DEPTH - 1


def test_sglang_line_nested_100000_deep_is_an_input_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    code, _, err = run("intake", "sglang-serving", path, "--dry-run")
    assert code == 2 and str(path) in err and "line 1" in err and f"deeper than {MAX_DEPTH}" in err, err


def test_yaml_nested_past_the_limit_is_an_input_error(tmp_path):
    from inferkb.intake.yamlsafe import load_yaml

    with pytest.raises(InputError, match=f"deeper than {MAX_DEPTH}"):
        load_yaml("a: " + "[" * 300 + "]" * 300 + "\n", "deep.yaml")
    assert load_yaml("a: [[1]]\n", "ok.yaml") == {"a": [[1]]}


def test_the_loader_reports_a_deep_record_and_validate_runs(tmp_path):
    # 300 levels parse in Python but stop the schema validator (256): the loader must refuse first
    from conftest import rec, write_kb

    root = write_kb(tmp_path / "kb", {"data/engines/ok.json": rec("engine", "ok")})
    deep = json.dumps(rec("engine", "deep", notes=None)).replace('"notes": null', '"notes": ' + "[" * 300 + "]" * 300)
    assert deep.count("[") == 301  # with "sources": []
    (root / "data" / "engines" / "deep.json").write_text(deep)
    kb = inferkb.open(root)
    assert set(kb.ids_of_type("engine")) == {"ok"}
    assert [(f.code, f.path) for f in kb.load_findings] == [("KB001", "data/engines/deep.json")]
    kb.validate()


# ---- D11: SQLite cells of the wrong storage class ---------------------------------------------------------


def _localscore_with(tmp_path: Path, sql: str) -> Path:
    dest = tmp_path / "db.sqlite"
    shutil.copyfile(corpus_file(LOCALSCORE_DB), dest)
    con = sqlite3.connect(dest)
    con.execute(sql)
    con.commit()
    con.close()
    return dest


@pytest.mark.parametrize(
    ("sql", "field", "what"),
    [
        ("UPDATE benchmark_runs SET performance_score = X'FFFE' WHERE id = 1", "benchmark_runs.performance_score", "a BLOB of 2 bytes"),
        ("UPDATE test_results SET gen_tps = 'fast' WHERE id = 1", "test_results.gen_tps", "'fast'; expected a number"),
        ("UPDATE accelerators SET memory_gb = 9e999", "accelerators.memory_gb", "inf; expected a finite number"),
        ("UPDATE models SET name = X'00' WHERE id = (SELECT min(id) FROM models)", "models.name", "expected text"),
    ],
    ids=["blob-number", "text-number", "inf", "blob-text"],
)
def test_a_localscore_cell_of_the_wrong_kind_is_an_input_error_in_every_mode(tmp_path, sql, field, what):
    db = _localscore_with(tmp_path, sql)
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "src" / "inferkb" / "kb", kb)
    before = sorted(p.name for p in (kb / "data").rglob("*.json"))
    for mode in (["--dry-run"], ["--dry-run", "--format", "json"], [], ["--format", "json"]):
        code, out, err = run("intake", "localscore", db, "--kb", kb, *mode)
        assert code == 2, (mode, out[-500:], err)
        message = json.loads(out)["message"] if "json" in mode else err
        assert f"{db}: {field}: test_results.id " in message and what in message, (mode, message)
    assert sorted(p.name for p in (kb / "data").rglob("*.json")) == before


def test_a_number_in_a_localscore_text_column_becomes_text(tmp_path):
    from inferkb.intake.localscore import read_db

    # created_at has INTEGER affinity: an epoch there is stored as a number, and a record keeps it as its text
    db = _localscore_with(tmp_path, "UPDATE test_results SET created_at = 1700000000")
    rows = read_db(db)
    assert rows and {r["created_at"] for r in rows} == {"1700000000"}


# ---- D12: a dry run refuses what the write refuses --------------------------------------------------------


def test_a_dry_run_refuses_an_impossible_p99_like_the_write(tmp_path):
    seed = corpus_file(HARNESS / "vllm" / "serve_llama33-70b_tp8_qps-inf_v0.8-era.json")
    doc = json.loads(seed.read_text())
    assert doc["median_ttft_ms"] > 1.0
    doc["p99_ttft_ms"] = 1.0  # below the file's own median: no sample gives that
    path = tmp_path / seed.name
    path.write_text(json.dumps(doc))
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "src" / "inferkb" / "kb", kb)
    args = ("intake", "vllm-serve", path, "--kb", kb, "--hardware-raw", "NVIDIA H100 80GB HBM3", "--count", "8")
    before = sorted(p.name for p in (kb / "data" / "benchmarks").iterdir())
    results = {}
    for mode in (["--dry-run"], []):
        code, _, err = run(*args, *mode)
        results[bool(mode)] = (code, err.strip())
        assert code == 2 and "p99 = 1 is below p50 = 349.846" in err, err
        code, out, _ = run(*args, *mode, "--format", "json")
        doc = json.loads(out)
        assert code == 2 and doc["error"] == "record-invalid" and [f["code"] for f in doc["findings"]] == ["KB120"], doc
    assert results[True] == results[False]
    assert sorted(p.name for p in (kb / "data" / "benchmarks").iterdir()) == before


def test_a_record_refused_by_validation_names_the_input_file(tmp_path):
    """Found by benchmarks/hostile_campaign.py (mutate): the refusal named the record and field but not the file
    the record was built from, which matters when several files are imported at once."""
    seed = corpus_file(HARNESS / "vllm" / "serve_llama33-70b_tp8_qps-inf_v0.8-era.json")
    doc = json.loads(seed.read_text())
    doc["p99_ttft_ms"] = 1.0
    path = tmp_path / seed.name
    path.write_text(json.dumps(doc))
    kb = tmp_path / "kb"
    shutil.copytree(
        REPO / "src" / "inferkb" / "kb",
        kb,
        ignore=lambda d, names: [n for n in names if n.endswith(".json") and d.endswith("/data/benchmarks")],
    )
    args = ("intake", "vllm-serve", path, "--kb", kb, "--hardware-raw", "NVIDIA H100 80GB HBM3", "--count", "8")
    for mode in (["--dry-run"], []):
        code, _, err = run(*args, *mode)
        assert code == 2 and f"{path}: record benchmarks/" in err, err
        code, out, _ = run(*args, *mode, "--format", "json")
        assert code == 2 and str(path) in json.loads(out)["message"]


@pytest.fixture()
def small_kb(tmp_path):
    """A copy of the bundled KB without its benchmark records."""
    dest = tmp_path / "kb"
    shutil.copytree(
        REPO / "src" / "inferkb" / "kb",
        dest,
        ignore=lambda d, names: [n for n in names if n.endswith(".json") and d.endswith("/data/benchmarks")],
    )
    return inferkb.open(dest)


@pytest.mark.parametrize(
    "key, refused",
    [("completed", True), ("duration", True), ("total_input_tokens", False), ("random_input_len", False)],
)
def test_an_sglang_serving_integer_beyond_float_range_is_an_input_error_or_ignored(tmp_path, small_kb, key, refused):
    """Found by benchmarks/hostile_campaign.py (mutate): an int of 401 digits made float() or a division raise
    OverflowError, an internal error (exit 3)."""
    seed = corpus_file(HARNESS / "sglang" / "bench_serving_llama33-70b_h200_online_dec2024.jsonl")
    doc = json.loads(seed.read_text().splitlines()[0])
    doc[key] = 10**400
    path = tmp_path / seed.name
    path.write_text(json.dumps(doc) + "\n")
    from conftest import import_with

    if refused:
        with pytest.raises(InputError, match=rf"{key}.*beyond the range of a float") as info:
            import_with("sglang-serving", [path], small_kb, hardware_raw="NVIDIA H200", count=8)
        assert str(path) in str(info.value)
    else:
        assert import_with("sglang-serving", [path], small_kb, hardware_raw="NVIDIA H200", count=8).records


@pytest.mark.parametrize("key", ["batch_size", "input_len", "output_len"])
def test_an_sglang_one_batch_server_size_beyond_float_range_is_an_input_error(tmp_path, small_kb, key):
    """Found by benchmarks/hostile_campaign.py (mutate): the rate cross-check divided a 401-digit batch x length
    product by a latency (OverflowError, exit 3)."""
    seed = corpus_file(HARNESS / "sglang" / "bench_one_batch_server_result_old-keys.jsonl")
    doc = json.loads(seed.read_text().splitlines()[0])
    assert key in doc
    doc[key] = 10**400
    path = tmp_path / seed.name
    path.write_text(json.dumps(doc) + "\n")
    from conftest import import_with

    with pytest.raises(InputError, match=rf"line 1\.{key}.*beyond the range of a float"):
        import_with("sglang-one-batch-server", [path], small_kb, hardware_raw="NVIDIA H100 80GB HBM3", count=8)


def test_a_valid_dry_run_still_writes_nothing(tmp_path):
    seed = corpus_file(HARNESS / "trtllm-bench" / "throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt")
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "src" / "inferkb" / "kb", kb)
    before = sorted(p.name for p in (kb / "data").rglob("*.json"))
    code, out, err = run("intake", "trtllm-bench", seed, "--kb", kb, "--dry-run", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["written"] == [] and len(doc["records"]) == 2, err
    assert sorted(p.name for p in (kb / "data").rglob("*.json")) == before


# ---- B1: a zero token throughput beside a positive request rate -------------------------------------------


def test_a_negative_zero_token_throughput_with_112_requests_per_second_is_refused(tmp_path):
    seed = corpus_file(HARNESS / "trtllm-bench" / "throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt")
    text = seed.read_text()
    assert "Token Throughput (tokens/sec):\t14389.7989" in text and "Request Throughput (req/sec):\t112.4203" in text
    path = tmp_path / "negzero.txt"
    path.write_text(text.replace("Token Throughput (tokens/sec):\t14389.7989", "Token Throughput (tokens/sec):\t-0.0"))
    code, out, err = run("intake", "trtllm-bench", path, "--dry-run", "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["error"] == "record-invalid", doc
    assert [(f["code"], f["field"]) for f in doc["findings"]] == [("KB122", "metrics.output_tok_s.value")], doc["findings"]
    assert "output_tok_s = -0 tok/s while request_throughput_rps = 112.42 req/s" in doc["findings"][0]["message"]


def test_zero_token_rate_rule_by_hand():
    from inferkb.validate_stats import stat_findings

    metrics = {
        "output_tok_s": {"dimension": "rate", "unit": "tok/s", "measures": "throughput"},
        "decode_tok_s": {"dimension": "rate", "unit": "tok/s", "measures": "decode"},
        "request_throughput_rps": {"dimension": "rate", "unit": "req/s", "measures": "requests"},
    }

    def found(**blocks):
        data = {"metric": "output_tok_s", "metrics": {k: {"value": v} for k, v in blocks.items()}}
        return [(f.code, f.field) for f in stat_findings(data, metrics, record="r", path="p")]

    assert found(output_tok_s=0.0, request_throughput_rps=2.0) == [("KB122", "metrics.output_tok_s.value")]
    assert found(output_tok_s=0.0) == []  # no request rate: nothing says requests completed
    assert found(output_tok_s=0.0, request_throughput_rps=0.0) == []  # nothing completed: no tokens is possible
    assert found(output_tok_s=5.0, request_throughput_rps=0.0) == []  # tokens streamed, none completed in the window
    assert found(decode_tok_s=0.0, request_throughput_rps=2.0) == []  # not an aggregate throughput


def test_a_dry_run_lists_records_that_exist_with_different_content(tmp_path):
    seed = corpus_file(HARNESS / "trtllm-bench" / "throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt")
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "src" / "inferkb" / "kb", kb)
    code, out, err = run("intake", "trtllm-bench", seed, "--kb", kb, "--format", "json")
    assert code == 0, err
    path = Path(next(p for p in json.loads(out)["written_paths"] if "/benchmarks/" in p))
    doc = json.loads(path.read_text())
    doc["name"] += " (edited)"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    code, out, err = run("intake", "trtllm-bench", seed, "--kb", kb, "--dry-run", "--format", "json")
    assert code == 0 and json.loads(out)["exists_different"] == [str(path)], (out[-800:], err)
    code, _, err = run("intake", "trtllm-bench", seed, "--kb", kb)
    assert code == 2 and "exists with different content" in err, err
