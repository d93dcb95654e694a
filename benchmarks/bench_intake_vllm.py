"""Time ``vllm-latency`` intake of 3 arms x 1,000 latencies (issue #4 "Speed": <= 0.5 s whole process).

Usage::

    PYTHONPATH=src python3 benchmarks/bench_intake_vllm.py [--runs 5] [--latencies 1000] [--arms 3]

Generates the arm files (``vllm bench latency --output-json`` shape with a
raw ``latencies`` list and NumPy-style percentiles) into a temp dir, copies the
bundled KB there, then reports:

- ``api``: in-process time of ``parse`` + ``commit`` (dry-run parse only is
  also shown), the median over ``--runs`` after one warm-up;
- ``process``: wall time of a fresh ``python -c`` that imports inferkb, opens
  the KB copy, parses and commits — what the CLI will cost at least.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))

TARGET_S = 0.5


def make_arm(path: Path, n: int, seed: int) -> None:
    """Write one latency JSON of ``n`` samples (seconds) with its own avg and percentiles."""
    from inferkb.intake.base import percentile

    rng = random.Random(seed)
    lat = [rng.uniform(1.0, 2.0) for _ in range(n)]
    xs = sorted(lat)
    doc = {
        "avg_latency": statistics.fmean(lat),
        "latencies": lat,
        "percentiles": {str(p): percentile(xs, p) for p in (10, 25, 50, 75, 90, 99)},
    }
    path.write_text(json.dumps(doc, indent=4))


SCRIPT = """
import sys, importlib
from pathlib import Path
import inferkb
from inferkb.intake import IMPORTERS, IntakeOptions
from inferkb.intake.base import commit
importlib.import_module("inferkb.intake.vllm_latency")
root = Path(sys.argv[1])
kb = inferkb.open(root / "kb")
arms = [(p.stem, p) for p in sorted((root / "arms").glob("*.json"))]
res = IMPORTERS["vllm-latency"].parse([], IntakeOptions(arms=arms, baseline=arms[0][0], record_id=sys.argv[2]), kb)
commit(kb, res.records)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--latencies", type=int, default=1000)
    ap.add_argument("--arms", type=int, default=3)
    args = ap.parse_args()

    import inferkb
    from inferkb.intake import IMPORTERS, IntakeOptions
    from inferkb.intake.base import commit
    from inferkb.store import bundled_root

    __import__("inferkb.intake.vllm_latency")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "arms").mkdir()
        for i in range(args.arms):
            make_arm(root / "arms" / f"arm{i}.json", args.latencies, i)
        shutil.copytree(bundled_root(), root / "kb")
        arms = [(p.stem, p) for p in sorted((root / "arms").glob("*.json"))]
        kb = inferkb.open(root / "kb")
        api_parse, api_total = [], []
        for run in range(args.runs + 1):
            t0 = time.perf_counter()
            res = IMPORTERS["vllm-latency"].parse([], IntakeOptions(arms=arms, baseline="arm0", record_id=f"bench-api-{run}"), kb)
            t1 = time.perf_counter()
            commit(kb, res.records, update=True)
            t2 = time.perf_counter()
            if run:
                api_parse.append(t1 - t0)
                api_total.append(t2 - t0)
        proc = []
        env = dict(os.environ, PYTHONPATH=str(SRC))
        for run in range(args.runs + 1):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", SCRIPT, str(root), f"bench-proc-{run}"], check=True, env=env)
            if run:
                proc.append(time.perf_counter() - t0)
    med = statistics.median
    print(f"vllm-latency, {args.arms} arms x {args.latencies} latencies, median of {args.runs}:")
    print(f"  api parse          {med(api_parse) * 1000:8.1f} ms")
    print(f"  api parse+commit   {med(api_total) * 1000:8.1f} ms")
    print(f"  whole process      {med(proc) * 1000:8.1f} ms  (target <= {TARGET_S * 1000:.0f} ms)")
    return 0 if med(proc) <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
