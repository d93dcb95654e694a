"""Resolved MLPerf unit-label contradictions, each with the evidence that settles it.

A results-table row whose ``Units`` says Samples/s or Queries/s for a
text-LLM result is imported with ``metric: null`` and status ``contested``
(finding KB1111): the table alone cannot say which reading is right. The
entries of :data:`UNIT_FIXES` are the cases where other primary evidence does
say it. :func:`apply_unit_fixes` sets ``metric``/``unit`` on the matching
records, restores status and confidence, and records a ``correction``
provenance entry (``numbers_changed: false``: the value is untouched) that
quotes the evidence. Anything not listed stays contested.

Corroboration of a second table (:func:`corroborate`): the v4.1 GigaComputing
per-submitter ``summary.csv`` repeats rows of the v4.1 round-wide table; its
records are not imported twice. Each of its LLM rows must match a round-wide
record (same id and value); the record then also cites that table, and where
the two label the unit differently the entry says which label the evidence
supports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import today

GIGA_LOG = (
    "mlcommons/inference_results_v4.1 closed/GigaComputing/results/GIGABYTE_G593_SD1_H200_SXM_141GBx8_TRT/"
    "llama2-70b-99.9/Server/performance/run_1/mlperf_log_summary.txt@a2f5d66d17e8f75c02fd74dfe810ecca6a046696"
)
DELL_LOG = "closed/Dell/results/XE9680L_B200_SXM_180GBx8_TRT/llama3.1-8b/Interactive/performance/run_1/mlperf_log_summary.txt"


@dataclass(frozen=True)
class UnitFix:
    """A (round, table model, scenario, stated units) case and the evidence that its values are ``metric``."""

    round: str
    model: str
    scenario: str
    units_raw: str
    metric: str
    unit: str
    evidence: str
    checked_platforms: tuple[tuple[str, str], ...] = ()


UNIT_FIXES = (
    UnitFix(
        "v5.1",
        "llama3.1-8b",
        "Interactive",
        "Queries/s",
        "output_tok_s",
        "tok/s",
        "all 8 llama3.1-8b Interactive rows of the v5.1 summary_results.json (965182b) say Queries/s while every other "
        "llama3.1-8b row says Tokens/s; the Dell XE9680L_B200_SXM_180GBx8_TRT row (102907.0) is the 'Completed tokens per "
        f"second: 102906.82' of its LoadGen summary ({DELL_LOG} @965182b, corpus mlperf/)",
        (("Dell", "XE9680L_B200_SXM_180GBx8_TRT"),),
    ),
)


def apply_unit_fixes(records: list[dict[str, Any]]) -> int:
    """Resolve the contested records that a :data:`UNIT_FIXES` entry covers; returns how many were resolved.

    A record checked directly against its own run log keeps confidence 0.9;
    the others of the case get 0.8 (the label error is shown for the case,
    not for each row).
    """
    n = 0
    for rec in records:
        sub = rec.get("submission") or {}
        if rec.get("metric") is not None:
            continue
        for fix in UNIT_FIXES:
            if (sub.get("round"), sub.get("mlperf_model"), sub.get("scenario_raw"), sub.get("units_raw")) != (
                fix.round,
                fix.model,
                fix.scenario,
                fix.units_raw,
            ):
                continue
            checked = (sub.get("submitter"), sub.get("platform")) in fix.checked_platforms
            resolve(rec, fix.metric, fix.unit, 0.9 if checked else 0.8, fix.units_raw, fix.evidence)
            n += 1
    return n


def resolve(rec: dict[str, Any], metric: str, unit: str, confidence: float, units_raw: str, evidence: str) -> None:
    """Set the metric of a unit-contested record and record the correction with its evidence (in place)."""
    rec["metric"], rec["unit"], rec["status"], rec["confidence"] = metric, unit, "verified", confidence
    note = rec.get("notes") or ""
    cut = note.find("The table states Units")
    if cut >= 0:
        end = note.find("output_tok_s).", cut)
        note = (note[:cut] + note[end + len("output_tok_s).") :] if end >= 0 else note[:cut]).strip()
    rec["notes"] = (
        note + " " if note else ""
    ) + f"The table's Units label {units_raw!r} is wrong for this row; the value is {metric} (see provenance)."
    rec.setdefault("provenance", []).append(
        {
            "date": today(),
            "tag": "mlperf-unit-label",
            "field": "metric",
            "action": "correction",
            "method": f"metric set to {metric} ({unit}) for a row the table labels {units_raw!r}",
            "evidence": {"field": "submission.units_raw", "quote": units_raw},
            "basis": evidence,
            "numbers_changed": False,
        }
    )


def corroborate(round_records: dict[str, dict[str, Any]], csv_records: list[dict[str, Any]], csv_source: str, csv_desc: str) -> list[str]:
    """Cite a second table on the round-wide records it repeats; returns problems (unmatched ids or values).

    ``csv_records`` are the benchmark records the second table's importer
    built; ``csv_source`` its source id; ``csv_desc`` names it in the basis text.
    """
    problems: list[str] = []
    for other in csv_records:
        rec = round_records.get(other["id"])
        if rec is None:
            problems.append(f"{other['id']}: no round-wide record for this row of {csv_desc}")
            continue
        if rec.get("value") != other.get("value"):
            problems.append(f"{other['id']}: {csv_desc} value {other.get('value')} differs from the round-wide {rec.get('value')}")
            continue
        if csv_source not in rec["sources"]:
            rec["sources"].append(csv_source)
        here, there = (rec.get("submission") or {}).get("units_raw"), (other.get("submission") or {}).get("units_raw")
        if here == there:
            continue
        rec.setdefault("provenance", []).append(
            {
                "date": today(),
                "tag": "mlperf-unit-label",
                "field": "metric",
                "action": "correction",
                "method": f"{csv_desc} labels this row {there!r}; the round-wide table labels it {here!r}; metric {rec.get('metric')}",
                "evidence": {"field": "submission.units_raw", "quote": str(here)},
                "basis": f"the round-wide v4.1 summary_results.json (4a0c874) gives {here} for the same row and value, and the "
                f"GigaComputing llama2-70b-99.9 Server run's LoadGen summary ({GIGA_LOG}) prints 'Completed tokens per second: "
                f"29715.28' for the value 29715.3 that {csv_desc} labels Queries/s: its Samples/s and Queries/s labels are tokens/s",
                "numbers_changed": False,
            }
        )
    return problems


__all__ = ["UNIT_FIXES", "UnitFix", "apply_unit_fixes", "resolve", "corroborate"]
