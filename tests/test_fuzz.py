"""Fuzzing as property tests (issue 12): every importer and the loader, fed mutated real files, either work or
refuse with a typed error naming the file — never another exception, never a record that cannot be written.

Seeded and bounded: ``derandomize=True`` (the same examples on every run), no example database, and
25 examples per target so the whole file runs in well under a minute on two cores
(``INFERKB_FUZZ_EXAMPLES=500`` for a deeper local run). Seeds are
real harness outputs from ``../shared/corpus`` (cut to their first lines where a file is large) and the
repository's own fixtures; each mutation is a short list of edits: a hostile token inserted, bytes
deleted or duplicated, the file truncated, one byte flipped.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inferkb
from conftest import CORPUS, REPO, rec, write_kb
from inferkb.errors import KBError
from inferkb.intake import IntakeOptions, load_all
from inferkb.jsonio import dumps_record
from inferkb.store import Record

HARNESS = CORPUS / "harness"
COMMUNITY = CORPUS / "community"
FIXTURES = REPO / "tests" / "data" / "intake"

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("INFERKB_FUZZ_EXAMPLES", "25")),  # raise it for a deeper local run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

# Text that broke a command before (issue 12) or is a classic: long numbers, non-finite numbers, lone
# surrogates, rich markup, terminal escapes, YAML aliases and tags, CSV quotes, NUL, nesting.
HOSTILE = [
    b"9" * 4301,
    b"1e400",
    b"-1e400",
    b"NaN",
    b"-0.0",
    b"-1",
    b"0",
    b'"\\ud800"',
    b"\\udcff",
    b"[/INST]",
    b"[bold]x[/bold]",
    b"\x1b[2J\x1b]0;t\x07",
    b"\x00",
    b"\xff\xfe",
    b"&a [*a, *a]",
    b"*a",
    b"!!python/object:os.system",
    b"!!binary aGk=",
    b"2025-01-01T00:00:00Z",
    b'"",,"',
    b"\r\n",
    b"[" * 200,
    b"{" * 200,
    b"[" * 2000 + b"]" * 2000,  # valid JSON nested past every recursive reader (the QA sglang reproducer had 100,000)
    b'{"a":' * 300 + b"1" + b"}" * 300,
    b"9" * 5000,  # a LoadGen 'key : value' past Python's int <-> str limit
    b"inf",  # YAML text, not .inf: a string where an object or number belongs
    b'"abc"',
    b"-0.0\n",
    b"null",
    b"true",
    b'{"a": 1, "a": 2}',
    b"::stop-commands::x",
    b"%0A",
]


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    """``seed`` with up to four edits at drawn positions."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["insert", "replace", "delete", "duplicate", "truncate", "flip"]))
        at = draw(st.integers(0, max(len(data), 1))) if data else 0
        if kind in ("insert", "replace"):
            token = draw(st.sampled_from(HOSTILE) | st.binary(min_size=1, max_size=8))
            end = at + (draw(st.integers(0, 16)) if kind == "replace" else 0)
            data[at:end] = token
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 256))]
        elif kind == "truncate":
            del data[at:]
        elif data:
            i = min(at, len(data) - 1)
            data[i] ^= draw(st.integers(1, 255))
    return bytes(data)


@dataclass
class Target:
    """One importer with its seed files and the options a user would pass."""

    importer: str
    seeds: list[Path]
    options: dict = field(default_factory=dict)
    arms: bool = False
    head_lines: int | None = None  # cut large seeds to their first lines (the header stays)


TARGETS = [
    Target(
        "vllm-serve",
        [
            HARNESS / "vllm/serve_llama33-70b_tp8_qps-inf_v0.8-era.json",
            HARNESS / "vllm/serve_console_benchmark_serving_qwen25-7b_dec2024.log",
            FIXTURES / "serve_console_two_blocks.log",
        ],
        {"hardware_raw": "NVIDIA H100 80GB HBM3", "count": 8},
    ),
    Target(
        "vllm-latency", [HARNESS / "vllm/latency_llama8B_tp1_vllm-ascend-ci.json"], {"model": "m", "count": 1, "engine": "vllm"}, arms=True
    ),
    Target(
        "vllm-throughput",
        [HARNESS / "vllm/throughput_llama8B_tp1_vllm-ascend-ci.json", FIXTURES / "throughput_fork_keys.json"],
        {"model": "m", "count": 1},
    ),
    Target(
        "llama-bench",
        [
            HARNESS / "llama.cpp/json_b5606_rtx4090_cuda-rpc.json",
            FIXTURES / "llama_bench_small.csv",
            FIXTURES / "llama_bench_small.jsonl",
            FIXTURES / "llama_bench_2023.md",
        ],
    ),
    Target(
        "mlperf",
        [
            HARNESS / "mlperf/v4.1_NVIDIA_DGX-H100x8_mixtral-8x7b_Server_summary.txt",
            HARNESS / "mlperf/v6.1_NVIDIA_VR-NVL72_deepseek-r1_Interactive_result_summary.json",
            CORPUS / "mlperf/inference_results_v6.1/summary.csv",
        ],
        {"engine": "tensorrt-llm"},
        head_lines=12,
    ),
    Target("llmd-report", [HARNESS / "llm-d/br_v0_2_1_example.yaml", HARNESS / "llm-d/inference_perf.v0_2.yaml"]),
    Target("inferencex", [HARNESS / "inferencex/powerx.json", HARNESS / "inferencex/lookup.json", HARNESS / "inferencex/unavailable.json"]),
    Target("llm-inference-bench", [COMMUNITY / "argonne-LLM-Inference-Bench/gh-pages/docs/data/Power/All_results.csv"], head_lines=15),
    Target("llmperf", [COMMUNITY / "llmperf-leaderboard/raw_data/summary/groq_70b.json"]),
    Target("localscore", [COMMUNITY / "localscore/db.sqlite"]),
    Target(
        "inferencex-decode-slo",
        [
            COMMUNITY
            / "InferenceX/experimental/token_position_decode_slo/minimax-m2.5/results/minimax_m25_vllm_tep8_isl4096_osl128_conc64.json"
        ],
        {"hardware_raw": "Slurm partition h200", "count": 8},
    ),
    Target(
        "sglang-serving",
        [
            HARNESS / "sglang/bench_serving_llama33-70b_h200_online_dec2024.jsonl",
            HARNESS / "sglang/bench_serving_qwen25-3b_pd-disagg_c32_server-info_dec2025.jsonl",
        ],
        {"hardware_raw": "NVIDIA H200", "count": 8},
        head_lines=6,
    ),
    Target("sglang-one-batch", [HARNESS / "sglang/bench_one_batch_result_frgossen-fork.jsonl"]),
    Target(
        "sglang-one-batch-server",
        [
            HARNESS / "sglang/bench_one_batch_server_result_old-keys.jsonl",
            HARNESS / "sglang/bench_one_batch_server_result_acc-length-cache-hit.jsonl",
        ],
        {"hardware_raw": "NVIDIA H100 80GB HBM3", "count": 8},
    ),
    Target("guidellm", [HARNESS / "guidellm/benchmarks_qwen25-7b_throughput_v0.2-era.json"]),
    Target("aiperf", [HARNESS / "aiperf/profile_export_aiperf_v0.11.0_qwen3-4b_c16.json"]),
    Target(
        "trtllm-bench",
        [
            HARNESS / "trtllm-bench/throughput_log_v0.16.0_llama31-70b_tp8_isl128_osl128.txt",
            HARNESS / "trtllm-bench/throughput_log_v0.16.0_truncated_no-report.txt",
        ],
    ),
]


def test_every_registered_importer_is_fuzzed():
    assert {t.importer for t in TARGETS} == set(load_all())


@pytest.fixture(scope="module")
def bundled():
    return inferkb.open()


def _seed_bytes(target: Target) -> list[tuple[Path, bytes]]:
    out = []
    for path in target.seeds:
        if not path.is_file():
            continue
        raw = path.read_bytes()
        if target.head_lines and path.suffix in (".csv", ".txt", ".jsonl"):
            raw = b"".join(raw.splitlines(keepends=True)[: target.head_lines])
        out.append((path, raw))
    return out


def _check_record(kb, data: dict, where: str) -> None:
    """A record an importer built must serialise as the KB stores it, and validate without raising."""
    from inferkb.validate import validate_records

    dumps_record(data)  # finite numbers, JSON types, encodable text: else ValueError/TypeError/UnicodeEncodeError
    dumps_record(data).encode("utf-8")
    spec = kb.profile.types.get(data.get("type"))
    if spec is None or not isinstance(data.get("id"), str):
        return
    record = Record(f"{spec.dir}/{data['id']}", data["id"], spec.name, spec.dir, f"data/{spec.dir}/{data['id']}.json", data)
    with kb.index.staged([record]):
        validate_records(kb, [record])


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.importer)
def test_an_importer_never_crashes_on_a_mutated_real_file(target, bundled, tmp_path_factory):
    seeds = _seed_bytes(target)
    if not seeds:
        pytest.skip(f"no seed file of {target.importer} found (shared corpus at {CORPUS}?)")
    importer = load_all()[target.importer]
    folder = tmp_path_factory.mktemp(target.importer)

    @FUZZ
    @given(data=st.data())
    def check(data):
        path, seed = data.draw(st.sampled_from(seeds))
        raw = data.draw(mutated(seed))
        dest = folder / path.name  # keep the name: some formats read run conditions from it
        dest.write_bytes(raw)
        options = IntakeOptions(**target.options)
        if target.arms:
            options.arms = [("baseline", dest)]
        try:
            result = importer.parse([] if target.arms else [dest], options, bundled)
        except KBError as exc:
            assert str(exc), "an error without a message"
            return
        for record in result.records:
            _check_record(bundled, record, str(dest))
        for finding in result.findings:
            finding.to_dict()

    check()


# ---- the loader, validate and the text/JSON/GitHub reporters on hostile record files -------------------


def _record_seeds() -> list[bytes]:
    seeds = []
    for rel in (
        "data/benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.json",
        "data/accelerators/nvidia-h100-sxm.json",
        "data/engines/vllm.json",
    ):
        path = REPO / "src" / "inferkb" / "kb" / rel
        if path.is_file():
            seeds.append(path.read_bytes())
    return seeds


NAMES = st.sampled_from(
    ["ok.json", "Bad Name.json", "[bold].json", "x\x1b[2J.json", ".ok.json.inferkb-1-0a1b2c3d.tmp", "n.txt", "a,b:c.json"]
)


@FUZZ
@given(data=st.data())
def test_the_loader_and_validate_never_crash_on_hostile_record_files(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    write_kb(root, {"data/engines/anchor.json": rec("engine", "anchor")}, schemas=False)
    shutil.copytree(REPO / "src" / "inferkb" / "kb" / "schemas", root / "schemas")
    seeds = _record_seeds()
    for i in range(data.draw(st.integers(1, 3))):
        name = data.draw(NAMES)
        folder = root / "data" / data.draw(st.sampled_from(["engines", "benchmarks", "accelerators"]))
        folder.mkdir(parents=True, exist_ok=True)
        raw = data.draw(mutated(data.draw(st.sampled_from(seeds)))) if seeds else data.draw(st.binary(max_size=256))
        (folder / f"{i}{name}").write_bytes(raw)
    kb = inferkb.open(root)
    # every .json file is a record or a finding: nothing malformed is dropped silently
    loaded = {r.path for r in kb.records.values()}
    reported = {f.path for f in kb.load_findings}
    for path in (root / "data").rglob("*.json"):
        rel = str(path.relative_to(root))
        if not path.name.startswith("."):
            assert rel in loaded or rel in reported, rel
    report = kb.validate(today=_dt.date(2026, 6, 1))
    _render_everything(report)
    for record in kb.records.values():
        dumps_record(record.data).encode("utf-8")


def _render_everything(report) -> None:
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from inferkb.reporters import render_github, render_json, render_text

    for render in (render_json, render_github):
        buf = io.StringIO()
        render(report, SimpleNamespace(file=buf))
        buf.getvalue().encode("utf-8", "backslashreplace")
    console = Console(file=io.StringIO(), highlight=False, soft_wrap=True)
    render_text(report, console)
    assert "\x1b[2J" not in console.file.getvalue()


@FUZZ
@given(text=st.text(min_size=1, max_size=40), value=st.text(max_size=20))
def test_query_commands_never_crash_on_hostile_text(text, value, tmp_path_factory):
    from inferkb import query
    from inferkb.errors import UsageError

    root = tmp_path_factory.mktemp("q")
    write_kb(root, {"data/engines/e.json": rec("engine", "e", name=text, notes=value)})
    kb = inferkb.open(root)
    try:
        query.search(kb, text)
    except UsageError:
        pass
    try:
        field, op, val = query.parse_condition([f"name = {value}"])
        query.where(kb, field, op, val)
    except UsageError:
        pass
    from inferkb.cli.common import Table, console

    table = Table("key", text, title=f"where name = {value}")
    table.add_row(text, value)
    out = console()
    out.file = open(os.devnull, "w")  # noqa: SIM115 - closed below
    try:
        out.print(table)
    finally:
        out.file.close()
