"""Benchmark: import the whole MLPerf Inference v6.1 summary.csv (target <= 2 s), optionally a 200 MB table.

    PYTHONPATH=src python3 benchmarks/bench_intake_mlperf.py [--big]

Stages timed: parse + build (no validation, no write); parse + build + validate
(records staged in memory, as ``commit`` does, nothing written); parse + build +
validate + write into a temporary copy of the bundled KB. ``--big`` also streams
a generated ~200 MB table through :func:`inferkb.intake.mlperf.iter_records` and
reports the peak RSS, to show memory does not grow with the file.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import inferkb
from inferkb.intake.base import IntakeOptions, commit
from inferkb.intake.mlperf import REQUIRED_COLUMNS, TableContext, import_table, iter_records
from inferkb.store import Record, bundled_root
from inferkb.validate import validate_record

REPO = Path(__file__).resolve().parents[1]
V61 = REPO.parent / "shared" / "corpus" / "mlperf" / "inference_results_v6.1" / "summary.csv"
TARGET_S = 2.0


def fresh_kb(tmp: Path) -> inferkb.KB:
    root = tmp / "kb"
    shutil.copytree(bundled_root(), root, ignore=shutil.ignore_patterns("benchmarks"))
    return inferkb.open(root)


def parse(kb: inferkb.KB):
    with open(V61, encoding="utf-8", newline="") as fh:
        return import_table(kb, fh, IntakeOptions(source="mlperf-inference-v6-1-summary"), path=str(V61))


def validate_only(kb: inferkb.KB, records: list[dict]) -> int:
    staged = []
    for data in records:
        spec = kb.profile.types[data["type"]]
        staged.append(Record(f"{spec.dir}/{data['id']}", data["id"], data["type"], spec.dir, f"data/{spec.dir}/{data['id']}.json", data))
    with kb.index.staged(staged):
        return sum(1 for rec in staged for f in validate_record(kb, rec) if f.severity == "error")


def big_table(tmp: Path, mib: int) -> Path:
    header = ",".join(REQUIRED_COLUMNS)
    vals = {c: "x" for c in REQUIRED_COLUMNS}
    vals.update(
        Model="llama2-70b-99",
        MlperfModel="llama2-70b-99",
        Scenario="Offline",
        Result="1000.5",
        number_of_nodes="1",
        accelerators_per_node="8",
        accelerator_model_name="NVIDIA H200-SXM-141GB",
        Units="Tokens/s",
        inferred="0",
        version="v9.9",
        Accuracy="ROUGE1: 44.4",
    )
    llm = ",".join(f'"{vals[c]}"' for c in REQUIRED_COLUMNS)
    other = llm.replace("llama2-70b-99", "whisper").replace("Tokens/s", "Samples/s")
    path = tmp / "big.csv"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(header + "\n")
        for i in range(mib * 1024 * 1024 // (len(other) + 1)):
            fh.write((llm if i % 50 == 0 else other) + "\n")
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also stream a generated ~200 MB table")
    args = ap.parse_args()
    if not V61.exists():
        print(f"corpus not found at {V61}")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="bench-mlperf-"))
    try:
        kb = fresh_kb(tmp)
        t0 = time.perf_counter()
        res = parse(kb)
        t1 = time.perf_counter()
        errors = validate_only(kb, res.records)
        t2 = time.perf_counter()
        n = res.stats["imported"]
        print(f"parse+build:            {t1 - t0:6.3f} s  ({n} benchmark records, {len(res.records) - n} sources)")
        print(f"parse+build+validate:   {t2 - t0:6.3f} s  ({errors} validation errors)")
        kb = fresh_kb(tmp / "w")
        t3 = time.perf_counter()
        written = commit(kb, parse(kb).records)
        t4 = time.perf_counter()
        print(
            f"parse+build+val+write:  {t4 - t3:6.3f} s  ({len(written)} files)  target <= {TARGET_S} s: "
            f"{'OK' if t4 - t3 <= TARGET_S else 'SLOW'}"
        )
        if args.big:
            path = big_table(tmp, 200)
            ctx = TableContext(kb, IntakeOptions(), str(path))
            t5 = time.perf_counter()
            with open(path, encoding="utf-8", newline="") as fh:
                count = sum(1 for _ in iter_records(fh, ctx))
            t6 = time.perf_counter()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"200 MB stream:          {t6 - t5:6.3f} s  ({count} records built, {sum(ctx.skipped.values())} rows skipped; "
                f"peak RSS {rss:.0f} MiB, file {path.stat().st_size / 1048576:.0f} MiB)"
            )
        return 0 if t4 - t3 <= TARGET_S and errors == 0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
