"""Read-only queries over a KB: list, search, where, refs, stats, gaps, and finding the record a text names.

Every function returns plain data (lists/dicts) that the CLI renders; nothing
here prints. ``list_records``, ``search`` and ``where`` take a loaded KB
(answered from an in-memory catalogue built once per KB version) or a KB path
/ ``None`` for the bundled KB (answered from the on-disk catalogue of
:mod:`inferkb.query_index`, without loading every record). They return
:class:`~inferkb.query_table.Rows`: a list of ``{"key": ..., field: value}``
dicts with ``columns`` and ``notes``, shaped by ``fields`` (dotted paths),
``sort`` (``"FIELD[:desc],..."``), ``limit`` and ``first_per`` (keep the first
row, after sorting, for each distinct value of a field).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .profile import ANY_TYPE
from .query_expr import Condition, _walk, absent_value_near, parse_conditions
from .query_index import Catalog, fts_query
from .query_table import Deferred, Hit, Rows, parse_fields, parse_sort, tabulate
from .schemas import schema_doc
from .store import Store
from .validate import _ref_values

if TYPE_CHECKING:
    from .kb import KB
    from .store import Record

__all__ = ["catalog", "list_records", "search", "where", "parse_condition", "parse_conditions", "Condition", "refs", "stats", "gaps"]

LIST_COLUMNS = ("id", "name", "status", "confidence", "updated")
SEARCH_COLUMNS = ("type", "name", "score", "tier", "exact", "match")


def catalog(kb: Store | str | os.PathLike | None) -> Catalog:
    """The query catalogue for a loaded KB (in memory, cached on it) or for a KB path (on disk; ``None`` = bundled)."""
    return Catalog.of(kb) if isinstance(kb, Store) else Catalog.open(kb)


def _shape(cat: Catalog, rtype: str | None, hits: list[Hit], default: Sequence[str], fields, sort, limit, first_per) -> Rows:
    asked = parse_fields(fields)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise UsageError(f"limit {limit!r}: expected a whole number of rows, 1 or more")
    return tabulate(
        hits,
        columns=asked or list(default),
        sort=parse_sort(sort),
        limit=limit,
        first_per=first_per,
        check=asked or (),
        known=lambda name: _field_exists(cat, rtype, name),
    )


def list_records(
    kb: Store | str | os.PathLike | None,
    type_name: str,
    *,
    fields: str | Sequence[str] | None = None,
    sort: str | Sequence[str] | None = None,
    limit: int | None = None,
    first_per: str | None = None,
) -> Rows:
    """Rows of one type, sorted by id unless ``sort`` says otherwise; default columns ``id, name, status, confidence,
    updated``. Raises UsageError for an unknown type or a field no record has."""
    cat = catalog(kb)
    rtype = cat.type_name(type_name)
    hits = [Hit(key, t, path, data) for key, t, path, data in cat.rows(rtype)]
    hits.sort(key=lambda h: str(h.data.get("id", h.key)))
    return _shape(cat, rtype, hits, LIST_COLUMNS, fields, sort, limit, first_per)


# ---- search ----------------------------------------------------------------


def search(
    kb: Store | str | os.PathLike | None,
    text: str,
    *,
    limit: int | None = 20,
    type_name: str | None = None,
    fields: str | Sequence[str] | None = None,
    sort: str | Sequence[str] | None = None,
    first_per: str | None = None,
) -> Rows:
    """Full-text search over every value of every record (SQLite FTS5, see :mod:`inferkb.query_index`).

    Every word must occur, as a word or a run of words (``gpt-oss-120b`` is the words gpt, oss, 120, b in a row, so it
    is found in ``openai/gpt-oss-120b`` and ``oss-120b`` finds it too); the last part of a word also matches as a
    prefix when it is three letters or more (``deeps``), while a number matches as written (``3.1`` is not ``3.10``,
    ``70B`` not ``7B``). Hits come in four tiers (``tier``, :data:`inferkb.query_index.TIERS`): 1 the id, name or an
    alias is the text (any case, spacing, hyphens, dots; ``exact``), 2 the id, name or an alias holds the text as a
    phrase, 3 any field holds the phrase, 4 the words occur anywhere; within a tier by BM25 with a match in the id
    counting 10x and in a name or alias 5x a match elsewhere. When no hit is in tier 1 or 2, ``notes`` says so first.

    Default columns: ``type, name, score, tier, exact, match`` (``match``: matched words in ``[brackets]``, made only
    for the rows returned). With ``sort`` or ``first_per`` every hit is ranked before ``limit`` applies. Raises
    UsageError for text without a word.
    """
    fts_query(text)  # refuse empty text before opening anything
    cat = catalog(kb)
    rtype = cat.type_name(type_name) if type_name else None
    columns = parse_fields(fields) or list(SEARCH_COLUMNS)
    everything = bool(sort) or bool(first_per)
    # with --sort the tiers only break ties: the closest-name order within tier 2 is not worth working out
    found = cat.search(text, type_name=rtype, limit=None if everything else limit, snippets=False, closeness=not sort)
    needs_data = any(c not in ("key", *SEARCH_COLUMNS) for c in columns) or everything
    hits = []
    for f in found:
        extra = {
            "type": f["type"],
            "name": f["name"],
            "score": f["score"],
            "tier": f["tier"],
            "exact": f["exact"],
            "match": Deferred(partial(_match, cat, f["key"], text)),
        }
        data: dict[str, Any] = {}
        if needs_data:
            row = cat.get(f["key"])
            data = row[3] if row else {}
            extra = {k: v for k, v in extra.items() if k in ("score", "tier", "exact", "match")}
        hits.append(Hit(f["key"], f["type"], f["path"], data, extra))
    rows = _shape(cat, rtype, hits, SEARCH_COLUMNS, fields, sort, limit, first_per)
    if found and not any(f["tier"] <= 2 for f in found):
        scope = f"{rtype} record" if rtype else "record"
        shown = "mention the phrase" if found[0]["tier"] == 3 else "mention all its words"
        rows.notes.insert(0, f"no {scope} is named {text!r} (id, name or alias); showing records that {shown}")
    return rows


def _match(cat: Catalog, key: str, text: str) -> str:
    return cat.snippet(key, text).replace("\x02", "[").replace("\x03", "]")


# ---- where -------------------------------------------------------------------


def parse_condition(expr: list[str]) -> tuple[str, str, str]:
    """The one condition in the words ``expr`` as ``(field, op, value)`` (see :func:`inferkb.query_expr.parse_conditions`).

    Raises UsageError when the words do not hold exactly one readable condition.
    """
    conds = parse_conditions(expr)
    if len(conds) != 1:
        raise UsageError(f"expected one condition, got {len(conds)}: {'; '.join(map(str, conds))}")
    return conds[0].field, conds[0].op, conds[0].value


def _needles(cond: Condition) -> list[tuple[str, bool]]:
    """Texts a record's compact JSON must contain for ``cond`` to hold (only ever narrowing; the test is exact)."""
    from .query_index import _dumps

    if cond.op == "is null":
        return []
    out = []
    keys = [p for p in cond.parts if not p.isdigit()]
    if keys and _dumps(keys[-1]) == f'"{keys[-1]}"':
        out.append((f'"{keys[-1]}":', False))
    if cond.op == "=" and isinstance(cond.value, str):
        from .query_expr import coerce

        if isinstance(coerce(cond.value), str):
            out.append((_dumps(cond.value), False))
    elif cond.op == "~" and cond.value.isascii() and _dumps(cond.value) == f'"{cond.value}"':
        out.append((cond.value.lower(), True))
    return out


def where(
    kb: Store | str | os.PathLike | None,
    *conditions: str | Condition,
    type_name: str | None = None,
    fields: str | Sequence[str] | None = None,
    sort: str | Sequence[str] | None = None,
    limit: int | None = None,
    first_per: str | None = None,
) -> Rows:
    """Records for which every condition holds (AND), in key order unless ``sort`` says otherwise.

    ``conditions`` are :class:`~inferkb.query_expr.Condition` values or words as typed on the command line:
    ``where(kb, "metric = ttft_ms", "value > 100")``, ``where(kb, "conditions.tensor_parallel", ">", "1")``,
    ``where(kb, "model_id in llama-2-70b,gpt-oss-120b", "format_id is null")``; the operators and their meaning are in
    :mod:`inferkb.query_expr`. Default columns: ``name`` and each condition's field. Raises UsageError for words that
    are not conditions, an unknown type, or a field that no record (of ``type_name``) has.
    """
    words = [c for c in conditions if isinstance(c, str)]
    conds = [c for c in conditions if isinstance(c, Condition)] + (parse_conditions(words) if words else [])
    if not conds:
        raise UsageError("give at least one condition, e.g. where(kb, 'metric = ttft_ms')")
    cat = catalog(kb)
    rtype = cat.type_name(type_name) if type_name else None
    needles = [n for c in conds for n in _needles(c)]
    seen = [False] * len(conds)
    hits = []
    for key, t, path, data in cat.rows(rtype, needles):
        ok = True
        for i, cond in enumerate(conds):
            holds, found = cond.test(data)
            seen[i] = seen[i] or found
            if not holds:
                ok = False
                break
        if ok:
            hits.append(Hit(key, t, path, data))
    for i, cond in enumerate(conds):
        if not seen[i] and not _field_exists(cat, rtype, cond.field):
            scope = f"{rtype} record" if rtype else "record"
            raise UsageError(f"no {scope} has a field {cond.field!r}; check the spelling (`inferkb show ID` shows a record's fields)")
    default = ["name"] + [c.field for c in conds if c.field not in ("name", "key")]
    rows = _shape(cat, rtype, hits, list(dict.fromkeys(default)), fields, sort, limit, first_per)
    if not hits:
        rows.notes.extend(_absent_value_notes(cat, rtype, conds))
    return rows


def _absent_value_notes(cat: Catalog, rtype: str | None, conds: list[Condition], shown: int = 10) -> list[str]:
    """For a where that matched nothing: one note per ``=``/``in`` condition whose value(s) no record matching the other
    conditions has, naming the values those records have (with counts, the ``shown`` most common) and the values of
    the field close to the one asked (``lama-2-70b`` -> ``llama-2-70b``). When the other conditions match nothing
    either, a condition is named only if its value is nowhere in the field (a right value beside a typo is not blamed)."""
    notes = []
    for i, cond in enumerate(conds):
        if cond.op not in ("=", "in"):
            continue
        others = conds[:i] + conds[i + 1 :]
        rest: Counter[str] = Counter()
        everywhere: set[str] = set()
        for _, _, _, data in cat.rows(rtype, _needles(Condition(cond.field, "!=", "x"))[:1]):
            values = {v for v in _walk(data, cond.parts) if isinstance(v, str)}
            everywhere |= values
            if values and all(c.test(data)[0] for c in others):
                rest.update(values)
        near = absent_value_near(cond.values, rest, everywhere) if everywhere else None
        if near is None:
            continue
        scope = f"{rtype} record" if rtype else "record"
        where = f" where {' and '.join(map(str, others))}" if others else ""
        note = f"no {scope}{where} has {cond}"
        note += f" (did you mean {' or '.join(near)}?)" if near else ""
        if rest:
            top = ", ".join(f"{v} {n:,}" for v, n in sorted(rest.items(), key=lambda kv: (-kv[1], kv[0]))[:shown])
            more = f" and {len(rest) - shown:,} more" if len(rest) > shown else ""
            note += f"; {'those records' if others else 'records'} have {cond.field}: {top}{more}"
        notes.append(note)
    return notes


def _field_exists(cat: Catalog, rtype: str | None, field: str) -> bool:
    """True when some record (of ``rtype``) has ``field`` (its value may be null)."""
    probe = Condition(field, "is not null")
    for _, _, _, data in cat.rows(rtype, _needles(Condition(field, "!=", "x"))[:1]):
        if probe.test(data)[1]:
            return True
    return False


# ---- refs, stats, gaps ---------------------------------------------------------


def _outgoing(kb: KB, rec: Record) -> list[dict[str, Any]]:
    spec = kb.profile.types[rec.type]
    fields = [("sources", "source")] + list(spec.refs.items())
    out = []
    for fld, target in fields:
        for ref in _ref_values(rec.data.get(fld)):
            hit = kb.resolve(ref, None if target == ANY_TYPE else target)
            out.append({"field": fld, "id": ref, "key": hit.key if hit else None, "resolved": hit is not None})
    return out


def refs(kb: KB, ref: str) -> dict[str, Any]:
    """What record ``ref`` cites and what cites it.

    Returns ``{"key", "cites": [{field, id, key, resolved}], "cited_by": [{key, field}]}``.
    Raises UsageError when the record does not exist.
    """
    rec = kb.get(ref)
    cited_by = []
    for other in kb.records.values():
        spec = kb.profile.types[other.type]
        fields = [("sources", "source")] + list(spec.refs.items())
        for fld, target in fields:
            if target not in (ANY_TYPE, rec.type):
                continue
            if rec.id in _ref_values(other.data.get(fld)) or rec.key in _ref_values(other.data.get(fld)):
                cited_by.append({"key": other.key, "field": fld})
    return {"key": rec.key, "cites": _outgoing(kb, rec), "cited_by": cited_by}


def stats(kb: KB) -> dict[str, Any]:
    """Counts by type and status, mean confidence per type, and benchmark records per origin.

    Returns ``{"records": n, "types": {type: {"count", "by_status": {...},
    "mean_confidence"}}, "benchmark_origins": {origin: n}}``; a benchmark
    record without an ``origin`` is counted under ``"(none)"``. Origins are
    sorted by count, largest first (the shared ``benchmark.origin`` contract:
    how many independent data sets the benchmark evidence comes from).
    ``"benchmark_rounds"``: ``{origin: {round: {division: n}}}`` for the
    benchmarks that state ``submission.round`` (MLPerf), sorted by round.
    """
    by_type: dict[str, list[Record]] = defaultdict(list)
    for rec in kb.records.values():
        by_type[rec.type].append(rec)
    types = {}
    for name in kb.profile.types:
        recs = by_type.get(name, [])
        confs = [
            r.data["confidence"]
            for r in recs
            if isinstance(r.data.get("confidence"), (int, float)) and not isinstance(r.data.get("confidence"), bool)
        ]
        types[name] = {
            "count": len(recs),
            "by_status": dict(Counter(str(r.data.get("status")) for r in recs)),
            "mean_confidence": round(sum(confs) / len(confs), 3) if confs else None,
        }
    origins = Counter(
        r.data["origin"] if isinstance(r.data.get("origin"), str) and r.data["origin"] else "(none)" for r in by_type.get("benchmark", [])
    )
    rounds: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    counted = _round_counts(by_type.get("benchmark", []))
    for (origin, rnd, division), n in sorted(counted.items(), key=lambda kv: (kv[0][0], _natural(kv[0][1]), kv[0][2])):
        rounds[origin][rnd][division] = n
    return {
        "records": len(kb.records),
        "types": types,
        "benchmark_origins": dict(sorted(origins.items(), key=lambda kv: (-kv[1], kv[0]))),
        "benchmark_rounds": {origin: {rnd: dict(divs) for rnd, divs in by_round.items()} for origin, by_round in rounds.items()},
    }


def _natural(text: str) -> list:
    """Sort key that orders the digit runs of ``text`` as numbers (``v4.1`` < ``v10.0``)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def _round_counts(benchmarks: list[Record]) -> Counter:
    """``{(origin, round, division): n}`` over the benchmarks whose ``submission.round`` is a string (MLPerf rounds);
    a missing division counts under ``"(none)"``."""
    out: Counter = Counter()
    for r in benchmarks:
        sub = r.data.get("submission")
        if not isinstance(sub, dict) or not isinstance(sub.get("round"), str) or not sub["round"]:
            continue
        origin = r.data["origin"] if isinstance(r.data.get("origin"), str) and r.data["origin"] else "(none)"
        division = sub["division"] if isinstance(sub.get("division"), str) and sub["division"] else "(none)"
        out[origin, sub["round"], division] += 1
    return out


def gaps(kb: KB) -> dict[str, Any]:
    """Types with no records, and per type the schema fields no record fills (all null/absent/empty).

    Returns ``{"empty_types": [...], "unfilled_fields": {type: [field, ...]}}``.
    """
    empty, unfilled = [], {}
    for name in kb.profile.types:
        recs = list(kb.by_type(name))
        if not recs:
            empty.append(name)
            continue
        schema = schema_doc(kb, name)
        if schema is None or not isinstance(schema.get("properties"), dict):
            continue
        filled = set()
        for rec in recs:
            for k, v in rec.data.items():
                if v not in (None, "", [], {}):
                    filled.add(k)
        missing = [f for f in schema["properties"] if f not in filled]
        if missing:
            unfilled[name] = missing
    return {"empty_types": empty, "unfilled_fields": unfilled}
