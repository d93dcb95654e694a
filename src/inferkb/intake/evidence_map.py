"""The shared part of the intake evidence maps: TOML files of ``[[table]]`` entries, each citing its evidence.

Three maps use it: ``mlperf_weight_formats.toml`` (:mod:`.mlperf_weight_formats`),
``llm_inference_bench_formats.toml`` (:mod:`.llm_inference_bench_formats`) and
``mlperf_base_models.toml`` (:mod:`.mlperf_base_models`). Each module keeps its
own entry type (their fields differ); this module holds what their loaders
have in common, and the outcome type of the two format maps:

- :func:`entries`: parse the TOML text and return the array of tables named
  ``table``, each checked to be a table;
- :func:`require_strings`: the required keys are non-empty strings;
- :func:`require_commit`: ``commit`` is a pinned git commit (40 lower-case hex digits);
- :func:`err`: the :class:`~inferkb.errors.InputError` every check raises,
  naming the map file and the entry's field (``<table>[<i>].<key>``);
- :class:`Decision`: what a format map says of one record.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import InputError

_HEX = frozenset("0123456789abcdef")
E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Decision(Generic[E]):
    """What a format map says of one record.

    ``kind``: the outcome (each map module's docstring lists its kinds);
    ``entry``: the map entry that decided, if any; ``format_id`` and
    ``condition_gaps``: the values to write; ``why``: the sentence a gap
    reason or finding quotes (empty when there is nothing to explain).
    """

    kind: str
    entry: E | None = None
    format_id: str | None = None
    condition_gaps: dict[str, Any] | None = None
    why: str = ""


def err(message: str, path: str, field: str) -> InputError:
    """The error of a map check: ``message``, the map file ``path`` and the ``field`` (``entry[3].commit``)."""
    return InputError(message, path=path, field=field)


def entries(text: str, table: str, *, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, entry)`` for each ``[[table]]`` of a map given as TOML text; ``where`` is ``"<table>[<i>]"``.

    Raises :class:`InputError` naming ``path`` when the TOML does not parse,
    when ``table`` is not an array of tables, or (field ``where``) when one of
    its items is not a table. A map with no ``table`` key has no entries.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=path) from None
    raw = doc.get(table, [])
    if not isinstance(raw, list):
        raise err(f"expected [[{table}]] tables", path, table)
    for i, e in enumerate(raw):
        where = f"{table}[{i}]"
        if not isinstance(e, dict):
            raise err("expected a table", path, where)
        yield where, e


def require_strings(e: dict[str, Any], keys: Iterable[str], path: str, where: str) -> None:
    """Raise :class:`InputError` (field ``where.key``) for the first of ``keys`` that is not a non-empty string in ``e``."""
    for key in keys:
        if not isinstance(e.get(key), str) or not e[key].strip():
            raise err(f"expected a non-empty string {key!r}", path, f"{where}.{key}")


def require_commit(e: dict[str, Any], path: str, where: str) -> str:
    """``e["commit"]`` when it is 40 lower-case hex digits, else :class:`InputError` (field ``where.commit``)."""
    commit = e.get("commit")
    if not (isinstance(commit, str) and len(commit) == 40 and _HEX.issuperset(commit)):
        raise err(f"expected 'commit' as 40 lower-case hex digits, got {commit!r}", path, f"{where}.commit")
    return commit
