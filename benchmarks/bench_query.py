"""Whole-process wall time of the query commands (``where``, ``search``, ``list``) on synthetic KBs (issue 11).

Usage::

    python benchmarks/bench_query.py [--sizes 20000] [--runs 5] [--cache DIR] [--compare-src ../main/src]
    python benchmarks/bench_query.py --bundled [--runs 5] [--compare-src DIR]

Each command runs as a user runs it, in a fresh process with stdout to /dev/null (so text output is the plain rows a
pipe gets): ``python -m inferkb where 'metric = output_tok_s' --kb DIR``. The query catalogue
(:mod:`inferkb.query_index`) lives in ``DIR/../catalogues`` for the run (``INFERKB_CACHE_DIR``); the first run of
each size builds it and is timed on its own (``cold``), then every command gets one untimed warm-up and
``--runs`` timed runs (median reported). ``after 1 edit`` times a ``where`` right after one record file was
rewritten (the catalogue re-reads that file only). ``--compare-src`` runs the same commands with another
checkout's ``src`` first on ``PYTHONPATH`` (e.g. the code before issue 11) for a before/after table.

``--bundled`` times the ``BUNDLED`` commands on the bundled KB instead (real names, 3,000-hit searches sorted by a
field); with ``--compare-src`` the two versions run interleaved (new, old, new, old, ...), medians of ``--runs`` each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_validate import DEFAULT_CACHE, SRC, ensure_kb, table  # noqa: E402

TARGET_S = 1.0  # issue 11: where as a table and search <= 1 s each on a 20,000-record KB

COMMANDS = {
    "where 1 condition": ["where", "metric = output_tok_s"],
    "where 2 conditions": ["where", "conditions.tensor_parallel > 1", "accelerator_count >= 8"],
    "where + fields/sort/limit": ["where", "metric = output_tok_s", "--fields", "key,value,unit", "--sort", "value:desc", "--limit", "20"],
    "where --format json": ["where", "metric = output_tok_s", "--format", "json"],
    "search deepseek-r1": ["search", "deepseek-r1"],
    "search hardware string": ["search", "NVIDIA H100 80GB HBM3"],
    "search --sort (all hits)": ["search", "deepseek-r1", "--sort", "value:desc", "--fields", "key,value"],
    "search --sort, match shown": ["search", "deepseek-r1", "--sort", "value:desc"],
    "list benchmark": ["list", "benchmark"],
}


# On the bundled KB (9,000+ records): every H100 hit (3,281) ranked by value, with and without the match column.
BUNDLED = {
    "search H100 --sort value:desc": ["search", "H100", "--sort", "value:desc"],
    "search H100 --sort value:desc --limit 1000": ["search", "H100", "--sort", "value:desc", "--limit", "1000"],
    "search H100 --sort value:desc --fields key,value": ["search", "H100", "--sort", "value:desc", "--fields", "key,value"],
    "search H100 --sort value:desc --format json": ["search", "H100", "--sort", "value:desc", "--format", "json"],
    'search "Llama 3.1 70B"': ["search", "Llama 3.1 70B"],
    "search gpt-oss-120b": ["search", "gpt-oss-120b"],
}


def run_once(cmd: list[str], src: Path, cache: Path) -> float:
    """Wall seconds of one run; raises RuntimeError unless it exits 0."""
    env = dict(os.environ, PYTHONPATH=str(src), INFERKB_CACHE_DIR=str(cache))
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-1500:]}")
    return took


def median_of(cmd: list[str], src: Path, cache: Path, runs: int) -> tuple[float, float]:
    run_once(cmd, src, cache)
    times = [run_once(cmd, src, cache) for _ in range(runs)]
    return statistics.median(times), min(times)


def bundled(runs: int, compare_src: Path | None, cache: Path) -> None:
    """Print the median wall time of each ``BUNDLED`` command, interleaved with ``compare_src`` when given."""
    shutil.rmtree(cache, ignore_errors=True)
    base = [sys.executable, "-m", "inferkb"]
    for src in [SRC] + ([compare_src] if compare_src else []):
        run_once([*base, "search", "H100"], src, cache)  # builds (or checks) the catalogue, untimed
    rows = []
    for label, args_ in BUNDLED.items():
        cmd = [*base, *args_]
        new, old = [], []
        run_once(cmd, SRC, cache)
        if compare_src:
            run_once(cmd, compare_src, cache)
        for _ in range(runs):
            new.append(run_once(cmd, SRC, cache))
            if compare_src:
                old.append(run_once(cmd, compare_src, cache))
        row = [label, f"{statistics.median(new):.3f}", f"{min(new):.3f}"]
        if compare_src:
            row += [f"{statistics.median(old):.3f}", f"{statistics.median(old) / statistics.median(new):.1f}x"]
        rows.append(row)
    header = ["command (bundled KB)", "median s", "min s"] + (["before s", "speed-up"] if compare_src else [])
    print(table(rows, header))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where generated KBs are kept")
    ap.add_argument("--compare-src", type=Path, help="another checkout's src/ to time the same commands with")
    ap.add_argument("--bundled", action="store_true", help="time the BUNDLED commands on the bundled KB instead")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    if args.bundled:
        bundled(args.runs, args.compare_src, args.cache / "catalogues-bundled")
        print(f"load average after: {os.getloadavg()[0]:.1f}", file=sys.stderr)
        return 0
    for n in (int(s) for s in args.sizes.split(",")):
        kb = ensure_kb(n, args.cache)
        catalogues = args.cache / f"catalogues-{n}"
        shutil.rmtree(catalogues, ignore_errors=True)
        base = [sys.executable, "-m", "inferkb"]
        cold = run_once([*base, "search", "deepseek-r1", "--kb", str(kb)], SRC, catalogues)
        rows = []
        for label, args_ in COMMANDS.items():
            cmd = [*base, *args_, "--kb", str(kb)]
            med, best = median_of(cmd, SRC, catalogues, args.runs)
            row = [label, f"{med:.3f}", f"{best:.3f}", "yes" if med <= TARGET_S else "NO"]
            if args.compare_src:
                try:
                    old, _ = median_of(cmd, args.compare_src, catalogues, max(1, args.runs // 2))
                    row += [f"{old:.3f}", f"{old / med:.1f}x"]
                except RuntimeError as exc:
                    row += ["fails", str(exc).splitlines()[0][-40:]]
            rows.append(row)
        victim = next((kb / "data" / "benchmarks").glob("*.json"))
        edits = []
        for _ in range(args.runs):
            victim.write_bytes(victim.read_bytes())
            edits.append(run_once([*base, *COMMANDS["where 1 condition"], "--kb", str(kb)], SRC, catalogues))
        rows.append(
            ["where after 1 edit", f"{statistics.median(edits):.3f}", f"{min(edits):.3f}", ""] + ([""] * 2 if args.compare_src else [])
        )
        header = ["command", "median s", "min s", f"<= {TARGET_S:g} s"] + (["before s", "speed-up"] if args.compare_src else [])
        print(f"\n{n:,} records ({kb}); first run, building the catalogue: {cold:.2f} s\n")
        print(table(rows, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
