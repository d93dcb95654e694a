"""staleness audit (KB901-KB903) with a fixed 'today' so the expectations are dates counted by hand."""

from __future__ import annotations

import datetime as dt

import pytest

import inferkb
from conftest import RESEARCH, rec, write_kb
from inferkb.audit import staleness

TODAY = dt.date(2026, 11, 29)


@pytest.fixture(autouse=True)
def fixed_today(monkeypatch):
    monkeypatch.setattr(staleness, "_today", lambda: TODAY)


def supply(rid: str, **fields) -> dict:
    return rec("supply", rid, kind="cloud", accelerator_ids=[], **fields)


def run(tmp_path, files: dict):
    report = inferkb.open(write_kb(tmp_path / "kb", files)).audit("staleness")
    return report.findings, report.figures["staleness"]


def test_supply_record_older_than_90_days_is_stale(tmp_path):
    # 2026-08-29 -> 2026-11-29 is 92 days
    found, figs = run(tmp_path, {"data/supply/old.json": supply("old", updated="2026-08-29")})
    assert [(f.code, f.extra["age_days"]) for f in found] == [("KB901", 92)]
    assert figs["stale"] == 1


def test_supply_record_exactly_90_days_old_is_not_stale(tmp_path):
    # 2026-08-31 -> 2026-11-29 is 90 days
    found, figs = run(tmp_path, {"data/supply/edge.json": supply("edge", updated="2026-08-31")})
    assert found == [] and figs["fresh"] == 1


def test_any_record_with_a_price_field_is_in_scope(tmp_path):
    found, _ = run(
        tmp_path,
        {
            "data/engines/priced.json": rec("engine", "priced", price_usd=0.5, updated="2025-01-01"),
            "data/engines/free.json": rec("engine", "free", price_usd=None, updated="2025-01-01"),
        },
    )
    assert [f.record for f in found] == ["engines/priced"]


def test_future_updated_date_is_info_pointing_at_kb106_not_a_second_error(tmp_path):
    found, figs = run(tmp_path, {"data/supply/future.json": supply("future", updated="2027-01-01")})
    assert [(f.code, f.severity) for f in found] == [("KB902", "info")]
    assert "KB106" in found[0].message
    assert figs["future"] == 1 and figs["oldest"] is None


def test_supply_record_without_a_usable_date_is_undated(tmp_path):
    found, _ = run(tmp_path, {"data/supply/nodate.json": {k: v for k, v in supply("nodate").items() if k != "updated"}})
    assert [f.code for f in found] == ["KB903"]


def test_figures_name_the_oldest_record(tmp_path):
    _, figs = run(
        tmp_path, {"data/supply/a.json": supply("a", updated="2026-11-01"), "data/supply/b.json": supply("b", updated="2026-01-15")}
    )
    assert figs["oldest"] == {"record": "supply/b", "updated": "2026-01-15", "age_days": (TODAY - dt.date(2026, 1, 15)).days}
    assert figs["in_scope"] == 2


def test_today_and_limit_can_be_passed_explicitly(tmp_path):
    kb = inferkb.open(write_kb(tmp_path / "kb", {"data/supply/a.json": supply("a", updated="2026-11-01")}))
    result = staleness.run(kb, today=dt.date(2026, 11, 11), max_age_days=5)  # 10 days > 5
    assert [f.code for f in result.findings] == ["KB901"]


def test_audit_runs_on_the_bundled_kb():
    figs = inferkb.open().audit("staleness").figures["staleness"]
    assert figs["max_age_days"] == staleness.MAX_AGE_DAYS


def test_corpus_has_no_supply_or_price_records_in_scope():
    # The corpus sample has no data/supply/ and no record with a non-null price field (checked by grep).
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    report = inferkb.open(RESEARCH).audit("staleness")
    assert report.findings == [] and report.figures["staleness"]["in_scope"] == 0
