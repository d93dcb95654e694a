"""The in-memory index of a KB's records, with a write counter that keeps every derived cache fresh.

Every lookup table built from the records (ids, ids by type, hardware aliases,
resolver tables, ...) is kept through :meth:`Index.cached`. Any change to the
records goes through :meth:`Index.put` / :meth:`Index.staged`, which bumps
:attr:`Index.version` and drops every cached table, so the next lookup
rebuilds it: a record written through the store is found by alias lookups on
the same KB object right away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, TypeVar

from .records import Record

T = TypeVar("T")


class Index:
    """Records by key (``"<dir>/<id>"``, load order) plus tables derived from them.

    ``records`` is a read-only view; change records only with :meth:`put` or
    :meth:`staged`. ``version`` counts changes (0 right after loading).
    """

    __slots__ = ("_records", "records", "version", "_cache")

    def __init__(self, records: dict[str, Record] | None = None) -> None:
        self._records: dict[str, Record] = records if records is not None else {}
        self.records: Mapping[str, Record] = MappingProxyType(self._records)
        self.version = 0
        self._cache: dict[str, Any] = {}

    def cached(self, name: str, build: Callable[[], T]) -> T:
        """The table ``name``, built by ``build()`` on first use after any change to the records."""
        try:
            return self._cache[name]
        except KeyError:
            value = self._cache[name] = build()
            return value

    def peek(self, name: str) -> Any:
        """The table ``name`` if it is built (and so matches the current records), else ``None``; never builds it."""
        return self._cache.get(name)

    def seed(self, name: str, value: Any) -> None:
        """Install a table built elsewhere from exactly the current records (the loader's serialised records)."""
        self._cache[name] = value

    def _changed(self) -> None:
        self.version += 1
        self._cache.clear()

    def put(self, records: Iterable[Record]) -> None:
        """Add or replace ``records`` (by key) and invalidate every derived table."""
        for rec in records:
            self._records[rec.key] = rec
        self._changed()

    @contextmanager
    def staged(self, records: Iterable[Record]) -> Iterator[None]:
        """Make ``records`` visible (added or replacing) for the duration of the block, then restore the index.

        Used to validate a batch "as if written", so records of one batch may
        reference each other; nothing is written to disk.
        """
        staged = list(records)
        saved = {r.key: self._records.get(r.key) for r in staged}
        self.put(staged)
        try:
            yield
        finally:
            for key, old in saved.items():
                if old is None:
                    self._records.pop(key, None)
                else:
                    self._records[key] = old
            self._changed()

    # ---- the tables every KB needs ------------------------------------------
    def by_id(self) -> dict[str, list[Record]]:
        """Bare id -> records with that file stem (more than one = ambiguous across types)."""

        def build() -> dict[str, list[Record]]:
            index: dict[str, list[Record]] = {}
            for rec in self._records.values():
                index.setdefault(rec.id, []).append(rec)
            return index

        return self.cached("by_id", build)

    def ids_by_type(self) -> dict[str, set[str]]:
        """Type name -> set of record ids."""

        def build() -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for rec in self._records.values():
                out.setdefault(rec.type, set()).add(rec.id)
            return out

        return self.cached("ids_by_type", build)

    def of_type(self, type_name: str) -> list[Record]:
        """Records of one type (exact type name), in load order."""

        def build() -> dict[str, list[Record]]:
            out: dict[str, list[Record]] = {}
            for rec in self._records.values():
                out.setdefault(rec.type, []).append(rec)
            return out

        return self.cached("by_type", build).get(type_name, [])
