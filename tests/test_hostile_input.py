"""Hostile KB content and inputs: nothing crashes, nothing hangs, every unusable value is a coded finding (issue 12)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import inferkb
from conftest import CORPUS, rec, write_kb

COMMANDS = (
    ("validate",),
    ("check",),
    ("list", "engine"),
    ("search", "alpha"),
    ("where", "name ~ alpha"),
    ("show", "good"),
    ("stats",),
)


def run(*args, timeout=60, **kw):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, timeout=timeout, **kw)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return proc.returncode, out, err


def findings(kb_root: Path, code: str) -> list:
    return [f for f in inferkb.open(kb_root).validate().findings if f.code == code]


# ---- values that cannot be represented -------------------------------------------------------------


def test_an_integer_beyond_pythons_int_to_str_limit_is_kb015_naming_file_and_field(tmp_path):
    body = '{"id": "huge", "type": "engine", "name": "alpha", "sources": [], "extra": {"count": ' + "7" * 4301 + "}}"
    kb_root = write_kb(tmp_path, {"data/engines/huge.json": body, "data/engines/good.json": rec("engine", "good", name="alpha good")})
    [f] = findings(kb_root, "KB015")
    assert f.path == "data/engines/huge.json" and f.field == "extra.count" and "4301 digits" in f.message


def test_a_number_beyond_float_range_is_kb015(tmp_path):
    kb_root = write_kb(tmp_path, {"data/engines/inf.json": '{"id": "inf", "type": "engine", "name": "x", "confidence": 1e400}'})
    [f] = findings(kb_root, "KB015")
    assert f.field == "confidence"


def test_a_lone_surrogate_is_kb016_naming_file_and_field(tmp_path):
    kb_root = write_kb(tmp_path, {"data/engines/sur.json": '{"id": "sur", "type": "engine", "name": "alpha \\ud800", "sources": []}'})
    [f] = findings(kb_root, "KB016")
    assert f.path == "data/engines/sur.json" and f.field == "name"


def test_a_valid_surrogate_pair_is_an_ordinary_character(tmp_path):
    kb_root = write_kb(tmp_path, {"data/engines/emoji.json": '{"id": "emoji", "type": "engine", "name": "\\ud83d\\ude00", "sources": []}'})
    assert inferkb.open(kb_root).get("emoji").data["name"] == "\U0001f600"


@pytest.fixture()
def hostile_kb(tmp_path) -> Path:
    """One KB holding every kind of hostile record text next to one good record."""
    good = rec("engine", "good", name="alpha good", notes="[/INST] [bold]not markup[/bold] \x1b[2J\x1b]0;pwned\x07 \x9b31m")
    files = {
        "data/engines/good.json": good,
        "data/engines/huge.json": '{"id": "huge", "type": "engine", "name": "alpha", "n": ' + "9" * 5000 + "}",
        "data/engines/sur.json": '{"id": "sur", "type": "engine", "name": "alpha \\udcff"}',
        "data/engines/markup.json": rec("engine", "markup", name="alpha [/x] [/INST] [bold red]"),
        "data/engines/ctrl.json": rec("engine", "ctrl", name="alpha \x1b[31mred\x1b[0m \x07"),
        "data/engines/[bold].json": rec("engine", "[bold]", name="alpha bracket file"),
    }
    root = write_kb(tmp_path / "kb", files)
    (root / "data" / "engines" / os.fsdecode(b"alpha-\xff.json")).write_text(json.dumps(rec("engine", "x", name="alpha bytes")))
    return root


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_every_command_survives_hostile_record_text(hostile_kb, args):
    code, out, err = run(*args, "--kb", hostile_kb)
    assert code in (0, 1), err
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, "a terminal control character was printed raw"


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_every_command_prints_valid_json_on_hostile_record_text(hostile_kb, args):
    code, out, err = run(*args, "--kb", hostile_kb, "--format", "json")
    assert code in (0, 1), err
    json.loads(out)


def test_where_with_a_markup_like_value_prints_it_literally(hostile_kb):
    code, out, err = run("where", "name = [/x]", "--kb", hostile_kb)  # no record has that exact name
    assert code == 0, err
    code, out, err = run("where", "name ~ [/x]", "--kb", hostile_kb)
    assert code == 0, err
    assert "alpha [/x] [/INST] [bold red]" in out


def test_list_shows_markup_like_names_as_written(hostile_kb):
    code, out, _ = run("list", "engine", "--kb", hostile_kb)
    assert code == 0 and "[/INST]" in out and "[bold red]" in out


def test_control_characters_are_shown_as_visible_escapes(hostile_kb):
    code, out, _ = run("show", "ctrl", "--kb", hostile_kb)
    assert code == 0 and "\\x1b[31mred" in out and "\x1b" not in out
    code, out, _ = run("list", "engine", "--kb", hostile_kb)
    assert code == 0 and "\\x1b[31mred" in out and "\x1b" not in out


def test_c1_controls_are_escaped_even_inside_json_text_output(hostile_kb):
    code, out, _ = run("show", "good", "--kb", hostile_kb)  # json.dumps keeps U+009B (CSI) raw; the printer does not
    assert code == 0 and "\x9b" not in out and "\\x9b31m" in out


# ---- FIFOs and other non-regular files never hang a command ----------------------------------------


@pytest.fixture()
def fifo_kb(tmp_path) -> Path:
    root = write_kb(tmp_path / "kb", {"data/engines/good.json": rec("engine", "good", name="alpha")})
    os.mkfifo(root / "data" / "engines" / "pipe.json")
    return root


def test_a_fifo_named_like_a_record_is_kb014_and_not_read(fifo_kb):
    code, out, err = run("validate", "--kb", fifo_kb, "--format", "json")  # a process, so a regression hangs only it
    assert code == 1, err
    assert [f["path"] for f in json.loads(out)["findings"] if f["code"] == "KB014"] == ["data/engines/pipe.json"]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_no_command_hangs_on_a_fifo_under_data(fifo_kb, args):
    code, _, err = run(*args, "--kb", fifo_kb, timeout=60)
    assert code in (0, 1), err


def test_a_fifo_as_kb_toml_is_an_error_not_a_hang(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/engines/good.json": rec("engine", "good")})
    os.mkfifo(root / "kb.toml")
    code, _, err = run("validate", "--kb", root)
    assert code == 2 and "kb.toml" in err


def test_a_fifo_as_a_schema_is_kb111_not_a_hang(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/engines/good.json": rec("engine", "good")})
    (root / "schemas" / "engine.schema.json").unlink()
    os.mkfifo(root / "schemas" / "engine.schema.json")
    code, out, err = run("validate", "--kb", root)
    assert code == 1, err
    assert "KB111" in out


def test_a_fifo_as_an_intake_input_is_exit_2(tmp_path):
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    code, _, err = run("intake", "vllm-serve", fifo, "--dry-run")
    assert code == 2 and "not a regular file" in err


# ---- YAML alias bombs and other hostile YAML ---------------------------------------------------------

BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    + ['version: "0.2"', "run: *i", "results: *i", ""]
)


def test_a_yaml_alias_bomb_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    assert len(BOMB) < 1700

    def cap_memory():  # 1 GiB of address space: the unbounded expansion needs far more
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "intake", "llmd-report", str(path), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap_memory,
    )
    assert proc.returncode == 2, proc.stderr
    assert "alias bomb" in proc.stderr and str(path) in proc.stderr


def test_a_recursive_yaml_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text('version: "0.2"\nrun: {}\nresults: &r\n  request_performance: *r\n')
    code, _, err = run("intake", "llmd-report", path, "--dry-run")
    assert code == 2 and "refers to a node that contains it" in err


def test_yaml_timestamps_and_binary_stay_text_in_the_record():
    from inferkb.intake import IntakeOptions, load_all
    from inferkb.jsonio import dumps_record

    src = CORPUS / "harness" / "llm-d" / "br_v0_2_1_example.yaml"
    if not src.is_file():
        pytest.skip(f"shared corpus not found at {src}")
    text = src.read_text().replace(
        "    native:\n      args:\n",
        "    native:\n      args:\n        --started: 2025-11-05T18:01:00Z\n        --blob: !!binary aGk=\n",
        1,
    )
    assert "--started" in text
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "br.yaml"
        report.write_text(text)
        result = load_all()["llmd-report"].parse([report], IntakeOptions(), inferkb.open())
    [bench] = [r for r in result.records if r["type"] == "benchmark"]
    stored = json.loads(dumps_record(bench))  # a datetime or bytes value would not serialise
    assert "2025-11-05T18:01:00Z" in json.dumps(stored) and "aGk=" in json.dumps(stored)


# ---- linear parsing of a large vLLM console log (timed in benchmarks/bench_hostile.py, not here) -------


def test_a_namespace_line_keeps_quoted_values_with_commas(tmp_path):
    from inferkb.intake.vllm_serve import _namespace_pairs

    pairs = dict(_namespace_pairs("backend='vllm', model='a,b', num_prompts=200, tokenizer=None, x=\"q\", sampling=P(top_k=5)"))
    assert pairs == {
        "backend": "'vllm'",
        "model": "'a,b'",
        "num_prompts": "200",
        "tokenizer": "None",
        "x": '"q"',
        "sampling": "P",
        "top_k": "5",
    }


def test_a_console_log_with_a_huge_garbage_line_still_parses(tmp_path):
    src = CORPUS / "harness" / "vllm" / "serve_console_benchmark_serving_qwen25-7b_dec2024.log"
    if not src.is_file():
        pytest.skip(f"shared corpus not found at {src}")
    text = "Namespace(" + "b" * 50_000 + ")\n" + "A" + " " * 50_000 + "\n" + src.read_text()
    path = tmp_path / "console.log"
    path.write_text(text)
    code, out, err = run("intake", "vllm-serve", path, "--dry-run", "--format", "json", timeout=300)
    assert code == 0, err
    assert json.loads(out)["records"], "the real result block after the garbage was not found"
