"""Hostile-input and write-path timings (issue #12): linear parsing, linear search snippets, batch-write cost.

Usage::

    python benchmarks/bench_hostile.py [--runs 5] [--sizes 25,50,100,200] [--batches 200,400,800] [--only console,search,write]
    PYTHONPATH=/path/to/other/src python benchmarks/bench_hostile.py   # the same on another checkout

Three measurements, each the median of ``--runs`` after one warm-up, in-process:

- ``console``: :func:`inferkb.intake.vllm_serve.parse_console` on a vLLM
  console log of S KB: the real corpus log after S KB of hostile lines (a
  ``Namespace(...)`` line of one long word, then lines of spaces under a
  result label), the shapes that made the old regular expressions quadratic;
- ``search``: :func:`inferkb.query.search` on a KB of one record whose notes
  hold S KB of text with a query hit every few words (FTS5's ``snippet()``
  was quadratic in the hits of one record);
- ``write``: :meth:`inferkb.KB.write_records` of B new records in one batch
  (staged, journaled, linked) into a fresh KB, per record.

Sizes double from row to row: the ``x prev`` column is each median over the
previous row's (2.0 = linear, 4.0 = quadratic).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):  # PYTHONPATH picks another checkout's inferkb (see Usage)
    sys.path.insert(0, str(HERE.parent / "src"))
CONSOLE_LOG = HERE.parent.parent / "shared" / "corpus" / "harness" / "vllm" / "serve_console_benchmark_serving_qwen25-7b_dec2024.log"


def median_time(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def console_text(kib: int) -> str:
    real = CONSOLE_LOG.read_text(encoding="utf-8") if CONSOLE_LOG.is_file() else "============ Serving Benchmark Result ============\n"
    half = kib * 512
    hostile = (
        "Namespace(" + "b" * half + ")\n" + "============ Serving Benchmark Result ============\nSuccessful" + " " * half + "x\n=====\n"
    )
    return hostile + real


def bench_console(sizes: list[int], runs: int) -> list[tuple[int, float]]:
    from inferkb.intake.vllm_serve import parse_console

    out = []
    for kib in sizes:
        text = console_text(kib)

        def run(text=text):
            try:
                parse_console(text, Path("console.log"))
            except Exception:  # noqa: BLE001 - only the time matters here
                pass

        out.append((kib, median_time(run, runs)))
    return out


def bench_search(sizes: list[int], runs: int, tmp: Path) -> list[tuple[int, float]]:
    import inferkb
    from inferkb.query import search

    out = []
    for kib in sizes:
        root = tmp / f"search-{kib}"
        (root / "data" / "engines").mkdir(parents=True)
        words = []
        while sum(map(len, words)) < kib * 1024:
            words.append(f"word{len(words)} speculative decoding ")
        import json

        rec = {"id": "big", "type": "engine", "name": "big", "notes": "".join(words), "sources": []}
        (root / "data" / "engines" / "big.json").write_text(json.dumps(rec))
        kb = inferkb.open(root)
        out.append((kib, median_time(lambda kb=kb: search(kb, "speculative decoding"), runs)))
    return out


def bench_write(batches: list[int], runs: int, tmp: Path) -> list[tuple[int, float]]:
    import inferkb

    out = []
    for n in batches:
        times = []
        for r in range(runs + 1):
            root = tmp / f"write-{n}-{r}"
            (root / "data" / "engines").mkdir(parents=True)
            kb = inferkb.open(root)
            recs = [{"id": f"e-{i:05d}", "type": "engine", "name": f"e {i}", "sources": []} for i in range(n)]
            start = time.perf_counter()
            kb.write_records(recs, validate=False)
            times.append(time.perf_counter() - start)
            shutil.rmtree(root)
        out.append((n, statistics.median(times[1:])))
    return out


def table(title: str, unit: str, rows: list[tuple[int, float]], per: bool = False) -> None:
    print(f"\n{title}")
    print(f"| {unit} | median s | x prev |" + (" ms per record |" if per else ""))
    print("|--:|--:|--:|" + ("--:|" if per else ""))
    prev = None
    for size, t in rows:
        ratio = f"{t / prev:.2f}" if prev else "-"
        extra = f" {1000 * t / size:.3f} |" if per else ""
        print(f"| {size:,} | {t:.4f} | {ratio} |{extra}")
        prev = t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="25,50,100,200", help="KiB of hostile text for console and search")
    ap.add_argument("--batches", default="200,400,800", help="records per write batch")
    ap.add_argument("--only", default="console,search,write", help="which measurements, comma-separated")
    args = ap.parse_args()
    only = set(args.only.split(","))
    sizes = [int(s) for s in args.sizes.split(",")]
    import inferkb

    print(f"inferkb from {Path(inferkb.__file__).parent}")
    if "console" in only:
        table("console log parse (vllm-serve)", "KiB", bench_console(sizes, args.runs))
    with tempfile.TemporaryDirectory(prefix="inferkb-bench-hostile-") as tmp:
        if "search" in only:
            table("search, one large record", "KiB", bench_search(sizes, args.runs, Path(tmp)))
        if "write" in only:
            batches = [int(b) for b in args.batches.split(",")]
            table("write_records, one batch of new records", "records", bench_write(batches, args.runs, Path(tmp)), per=True)


if __name__ == "__main__":
    main()
