"""Results tables of the query commands: pick fields, sort, keep one row per group, limit.

Every query (``list``, ``where``, ``search``) produces :class:`Hit` values (a
record plus what the query computed, such as a search score); :func:`tabulate`
turns them into :class:`Rows`: a list of ``{"key": ..., field: value, ...}``
dicts that also carries its ``columns`` and ``notes`` (for example that a sort
compared numbers in different units).

Fields are dotted paths read with :func:`inferkb.query_expr.field_values` (a
path through a list gives a list), plus the pseudo-fields ``key``, ``type``
and ``path`` (and what a query adds: ``score``, ``exact``, ``match`` for
search). A field no record has is a :class:`~inferkb.errors.UsageError`, so a
typo does not give an empty column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError
from .query_expr import MISSING, field_values

__all__ = ["Deferred", "Hit", "Rows", "SortKey", "parse_fields", "parse_sort", "tabulate"]

PSEUDO = ("key", "type", "path")


class Deferred:
    """A computed value made on first read (a search snippet), so only the rows a query returns pay for it.

    ``make()`` takes no arguments and returns the value; :meth:`Hit.value` calls it once and keeps the result.
    """

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


@dataclass(slots=True)
class Hit:
    """One record a query matched: ``key``, ``type``, ``path`` (relative to the KB), ``data`` (the record), ``extra``
    (values the query computed, e.g. ``{"score": 4.2, "match": "..."}``; a :class:`Deferred` is made when first read)."""

    key: str
    type: str
    path: str
    data: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        """The value of field ``name`` (pseudo-field, computed value, or dotted path); :data:`MISSING` when absent."""
        if name in self.extra:
            value = self.extra[name]
            if isinstance(value, Deferred):
                value = self.extra[name] = value.make()
            return value
        if name in PSEUDO:
            return getattr(self, name)
        return field_values(self.data, name)


class Rows(list):
    """A list of row dicts (``{"key": ..., column: value}``) with ``columns`` (the display order) and ``notes``.

    ``matched`` is how many records matched before ``first_per`` and ``limit`` cut them (``None`` when not known),
    so a title can say "3 of 3,250" instead of passing the cut count off as the number of matches.
    """

    def __init__(
        self,
        rows: Iterable[dict[str, Any]] = (),
        columns: Sequence[str] = (),
        notes: Sequence[str] = (),
        matched: int | None = None,
    ) -> None:
        super().__init__(rows)
        self.columns = list(columns)
        self.notes = list(notes)
        self.matched = matched


@dataclass(frozen=True, slots=True)
class SortKey:
    """Sort by ``field``; ``descending`` for ``FIELD:desc``."""

    field: str
    descending: bool = False


def parse_fields(text: str | Sequence[str] | None) -> list[str] | None:
    """``"a,b.c"`` (or a sequence of such strings) -> ``["a", "b.c"]``; ``None``/empty -> ``None``. UsageError for an empty
    path segment."""
    if text is None:
        return None
    parts = [text] if isinstance(text, str) else list(text)
    out = [f.strip() for p in parts for f in p.split(",") if f.strip()]
    for f in out:
        if not all(f.split(".")):
            raise UsageError(f"--fields {f!r} has an empty path segment")
    return out or None


def parse_sort(text: str | Sequence[str] | None) -> list[SortKey]:
    """``"value:desc,accelerator_count"`` -> sort keys. UsageError for a direction other than ``asc``/``desc``."""
    if not text:
        return []
    parts = [text] if isinstance(text, str) else list(text)
    keys = []
    for item in (s.strip() for p in parts for s in p.split(",")):
        if not item:
            continue
        name, _, direction = item.partition(":")
        direction = direction.strip().lower() or "asc"
        if direction not in ("asc", "desc"):
            raise UsageError(f"--sort {item!r}: the direction after ':' is asc or desc")
        if not name.strip() or not all(name.strip().split(".")):
            raise UsageError(f"--sort {item!r}: expected FIELD or FIELD:desc")
        keys.append(SortKey(name.strip(), direction == "desc"))
    return keys


def _sortable(value: Any) -> tuple[int, Any] | None:
    """``(kind, value)`` ordering numbers before strings; ``None`` for no value (those rows sort last either way)."""
    if isinstance(value, list):
        value = next((v for v in value if v is not None and not isinstance(v, (dict, list))), None)
    if value is MISSING or value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (2, str(value))


def _sort(hits: list[Hit], keys: list[SortKey]) -> list[Hit]:
    # Stable sorts from the last key to the first: each key orders within the ties of the ones before it.
    for key in reversed(keys):
        present = [(s, h) for h in hits if (s := _sortable(h.value(key.field))) is not None]
        absent = [h for h in hits if _sortable(h.value(key.field)) is None]
        present.sort(key=lambda p: p[0], reverse=key.descending)
        hits = [h for _, h in present] + absent
    return hits


def _group_value(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_group_value(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _group_value(v)) for k, v in value.items()))
    return None if value is MISSING else value


def _check_fields(hits: list[Hit], names: Iterable[str], known: Callable[[str], bool] | None) -> None:
    for name in names:
        if name in PSEUDO or any(name in h.extra for h in hits[:1]):
            continue
        if all(h.value(name) is MISSING for h in hits) and (known is None or not known(name)):
            raise UsageError(f"field {name!r}: no record has this field; check the spelling (`inferkb show ID` shows a record's fields)")


def _mixed_units(hits: list[Hit], keys: list[SortKey]) -> list[str]:
    notes = []
    for key in keys:
        if key.field.split(".")[-1] != "value":
            continue
        prefix = key.field[: -len("value")]
        seen = {
            label: sorted({str(v) for h in hits if isinstance((v := h.value(prefix + label)), (str, int, float))})
            for label in ("metric", "unit")
        }
        mixed = {label: vals for label, vals in seen.items() if len(vals) > 1}
        if mixed:
            what = "; ".join(f"{len(v)} {label}s ({', '.join(v[:6])}{', ...' if len(v) > 6 else ''})" for label, v in mixed.items())
            notes.append(
                f"sorted by {key.field} across {what}: numbers of different metrics or units do not rank against each other; "
                f"add a condition such as 'metric = ...' (DESIGN.md rule 6: comparable means same conditions)"
            )
    return notes


def tabulate(
    hits: Iterable[Hit],
    *,
    columns: Sequence[str],
    sort: Sequence[SortKey] = (),
    limit: int | None = None,
    first_per: str | None = None,
    check: Sequence[str] = (),
    known: Callable[[str], bool] | None = None,
) -> Rows:
    """Sort ``hits`` (keys in order, missing values last), keep the first per distinct ``first_per`` value, cut to
    ``limit`` and return :class:`Rows` with ``key`` plus ``columns`` (``matched``: the number of ``hits``).

    The fields in ``check`` (the ones a user typed), the sort fields and ``first_per`` must name something: a field
    absent from every hit and for which ``known(field)`` is false raises :class:`UsageError` (a typo, not an empty column).
    """
    items = list(hits)
    matched = len(items)
    sort = list(sort)
    _check_fields(items, [*check, *(k.field for k in sort), *([first_per] if first_per else [])], known)
    notes = _mixed_units(items, sort)
    if sort:
        items = _sort(items, sort)
    if first_per:
        seen: set[Any] = set()
        kept = []
        for h in items:
            group = _group_value(h.value(first_per))
            if group not in seen:
                seen.add(group)
                kept.append(h)
        items = kept
    if limit is not None:
        items = items[:limit]
    rows = []
    for h in items:
        row: dict[str, Any] = {"key": h.key}
        for name in columns:
            if name != "key":
                v = h.value(name)
                row[name] = None if v is MISSING else v
        rows.append(row)
    return Rows(rows, columns, notes, matched)
