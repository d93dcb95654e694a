"""How many records of each type an import built or wrote, in words: ``7 benchmarks + 1 source``.

An importer's ``stats["imported"]`` counts the benchmark records it made from
the file; the batch it hands to the store may hold more (the draft source
record describing the local file, for one). Every intake report (``intake``,
``import-community``, ``scripts/import_mlperf.py``) states its totals by type
with these helpers, so a text line and the stats beside it never seem to
disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any


def count_by_type(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{type: number of records}`` of record dicts (their ``type`` field); ``benchmark`` first, then by type name.

    A record without a string ``type`` counts under ``"record"``.
    """
    counts = Counter(r.get("type") if isinstance(r.get("type"), str) else "record" for r in records)
    return {t: counts[t] for t in sorted(counts, key=lambda t: (t != "benchmark", t))}


def describe(counts: Mapping[str, int]) -> str:
    """``{"benchmark": 7, "source": 1}`` as ``"7 benchmarks + 1 source"``; no records is ``"0 records"``.

    The plural adds ``s`` to the type name (``metric_exposure`` -> ``metric_exposures``).
    """
    parts = [f"{n} {t if n == 1 else t + 's'}" for t, n in counts.items() if n]
    return " + ".join(parts) if parts else "0 records"
