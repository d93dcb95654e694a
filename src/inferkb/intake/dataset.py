"""Pieces shared by the importers of published data sets (community sets): pins, origin, gaps, rules KB1130-KB1139.

A published data set is read from a file copied out of a public git repository
at a known commit. The orchestrator (:mod:`inferkb.intake.community`) tells an
importer, through ``IntakeOptions.extra``:

- ``pins``: ``{file path as given: {"repo", "path", "commit"}}`` — where the
  file lives upstream; :func:`pin_for` copies it into each record's
  ``submission`` so every record names repo + path + commit (and its row);
- ``origin``: the data-set family written to ``benchmark.origin``;
- ``hardware_map``: ``{raw string: {"id", "evidence", "basis"}}`` for strings
  the publisher's own documentation identifies but no alias may claim
  globally (the evidence goes into a provenance entry);
- ``harness_defaults``: conditions the harness fixes at a pinned commit
  (:func:`apply_harness_defaults`), and ``warmup_rule`` (InferenceX run scripts);
  ``gap_reasons`` replace an importer's generic gap text (applied by the orchestrator).

Run on their own (``inferkb intake FORMAT FILE``) the importers need none of
these: the pin is absent, the origin is ``harness-intake`` unless the format
has a data-set name of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..rules import Rule, register
from .base import IntakeOptions, today

KB1130 = register(
    Rule(
        "KB1130",
        "intake-unit-normalised",
        "info",
        "intake",
        "A column whose unit the file does not state was read in a unit proven from the file itself, or left null.",
        "A number in an unstated unit is usable only when evidence fixes the unit (another column it must agree with, "
        "or a physical bound); the finding names the evidence, or the reason the value was left null.",
        "avg_power 484.76 with Throughput / avg_power = Throughput_per_watt_avg (W)",
        "avg_power 636450.43 read as W on one GPU (mW: Throughput_per_watt_avg = Throughput / (avg_power / 1000))",
    )
)
KB1131 = register(
    Rule(
        "KB1131",
        "intake-duplicate-row",
        "info",
        "intake",
        "A row repeats a measurement already imported from another file of the same data set; it is not imported twice.",
        "Dashboard views re-publish rows of the main table; counting them again would double the weight of one run in any "
        "ranking. Rows whose key columns and measured values are identical to an earlier row are skipped and counted.",
        "a row of Parallelism/All_results.csv with a value not in Throughput/All_results.csv",
        "a row of Best_Hardware_and_Framework/All_results.csv identical to a Throughput/All_results.csv row",
    )
)
KB1132 = register(
    Rule(
        "KB1132",
        "intake-token-basis-unproven",
        "warning",
        "intake",
        "A throughput column's token basis (output only, input + output, one sequence or the batch) does not follow from the row.",
        "The file does not say which tokens its throughput counts; where the row's own latency, batch size and lengths do not "
        "reproduce it, the value keeps the ambiguous metric and a condition gap says why.",
        "Throughput = Batch Size x (input + output) / Latency within 1 %",
        "Throughput 1.95x what batch x (input + output) / latency gives",
    )
)


def pin_for(options: IntakeOptions, path: Path) -> dict[str, Any]:
    """``{"repo", "path", "commit"}`` of ``path`` as the orchestrator pinned it; ``{}`` when run on a local file."""
    pins = options.extra.get("pins") or {}
    return dict(pins.get(str(path)) or {})


def origin_for(options: IntakeOptions, default: str) -> str:
    """The ``origin`` to write: the orchestrator's, else ``default``."""
    value = options.extra.get("origin")
    return value if isinstance(value, str) and value else default


def hardware_from_map(options: IntakeOptions, raw: str) -> dict[str, Any] | None:
    """The orchestrator's ``hardware_map`` entry for ``raw`` (``{"id", "evidence", "basis"}``), or ``None``."""
    entry = (options.extra.get("hardware_map") or {}).get(raw)
    return entry if isinstance(entry, dict) and entry.get("id") else None


def gap(reason: str, checked: list[str], recover: str | None = None) -> dict[str, Any]:
    """One ``condition_gaps`` entry ``{reason, checked[, recover]}``."""
    out: dict[str, Any] = {"reason": reason, "checked": checked}
    if recover:
        out["recover"] = recover
    return out


def import_entry(tag: str, method: str, field: str, quote: str, basis: str) -> dict[str, Any]:
    """The ``import`` provenance entry every data-set record carries (what was read, from where)."""
    return {
        "date": today(),
        "tag": tag,
        "field": "*",
        "action": "import",
        "method": method,
        "evidence": {"field": field, "quote": quote},
        "basis": basis,
        "numbers_changed": False,
    }


def apply_harness_defaults(
    conditions: dict[str, Any], gaps: dict[str, Any], defaults: list[dict[str, Any]] | None, tag: str
) -> list[dict[str, Any]]:
    """Fill conditions the harness fixes at a pinned commit (manifest ``harness_defaults``); returns their provenance entries.

    Each item: ``field`` (``conditions.<key>``), ``value``, ``evidence`` {field, quote}
    naming repository, path and commit, ``basis`` (starting "harness default at
    that commit"). Only a condition the file left null is filled, and its gap is
    dropped; a stated value always wins. Raises KeyError on an item without
    ``field``/``value`` (the manifest is ours, so that is a programming error).
    """
    entries = []
    for item in defaults or []:
        key = item["field"].removeprefix("conditions.")
        if conditions.get(key) is not None:
            continue
        conditions[key] = item["value"]
        gaps.pop(key, None)
        entries.append(
            {
                "date": today(),
                "tag": tag,
                "field": item["field"],
                "action": "import",
                "method": item.get("method", "harness default of the publisher's stated command line"),
                "evidence": item["evidence"],
                "basis": item["basis"],
                "numbers_changed": False,
            }
        )
    return entries
