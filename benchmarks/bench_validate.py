"""Whole-process wall time and peak RSS of ``inferkb validate`` on synthetic KBs of growing size.

Usage::

    python benchmarks/bench_validate.py [--sizes 150,4000,20000,100000] [--runs 5]
                                        [--mode auto|cli|api] [--cache DIR] [--no-floor] [--load-cache]

For each size a KB is generated once with ``synth_kb.generate`` (cached under
``--cache``) and then validated ``--runs`` times in a fresh Python process,
exactly as a user runs it: ``python -m inferkb validate --kb DIR --format json``
(``--mode cli``) or ``python -c "import inferkb; inferkb.open(DIR).validate()"``
(``--mode api``; ``auto`` picks the CLI when ``python -m inferkb --help``
works). One untimed warm-up run comes first so every timed run sees the files
in the page cache. The load cache (``inferkb.store.cache``) is off unless
``--load-cache`` (then the warm-up run fills it and the timed runs are warm). Peak RSS is the child's own ``ru_maxrss`` from ``os.wait4``.

The *floor* is a separate process that only reads every file, parses it with
orjson and calls a compiled jsonschema-rs validator's ``is_valid`` on it: what
validation cannot go below with these libraries.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SRC = REPO / "src"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "inferkb-bench-cache"
# Targets from issue #2 ("Speed"): seconds per size; 100,000 also <= 1 GB RSS.
VALIDATE_TARGETS = {4000: 0.4, 20000: 1.2, 100000: 6.0}
RSS_TARGET_MB = 1024

FLOOR_CODE = """
import sys, os, orjson, jsonschema_rs
root = sys.argv[1]
validators = {}
for name in os.listdir(os.path.join(root, "schemas")):
    with open(os.path.join(root, "schemas", name), "rb") as fh:
        validators[name.split(".")[0]] = jsonschema_rs.validator_for(orjson.loads(fh.read()))
bad = 0
data = os.path.join(root, "data")
for d in sorted(os.listdir(data)):
    for f in sorted(os.listdir(os.path.join(data, d))):
        with open(os.path.join(data, d, f), "rb") as fh:
            rec = orjson.loads(fh.read())
        bad += not validators[rec["type"]].is_valid(rec)
print(bad)
"""


@dataclass
class Timing:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (MiB) of each timed run of one command."""

    seconds: list[float]
    cpu: list[float]
    rss_mb: list[float]
    returncode: int

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_rss(self) -> float:
        return max(self.rss_mb)


# Where timed children keep the load cache (inferkb.store.cache): None = caching off (INFERKB_NO_CACHE=1), so every
# run reads and checks every file (cold); a folder (--load-cache) = warm runs, the warm-up run filling it.
LOAD_CACHE: Path | None = None
# ... and in this process (the in-process timings of every benchmark that imports this module) it is off too.
os.environ.setdefault("INFERKB_NO_CACHE", "1")


def child_env() -> dict[str, str]:
    """Environment for the timed child: this checkout's ``src`` first on PYTHONPATH (no install needed), and the
    load cache off, or in :data:`LOAD_CACHE`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    if LOAD_CACHE is None:
        env["INFERKB_NO_CACHE"] = "1"
    else:
        env.pop("INFERKB_NO_CACHE", None)
        env["INFERKB_CACHE_DIR"] = str(LOAD_CACHE)
    return env


def use_load_cache(on: bool) -> None:
    """``--load-cache``: time warm runs, with the load cache in a fresh temporary folder (removed at exit)."""
    global LOAD_CACHE
    if on:
        import atexit
        import shutil
        import tempfile

        LOAD_CACHE = Path(tempfile.mkdtemp(prefix="inferkb-bench-load-cache-"))
        atexit.register(shutil.rmtree, LOAD_CACHE, True)


def run_once(cmd: list[str]) -> tuple[float, float, float, int]:
    """Run ``cmd`` with stdout to /dev/null; return (wall s, CPU s, peak RSS MiB of that child, exit status).

    Raises ``RuntimeError`` when the command exits with a status other than 0 or 1.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env())
    # wait4 gives this child's own rusage; RUSAGE_CHILDREN would be a max over all children so far.
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in (0, 1):  # 1 = findings at the failing severity; still a complete run
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()[-2000:]}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def measure(cmd: list[str], runs: int, warmup: int = 1) -> Timing:
    """Time ``cmd`` ``runs`` times after ``warmup`` untimed runs."""
    for _ in range(warmup):
        run_once(cmd)
    secs, cpu, rss, rc = [], [], [], 0
    for _ in range(runs):
        took, used, mb, rc = run_once(cmd)
        secs.append(took)
        cpu.append(used)
        rss.append(mb)
    return Timing(secs, cpu, rss, rc)


def ensure_kb(n: int, cache: Path, seed: int = 0) -> Path:
    """Return a cached synthetic KB of ``n`` records, generating it on first use."""
    sys.path.insert(0, str(HERE))
    from synth_kb import generate

    root = cache / f"kb-{n}-seed{seed}"
    done = root / ".complete"
    if not done.exists():
        if root.exists():
            import shutil

            shutil.rmtree(root)
        start = time.perf_counter()
        generate(root, n, seed)
        done.write_text("ok\n")
        print(f"  generated {n} records in {time.perf_counter() - start:.1f} s -> {root}", file=sys.stderr)
    return root


def cli_available() -> bool:
    """True when ``python -m inferkb --help`` runs (the CLI exists)."""
    proc = subprocess.run([sys.executable, "-m", "inferkb", "--help"], capture_output=True, env=child_env())
    return proc.returncode == 0


def resolve_mode(mode: str) -> str:
    if mode == "auto":
        return "cli" if cli_available() else "api"
    return mode


def validate_cmd(mode: str, kb: Path) -> list[str]:
    if mode == "cli":
        return [sys.executable, "-m", "inferkb", "validate", "--kb", str(kb), "--format", "json"]
    return [sys.executable, "-c", f"import inferkb; inferkb.open({str(kb)!r}).validate()"]


def floor_cmd(kb: Path) -> list[str]:
    return [sys.executable, "-c", FLOOR_CODE, str(kb)]


def table(rows: list[list[str]], header: list[str]) -> str:
    """Plain fixed-width table (markdown-compatible)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def parse_sizes(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


def startup_baseline(runs: int) -> str:
    """One line: median wall time of a bare ``python -c pass`` and of importing inferkb's CLI (no KB work)."""
    bare = measure([sys.executable, "-c", "pass"], runs)
    imp = measure([sys.executable, "-c", "import inferkb, inferkb.validate, inferkb.cli"], runs)
    return f"startup: python -c pass {bare.median:.3f} s; import inferkb + cli {imp.median:.3f} s ({imp.peak_rss:.0f} MiB)"


def rows_for(results: dict[int, tuple[Timing, Timing | None]], targets: dict[int, float]) -> list[list[str]]:
    """Table rows; per-record time is compared with the 4,000-record size (or the first size)."""
    ref_n = 4000 if 4000 in results else next(iter(results))
    ref = results[ref_n][0].median / ref_n
    rows = []
    for n, (t, floor) in results.items():
        target = targets.get(n)
        ok = "" if target is None else ("yes" if t.median <= target and (n < 100000 or t.peak_rss <= RSS_TARGET_MB) else "NO")
        rows.append(
            [
                f"{n:,}",
                f"{t.median:.3f}",
                f"{t.best:.3f}",
                f"{t.cpu_median:.3f}",
                f"{t.peak_rss:.0f}",
                f"{t.median / n * 1000:.4f}",
                f"{t.median / n / ref:.2f}",
                "-" if floor is None else f"{floor.median:.3f}",
                "-" if floor is None else f"{t.median / floor.median:.1f}x",
                "-" if target is None else f"{target:g}",
                ok,
            ]
        )
    return rows


HEADER = ["N", "median s", "min s", "cpu s", "peak RSS MiB", "s per 1k", "per-record vs 4k", "floor s", "vs floor", "target s", "meets"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="150,4000,20000,100000", help="comma-separated record counts")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per size (median reported)")
    ap.add_argument("--mode", choices=("auto", "cli", "api"), default="auto")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where generated KBs are kept")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-floor", action="store_true", help="skip the read+orjson+is_valid floor")
    ap.add_argument("--load-cache", action="store_true", help="warm runs: the load cache on (off by default: cold runs)")
    args = ap.parse_args(argv)
    use_load_cache(args.load_cache)
    mode = resolve_mode(args.mode)
    print(
        f"mode: {mode} ({' '.join(validate_cmd(mode, Path('DIR'))[1:])}); runs: {args.runs}; "
        f"python {sys.version.split()[0]}; {os.cpu_count()} cpus; load average {os.getloadavg()[0]:.2f}; "
        f"load cache {'on (warm runs)' if LOAD_CACHE else 'off (cold runs)'}",
        file=sys.stderr,
    )
    print(startup_baseline(args.runs))
    results: dict[int, tuple[Timing, Timing | None]] = {}
    for n in parse_sizes(args.sizes):
        kb = ensure_kb(n, args.cache, args.seed)
        timing = measure(validate_cmd(mode, kb), args.runs)
        floor = None if args.no_floor else measure(floor_cmd(kb), args.runs)
        results[n] = (timing, floor)
        print(f"  {n}: median {timing.median:.3f} s, peak {timing.peak_rss:.0f} MiB", file=sys.stderr)
    print(table(rows_for(results, VALIDATE_TARGETS), HEADER))
    return 0


if __name__ == "__main__":
    sys.exit(main())
