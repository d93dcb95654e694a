"""The CLI renders a report with the garbage collector off when it owns the process (inferkb.cli.common.finish).

After a large check the collector, once re-enabled, would traverse every object the audits left on its first full
pass; the report's sort allocates enough to trigger one (1.7 s at 100,000 synthetic records, benchmarks/README.md).
"""

from __future__ import annotations

import gc

import pytest

from inferkb import plugins
from inferkb.cli import common
from inferkb.report import Report


@pytest.fixture
def spy_reporter(monkeypatch):
    """A ``--format`` reporter that notes whether the collector is on while it renders."""
    seen: list[bool] = []
    monkeypatch.setitem(plugins.REPORTERS.items, "gc-spy", lambda report, target: seen.append(gc.isenabled()))
    return seen


@pytest.mark.parametrize("owned", [True, False])
def test_the_collector_is_off_while_rendering_only_when_the_cli_owns_the_process(spy_reporter, monkeypatch, owned):
    monkeypatch.setattr(common.process, "owned", owned)
    assert gc.isenabled()
    with pytest.raises(SystemExit) as exit_:
        common.finish(Report(kb="kb", records=0), "gc-spy", "error", title="check")
    assert exit_.value.code == 0
    assert spy_reporter == [not owned]
    assert gc.isenabled()  # on again after the report (a test's CliRunner process goes on)


def test_a_reporter_that_raises_leaves_the_collector_on(monkeypatch):
    def broken(report, target):
        raise RuntimeError("reporter bug")

    monkeypatch.setitem(plugins.REPORTERS.items, "broken", broken)
    monkeypatch.setattr(common.process, "owned", True)
    with pytest.raises(RuntimeError):
        common.finish(Report(kb="kb", records=0), "broken", "error", title="check")
    assert gc.isenabled()
