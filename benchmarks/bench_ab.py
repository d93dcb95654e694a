"""Interleaved A/B of one inferkb command between source trees: medians of wall and of user+sys CPU.

Usage::

    python benchmarks/bench_ab.py --kb DIR [--rounds 7] [--src main=/work/main/src] [--src branch=src]
                                  [--env branch2=INFERKB_JOBS=2] [--cmd validate] [--cache DIR] [-- extra args]

Each ``--src NAME=PATH`` is a variant run as ``PYTHONPATH=PATH python -m inferkb <cmd> --kb DIR
--format json`` (the load cache off: ``INFERKB_NO_CACHE=1``, stdout to ``/dev/null``); ``--env
NAME=VAR=VALUE`` adds a variant of the last ``--src`` with one more environment variable
(``--env NAME@SRC=VAR=VALUE``: of the ``--src`` named SRC). One
untimed warm-up round, then ``--rounds`` rounds, each running every variant once in turn, so a
change in the machine's load hits every variant alike. CPU is the child's own user + sys time
(``os.wait4``). ``--cache DIR`` times the warm path instead: the load cache on, in ``DIR/<variant>``
(one folder per variant: two trees' code fingerprints differ, so a shared folder would be rewritten
by each in turn), filled by the warm-up round and kept, so every timed run finds every file cached
(the KB's files must be older than the cache's 2 s racy window). ``--first DIR`` times the first run
with the cache on instead (a fresh clone, a new day, new code): the folder ``DIR/<variant>`` is emptied
before every run, so each run finds nothing cached and writes the whole cache. Prints the 1-minute load average at the start and the end, a per-variant table of
medians and minima, and each variant's median against the first one's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_once(cmd: list[str], env: dict[str, str], empty: Path | None = None) -> tuple[float, float]:
    """``(wall s, user+sys CPU s)`` of one run of ``cmd`` with ``env``, stdout and stderr to /dev/null; the folder
    ``empty`` (a cache folder) is removed first, outside the timing."""
    if empty is not None:
        shutil.rmtree(empty, ignore_errors=True)
        empty.mkdir(parents=True)
    null = os.open(os.devnull, os.O_WRONLY)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execve(cmd[0], cmd, env)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    os.close(null)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def _warm_env(env: dict[str, str], folder: Path) -> dict[str, str]:
    """``env`` with the load cache on, kept in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return {k: v for k, v in env.items() if k != "INFERKB_NO_CACHE"} | {"INFERKB_CACHE_DIR": str(folder.resolve())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cmd", default="validate")
    ap.add_argument("--src", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VAR=VALUE")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--cache", type=Path, metavar="DIR", help="time warm runs: load cache on, in DIR/<variant>")
    mode.add_argument("--first", type=Path, metavar="DIR", help="time first runs: load cache on, DIR/<variant> emptied before each")
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args(argv)
    srcs = args.src or [f"branch={HERE.parent / 'src'}"]
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"INFERKB_NO_CACHE": "1"}
    variants: list[tuple[str, dict[str, str]]] = []
    for spec in srcs:
        name, _, path = spec.partition("=")
        variants.append((name, base | {"PYTHONPATH": str(Path(path).resolve())}))
    for spec in args.env:
        name, _, assignment = spec.partition("=")
        var, _, value = assignment.partition("=")
        name, _, of = name.partition("@")
        src_env = dict(variants[: len(srcs)]).get(of) if of else variants[len(srcs) - 1][1]
        if src_env is None:
            raise SystemExit(f"--env {spec}: no --src named {of!r}")
        variants.append((name, src_env | {var: value}))
    folders: dict[str, Path | None] = {name: None for name, _ in variants}
    if args.cache is not None:
        variants = [(name, _warm_env(env, args.cache / name)) for name, env in variants]
    elif args.first is not None:
        variants = [(name, _warm_env(env, args.first / name)) for name, env in variants]
        folders = {name: args.first / name for name, _ in variants}
    cmd = [sys.executable, "-m", "inferkb", args.cmd, "--kb", str(args.kb), "--format", "json", *args.extra]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in variants}
    load0 = os.getloadavg()[0]
    for name, env in variants:  # warm-up: page cache, .pyc files
        run_once(cmd, env, folders[name])
    for _ in range(args.rounds):
        for name, env in variants:
            times[name].append(run_once(cmd, env, folders[name]))
    load1 = os.getloadavg()[0]
    if args.cache is not None:
        cache = f", warm (load cache in {args.cache}/<variant>)"
    elif args.first is not None:
        cache = f", first runs (load cache in {args.first}/<variant>, emptied before each run)"
    else:
        cache = ", cold (INFERKB_NO_CACHE=1)"
    print(f"{args.cmd} --kb {args.kb}: {args.rounds} rounds{cache}, load average {load0:.2f} -> {load1:.2f}")
    print(f"| variant | median wall s | min wall s | median cpu s | min cpu s | wall vs {variants[0][0]} |")
    print("|--|--:|--:|--:|--:|--:|")
    first = statistics.median(w for w, _ in times[variants[0][0]])
    for name, _ in variants:
        walls = [w for w, _ in times[name]]
        cpus = [c for _, c in times[name]]
        med = statistics.median(walls)
        print(f"| {name} | {med:.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} | {min(cpus):.3f} | {med / first:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
