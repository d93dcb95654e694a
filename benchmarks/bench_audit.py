"""Whole-process time of ``inferkb audit`` / ``check`` on synthetic KBs, plus each audit timed on its own.

Usage::

    python benchmarks/bench_audit.py [--sizes 150,4000,20000,100000] [--runs 3]
                                     [--command audit|check] [--mode auto|cli|api]
                                     [--cache DIR] [--no-per-audit]

Whole process: ``python -m inferkb audit --kb DIR --format json`` (``check``
with ``--command check``), or the API equivalent ``inferkb.open(DIR).audit()``
in ``--mode api``; median of ``--runs`` after one warm-up, peak RSS from
``os.wait4``. Per audit: the KB is loaded once in this process and each audit
registered by ``inferkb.audit.load_all()`` is called on it and timed
separately (``--per-audit-runs`` times, median); an audit that fails to import
or raises is reported with its error instead of stopping the benchmark, since
audits are still being written.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from bench_validate import (  # noqa: E402
    DEFAULT_CACHE,
    RSS_TARGET_MB,
    Timing,
    ensure_kb,
    measure,
    parse_sizes,
    resolve_mode,
    table,
    use_load_cache,
)

# Targets from issue #3 ("Speed"): all audits on 4,000 records <= 2 s, on 100,000 <= 60 s.
AUDIT_TARGETS = {4000: 2.0, 100000: 60.0}


def audit_cmd(mode: str, command: str, kb: Path) -> list[str]:
    if mode == "cli":
        return [sys.executable, "-m", "inferkb", command, "--kb", str(kb), "--format", "json"]
    call = "audit()" if command == "audit" else "check()"
    return [sys.executable, "-c", f"import inferkb; inferkb.open({str(kb)!r}).{call}"]


def registered_audits() -> tuple[dict, dict[str, str]]:
    """Import each audit module on its own; return (registry, {module: import error})."""
    from inferkb import audit as audit_pkg

    broken: dict[str, str] = {}
    for mod in audit_pkg.AUDIT_MODULES:
        try:
            importlib.import_module(f"inferkb.audit.{mod}")
        except Exception as exc:  # noqa: BLE001 - a half-written audit must not stop the benchmark
            broken[mod] = f"{type(exc).__name__}: {exc}"
    return audit_pkg.AUDITS, broken


def per_audit(kb_dir: Path, runs: int) -> tuple[float, dict[str, tuple[float | None, int, str]]]:
    """Load the KB once; time each registered audit. Returns (load s, {name: (median s or None, findings, error)})."""
    import inferkb

    start = time.perf_counter()
    kb = inferkb.open(kb_dir)
    load = time.perf_counter() - start
    registry, broken = registered_audits()
    out: dict[str, tuple[float | None, int, str]] = {m: (None, 0, f"import failed: {e}") for m, e in broken.items()}
    for name, spec in registry.items():
        times, found, error = [], 0, ""
        for _ in range(runs):
            start = time.perf_counter()
            try:
                result = spec.func(kb)
            except Exception as exc:  # noqa: BLE001
                error = f"{type(exc).__name__}: {exc} ({traceback.extract_tb(exc.__traceback__)[-1].name})"
                break
            times.append(time.perf_counter() - start)
            found = len(result.findings)
        out[name] = (statistics.median(times) if times and not error else None, found, error)
    return load, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="150,4000,20000,100000")
    ap.add_argument("--runs", type=int, default=3, help="timed whole-process runs per size")
    ap.add_argument("--warmup", type=int, default=1, help="untimed whole-process runs first (0 for very large N)")
    ap.add_argument("--per-audit-runs", type=int, default=1)
    ap.add_argument("--command", choices=("audit", "check"), default="audit")
    ap.add_argument("--mode", choices=("auto", "cli", "api"), default="auto")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-per-audit", action="store_true")
    ap.add_argument("--load-cache", action="store_true", help="warm runs: the load cache on (off by default: cold runs)")
    args = ap.parse_args(argv)
    use_load_cache(args.load_cache)
    mode = resolve_mode(args.mode)
    print(
        f"mode: {mode} ({' '.join(audit_cmd(mode, args.command, Path('DIR'))[1:])}); runs: {args.runs}; "
        f"load average {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )
    whole: dict[int, Timing] = {}
    detail: dict[int, tuple[float, dict]] = {}
    for n in parse_sizes(args.sizes):
        kb = ensure_kb(n, args.cache, args.seed)
        try:
            whole[n] = measure(audit_cmd(mode, args.command, kb), args.runs, args.warmup)
            print(f"  {n}: median {whole[n].median:.3f} s", file=sys.stderr)
        except RuntimeError as exc:
            print(f"  {n}: whole-process run failed: {exc}", file=sys.stderr)
        if not args.no_per_audit:
            detail[n] = per_audit(kb, args.per_audit_runs)
    rows = []
    for n, t in whole.items():
        target = AUDIT_TARGETS.get(n)
        ok = "" if target is None else ("yes" if t.median <= target and (n < 100000 or t.peak_rss <= RSS_TARGET_MB) else "NO")
        rows.append(
            [
                f"{n:,}",
                f"{t.median:.3f}",
                f"{t.best:.3f}",
                f"{t.cpu_median:.3f}",
                f"{t.peak_rss:.0f}",
                f"{t.median / n * 1000:.4f}",
                "-" if target is None else f"{target:g}",
                ok,
            ]
        )
    print(f"{args.command} (whole process)")
    print(table(rows, ["N", "median s", "min s", "cpu s", "peak RSS MiB", "s per 1k", "target s", "meets"]))
    if detail:
        names = list(dict.fromkeys(name for _, per in detail.values() for name in per))
        sizes = list(detail)
        print("\nper audit (seconds in-process on a loaded KB; findings in brackets)")
        rows = [["(load KB)", *(f"{detail[n][0]:.3f}" for n in sizes)]]
        for name in names:
            cells = []
            for n in sizes:
                secs, found, error = detail[n][1].get(name, (None, 0, "not registered"))
                cells.append(f"{secs:.3f} [{found}]" if secs is not None else f"ERR {error[:60]}")
            rows.append([name, *cells])
        print(table(rows, ["audit", *(f"N={n:,}" for n in sizes)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
