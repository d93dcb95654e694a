"""``inferkb validate``: files, schemas, ids, dates and references.

Pipeline: the store has already parsed every file (KB0xx findings come from
loading); here each record is checked against its type's JSON Schema (a
compiled jsonschema-rs validator, fast path ``is_valid`` and full error list
only for invalid records), then the rules JSON Schema cannot state, then
references across the KB with the dangling-reference budget.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from . import validate_rules as R
from .errors import PROCESSING
from .findings import Finding
from .metrics import bundled_metrics
from .profile import ANY_TYPE
from .report import Report
from .schemas import SchemaSet, schema_doc, schema_file, schema_set
from .store import KEBAB, Record
from .store.cache import CacheFile
from .urls import unsafe_urls
from .validate_geometry import per_layer_findings
from .validate_repeats import FIELD as REPEAT_FIELD
from .validate_repeats import repeat_group_findings
from .validate_stats import stat_findings

if TYPE_CHECKING:
    from .kb import KB

__all__ = [
    "validate",
    "validate_record",
    "validate_records",
    "record_rules",
    "record_checks",
    "reference_findings",
    "cross_record_findings",
    "shared_id_findings",
    "cross_record_data",
    "schema_doc",
    "schema_file",
    "SchemaSet",
]

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Fields whose date says when something was checked; such a date cannot be in the future.
NO_FUTURE_FIELDS = frozenset({"updated", "accessed"})
# A field whose source_id must be a cited source record (KB207); the warm path's cached record data keeps it.
BASIS_FIELD = "runtime_devices_basis"


def _json_path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _schema_findings(rec: Record, validator: Any) -> list[Finding]:
    if validator.is_valid(rec.data):
        return []
    out = []
    for err in validator.iter_errors(rec.data):
        field = _json_path(err.instance_path) or None
        kw = err.schema_path[-1] if err.schema_path else "schema"
        found = err.instance
        shown = (
            repr(found) if not isinstance(found, (dict, list)) else type(found).__name__.replace("dict", "object").replace("list", "array")
        )
        if len(shown) > 80:
            shown = shown[:77] + "..."
        out.append(
            R.KB101.finding(
                f"{field or '(record)'}: {err.message} [schema keyword '{kw}'; found {shown}]",
                record=rec.key,
                path=rec.path,
                field=field,
                extra={"schema_path": "/".join(str(p) for p in err.schema_path), "keyword": str(kw)},
            )
        )
    return out


_NOT_DATE = False
_DAYS: dict[str, _dt.date | bool | None] = {}
_DAYS_MAX = 4096  # distinct strings remembered: records share a few dozen dates; a hostile KB cannot grow it past this


def _day(value: str) -> _dt.date | bool | None:
    """``value`` as a date: ``False`` when it is not ``YYYY-MM-DD`` (:data:`DATE_RE`), ``None`` when it is but names no
    calendar day (``2026-02-31``), else the date. Remembered per string (most records share a handful of dates)."""
    try:
        return _DAYS[value]
    except KeyError:
        pass
    if not DATE_RE.match(value):
        day: _dt.date | bool | None = _NOT_DATE
    else:
        try:
            day = _dt.date.fromisoformat(value)
        except ValueError:
            day = None
    if len(_DAYS) >= _DAYS_MAX:
        _DAYS.clear()
    _DAYS[value] = day
    return day


def _check_date(rec: Record, field: str, value: str, day: _dt.date | None, no_future: bool, today: _dt.date, out: list[Finding]) -> None:
    if day is None:
        out.append(R.KB105.finding(f"{field}: {value!r} is not a real calendar date", record=rec.key, path=rec.path, field=field))
    elif no_future and day > today:
        out.append(R.KB106.finding(f"{field}: {value} is after today ({today})", record=rec.key, path=rec.path, field=field))


def _date_findings(rec: Record, today: _dt.date) -> list[Finding]:
    """KB105 (not a calendar day) and KB106 (a no-future field, or a provenance date, after ``today``) of ``rec``."""
    # Nearly every record has neither: a pass over the values alone (no keys, no per-date call) proves it, and only a
    # record with a candidate, a non-day or a date after today in any field, takes the walk that names the fields.
    d = rec.data
    for value in d.values():
        if type(value) is str and len(value) == 10 and value[4] == "-":
            day = _day(value)
            if day is None or (day is not _NOT_DATE and day > today):
                return _date_walk(rec, today)
    prov = d.get("provenance")
    if type(prov) is list:
        for entry in prov:
            date = entry.get("date") if type(entry) is dict else None
            if type(date) is str:
                day = _day(date)
                if day is None or (day is not _NOT_DATE and day > today):
                    return _date_walk(rec, today)
    return []


def _date_walk(rec: Record, today: _dt.date) -> list[Finding]:
    out: list[Finding] = []
    for key, value in rec.data.items():
        # Cheap shape tests first: this runs over every top-level field of every record.
        if type(value) is str and len(value) == 10 and value[4] == "-":
            day = _day(value)
            if day is not _NOT_DATE:
                _check_date(rec, key, value, day, key in NO_FUTURE_FIELDS, today, out)
    prov = rec.data.get("provenance")
    if type(prov) is list:
        for i, entry in enumerate(prov):
            date = entry.get("date") if type(entry) is dict else None
            if type(date) is str:
                day = _day(date)
                if day is not _NOT_DATE:
                    _check_date(rec, f"provenance[{i}].date", date, day, True, today, out)
    return out


def record_rules(kb: KB, rec: Record, today: _dt.date) -> list[Finding]:
    """Rules JSON Schema cannot state, for one record: id/file, kebab, type/dir, dates, confidence, metric, arms,
    for a model KB124 (per-layer list length), and for a benchmark the impossible-statistics rules KB120-KB123
    and KB125 (base_model_id beside a different model_id)
    (:mod:`inferkb.validate_stats`)."""
    d = rec.data
    out: list[Finding] = []
    rid = d.get("id")
    if isinstance(rid, str):
        if rid != rec.id:
            out.append(R.KB102.finding(f"id {rid!r} differs from the file stem {rec.id!r}", record=rec.key, path=rec.path, field="id"))
        if not KEBAB.match(rid):
            out.append(R.KB103.finding(f"id {rid!r} is not a kebab-case slug", record=rec.key, path=rec.path, field="id"))
    rtype = d.get("type")
    if isinstance(rtype, str) and rtype != rec.type:
        out.append(
            R.KB104.finding(
                f"type {rtype!r} does not match directory data/{rec.dir}/ (type {rec.type!r})", record=rec.key, path=rec.path, field="type"
            )
        )
    conf = d.get("confidence")
    if conf is not None and (isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1):
        out.append(R.KB107.finding(f"confidence {conf!r} is not a number in [0, 1]", record=rec.key, path=rec.path, field="confidence"))
    out.extend(_date_findings(rec, today))
    for fld, value in unsafe_urls(d) if kb.url_scan_needed(rec) else ():
        shown = value if len(value) <= 80 else value[:77] + "..."
        out.append(
            R.KB112.finding(
                f"{fld}: {shown!r} is not an http(s) or relative link; the site shows it as text",
                record=rec.key,
                path=rec.path,
                field=fld,
            )
        )
    if rec.type == "model":
        out.extend(per_layer_findings(rec))
    if rec.type == "benchmark":
        out.extend(stat_findings(d, kb.metrics or bundled_metrics(), record=rec.key, path=rec.path, durations=kb.duration_scan_needed(rec)))
        mid, base_mid = d.get("model_id"), d.get("base_model_id")
        if isinstance(mid, str) and mid and isinstance(base_mid, str) and base_mid and base_mid != mid:
            out.append(
                R.KB125.finding(
                    f"base_model_id {base_mid!r} differs from model_id {mid!r}: model_id says which model ran; drop "
                    "base_model_id, or model_id if the model was modified",
                    record=rec.key,
                    path=rec.path,
                    field="base_model_id",
                )
            )
        metric = d.get("metric")
        if kb.metrics and isinstance(metric, str) and metric not in kb.metrics:
            out.append(
                R.KB108.finding(
                    f"metric {metric!r} is not in the metric registry ({kb.profile.metrics_file})",
                    record=rec.key,
                    path=rec.path,
                    field="metric",
                )
            )
        arms = d.get("arms")
        if isinstance(arms, list) and arms:
            ids = [a.get("id") for a in arms if isinstance(a, dict)]
            dup = sorted({i for i in ids if ids.count(i) > 1 and i is not None})
            if dup:
                out.append(R.KB109.finding(f"arm ids used twice: {', '.join(dup)}", record=rec.key, path=rec.path, field="arms"))
            base = d.get("baseline_arm")
            if base is not None and base not in ids:
                out.append(
                    R.KB109.finding(
                        f"baseline_arm {base!r} is not one of the arms ({', '.join(map(str, ids))})",
                        record=rec.key,
                        path=rec.path,
                        field="baseline_arm",
                    )
                )
    return out


def record_checks(kb: KB, rec: Record, schemas: SchemaSet, today: _dt.date) -> list[Finding]:
    """The checks of one record that need no other record: its type's schema, then :func:`record_rules`."""
    validator = schemas.validators.get(rec.type)
    out = _schema_findings(rec, validator) if validator is not None else []
    out.extend(record_rules(kb, rec, today))
    return out


def _ref_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def reference_findings(kb: KB, recs: Iterable[Record]) -> tuple[list[Finding], int]:
    """Unresolved references of ``recs``; returns (findings, count of budgeted dangling references)."""
    out: list[Finding] = []
    dangling = 0
    sources = kb.ids_of_type("source")
    types = kb.profile.types
    id_sets = {t: kb.ids_of_type(t) for t in types}
    # Per type, (field, the ids it may name) for a one-set-test pass over each record; nearly every record passes
    # it and is done (a field that may name any record, "*", is tested against every bare id).
    any_ids = set(kb.by_id) if any(ANY_TYPE in spec.refs.values() for spec in types.values()) else set()
    quick = {
        name: (("sources", sources), *((fld, any_ids if target == ANY_TYPE else id_sets[target]) for fld, target in spec.refs.items()))
        for name, spec in types.items()
    }
    for rec in recs:
        if not (_all_known(rec.data, quick[rec.type]) and _basis_cited(rec.data, sources) and _flops_sources_known(rec.data, sources)):
            dangling += _record_references(kb, rec, sources, id_sets, out)
    return out, dangling


def _basis_cited(d: dict[str, Any], sources: set[str]) -> bool:
    """True when record data ``d`` has no ``runtime_devices_basis.source_id`` string or names a source it cites and the
    KB holds; False when the walk must decide (KB207)."""
    basis = d.get(BASIS_FIELD)
    sid = basis.get("source_id") if type(basis) is dict else None
    if type(sid) is not str:
        return True
    cited = d.get("sources")
    return type(cited) is list and sid in cited and sid in sources


def _flops_sources_known(d: dict[str, Any], sources: set[str]) -> bool:
    """True when every string ``flops[].source_id`` of record data ``d`` names a source record; False when the walk
    must decide (KB201 on ``flops[i].source_id``)."""
    rows = d.get("flops")
    if type(rows) is not list:
        return True
    return all(type(r) is not dict or type(r.get("source_id")) is not str or r["source_id"] in sources for r in rows)


def _flops_sources(rec: Record, cited: Any, sources: set[str], source_dir: str, out: list[Finding]) -> None:
    """KB201 for each ``flops[i].source_id`` (accelerator peak rows) that names no source record, as for ``sources``. An
    id the record's ``sources`` also lists is KB201's finding there already, so it is not repeated."""
    rows = rec.data.get("flops")
    listed = set(_ref_values(cited)) if cited else set()
    for i, row in enumerate(rows if type(rows) is list else []):
        sid = row.get("source_id") if type(row) is dict else None
        if type(sid) is str and sid not in sources and sid not in listed:
            out.append(
                R.KB201.finding(
                    f"flops[{i}].source_id: {sid!r} is not a source record (expected data/{source_dir}/{sid}.json)",
                    record=rec.key,
                    path=rec.path,
                    field=f"flops[{i}].source_id",
                    extra={"id": sid},
                )
            )


def _all_known(d: dict[str, Any], fields: tuple[tuple[str, set[str]], ...]) -> bool:
    """True when each field of ``fields`` (``sources`` first) in record data ``d`` names only ids of its set (a string
    or a list of strings); False when any may not, and :func:`_record_references` decides (so False is always safe)."""
    for fld, ids in fields:
        value = d.get(fld)
        if not value:
            continue
        if type(value) is str:
            if value not in ids:
                return False
        elif type(value) is not list:
            return False
        else:
            try:
                if not ids.issuperset(value):
                    return False
            except TypeError:  # an unhashable item (a dict or list): the walk skips it as not an id
                return False
    return True


def _basis_source(rec: Record, sid: str, cited: Any, sources: set[str], source_dir: str, out: list[Finding]) -> None:
    """KB207 for ``runtime_devices_basis.source_id`` = ``sid``: it must be among ``cited`` (the record's ``sources``) and
    name a source record. A cited id that names none is KB201's finding on ``sources`` already, so it is not repeated."""
    listed = isinstance(cited, list) and sid in cited
    if listed:
        return
    known = sid in sources
    why = (
        "is a source record but not among this record's sources; add it to sources"
        if known
        else f"is not a source record (expected data/{source_dir}/{sid}.json) nor among this record's sources"
    )
    out.append(
        R.KB207.finding(
            f"{BASIS_FIELD}.source_id: {sid!r} {why}",
            record=rec.key,
            path=rec.path,
            field=f"{BASIS_FIELD}.source_id",
            extra={"id": sid, "source_record_exists": known},
        )
    )


def _record_references(kb: KB, rec: Record, sources: set[str], id_sets: dict[str, set[str]], out: list[Finding]) -> int:
    """Append to ``out`` the unresolved references of ``rec`` (KB201-KB203, in field order, and KB207 for
    ``runtime_devices_basis.source_id`` after ``sources``); returns its count of budgeted dangling references (KB203)."""
    dangling = 0
    all_ids = kb.by_id
    types = kb.profile.types
    spec = types[rec.type]
    d = rec.data
    src_value = d.get("sources")
    if src_value:
        for sid in _ref_values(src_value):
            if sid not in sources:
                out.append(
                    R.KB201.finding(
                        f"sources: {sid!r} is not a source record (expected data/{types['source'].dir}/{sid}.json)",
                        record=rec.key,
                        path=rec.path,
                        field="sources",
                        extra={"id": sid},
                    )
                )
    source_dir = types["source"].dir if "source" in types else "sources"
    basis = d.get(BASIS_FIELD)
    if type(basis) is dict and isinstance(basis.get("source_id"), str):
        _basis_source(rec, basis["source_id"], src_value, sources, source_dir, out)
    if "flops" in d:
        _flops_sources(rec, src_value, sources, source_dir, out)
    for fld, target in spec.refs.items():
        value = d.get(fld)
        if not value:
            continue
        for ref in _ref_values(value):
            if target == ANY_TYPE:
                ok = ref in all_ids or ("/" in ref and ref in kb.records)
            else:
                ok = ref in id_sets[target]
            if ok:
                continue
            what = "any record" if target == ANY_TYPE else f"{_article(target)} {target} record (data/{types[target].dir}/{ref}.json)"
            if fld in spec.strict_refs:
                out.append(
                    R.KB202.finding(
                        f"{fld}: {ref!r} is not {what}", record=rec.key, path=rec.path, field=fld, extra={"id": ref, "target": target}
                    )
                )
            else:
                dangling += 1
                out.append(
                    R.KB203.finding(
                        f"{fld}: {ref!r} is not {what}", record=rec.key, path=rec.path, field=fld, extra={"id": ref, "target": target}
                    )
                )
    return dangling


def validate_record(kb: KB, rec: Record, *, today: _dt.date | None = None) -> list[Finding]:
    """Schema, record rules and references for one record (used before writing)."""
    today = today or _dt.date.today()
    PROCESSING.what = rec.path
    schemas = schema_set(kb)
    out = list(_schema_findings(rec, schemas.validators[rec.type])) if rec.type in schemas.validators else []
    out.extend(record_rules(kb, rec, today))
    # The walk itself, not reference_findings: its per-type tables would be built again for each record written.
    _record_references(kb, rec, kb.ids_of_type("source"), {t: kb.ids_of_type(t) for t in kb.profile.types}, out)
    return out


def validate_records(kb: KB, records: list[Record]) -> list[Finding]:
    """:func:`validate_record` for each record: the check the KB facade passes to ``write_records``."""
    today = _dt.date.today()
    out: list[Finding] = []
    for rec in records:
        out.extend(validate_record(kb, rec, today=today))
    return out


def findings_cache(kb: KB, schemas: SchemaSet, today: _dt.date) -> CacheFile | None:
    """The ``findings`` cache file of ``kb`` (per-record schema and rule findings), or ``None`` when caching is off.

    Its fingerprint adds to the loader's (code, kb.toml, layout) the schemas as compiled, the metric registries that
    KB108 and KB120-KB123 read, the jsonschema-rs build and ``today`` (KB106)."""
    if not getattr(kb, "use_cache", False):
        return None
    import jsonschema_rs
    import orjson

    try:
        st = os.stat(jsonschema_rs.__file__ or "")
        engine = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        engine = "-"
    metrics = orjson.dumps([kb.metrics, bundled_metrics() if not kb.metrics else None], option=orjson.OPT_SORT_KEYS)
    parts = [kb.cache_fingerprint(), schemas.fingerprint, hashlib.sha256(metrics).hexdigest(), engine, today.isoformat()]
    return CacheFile(kb.root, "findings", "|".join(parts))


def finding_row(f: Finding) -> list:
    """``f`` as a row of a findings cache entry (:func:`cached_findings` reads it back)."""
    return [f.code, f.rule, f.severity, f.message, f.record, f.path, f.field, f.evidence, f.extra]


def cross_record_data(kb: KB, rec: Record) -> dict[str, Any]:
    """What the cross-record rules read of ``rec``'s data: ``sources``, ``runtime_devices_basis`` (KB207), ``flops[].source_id``
    (KB201) and its type's reference fields
    (:func:`cross_record_findings`), or the whole data for a member of a repeat group (``repeat_group`` set:
    :func:`inferkb.validate_repeats.repeat_group_findings` compares the members' conditions; without the field a
    record reads as outside any group). A record whose data is this dict gets the cross-record findings of the
    whole record: the findings cache keeps it (the warm validate, :mod:`inferkb.validate_warm`)."""
    if rec.data.get(REPEAT_FIELD) is not None:
        return rec.data
    out = {f: rec.data[f] for f in ("sources", BASIS_FIELD, *kb.profile.types[rec.type].refs) if f in rec.data}
    rows = rec.data.get("flops")
    if type(rows) is list:  # only each row's source_id (KB201), kept at its index so the finding names the same row
        out["flops"] = [{"source_id": r.get("source_id")} if type(r) is dict else None for r in rows]
    return out


def cached_findings(entry: list | None) -> list[Finding] | None:
    """The findings of a cache entry ``[stamp, [row, ...], cross-record data]``; ``None`` (validate the record again)
    for any other shape."""
    if entry is None or len(entry) != 3 or type(entry[1]) is not list or type(entry[2]) is not dict:
        return None
    out = []
    for row in entry[1]:
        if type(row) is not list or len(row) != 9 or not all(type(x) is str for x in row[:4]):
            return None
        out.append(Finding(*row))
    return out


CrossRecord = tuple[list[Finding], int, list[Finding]]
"""What :func:`cross_record_findings` gives: (reference findings, count of budgeted dangling references, KB205 findings)."""


def cross_record_findings(kb: KB, types: list[str] | None = None) -> CrossRecord:
    """The rules of :func:`validate` that read other records: unresolved references of the records of ``types``
    (type names; all when ``None``) and ids used by records of more than one type (KB205).

    They read only each record's key, id, type, path, ``sources``, reference fields, ``runtime_devices_basis`` and
    ``flops[].source_id``."""
    recs = [r for r in kb.records.values() if not types or r.type in types]
    refs, dangling = reference_findings(kb, recs)
    return refs, dangling, shared_id_findings(kb, types)


def shared_id_findings(kb: KB, types: list[str] | None = None) -> list[Finding]:
    """KB205: each bare id held by records of more than one type (one of them of ``types`` when given), in
    :attr:`~inferkb.KB.by_id` order. Reads only each record's key, id, type and path."""
    shared_ids = []
    for bare, hits in kb.by_id.items():
        if len(hits) > 1 and len({h.type for h in hits}) > 1 and (not types or any(h.type in types for h in hits)):
            shared_ids.append(
                R.KB205.finding(
                    f"id {bare!r} is used by {', '.join(h.key for h in hits)}", record=hits[0].key, path=hits[0].path, field="id"
                )
            )
    return shared_ids


def validate(
    kb: KB,
    *,
    types: list[str] | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_dangling_refs: int | None = None,
    today: _dt.date | None = None,
    checked: Mapping[str, list[Finding]] | None = None,
    cross: CrossRecord | None = None,
    cache: CacheFile | None = None,
) -> Report:
    """Validate ``kb``; returns a :class:`Report` (figures under ``"validate"``).

    ``types`` limits record checks to those types (references still resolve
    against the whole KB). ``max_dangling_refs`` overrides the KB's budget.
    ``select``/``ignore`` filter findings by code or code prefix.
    ``checked`` (``{record key: findings}``) holds the :func:`record_checks` of records already checked elsewhere
    (a worker process, :mod:`inferkb.validate_split`) for ``today``; those records are not checked again.
    ``cross`` is :func:`cross_record_findings` of this ``kb`` and ``types``, already computed (the split puts it together
    from what each of its processes resolved). ``cache`` is the findings cache of ``kb`` for ``today``
    (:func:`findings_cache`) when the caller has read it already (:mod:`inferkb.validate_warm`); by default it is
    read here (when the KB uses the load cache). Raises :class:`UsageError` for an unknown type.
    """
    today = today or _dt.date.today()
    types = [kb.type_spec(t).name for t in types] if types else None
    schemas = schema_set(kb)
    findings: list[Finding] = list(kb.load_findings) + list(schemas.problems)
    recs = [r for r in kb.records.values() if not types or r.type in types]
    if cache is None:
        cache = findings_cache(kb, schemas, today)
    for rec in recs:
        PROCESSING.what = rec.path
        # checked first: a record checked elsewhere (or taken from this cache already) needs no stamp nor lookup
        got = checked.get(rec.key) if checked is not None else None
        stamp = kb.file_stamp(rec) if cache is not None and got is None else None
        if stamp is not None:
            got = cached_findings(cache.get(rec.path, stamp))
        if got is None:
            got = record_checks(kb, rec, schemas, today)
            if stamp is not None:
                cache.put(rec.path, [stamp, [finding_row(f) for f in got], cross_record_data(kb, rec)])
        findings.extend(got)
    PROCESSING.what = None
    if cache is not None:
        if types:
            for rec in kb.records.values():
                if rec.type not in types:
                    cache.keep(rec.path)
        cache.save()
    refs, dangling, shared_ids = cross if cross is not None else cross_record_findings(kb, types)
    findings.extend(refs)
    # Not in cross_record_findings: a repeat group compares whole records (the split sends its members whole).
    findings.extend(repeat_group_findings(kb, recs))
    findings.extend(shared_ids)
    budget = max_dangling_refs if max_dangling_refs is not None else kb.profile.max_dangling_refs
    budget_origin = "--max-dangling-refs" if max_dangling_refs is not None else kb.profile.budget_origin
    if budget is not None:
        if dangling > budget:
            findings.append(
                R.KB204.finding(
                    f"{dangling} unresolved references exceed the budget of {budget} ({budget_origin})",
                    extra={"dangling": dangling, "budget": budget},
                )
            )
        elif dangling < budget and not types:
            findings.append(
                R.KB206.finding(
                    f"{dangling} unresolved references, budget {budget} ({budget_origin}): lower the budget to {dangling}",
                    extra={"dangling": dangling, "budget": budget},
                )
            )
    figures = {
        "records_checked": len(recs),
        "files": kb.files_seen,
        "dangling_references": dangling,
        "dangling_budget": budget,
        "schema_origin": {t: o for t, o in schemas.origin.items()},
    }
    report = Report(str(kb.root), len(kb.records), findings, {"validate": figures})
    if "bundled" in schemas.origin.values():
        report.notes.append("some types were validated against inferkb's bundled schemas (the KB has none of its own for them)")
    return report.filtered(select, ignore)
