"""How far a fresh import agrees with the records already in a KB: the numbers first.

A dry run of an import over a KB that already holds the same records (the
bundled MLPerf rows, say) finds them "different": a derivation or an
enrichment has added fields since (``per_accelerator``, LoadGen percentiles,
``model_id``, provenance). That alone says nothing about whether the KB's
numbers still match the source. :func:`agreement` answers that: every numeric
leaf present in both the stored record and the fresh import is compared by
value, so "0 differ" is a re-read of every shared number against the input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..derive.proof import diff_paths, number_leaves
from .base import VOLATILE_FIELDS

#: How many differing numbers are kept by name (the count is always whole).
KEEP_DIFFERENCES = 20


def _top(path: str) -> str:
    """The top-level field of a leaf path: ``conditions`` for ``conditions.batch_size``, ``arms`` for ``arms[0].value``."""
    for i, ch in enumerate(path):
        if ch in ".[":
            return path[:i]
    return path


@dataclass
class Agreement:
    """Tally over pairs of (stored record, fresh import of it).

    ``records``: pairs compared. ``numbers_equal``: numeric leaves present at the
    same path in both with the same value (``1 == 1.0``). ``numbers_differ``: the
    count of those whose values differ; ``differences`` keeps the first
    :data:`KEEP_DIFFERENCES` as ``{"key", "field", "kb", "import"}``.
    ``numbers_only_in_kb`` / ``numbers_only_in_import``: numeric leaves on one
    side only, counted by top-level field. ``fields_differ``: non-numeric leaves
    added, removed or changed, by top-level field (import dates and provenance
    left out: they always differ).
    """

    records: int = 0
    numbers_equal: int = 0
    numbers_differ: int = 0
    differences: list[dict[str, Any]] = field(default_factory=list)
    numbers_only_in_kb: Counter = field(default_factory=Counter)
    numbers_only_in_import: Counter = field(default_factory=Counter)
    fields_differ: Counter = field(default_factory=Counter)

    def add(self, key: str, stored: dict[str, Any], imported: dict[str, Any]) -> None:
        """Compare one stored record (``stored``, its JSON object) with its fresh import (``imported``)."""
        self.records += 1
        old, new = number_leaves(stored), number_leaves(imported)
        for path, value in old.items():
            if path not in new:
                self.numbers_only_in_kb[_top(path)] += 1
            elif new[path] == value:
                self.numbers_equal += 1
            else:
                self.numbers_differ += 1
                if len(self.differences) < KEEP_DIFFERENCES:
                    self.differences.append({"key": key, "field": path, "kb": value, "import": new[path]})
        for path in new.keys() - old.keys():
            self.numbers_only_in_import[_top(path)] += 1
        skip = VOLATILE_FIELDS | {"provenance"}
        a = {k: v for k, v in stored.items() if k not in skip}
        b = {k: v for k, v in imported.items() if k not in skip}
        touched = {_top(path) for path, _ in diff_paths(a, b) if path not in old and path not in new}
        self.fields_differ.update(touched)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of the tally (counters as ``{field: count}``, most frequent first)."""
        return {
            "records": self.records,
            "numbers_equal": self.numbers_equal,
            "numbers_differ": self.numbers_differ,
            "differences": self.differences,
            "numbers_only_in_kb": dict(self.numbers_only_in_kb.most_common()),
            "numbers_only_in_import": dict(self.numbers_only_in_import.most_common()),
            "fields_differ": dict(self.fields_differ.most_common()),
        }

    def lines(self, top: int = 6) -> list[str]:
        """Human summary, one line per part; counters show their ``top`` most frequent fields."""

        def fields(counter: Counter) -> str:
            parts = [f"{name} {n:,}" for name, n in counter.most_common(top)]
            if len(counter) > top:
                parts.append(f"{len(counter) - top} more")
            return ", ".join(parts)

        shared = self.numbers_equal + self.numbers_differ
        if self.numbers_differ:
            first = self.differences[0]
            verdict = (
                f"{self.numbers_differ:,} differ (first: {first['key']} {first['field']}: KB {first['kb']!r}, import {first['import']!r})"
            )
        else:
            verdict = "all equal" if shared else "none to compare"
        out = [f"  numbers in both the KB and this import: {shared:,}, {verdict}"]
        if self.numbers_only_in_kb:
            out.append(f"  numbers only in the KB (added since, e.g. by derive or an enrichment): {fields(self.numbers_only_in_kb)}")
        if self.numbers_only_in_import:
            out.append(f"  numbers only in this import: {fields(self.numbers_only_in_import)}")
        if self.fields_differ:
            out.append(f"  other fields that differ (records): {fields(self.fields_differ)}")
        return out


def agreement(pairs: Iterable[tuple[str, dict[str, Any], dict[str, Any]]]) -> Agreement:
    """Tally ``(key, stored, imported)`` pairs into one :class:`Agreement`."""
    out = Agreement()
    for key, stored, imported in pairs:
        out.add(key, stored, imported)
    return out
