"""Run independent read-only tasks over a loaded KB in forked worker processes (audits, validation).

A loaded KB is hundreds of MB of Python objects; sending it to a worker costs
more than the work (a pickle round trip of 20,000 records takes longer than
parsing them). A forked child instead *inherits* the loaded KB (copy-on-write)
and sends back only each task's result — findings and figures, small next to
the records. :func:`run_tasks` spreads the tasks over ``jobs`` processes (the
parent is one of them), longest first by their ``weight``, and returns the
results in the tasks' own order, so the output is the same as a serial run.

It runs serially when there is one job, one task, no ``fork`` start method
(Windows; macOS, where forking a process that may hold threads is unsafe),
or ``INFERKB_JOBS=1``. A worker that dies or whose result cannot be pickled
is not fatal: its tasks are run again in the parent. An exception a task
raises in a worker is raised in the parent, as in a serial run.

This module imports nothing from inferkb, so every layer may use it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Task", "can_fork", "default_jobs", "run_tasks"]


@dataclass(frozen=True)
class Task:
    """One unit of work: ``name`` (unique in a batch), ``func()`` returning a picklable result, relative ``weight`` (cost).

    Tasks that share a ``group`` (a non-empty string) run in one process, in
    their batch order, so a later one can reuse a table an earlier one left in
    a cache of the shared KB object (load-conditions leaves the device counts
    physical-plausibility reads).
    """

    name: str
    func: Callable[[], Any]
    weight: float = 1.0
    group: str | None = None


def default_jobs() -> int:
    """Worker processes to use: ``INFERKB_JOBS`` when set (>= 1), else one per CPU that is idle now, at most 4.

    "Idle" follows the 1-minute load average (as ``make -l`` does): on a
    machine already running other work, a second process only competes for the
    same cores and costs more than it saves (each worker also rebuilds the
    tables it needs), so a loaded machine runs serially.
    """
    env = os.environ.get("INFERKB_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        idle = cpus - os.getloadavg()[0]
    except (AttributeError, OSError):
        idle = cpus
    return max(1, min(4, cpus, 1 + int(idle)))


def can_fork() -> bool:
    """True where forking a worker is safe: Linux (not macOS, where a forked process that holds threads may hang)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def _plan(tasks: Sequence[Task], jobs: int) -> list[list[int]]:
    """Longest-processing-time-first: each unit (heaviest first) goes to the least-loaded bin; bin 0 is the parent's.

    A unit is one task, or every task of one ``group`` with their weights summed.
    """
    units: dict[object, list[int]] = {}
    for i, task in enumerate(tasks):
        units.setdefault(task.group or ("task", i), []).append(i)
    weight = {key: sum(tasks[i].weight for i in members) for key, members in units.items()}
    bins: list[list[int]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for key in sorted(units, key=lambda k: (-weight[k], units[k][0])):
        b = min(range(jobs), key=lambda j: (load[j], j))
        bins[b].extend(units[key])
        load[b] += weight[key]
    return [sorted(b) for b in bins if b]


def _run_serial(tasks: Sequence[Task], indices: Sequence[int], out: dict[int, Any]) -> None:
    for i in indices:
        out[i] = tasks[i].func()


def run_tasks(tasks: Sequence[Task], *, jobs: int | None = None) -> list[Any]:
    """Run ``tasks`` (each ``func()`` independent and read-only) and return their results in the tasks' order.

    ``jobs`` defaults to :func:`default_jobs`. Work is split across forked
    children plus the calling process; see the module docstring for when it
    runs serially. Raises whatever a task raises.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    jobs = min(jobs, len(tasks))
    results: dict[int, Any] = {}
    if jobs <= 1 or not can_fork():
        _run_serial(tasks, range(len(tasks)), results)
        return [results[i] for i in range(len(tasks))]
    import pickle  # here: a command that only asks default_jobs() (validate) does not import it

    bins = _plan(tasks, jobs)
    children: list[tuple[int, int, list[int]]] = []  # (pid, read fd, task indices)
    for indices in bins[1:]:
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run its tasks, send (index, ok, value) back, never return into the caller
            os.close(read_fd)
            code = 0
            try:
                sent = []
                for i in indices:
                    try:
                        sent.append((i, True, tasks[i].func()))
                    except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
                        sent.append((i, False, exc))
                try:
                    payload = pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - the parent re-runs these tasks itself
                    payload = b""
                with os.fdopen(write_fd, "wb") as fh:
                    fh.write(payload)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd, indices))
    errors: dict[int, BaseException] = {}
    try:
        _run_serial(tasks, bins[0], results)
    finally:
        for pid, read_fd, _indices in children:
            with os.fdopen(read_fd, "rb") as fh:
                payload = fh.read()
            os.waitpid(pid, 0)
            try:
                sent = pickle.loads(payload) if payload else None
            except Exception:  # noqa: BLE001 - a truncated payload: run the tasks here instead
                sent = None
            if not sent:
                continue
            for i, ok, value in sent:
                if ok:
                    results[i] = value
                else:
                    errors[i] = value
    for i in sorted(errors):
        raise errors[i]
    missing = [i for i in range(len(tasks)) if i not in results]
    _run_serial(tasks, missing, results)
    return [results[i] for i in range(len(tasks))]
