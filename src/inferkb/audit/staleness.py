"""Audit ``staleness``: supply and price facts that have not been re-verified recently.

Prices, lead times and availability change monthly, so a supply record — or
any record carrying a non-null price field (a key containing ``price``) — whose
``updated`` date is more than :data:`MAX_AGE_DAYS` days old is reported (KB901).
A supply/price record with no usable ``updated`` date is reported too (KB903).

Future dates: ``validate`` already reports an ``updated`` after today as the
error KB106, and ``check`` runs validate before the audits. To avoid reporting
the same fact twice at error level, this audit does not re-judge the date: it
reports a future-dated supply/price record once as KB902 at *info* severity,
saying its age cannot be computed and pointing at KB106, and leaves it out of
the age figures.

"Today" comes from :func:`_today`, which tests monkeypatch.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

MAX_AGE_DAYS = 90

KB901 = register(
    Rule(
        "KB901",
        "price-stale",
        "warning",
        "staleness",
        f"A supply or price record was last verified more than {MAX_AGE_DAYS} days ago.",
        "Prices, lead times and availability move monthly; a quote that has not been re-checked for a quarter is history, not a price.",
        '{"type": "supply", "updated": "<within the last 90 days>"}',
        '{"type": "supply", "updated": "2025-01-10"} (checked in 2026)',
    )
)
KB902 = register(
    Rule(
        "KB902",
        "price-date-in-future",
        "info",
        "staleness",
        "A supply or price record's `updated` is in the future, so its age cannot be computed (the date itself is the error KB106).",
        "Reported once at info level so the staleness figures explain the record they leave out; validate's KB106 is the error.",
        '{"updated": "2026-10-04"}',
        '{"updated": "2099-01-01"}',
    )
)
KB903 = register(
    Rule(
        "KB903",
        "price-undated",
        "warning",
        "staleness",
        "A supply or price record has no usable `updated` date, so nobody can tell when the price was true.",
        "A price without a date cannot be judged current or stale.",
        '{"price_usd": 25000, "updated": "2026-09-01"}',
        '{"price_usd": 25000}',
    )
)


def _today() -> _dt.date:
    """Today's date; a seam for tests."""
    return _dt.date.today()


def has_price(data: dict[str, Any]) -> bool:
    """True when any top-level key containing ``price`` holds a non-null, non-empty value."""
    return any("price" in key and value not in (None, "", [], {}) for key, value in data.items())


def _in_scope(rec: Record) -> bool:
    return rec.type == "supply" or has_price(rec.data)


def _parse(value: Any) -> _dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return _dt.date.fromisoformat(value)
    except ValueError:
        return None


@audit("staleness", f"Supply/price records not verified for more than {MAX_AGE_DAYS} days; future-dated ones (see KB106).", cost=0.08)
def run(kb: KB, *, today: _dt.date | None = None, max_age_days: int = MAX_AGE_DAYS) -> AuditResult:
    """Report stale, undated and future-dated supply/price records.

    ``today`` defaults to :func:`_today`; ``max_age_days`` to :data:`MAX_AGE_DAYS`.
    Figures: ``in_scope``, ``stale``, ``fresh``, ``future``, ``undated``,
    ``max_age_days``, ``today`` and ``oldest`` (``{"record", "updated", "age_days"}`` or ``None``).
    """
    today = today or _today()
    result = AuditResult("staleness")
    counts = {"in_scope": 0, "stale": 0, "fresh": 0, "future": 0, "undated": 0}
    oldest: tuple[_dt.date, Record] | None = None
    for rec in kb.records.values():
        if not _in_scope(rec):
            continue
        counts["in_scope"] += 1
        where = {"record": rec.key, "path": rec.path, "field": "updated"}
        raw = rec.data.get("updated")
        day = _parse(raw)
        if day is None:
            counts["undated"] += 1
            result.findings.append(KB903.finding(f"no usable updated date ({raw!r}); the price cannot be judged current", **where))
            continue
        if day > today:
            counts["future"] += 1
            result.findings.append(
                KB902.finding(f"updated {raw} is after today ({today}); age not computed (validate reports it as KB106)", **where)
            )
            continue
        if oldest is None or day < oldest[0]:
            oldest = (day, rec)
        age = (today - day).days
        if age > max_age_days:
            counts["stale"] += 1
            result.findings.append(
                KB901.finding(
                    f"last verified {raw}, {age} days ago (limit {max_age_days}); re-check the price and availability",
                    evidence={"field": "updated", "quote": raw},
                    extra={"age_days": age},
                    **where,
                )
            )
        else:
            counts["fresh"] += 1
    result.figures = {
        **counts,
        "max_age_days": max_age_days,
        "today": today.isoformat(),
        "oldest": None
        if oldest is None
        else {"record": oldest[1].key, "updated": oldest[0].isoformat(), "age_days": (today - oldest[0]).days},
    }
    return result
