"""Which benchmarks a comparison takes: the filters of ``compare`` and ``pareto`` (model, base model, metric,
accelerator, engine, format, scenario, origin) resolved and applied, and, for a selection left empty, the values the
rest of the selection does have and the KB's values close to the one asked.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..hardware import normalise
from ..query_expr import absent_value_near
from .common import AnalysisError, lookup

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

__all__ = ["EXACT_FILTERS", "select", "values_of_selection"]


def _model_labels(rec: Record) -> set[str]:
    labels = {rec.id, str(rec.data.get("name") or "")}
    labels.update(a for a in rec.data.get("aliases") or [] if isinstance(a, str))
    return {normalise(x) for x in labels if x}


def select(
    kb: KB,
    *,
    model: str | None = None,
    metric: str | None = None,
    accelerator: str | None = None,
    engine: str | None = None,
    fmt: str | None = None,
    scenario: str | None = None,
    origin: str | None = None,
    base_model: str | None = None,
) -> tuple[list[Record], dict[str, Any]]:
    """Benchmarks matching every given filter, and the resolved filters.

    ``model``, ``accelerator``, ``engine`` and ``fmt`` are record ids (or
    names/aliases) resolved with near-match hints (:class:`AnalysisError`
    when unknown). A benchmark matches a model when its ``model_id`` is that
    record, or it has no ``model_id`` and its ``model`` text is the record's
    id, name or an alias; a record that names only a ``base_model_id`` (the
    model it was derived from: an open-division MLPerf result) never matches
    ``model``. ``base_model`` (a model id, name or alias) selects the records
    whose ``base_model_id`` is that model. ``metric``, ``scenario`` and
    ``origin`` match exactly.
    """
    filters: dict[str, Any] = {}
    model_rec = lookup(kb, model, "model") if model else None
    acc_rec = lookup(kb, accelerator, "accelerator") if accelerator else None
    eng_rec = lookup(kb, engine, "engine") if engine else None
    fmt_rec = lookup(kb, fmt, "quantization", what="format") if fmt else None
    base_rec = lookup(kb, base_model, "model") if base_model else None
    if model_rec is not None:
        filters["model"] = model_rec.id
    if base_rec is not None:
        filters["base_model"] = base_rec.id
    if acc_rec is not None:
        filters["accelerator"] = acc_rec.id
    if eng_rec is not None:
        filters["engine"] = eng_rec.id
    if fmt_rec is not None:
        filters["format"] = fmt_rec.id
    for name, value in (("metric", metric), ("scenario", scenario), ("origin", origin)):
        if value:
            filters[name] = value
    if metric and kb.metrics and metric not in kb.metrics:
        raise AnalysisError(f"unknown metric {metric!r}; the KB's metric registry has: {', '.join(sorted(kb.metrics))}")
    labels = _model_labels(model_rec) if model_rec is not None else set()
    out: list[Record] = []
    if "benchmark" not in kb.profile.types:
        return out, filters
    for rec in kb.by_type("benchmark"):
        d = rec.data
        if model_rec is not None:
            mid = d.get("model_id")
            if mid:
                if mid != model_rec.id:
                    continue
            elif d.get("base_model_id") or not (isinstance(d.get("model"), str) and normalise(d["model"]) in labels):
                continue
        if base_rec is not None and d.get("base_model_id") != base_rec.id:
            continue
        if metric and d.get("metric") != metric:
            continue
        if scenario and d.get("scenario") != scenario:
            continue
        if origin and d.get("origin") != origin:
            continue
        if acc_rec is not None and acc_rec.id not in (d.get("accelerator_ids") or []):
            continue
        if eng_rec is not None and d.get("engine_id") != eng_rec.id:
            continue
        if fmt_rec is not None and d.get("format_id") != fmt_rec.id:
            continue
        out.append(rec)
    return out, filters


# The exact-match filters of :func:`select` whose values form a closed vocabulary, with the record field each reads.
EXACT_FILTERS = {"scenario": "scenario", "origin": "origin"}


def values_of_selection(kb: KB, name: str, **filters: Any) -> dict[str, int]:
    """``{value: records}`` of field ``name`` over the benchmarks :func:`select` picks with ``filters``, most first, then
    by value; a record without the field counts as ``"(none)"``. With ``name="metric"`` it says, when a metric filter
    selected nothing, which metrics the rest of the selection does have. Raises what :func:`select` raises."""
    counts = Counter(str(r.data.get(name) or "(none)") for r in select(kb, **filters)[0])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _absent_values(kb: KB, asked: dict[str, Any]) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """For an empty selection: per exact-match filter whose value the rest of the selection lacks, the values it has, and
    the KB's values close to the one asked (see :class:`~inferkb.analysis.compare_result.CompareResult`). When the rest selects nothing either, a filter
    is named only if its value is in no benchmark at all (so a right value beside a typo is not blamed)."""
    have: dict[str, dict[str, int]] = {}
    near: dict[str, list[str]] = {}
    for name, fld in EXACT_FILTERS.items():
        value = asked.get(name)
        if not value:
            continue
        values = values_of_selection(kb, fld, **{k: v for k, v in asked.items() if k != name})
        everywhere = {str(r.data.get(fld)) for r in kb.by_type("benchmark") if r.data.get(fld)}
        close = absent_value_near([value], values, everywhere)
        if close is None:
            continue  # the value exists where the rest selects, or the rest selects nothing: another filter emptied it
        have[name] = values
        near[name] = close
    return have, near
