"""Benchmarks for the analysis and export speed targets (issue #9).

Usage::

    python benchmarks/bench_analysis.py [--sql-records 100000] [--export-records 100000] [--compare-records 20000]
                                        [--runs 5] [--formats duckdb,parquet,sqlite,csv,datapackage] [--cache DIR]

Targets: ``sql`` on a 100,000-record synthetic KB <= 1 s per query after load;
``export`` of 100,000 records <= 30 s; ``compare`` over 10,000 benchmarks
<= 1 s (a 20,000-record synthetic KB holds about 10,000 benchmarks).

What is timed, in this process (the KB is loaded once, untimed, and the
load time printed): ``sql`` — :meth:`Database.build` once (printed as "load"),
then each query of :data:`QUERIES` ``--runs`` times, median; ``export`` — a
whole :func:`inferkb.export.writers.export` call per format (tables built from
the loaded KB, findings "none" and, once, "validate"), plus one whole CLI
process (`python -m inferkb export`, KB load included); ``compare`` — the
:func:`inferkb.analysis.compare.compare` call over every benchmark, with and
without a model filter, ``--runs`` times, median.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import DEFAULT_CACHE, ensure_kb  # noqa: E402

QUERIES = {
    "count by metric": "SELECT metric, count(*) FROM benchmarks GROUP BY 1 ORDER BY 2 DESC",
    "join conditions": "SELECT b.model_id, avg(b.value) FROM benchmarks b JOIN conditions c ON c.benchmark_id = b.id "
    "WHERE c.input_tokens > 1000 GROUP BY 1 ORDER BY 2 DESC LIMIT 20",
    "join accelerators": "SELECT a.name, count(*) FROM benchmark_accelerator_ids l JOIN accelerators a ON a.id = l.accelerator_id "
    "GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
    "provenance by action": "SELECT action, count(*) FROM provenance GROUP BY 1",
    "text search": "SELECT count(*) FROM records WHERE notes ILIKE '%speculative%'",
}
TARGETS = {"sql": 1.0, "export": 30.0, "compare": 1.0}


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_sql(root: Path, runs: int) -> None:
    import inferkb
    from inferkb.export.sql import Database

    start = time.perf_counter()
    kb = inferkb.open(root)
    print(f"sql: KB load {time.perf_counter() - start:.2f} s ({len(kb.records):,} records)")
    start = time.perf_counter()
    db = Database.build(kb, findings="none")
    print(f"sql: Database.build (tables + DuckDB load) {time.perf_counter() - start:.2f} s")
    with db:
        print(f"| query | median s (of {runs}) | rows | target s | meets |\n|--|--:|--:|--:|--|")
        for name, q in QUERIES.items():
            rows = len(db.query(q).rows)
            t = median_time(lambda q=q: db.query(q), runs)
            print(f"| {name} | {t:.4f} | {rows} | {TARGETS['sql']} | {'yes' if t <= TARGETS['sql'] else 'NO'} |")


def bench_export(root: Path, formats: list[str], runs: int) -> None:
    import inferkb
    from inferkb.export.writers import export

    kb = inferkb.open(root)
    out = Path(tempfile.mkdtemp(prefix="inferkb-bench-export-"))
    try:
        print(f"\nexport of {len(kb.records):,} records (API: tables built from a loaded KB; findings none)")
        print(f"| format | median s (of {runs}) | target s | meets |\n|--|--:|--:|--|")
        for fmt in formats:
            dest = out / f"x-{fmt}"

            def once(fmt=fmt, dest=dest):
                export(kb, fmt, dest, overwrite=True, findings="none")

            t = median_time(once, runs)
            print(f"| {fmt} | {t:.2f} | {TARGETS['export']} | {'yes' if t <= TARGETS['export'] else 'NO'} |")
        start = time.perf_counter()
        export(kb, "sqlite", out / "with-findings.sqlite", findings="validate")
        print(f"sqlite with --findings validate: {time.perf_counter() - start:.2f} s")
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "inferkb",
                "export",
                "--kb",
                str(root),
                "--to",
                "sqlite",
                "--out",
                str(out / "cli.sqlite"),
                "--findings",
                "none",
            ],
            capture_output=True,
            text=True,
        )
        print(f"CLI process (load + export sqlite, findings none): {time.perf_counter() - start:.2f} s (exit {proc.returncode})")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def bench_compare(root: Path, runs: int) -> None:
    import inferkb
    from inferkb.analysis.compare import compare

    kb = inferkb.open(root)
    n = sum(1 for _ in kb.by_type("benchmark"))
    model = next(kb.by_type("model")).id
    t_all = median_time(lambda: compare(kb), runs)
    t_model = median_time(lambda: compare(kb, model=model), runs)
    t_vary = median_time(lambda: compare(kb, vary=("engine", "engine_version", "hardware"), per_accelerator_basis=True), runs)
    res = compare(kb)
    print(f"\ncompare over {n:,} benchmarks ({len(res.classes):,} classes, {len(res.not_comparable):,} not comparable)")
    print(f"| call | median s (of {runs}) | target s | meets |\n|--|--:|--:|--|")
    for name, t in (("compare(kb)", t_all), (f"compare(kb, model={model!r})", t_model), ("compare(kb, vary=3, per_accelerator)", t_vary)):
        print(f"| {name} | {t:.3f} | {TARGETS['compare']} | {'yes' if t <= TARGETS['compare'] else 'NO'} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sql-records", type=int, default=100_000)
    ap.add_argument("--export-records", type=int, default=100_000)
    ap.add_argument("--compare-records", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--export-runs", type=int, default=1)
    ap.add_argument("--formats", default="duckdb,parquet,sqlite,csv,datapackage")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--only", choices=("sql", "export", "compare"))
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "sql"):
        bench_sql(ensure_kb(args.sql_records, args.cache), args.runs)
    if args.only in (None, "export"):
        bench_export(ensure_kb(args.export_records, args.cache), args.formats.split(","), args.export_runs)
    if args.only in (None, "compare"):
        bench_compare(ensure_kb(args.compare_records, args.cache), args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
