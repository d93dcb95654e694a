"""Results tables: --fields, --sort, --limit, --first-per, csv/jsonl/markdown, plain rows into a pipe, whole ids (issue 11).

Expected values are read from the bundled KB's files with json.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from functools import cache

import pytest

from conftest import BUNDLED
from inferkb.cli import output


@cache
def benchmarks() -> dict[str, dict]:
    return {f"benchmarks/{p.stem}": json.loads(p.read_text()) for p in (BUNDLED / "data" / "benchmarks").glob("*.json")}


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


CLOSED_OFFLINE_LLAMA = ("model_id = llama-2-70b", "scenario = offline", "submission.division = closed", "metric = output_tok_s")


def test_best_llama2_70b_offline_result_per_accelerator_is_one_command():
    proc = cli(
        "where",
        *CLOSED_OFFLINE_LLAMA,
        "--fields",
        "accelerator_ids,per_accelerator.value,key",
        "--sort",
        "per_accelerator.value:desc",
        "--first-per",
        "accelerator_ids",
        "--format",
        "json",
    )
    rows = json.loads(proc.stdout)
    best: dict[tuple, float] = {}
    for d in benchmarks().values():
        if (
            d.get("model_id") == "llama-2-70b"
            and d.get("scenario") == "offline"
            and (d.get("submission") or {}).get("division") == "closed"
            and d.get("metric") == "output_tok_s"
        ):
            per = (d.get("per_accelerator") or {}).get("value")
            if per is not None:
                ids = tuple(d.get("accelerator_ids") or [])
                best[ids] = max(best.get(ids, per), per)
    with_value = [r for r in rows if r["per_accelerator.value"] is not None]
    assert {tuple(r["accelerator_ids"]): r["per_accelerator.value"] for r in with_value} == best
    assert [r["per_accelerator.value"] for r in with_value] == sorted(best.values(), reverse=True)
    assert rows[: len(with_value)] == with_value  # rows without a per-accelerator figure sort last


def test_csv_has_the_asked_columns_sorted_and_limited():
    proc = cli("where", *CLOSED_OFFLINE_LLAMA, "--fields", "key,value,unit", "--sort", "value:desc", "--limit", "3", "--format", "csv")
    table = list(csv.reader(io.StringIO(proc.stdout)))
    assert table[0] == ["key", "value", "unit"] and len(table) == 4
    values = sorted(
        (
            d["value"]
            for d in benchmarks().values()
            if d.get("model_id") == "llama-2-70b"
            and d.get("scenario") == "offline"
            and (d.get("submission") or {}).get("division") == "closed"
            and d.get("metric") == "output_tok_s"
        ),
        reverse=True,
    )[:3]
    assert [float(r[1]) for r in table[1:]] == values and {r[2] for r in table[1:]} == {"tok/s"}


def test_jsonl_and_markdown():
    lines = cli("list", "model", "--fields", "id,params_b", "--format", "jsonl").stdout.splitlines()
    ids = sorted(p.stem for p in (BUNDLED / "data" / "models").glob("*.json"))
    assert [json.loads(x)["id"] for x in lines] == ids
    md = cli("list", "model", "--fields", "id,name", "--format", "markdown").stdout.splitlines()
    assert md[0] == "| id | name |" and md[1] == "|---|---|" and len(md) == 2 + len(ids)


def test_text_into_a_pipe_is_plain_rows_with_whole_ids():
    proc = cli("where", "name ~ mlperf", "--type", "benchmark", "--fields", "key,metric")
    lines = proc.stdout.splitlines()
    assert lines[0] == "key\tmetric"
    want = sorted(k for k, d in benchmarks().items() if "mlperf" in str(d.get("name", "")).lower())
    assert [line.split("\t")[0] for line in lines[1:]] == want
    assert "…" not in proc.stdout and "records where name ~ mlperf" in proc.stderr


def test_a_sort_across_units_says_so():
    proc = cli("where", "model_id = llama-2-70b", "--fields", "key,value,unit", "--sort", "value:desc", "--limit", "2")
    assert "do not rank against each other" in proc.stderr


def test_list_sorts_by_a_field_with_missing_values_last():
    rows = json.loads(
        cli(
            "list", "accelerator", "--fields", "id,memory_bandwidth_gbps", "--sort", "memory_bandwidth_gbps:desc", "--format", "json"
        ).stdout
    )
    accs = [json.loads(p.read_text()) for p in (BUNDLED / "data" / "accelerators").glob("*.json")]
    known = sorted((a["memory_bandwidth_gbps"] for a in accs if a.get("memory_bandwidth_gbps") is not None), reverse=True)
    assert [r["memory_bandwidth_gbps"] for r in rows[: len(known)]] == known
    assert all(r["memory_bandwidth_gbps"] is None for r in rows[len(known) :])


def test_a_misspelt_field_is_an_error():
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "list", "model", "--fields", "id,parms_b"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2 and "no record has this field" in proc.stderr


@pytest.mark.parametrize("width", [200, 60])
def test_terminal_table_never_cuts_an_id(monkeypatch, capsys, width):
    key = "benchmarks/mlperf-v4-1-closed-amd-1xmi300x-2xepyc-9374f-llama2-70b-99-9-offline"
    monkeypatch.setattr(output, "is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", str(width))
    output.emit_rows([{"key": key, "name": "[bold]x[/bold] " + "word " * 30}], ["key", "name"], "text", title="1 record")
    out = capsys.readouterr().out
    # wide: a rich table (ids whole, record text literal); too narrow for the id: plain rows instead
    assert key in out and "[bold]x[/bold]" in out
    assert ("┃" in out) == (width == 200)


def test_limited_where_title_says_how_many_records_matched():
    """`--limit 3` over thousands of matches must not title the table '3 records where ...' (a reader takes it as the count)."""
    matched = sum(1 for d in benchmarks().values() if d.get("metric") == "total_tok_s")
    assert matched > 3
    proc = cli("where", "metric = total_tok_s", "--type", "benchmark", "--fields", "key", "--limit", "3")
    assert len(proc.stdout.splitlines()) == 1 + 3
    assert f"3 of {matched:,} records where metric = total_tok_s" in proc.stderr


def test_first_per_list_title_names_the_grouping_and_the_match_count():
    models = [json.loads(p.read_text()) for p in (BUNDLED / "data" / "models").glob("*.json")]
    vendors = {m.get("vendor") for m in models}
    assert len(vendors) < len(models)
    proc = cli("list", "model", "--fields", "id,vendor", "--first-per", "vendor")
    assert len(proc.stdout.splitlines()) == 1 + len(vendors)
    assert f"{len(vendors)} of {len(models):,} model records (first per vendor)" in proc.stderr


def test_unlimited_where_title_is_the_plain_count():
    matched = sum(1 for d in benchmarks().values() if d.get("metric") == "e2e_latency_ms")
    proc = cli("where", "metric = e2e_latency_ms", "--type", "benchmark", "--fields", "key")
    assert f"{matched} records where metric = e2e_latency_ms" in proc.stderr and " of " not in proc.stderr


def test_csv_and_piped_rows_carry_the_stored_float_not_a_rounded_one():
    stored = {k: d["value"] for k, d in benchmarks().items() if isinstance(d.get("value"), float)}
    long = {k: v for k, v in stored.items() if len(repr(v)) > 8}  # values that 6 significant digits would cut
    assert long, "the bundled KB has float values longer than 6 digits"
    for fmt in ("csv", "text"):
        out = cli("list", "benchmark", "--fields", "key,value", "--format", fmt).stdout
        sep = "," if fmt == "csv" else "\t"
        got = {line.split(sep)[0]: line.split(sep)[1] for line in out.splitlines()[1:]}
        assert all(float(got[k]) == v for k, v in long.items()), fmt
    assert output.cell(403.5809313421254) == "403.581" and output.cell(403.5809313421254, exact=True) == "403.5809313421254"


def test_a_reader_that_closes_the_pipe_early_is_not_an_error():
    # Each output is far larger than a pipe's buffer (64 KiB), so the command is still writing when the reader
    # closes and meets EPIPE; a small output (search's default 20 rows) fits the buffer, completes before the
    # close, and then rightly prints its count to stderr.
    for args in (("list", "benchmark"), ("search", "llama", "--limit", "5000"), ("where", "metric = output_tok_s")):
        proc = subprocess.Popen([sys.executable, "-m", "inferkb", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does
        err = proc.stderr.read()
        assert proc.wait(timeout=300) == 0 and err == b"", (args, err)
