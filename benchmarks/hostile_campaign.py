"""Hostile-input campaign (issue #12, "Done when"): mutated harness files, kill -9 mid-write, racing writers, hostile text.

Usage::

    python benchmarks/hostile_campaign.py [--seed 1] [--mutate 3500] [--kill 60] [--race 20] [--content 30]
        [--only mutate,kill,race,content] [--out-dir DIR] [--workers 1] [--max-seed-bytes 262144] [--kill-rows 0]

Four categories, each seeded (``--seed``) so a run can be repeated; nothing is written into the repository (work
copies live in a temporary directory; failing inputs are saved under ``--out-dir``, default a new temporary
directory, whose path is printed):

- ``mutate``: every harness file under ``../shared/corpus/harness`` (large JSON seeds have their long lists cut to a
  few items, other seeds over ``--max-seed-bytes`` are cut at a line end) gets seeded mutations (truncation, flipped
  or inserted bytes, duplicate keys, huge numbers, NaN/Infinity, deep nesting, wrong types, invalid UTF-8, lone
  surrogates, CRLF, BOM, empty file, and combinations) and goes through ``inferkb intake FORMAT FILE --dry-run``
  and then the real write, in-process through :func:`inferkb.cli.main`, into a copy of the bundled KB without its
  benchmark records. Pass: exit code 0, 1 or 2, no traceback text, an exit-2 message names the file, the dry run
  changed no file, and after the write every changed record file parses, no temp file or journal is left, and the
  KB's validate errors (checked every 50 cases and at the end of each chunk) are the ones it had before.
- ``kill``: ``inferkb intake mlperf summary.csv --update`` (MLPerf v6.1, about 400 records) alternating between the
  real table and one with every result times 1.001, in a process killed with SIGKILL: a third of the kills at a
  random moment of the run, a third during the write (after the first temp file), a third within 20 ms of the
  journal's appearance. Every record file must then hold the old or the new bytes, the next write must succeed,
  leave no temp file or journal and give exactly the new state, and validate must show no error it did not show
  before. ``--kill-rows N`` keeps only N rows of the table (a quick run).
- ``race``: two processes at once run ``inferkb new engine --id X`` (one writes, the other says "already exists");
  two processes at once run ``inferkb derive format-id --write`` on a copy of the research corpus (the result is
  that of one run; no temp file is left).
- ``content``: KBs of seeded hostile record text (markup, control characters, RTL overrides, huge strings,
  ``javascript:`` URLs, deep JSON, huge numbers, lone surrogates, a FIFO) through validate, check, list, search,
  where, show, stats and site build, in-process. Pass: exit 0, 1 or 2, no traceback, no raw terminal control byte
  in text output, JSON output parses, no ``javascript:`` link in the built site.

Prints per category the runs, passes and failures (each with its seed and the saved input to reproduce it); exit
status 1 when any case failed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(REPO / "src"))
CORPUS = REPO.parent / "shared" / "corpus"
HARNESS = CORPUS / "harness"
RESEARCH = CORPUS / "inference-research"
CATEGORIES = ("mutate", "kill", "race", "content")
CASE_TIMEOUT = 120  # seconds one in-process command may take before the case counts as a hang


# ---- shared helpers --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """The result of one category: how many cases ran and the failures (each one line, reproducible)."""

    category: str
    runs: int = 0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return self.runs - len(self.failures)


class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a case; a BaseException so the CLI's last-resort handler does not swallow it."""


def _alarm(signum, frame):
    raise CaseTimeout()


def run_cli(argv: list[str], timeout: int = CASE_TIMEOUT) -> tuple[int, str, str]:
    """``inferkb ARGV`` in this process through :func:`inferkb.cli.main`: (exit code, stdout, stderr); -1 = hang."""
    from click.testing import CliRunner

    from inferkb.cli import main

    runner = CliRunner()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    code = 0
    try:
        with runner.isolation() as (out, err, _):
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except CaseTimeout:
                code = -1
            sys.stdout.flush()  # text written to the wrapper but not yet to the captured bytes
            sys.stderr.flush()
            return code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        gc.unfreeze()  # the CLI freezes what a command loaded (it expects to own the process); this process runs on


def run_proc(argv: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -m inferkb ARGV`` in a child process (the same inferkb this script imports)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(Path(_inferkb_dir()).parent), os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, "-m", "inferkb", *argv], capture_output=True, text=True, timeout=timeout, env=env)


def _inferkb_dir() -> str:
    import inferkb

    return str(Path(inferkb.__file__).parent)


def small_kb(dest: Path) -> Path:
    """A writable copy of the bundled KB without its benchmark records (schemas, engines, accelerators, sources)."""
    bundled = Path(_inferkb_dir()) / "kb"
    shutil.copytree(bundled, dest, ignore=lambda d, names: [n for n in names if n.endswith(".json") and d.endswith("/data/benchmarks")])
    return dest


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (relative path -> bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def listing(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under ``root/data`` and the root itself (relative path -> inode, size, mtime_ns)."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def leftovers(root: Path) -> list[str]:
    """Temp files and journals an interrupted write left under ``root``."""
    from inferkb.jsonio import JOURNAL_NAME, is_temp_name

    return sorted(
        os.path.relpath(os.path.join(d, n), root) for d, _, files in os.walk(root) for n in files if is_temp_name(n) or n == JOURNAL_NAME
    )


def validate_errors(root: Path) -> set[tuple[str, str]]:
    """(code, path) of every error-severity finding of ``inferkb.open(root).validate()``."""
    import inferkb

    return {(f.code, f.path or "") for f in inferkb.open(root).validate().findings if f.severity == "error"}


def traceback_in(*texts: str) -> bool:
    return any("Traceback (most recent call last)" in t for t in texts)


# ---- mutate ----------------------------------------------------------------------------------------------------

HW = ["--hardware-raw", "NVIDIA H100 80GB HBM3", "--count", "8"]
# (directory, file-name regular expression, importer, options); the first match wins. "@arm" = the file goes in --arm.
SEED_FORMATS = [
    ("aiperf", r".", "aiperf", []),
    ("guidellm", r".", "guidellm", []),
    ("inferencex", r".", "inferencex", []),
    ("llama.cpp", r".", "llama-bench", []),
    ("llm-d", r".", "llmd-report", []),
    ("mlperf", r".", "mlperf", ["--engine", "tensorrt-llm"]),
    ("sglang", r"^bench_one_batch_result", "sglang-one-batch", []),
    ("sglang", r"^bench_one_batch_server", "sglang-one-batch-server", HW),
    ("sglang", r"^bench_serving", "sglang-serving", ["--hardware-raw", "NVIDIA H200", "--count", "8"]),
    ("trtllm-bench", r".", "trtllm-bench", []),
    ("vllm", r"^latency", "vllm-latency", ["@arm", "--baseline", "a", "--model", "m", "--count", "1", "--engine", "vllm"]),
    ("vllm", r"^throughput", "vllm-throughput", ["--model", "m", "--count", "1"]),
    ("vllm", r".", "vllm-serve", HW),
]

HUGE_NUMBERS = [
    b"9" * 5000,
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e-400",
    b"-0.0",
    b"-1",
    b"0",
    b"18446744073709551617",
]
WRONG_VALUES = [b'"abc"', b"[1, 2]", b"{}", b"null", b"true", b'""', b"[]", b'{"a": 1}', b'"12"']
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\x00"]
NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
JSON_KEY = re.compile(rb'"[^"\\\n]{1,60}"\s*:\s*')
YAML_KEY = re.compile(rb"^([ \t-]*)([A-Za-z_][\w.-]*):", re.M)
STRING_START = re.compile(rb'"[^"\\\n]{0,40}"')


def seed_files(max_bytes: int) -> list[tuple[str, Path, list[str], bytes, str]]:
    """(importer, corpus path, options, seed bytes, how the seed was capped) for every harness file."""
    out = []
    for path in sorted(p for p in HARNESS.rglob("*") if p.is_file() and p.suffix != ".md"):
        for folder, pattern, fmt, opts in SEED_FORMATS:
            if path.parent.name == folder and re.search(pattern, path.name):
                data, how = cap_seed(path.read_bytes(), max_bytes)
                out.append((fmt, path, opts, data, how))
                break
    return out


def _shrink(doc, keep: int):
    if isinstance(doc, list):
        return [_shrink(x, keep) for x in doc[:keep]]
    if isinstance(doc, dict):
        return {k: _shrink(v, keep) for k, v in doc.items()}
    return doc


def cap_seed(data: bytes, max_bytes: int) -> tuple[bytes, str]:
    """``data`` if small; a large JSON document with its lists cut to a few items; else cut at a line end."""
    if len(data) <= max_bytes:
        return data, "whole"
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        doc = None
    if doc is not None:
        for keep in (8, 4, 2, 1):
            small = json.dumps(_shrink(doc, keep), indent=2).encode() + b"\n"
            if len(small) <= max_bytes:
                return small, f"json lists cut to {keep}"
    cut = data.rfind(b"\n", 0, max_bytes)
    return data[: cut + 1 if cut > 0 else max_bytes], f"first {max_bytes} bytes"


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1) if data else 0


def _sub_match(rng: random.Random, data: bytes, pattern: re.Pattern, make) -> bytes | None:
    matches = list(pattern.finditer(data))
    if not matches:
        return None
    m = rng.choice(matches)
    return data[: m.start()] + make(m) + data[m.end() :]


def _json_wrong_type(rng: random.Random, data: bytes) -> bytes | None:
    """Parse ``data`` (JSON, or one line of JSONL), put a value of another type at a random place, dump it again."""
    lines = data.split(b"\n")
    try:
        docs = [(None, json.loads(data))]
    except (ValueError, RecursionError):
        docs = []
        for i, line in enumerate(lines):
            if line.strip().startswith((b"{", b"[")):
                try:
                    docs.append((i, json.loads(line)))
                except (ValueError, RecursionError):
                    continue
    if not docs:
        return None
    line_no, doc = rng.choice(docs)
    nodes: list[tuple[object, object]] = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                nodes.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                nodes.append((node, i))
                walk(v)

    walk(doc)
    if not nodes:
        return None
    parent, key = rng.choice(nodes)
    old = parent[key]
    choices = ["abc", 12, -3.5, None, True, [], {}, [1, "x"], {"a": None}, "1e400", ""]
    parent[key] = rng.choice([c for c in choices if type(c) is not type(old)])
    try:
        text = json.dumps(doc).encode()
    except RecursionError:
        return None
    if line_no is None:
        return text + b"\n"
    lines[line_no] = text
    return b"\n".join(lines)


def _loads_ok(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def mutate_once(rng: random.Random, data: bytes, kind: str) -> bytes | None:
    """One edit of ``kind`` to ``data``; ``None`` when the kind does not apply (no number to replace, ...)."""
    if kind == "truncate":
        return data[: rng.randrange(len(data))] if data else None
    if kind == "flip":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if buf:
                buf[rng.randrange(len(buf))] ^= rng.randint(1, 255)
        return bytes(buf)
    if kind == "insert":
        at = _at(rng, data)
        blob = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return data[:at] + blob + data[at:]
    if kind == "duplicate-key":
        m = _sub_match(rng, data, JSON_KEY, lambda m: m.group(0) + rng.choice(HUGE_NUMBERS + WRONG_VALUES) + b", " + m.group(0))
        if m is not None:
            return m
        return _sub_match(rng, data, YAML_KEY, lambda m: m.group(0) + b" 1\n" + m.group(1).replace(b"-", b" ") + m.group(2) + b":")
    if kind == "huge-number":
        return _sub_match(rng, data, NUMBER, lambda m: rng.choice(HUGE_NUMBERS[:2] + [b"18446744073709551617", b"1" + b"0" * 400]))
    if kind == "nan-infinity":
        return _sub_match(rng, data, NUMBER, lambda m: rng.choice([b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf", b".inf", b"-.inf"]))
    if kind == "deep-nesting":
        depth = rng.choice([200, 1000, 5000, 100_000])
        nest = rng.choice([b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth, b"[" * depth])
        return _sub_match(rng, data, NUMBER, lambda m: nest) or data + nest
    if kind == "wrong-type":
        return _json_wrong_type(rng, data) or _sub_match(rng, data, NUMBER, lambda m: rng.choice(WRONG_VALUES))
    if kind == "invalid-utf8":
        at = _at(rng, data)
        return data[:at] + rng.choice(BAD_BYTES) + data[at:]
    if kind == "lone-surrogate":
        escaped = rng.choice([b"\\ud800", b"\\udcff", b"\\udfff\\ud800"])
        m = _sub_match(rng, data, STRING_START, lambda m: m.group(0)[:1] + escaped + m.group(0)[1:])
        if m is not None:
            return m
        at = _at(rng, data)
        return data[:at] + b"\xed\xb3\xbf" + data[at:]
    if kind == "crlf":
        return data.replace(b"\n", rng.choice([b"\r\n", b"\r"]))
    if kind == "bom":
        return rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + data
    if kind == "empty":
        return rng.choice([b"", b"\n", b" \r\n\t"])
    raise ValueError(kind)


KINDS = ["truncate", "flip", "insert", "duplicate-key", "huge-number", "nan-infinity", "deep-nesting", "wrong-type",
         "invalid-utf8", "lone-surrogate", "crlf", "bom", "empty"]  # fmt: skip


def mutation(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """A seeded mutation of ``data``: one kind (most cases) or a combination of two to four; returns (label, bytes)."""
    count = 1 if rng.random() < 0.7 else rng.randint(2, 4)
    labels = []
    for _ in range(count):
        for _try in range(5):
            kind = rng.choice(KINDS if count == 1 else [k for k in KINDS if k != "empty"])
            new = mutate_once(rng, data, kind)
            if new is not None and new != data:
                data = new
                labels.append(kind)
                break
    return "+".join(labels) or "none", data


def intake_argv(fmt: str, opts: list[str], path: Path, kb: Path) -> list[str]:
    if opts and opts[0] == "@arm":
        return ["intake", fmt, "--arm", f"a={path}", *opts[1:], "--kb", str(kb)]
    return ["intake", fmt, str(path), *opts, "--kb", str(kb)]


def _changed(before: dict, after: dict) -> list[str]:
    return [p for p, ident in after.items() if before.get(p) != ident]


def mutate_chunk(seed: int, cases: list[int], max_bytes: int, work: Path, out_dir: Path) -> tuple[int, list[str], list[str]]:
    """Run mutate cases ``cases`` (their numbers make their seeds) on one fresh KB; returns (runs, failures, notes)."""
    os.environ.setdefault("INFERKB_CACHE_DIR", str(work / "cache"))
    seeds = seed_files(max_bytes)
    kb = small_kb(work / f"kb-{cases[0]}")
    baseline = validate_errors(kb)
    failures: list[str] = []
    wrote: dict[str, int] = {}  # record file -> case that last wrote it
    since: list[int] = []

    def check_kb(last: int) -> None:
        new = validate_errors(kb) - baseline
        for code, path in sorted(new):
            case = wrote.get(path)
            failures.append(f"case {case if case is not None else '?'} (checked after case {last}): new validate error {code} in {path}")
            saved = out_dir / f"mutate-kb-{path.replace('/', '_')}"
            if (kb / path).is_file():
                shutil.copy(kb / path, saved)
        since.clear()

    for n, case in enumerate(cases, 1):
        rng = random.Random(f"{seed}:mutate:{case}")
        fmt, src, opts, data, _how = rng.choice(seeds)
        label, mutated = mutation(rng, data)
        folder = work / "in" / str(case)
        folder.mkdir(parents=True)
        path = folder / src.name
        path.write_bytes(mutated)
        problems = []
        before = listing(kb)
        for dry in (True, False):
            argv = intake_argv(fmt, opts, path, kb) + (["--dry-run"] if dry else ["--update"] if case % 2 else [])
            code, out, err = run_cli(argv)
            step = "dry run" if dry else "write"
            if code not in (0, 1, 2):
                problems.append(f"{step}: exit {code}: {(err or out).strip()[-300:]}")
            if traceback_in(out, err):
                problems.append(f"{step}: traceback in the output")
            if code == 2 and src.name not in out + err and str(kb) not in out + err:
                problems.append(f"{step}: exit 2 without naming the file: {(err or out).strip()[:300]}")
            after = listing(kb)
            if dry and after != before:
                problems.append(f"dry run changed {sorted(_changed(before, after))[:5]}")
        changed = _changed(before, after)
        for rel in changed:
            wrote[rel] = case
            if rel.endswith(".json"):
                raw = (kb / rel).read_bytes()
                if not raw.endswith(b"\n") or not _loads_ok(raw):
                    problems.append(f"write left {rel} unreadable or without its final newline")
        left = leftovers(kb)
        if left:
            problems.append(f"temp files or journal left: {left[:5]}")
        since.append(case)
        if problems:
            saved = out_dir / f"mutate-{case}-{src.name}"
            shutil.copy(path, saved)
            cmd = " ".join(intake_argv(fmt, opts, saved, Path("KB")))
            failures.append(
                f"case {case} (--seed {seed}, {label} of {src.relative_to(HARNESS)}): {'; '.join(problems)} [input: {saved}; inferkb {cmd}]"
            )
        shutil.rmtree(folder)
        if n % 50 == 0:
            check_kb(case)
    if since:
        check_kb(cases[-1])
    shutil.rmtree(kb)
    return len(cases), failures, []


def run_mutate(args, work: Path, out_dir: Path) -> Outcome:
    result = Outcome("mutate")
    if not HARNESS.is_dir():
        result.notes.append(f"skipped: harness corpus not found at {HARNESS}")
        return result
    seeds = seed_files(args.max_seed_bytes)
    capped = [f"{p.relative_to(HARNESS)} ({how})" for _f, p, _o, _d, how in seeds if how != "whole"]
    result.notes.append(f"{len(seeds)} seed files; capped: {', '.join(capped) or 'none'}")
    cases = list(range(args.mutate))
    chunks = [cases[i : i + args.chunk] for i in range(0, len(cases), args.chunk)]
    started = time.perf_counter()
    if args.workers <= 1:
        outs = [mutate_chunk(args.seed, c, args.max_seed_bytes, work / f"w{i}", out_dir) for i, c in enumerate(chunks)]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            futures = [pool.submit(mutate_chunk, args.seed, c, args.max_seed_bytes, work / f"w{i}", out_dir) for i, c in enumerate(chunks)]
            outs = [f.result() for f in futures]
    for runs, failures, notes in outs:
        result.runs += runs
        result.failures += failures
        result.notes += notes
    result.notes.append(f"{time.perf_counter() - started:.0f} s")
    return result


# ---- kill ------------------------------------------------------------------------------------------------------

# The writer that is killed: MLPerf Inference v6.1's summary table, about 400 benchmark records in one batch.
KILL_SEED = CORPUS / "mlperf" / "inference_results_v6.1" / "summary.csv"


def _scaled_results(src: Path, dest: Path, factor: float, rows_kept: int = 0) -> None:
    """``src`` (an MLPerf summary.csv) with every numeric ``Result`` times ``factor``: same rows and ids, new values;
    with ``rows_kept``, only the header and that many rows."""
    import csv

    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if rows_kept:
        rows = rows[: rows_kept + 1]
    col = rows[0].index("Result")
    for row in rows[1:]:
        try:
            row[col] = repr(float(row[col]) * factor)
        except (ValueError, IndexError):
            continue
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)


def _state(kb: Path) -> dict[str, bytes]:
    return tree(kb / "data")


def _writing(kb: Path) -> bool:
    """True once a write has begun: a temp file beside the benchmark records, or the journal in the KB root."""
    from inferkb.jsonio import JOURNAL_NAME, is_temp_name

    if os.path.lexists(kb / JOURNAL_NAME):
        return True
    with os.scandir(kb / "data" / "benchmarks") as it:
        return any(e.name.startswith(".") and is_temp_name(e.name) for e in it)


def _watch(proc: subprocess.Popen, kb: Path, started: float, journal: bool = False) -> float | None:
    """Seconds from ``started`` to the first sign of the write (with ``journal``: to the journal's appearance);
    ``None`` if the process ended first."""
    while proc.poll() is None:
        if os.path.lexists(kb / ".inferkb-journal.json") if journal else _writing(kb):
            return time.perf_counter() - started
        time.sleep(0.0005)
    return None


def run_kill(args, work: Path, out_dir: Path) -> Outcome:
    """SIGKILL an intake that replaces many records, then check the files, the next write and validate."""
    result = Outcome("kill")
    src = KILL_SEED
    if not src.is_file():
        result.notes.append(f"skipped: {src} not found")
        return result
    kb = small_kb(work / "kill-kb")
    rng = random.Random(f"{args.seed}:kill")
    # Two inputs with the same rows and other measured values: every record file has an "A" and a "B" content.
    inputs = {"A": work / "A" / src.name, "B": work / "B" / src.name}
    inputs["A"].parent.mkdir()
    _scaled_results(src, inputs["A"], 1.0, args.kill_rows)
    inputs["B"].parent.mkdir()
    _scaled_results(src, inputs["B"], 1.001, args.kill_rows)

    def cmd(version: str) -> list[str]:
        return ["intake", "mlperf", str(inputs[version]), "--update", "--kb", str(kb)]

    states = {}
    for version in ("A", "B", "A", "B"):  # twice: the second round leaves both source records, as every later write does
        started = time.perf_counter()
        setup = run_proc(cmd(version))
        full = time.perf_counter() - started
        if setup.returncode not in (0, 1):
            result.runs += 1
            result.failures.append(f"setup: intake of {version} exited {setup.returncode}: {setup.stderr[-300:]}")
            return result
        states[version] = _state(kb)
    env = dict(os.environ, PYTHONPATH=str(Path(_inferkb_dir()).parent))

    def start(version: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "inferkb", *cmd(version)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )

    started = time.perf_counter()
    proc = start("A")  # one more clean write, watched: when does the write begin, how long does it last
    begin = _watch(proc, kb, started)
    proc.wait()
    full = time.perf_counter() - started
    if begin is None or _state(kb) != states["A"]:
        result.runs += 1
        result.failures.append(f"setup: the watched write saw no temp file ({begin}) or gave another state")
        return result
    baseline = validate_errors(kb)
    moved = sum(1 for p in states["A"] if states["A"][p] != states["B"].get(p))
    result.notes.append(
        f"one write replaces {moved} record files; the process takes {full:.2f} s, the write its last {full - begin:.2f} s; "
        "a third of the kills land at a random moment of the whole run, a third at a random moment of the write, "
        "a third within 20 ms of the journal's appearance (the files being put in place)"
    )
    current, other = "A", "B"
    killed = mixed = journal_left = temps_left = 0
    for case in range(args.kill):
        result.runs += 1
        mode = ("run", "write", "journal")[case % 3]
        proc = start(other)
        started = time.perf_counter()
        if mode == "write":
            _watch(proc, kb, started)
            time.sleep(rng.uniform(0, full - begin))
        elif mode == "journal":
            _watch(proc, kb, started, journal=True)
            time.sleep(rng.uniform(0, 0.02))
        else:
            time.sleep(rng.uniform(0, full))
        delay = time.perf_counter() - started
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed += proc.returncode == -signal.SIGKILL
        problems = []
        old, new = states[current], states[other]
        now = _state(kb)
        partial = False
        temps_left += any(_is_leftover(rel) for rel in now)
        journal_left += os.path.lexists(kb / ".inferkb-journal.json")
        for rel in sorted(set(old) | set(new) | set(now)):
            if _is_leftover(rel):
                continue
            if now.get(rel) not in (old.get(rel), new.get(rel)):
                problems.append(f"{rel} is neither the old nor the new content")
            partial = partial or now.get(rel) != old.get(rel)
        mixed += partial and now != new
        again = run_proc(cmd(other))
        if again.returncode not in (0, 1):
            problems.append(f"the next write exited {again.returncode}: {again.stderr.strip()[-300:]}")
        if traceback_in(again.stdout, again.stderr):
            problems.append("traceback in the next write's output")
        left = leftovers(kb)
        if left:
            problems.append(f"the next write left {left[:5]}")
        after = _state(kb)
        if after != new:
            diff = sorted(p for p in set(after) | set(new) if after.get(p) != new.get(p))
            problems.append(f"after the next write {len(diff)} files differ from a clean write, e.g. {diff[:3]}")
        extra = validate_errors(kb) - baseline
        if extra:
            problems.append(f"new validate errors: {sorted(extra)[:5]}")
        if problems:
            saved = out_dir / f"kill-{case}"
            shutil.copytree(kb, saved)
            result.failures.append(
                f"case {case} (--seed {args.seed}, killed after {delay:.3f} s, mode {mode}): {'; '.join(problems[:5])} [KB after: {saved}]"
            )
        current, other = other, current
    result.notes.append(
        f"{killed} of {args.kill} writers died by SIGKILL (the rest had finished); {mixed} were killed with some but not all "
        f"records replaced, {journal_left} left a journal and {temps_left} left temp files (all for the next write to clean)"
    )
    return result


def _is_leftover(rel: str) -> bool:
    from inferkb.jsonio import JOURNAL_NAME, is_temp_name

    name = rel.rpartition("/")[2]
    return is_temp_name(name) or name == JOURNAL_NAME


# ---- race ------------------------------------------------------------------------------------------------------


def _popen(argv: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(_inferkb_dir()).parent))
    return subprocess.Popen([sys.executable, "-m", "inferkb", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _pair(argv: list[str]) -> list[tuple[int, str, str]]:
    procs = [_popen(argv), _popen(argv)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        outs.append((p.returncode, out, err))
    return outs


def run_race(args, work: Path, out_dir: Path) -> Outcome:
    result = Outcome("race")
    kb = small_kb(work / "race-kb")
    for case in range(args.race):
        result.runs += 1
        rid = f"race-{args.seed}-{case}"
        outs = _pair(["new", "engine", "--name", f"Race {case}", "--id", rid, "--kb", str(kb)])
        codes = sorted(c for c, _, _ in outs)
        problems = []
        if codes != [0, 2]:
            problems.append(f"exit codes {codes} (want one 0 and one 2)")
        if not any(c == 2 and "already exists" in err for c, _, err in outs):
            problems.append("no writer said 'already exists'")
        if any(traceback_in(o, e) for _, o, e in outs):
            problems.append("traceback")
        path = kb / "data" / "engines" / f"{rid}.json"
        if not path.is_file() or not _loads_ok(path.read_bytes()):
            problems.append(f"{path.name} missing or unreadable")
        if leftovers(kb):
            problems.append(f"left {leftovers(kb)[:3]}")
        if problems:
            result.failures.append(
                f"new engine case {case} (--seed {args.seed}): {'; '.join(problems)}: {[(c, e.strip()[-200:]) for c, _, e in outs]}"
            )
    if not RESEARCH.is_dir():
        result.notes.append(f"derive races skipped: {RESEARCH} not found")
        return result
    clean_copy = work / "derive-once"
    shutil.copytree(RESEARCH, clean_copy)
    once = run_proc(["derive", "format-id", "--write", "--kb", str(clean_copy)])
    expected = tree(clean_copy)
    result.notes.append(f"one derive format-id --write exits {once.returncode}")
    for case in range(args.race):
        result.runs += 1
        kb = work / f"derive-{case}"
        shutil.copytree(RESEARCH, kb)
        outs = _pair(["derive", "format-id", "--write", "--kb", str(kb)])
        problems = []
        codes = [c for c, _, _ in outs]
        if any(c not in (0, 1, 2) for c in codes) or once.returncode not in codes:
            problems.append(f"exit codes {codes} (a single run exits {once.returncode})")
        if any(traceback_in(o, e) for _, o, e in outs):
            problems.append("traceback")
        got = tree(kb)
        if got != expected:
            diff = sorted(p for p in set(got) | set(expected) if got.get(p) != expected.get(p))
            problems.append(f"{len(diff)} files differ from one run's result, e.g. {diff[:3]}")
        if problems:
            saved = out_dir / f"race-derive-{case}"
            shutil.copytree(kb, saved)
            result.failures.append(
                f"derive case {case} (--seed {args.seed}): {'; '.join(problems)} [KB: {saved}; {[(c, e.strip()[-200:]) for c, _, e in outs]}]"
            )
        shutil.rmtree(kb)
    return result


# ---- content ---------------------------------------------------------------------------------------------------

PERMISSIVE = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["id", "type", "name"]}
TEXTS = [
    "[/INST] [bold red]x[/bold red] [link=https://e.x]y[/link]",
    "\x1b[2J\x1b]0;pwned\x07 \x9b31m \x1b[31mred\x1b[0m",
    "\u202eevil\u202c \u2066rtl\u2069 \u200b\u200d\ufeff",
    "<script>alert(1)</script> <img src=x onerror=alert(1)> </textarea>",
    "{{ 7*7 }} ${7*7} %s %n | `rm` ; $(id)",
    "a\x00b\x7f\x85c\u2028d\u2029e",
    "::error::x %0A ::stop-commands::y",
    "\ud800 lone",
    "alpha " * 50_000,
    "x" * 1_000_000,
]
URLS = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>",
        "vbscript:x", "https://e.x/\u202eexe.fdp", "file:///etc/passwd"]  # fmt: skip


def _deep(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def hostile_content_kb(rng: random.Random, root: Path) -> tuple[Path, list[str]]:
    """A KB of a good record and seeded hostile ones; returns (root, ids to show)."""
    from inferkb.profile import BUILTIN_TYPES

    (root / "schemas").mkdir(parents=True)
    for t in BUILTIN_TYPES:
        (root / "schemas" / f"{t.name}.schema.json").write_text(json.dumps(PERMISSIVE))
    engines = root / "data" / "engines"
    sources = root / "data" / "sources"
    engines.mkdir(parents=True)
    sources.mkdir(parents=True)
    (sources / "s.json").write_text(json.dumps({"id": "s", "type": "source", "name": "alpha source", "url": rng.choice(URLS)}))
    ids = ["good"]
    (engines / "good.json").write_text(
        json.dumps({"id": "good", "type": "engine", "name": "alpha good", "sources": ["s"], "url": rng.choice(URLS)})
    )
    for i in range(rng.randint(3, 8)):
        rid = rng.choice([f"h{i}", f"[bold]{i}", f"h{i}-\u202e", f"h{i}\x1b[2J"])
        doc: dict = {"id": rid, "type": "engine", "name": "alpha " + rng.choice(TEXTS), "sources": ["s"]}
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["notes", "url", "homepage", "description", "extra", "docs", "version"])
            doc[key] = rng.choice([rng.choice(TEXTS), rng.choice(URLS), "@deep", [rng.choice(URLS)] * 3])
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5).replace('"@deep"', _deep(rng.choice([50, 500, 3000])))
        if rng.random() < 0.2:
            text = text[:-1] + ', "n": ' + "9" * rng.choice([400, 5000]) + "}"
        name = rid if rng.random() < 0.8 else f"h{i}"
        safe = name.replace("/", "_").replace("\x00", "_")
        (engines / f"{safe}.json").write_text(text, encoding="utf-8", errors="surrogatepass")
        ids.append(rid)
    (sources / "deep.json").write_text('{"id": "deep", "type": "source", "name": "alpha", "x": ' + "[" * 50_000 + "]" * 50_000 + "}")
    if rng.random() < 0.3:
        os.mkfifo(engines / "pipe.json")
    return root, ids


def run_content(args, work: Path, out_dir: Path) -> Outcome:
    result = Outcome("content")
    os.environ.setdefault("INFERKB_CACHE_DIR", str(work / "cache"))
    for case in range(args.content):
        rng = random.Random(f"{args.seed}:content:{case}")
        root, ids = hostile_content_kb(rng, work / f"content-{case}")
        site = work / f"site-{case}"
        commands = [["validate"], ["check"], ["list", "engine"], ["list", "source"], ["search", "alpha"], ["where", "name ~ alpha"], ["stats"],
                    ["show", rng.choice(ids)], ["show", "good"], ["site", "build", "--out", str(site)]]  # fmt: skip
        problems = []
        for argv in commands:
            for fmt in ([], ["--format", "json"]):
                if argv[0] == "site" and fmt:
                    continue
                result.runs += 1
                code, out, err = run_cli([*argv, "--kb", str(root), *fmt])
                what = " ".join(argv[:2] + fmt)
                bad = []
                if code not in (0, 1, 2):
                    bad.append(f"exit {code}: {(err or out).strip()[-300:]}")
                if traceback_in(out, err):
                    bad.append("traceback")
                if not fmt and re.search("[\x1b\x07\x9b]", out):
                    bad.append("raw terminal control character in the output")
                if fmt and code in (0, 1):
                    try:
                        json.loads(out)
                    except (ValueError, RecursionError) as exc:
                        bad.append(f"output is not JSON ({exc})")
                if bad:
                    problems.append(f"{what}: {'; '.join(bad)}")
        result.runs += 1
        if site.is_dir():
            for page in site.rglob("*.html"):
                if re.search(r"""href\s*=\s*["']?\s*(java\s*script|vbscript|data):""", page.read_text("utf-8", "replace"), re.I):
                    problems.append(f"site page {page.relative_to(site)} links a script URL")
                    break
        if problems:
            saved = out_dir / f"content-{case}"
            shutil.copytree(root, saved, ignore=lambda d, names: [n for n in names if stat.S_ISFIFO(os.lstat(os.path.join(d, n)).st_mode)])
            result.failures += [f"case {case} (--seed {args.seed}): {p} [KB: {saved}]" for p in problems]
        shutil.rmtree(root)
        shutil.rmtree(site, ignore_errors=True)
    return result


# ---- main ------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutate", type=int, default=3500, help="mutated harness files (each: dry run + write)")
    ap.add_argument("--kill", type=int, default=60, help="intakes killed with SIGKILL")
    ap.add_argument("--kill-rows", type=int, default=0, help="rows of the killed writer's table (0: all, about 490)")
    ap.add_argument("--race", type=int, default=20, help="pairs of racing writers, per kind (new, derive)")
    ap.add_argument("--content", type=int, default=30, help="hostile-content KBs")
    ap.add_argument("--only", default=",".join(CATEGORIES), help="categories, comma-separated")
    ap.add_argument("--out-dir", type=Path, help="where failing inputs are saved (default: a new temporary directory)")
    ap.add_argument("--workers", type=int, default=1, help="processes for the mutate category")
    ap.add_argument("--chunk", type=int, default=200, help="mutate cases per fresh KB copy")
    ap.add_argument("--max-seed-bytes", type=int, default=256 * 1024, help="cap of a seed file before mutation")
    args = ap.parse_args(argv)
    only = [c for c in args.only.split(",") if c]
    unknown = set(only) - set(CATEGORIES)
    if unknown:
        ap.error(f"unknown categories {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="inferkb-hostile-evidence-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"inferkb from {_inferkb_dir()}; seed {args.seed}; evidence of failures in {out_dir}", flush=True)
    runners = {"mutate": run_mutate, "kill": run_kill, "race": run_race, "content": run_content}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="inferkb-hostile-") as tmp:
        os.environ["INFERKB_CACHE_DIR"] = str(Path(tmp) / "cache")
        for name in only:
            work = Path(tmp) / name
            work.mkdir()
            started = time.perf_counter()
            outcome = runners[name](args, work, out_dir)
            print(
                f"\n{name}: {outcome.runs} runs, {outcome.passes} passed, {len(outcome.failures)} failed ({time.perf_counter() - started:.0f} s)"
            )
            for note in outcome.notes:
                print(f"  note: {note}")
            for failure in outcome.failures:
                print(f"  FAIL {failure}")
            failed += len(outcome.failures)
            sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
