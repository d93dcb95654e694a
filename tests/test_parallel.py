"""Audits in forked workers give the serial run's report; task errors and dead workers behave as in a serial run."""

from __future__ import annotations

import os

import pytest

import inferkb
from inferkb import audit as audit_pkg
from inferkb.parallel import Task, _plan, run_tasks


def _pid_and(value):
    return os.getpid(), value


def test_results_come_back_in_task_order_from_several_processes():
    tasks = [Task(f"t{i}", lambda i=i: _pid_and(i * i), weight=1.0) for i in range(5)]
    results = run_tasks(tasks, jobs=2)
    assert [v for _, v in results] == [0, 1, 4, 9, 16]
    if hasattr(os, "fork") and os.uname().sysname == "Linux":
        assert len({pid for pid, _ in results}) == 2


def test_an_exception_in_a_worker_is_raised_in_the_caller():
    def boom():
        raise ValueError("bad record 7")

    tasks = [Task("a", lambda: 1, 5.0), Task("b", boom, 1.0)]
    with pytest.raises(ValueError, match="bad record 7"):
        run_tasks(tasks, jobs=2)


def test_a_result_that_cannot_be_pickled_is_recomputed_in_the_caller():
    tasks = [Task("heavy", lambda: "x", 5.0), Task("lambda", lambda: lambda: 42, 1.0)]
    heavy, made = run_tasks(tasks, jobs=2)
    assert heavy == "x" and made() == 42


def test_plan_puts_the_heaviest_tasks_in_different_processes():
    tasks = [Task("a", int, 1.0), Task("b", int, 0.8), Task("c", int, 0.3), Task("d", int, 0.2)]
    bins = _plan(tasks, 2)
    assert sorted(map(sorted, bins)) == [[0, 3], [1, 2]]


def test_plan_keeps_a_group_in_one_process_in_batch_order():
    tasks = [Task("a", int, 1.0, "g"), Task("b", int, 1.2), Task("c", int, 0.9), Task("d", int, 0.5, "g")]
    bins = _plan(tasks, 2)
    # The group (1.5) is the heaviest unit: the parent's bin, its members in batch order; b and c go to the child.
    assert bins == [[0, 3], [1, 2]]
    assert _plan(tasks, 4) == [[0, 3], [1], [2]]


def test_plausibility_runs_beside_load_conditions_so_it_reuses_their_device_counts():
    registry = audit_pkg.load_all()
    assert registry["load-conditions"].group == registry["physical-plausibility"].group == "conditions"
    names = list(registry)
    assert names.index("load-conditions") < names.index("physical-plausibility")


def test_check_in_two_processes_equals_the_serial_check(research_kb, monkeypatch):
    monkeypatch.setattr(audit_pkg, "PARALLEL_MIN_RECORDS", 0)
    kb = inferkb.open(research_kb)
    serial = kb.check(jobs=1).to_dict()
    parallel = inferkb.open(research_kb).check(jobs=2).to_dict()
    assert parallel == serial
    assert serial["summary"]["figures"]["validate"]["records_checked"] == len(kb.records)


def test_default_jobs_follows_idle_cpus_and_the_environment(monkeypatch):
    from inferkb import parallel

    monkeypatch.delenv("INFERKB_JOBS", raising=False)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert parallel.default_jobs() == 2
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (4.5, 4.0, 4.0))
    assert parallel.default_jobs() == 1  # both cores busy: a worker would only compete
    monkeypatch.setenv("INFERKB_JOBS", "3")
    assert parallel.default_jobs() == 3
