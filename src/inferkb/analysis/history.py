"""History: the same system and model across MLPerf rounds, with the software change between rounds.

Records are grouped by ``system_series`` (shared data contract: one key for
the same submitter and hardware configuration across rounds), then by
benchmark (``submission.mlperf_model``, else ``model_id``), scenario, metric
and division — closed and open are separate lines. Within a round one record
per ``same_measurement_as`` group is kept. Each step shows the change of the
headline value and of the per-accelerator figure, and which software fields
changed (engine, engine version, framework, CUDA/ROCm, driver, OS).
Records without ``system_series`` are counted, not guessed into a series.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .common import AnalysisError, is_number, lookup, mlperf_division, mlperf_round, per_accelerator, rate_label, round_order
from .comparability import match_value

if TYPE_CHECKING:
    from ..kb import KB

SOFTWARE_FIELDS = (
    ("engine", lambda d: d.get("engine_id")),
    ("engine_version", lambda d: (d.get("conditions") or {}).get("engine_version") or (d.get("environment") or {}).get("engine_version")),
    ("framework", lambda d: (d.get("environment") or {}).get("framework")),
    ("cuda", lambda d: (d.get("environment") or {}).get("cuda")),
    ("rocm", lambda d: (d.get("environment") or {}).get("rocm")),
    ("driver", lambda d: (d.get("environment") or {}).get("driver")),
    ("os", lambda d: (d.get("environment") or {}).get("os")),
    ("format", lambda d: d.get("format_id")),
)


def _differs(name: str, before: Any, after: Any) -> bool:
    """True when a software field changed between rounds; engine versions compared as versions (``10.2`` = ``10.2.0``)."""
    if name == "engine_version" and before is not None and after is not None:
        return match_value(name, before) != match_value(name, after)
    return before != after


@dataclass
class HistoryPoint:
    """One round of a series: value, per-accelerator value, software, and the change from the previous round."""

    round: str | None
    id: str
    value: float
    unit: str | None
    per_accelerator: float | None
    software: dict[str, Any]
    change_pct: float | None = None
    per_accelerator_change_pct: float | None = None
    software_changed: dict[str, list[Any]] = field(default_factory=dict)
    experimental: bool = False
    same_measurement: list[str] = field(default_factory=list)


@dataclass
class HistoryLine:
    """A system series for one benchmark, scenario, metric and division, ordered by round."""

    system_series: str
    benchmark: str
    scenario: str | None
    metric: str | None
    division: str | None
    label: str
    points: list[HistoryPoint]


@dataclass
class HistoryResult:
    """Result of :func:`history`: ``lines`` (at least two rounds unless ``single_rounds``), and counts of records left out."""

    filters: dict[str, Any]
    lines: list[HistoryLine]
    without_series: int
    single_round_lines: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field."""
        return asdict(self)


def _pct(old: float | None, new: float | None) -> float | None:
    if not is_number(old) or not is_number(new) or old == 0:
        return None
    return (new - old) / old * 100.0


def history(
    kb: KB, *, model: str | None = None, system_series: str | None = None, scenario: str | None = None, single_rounds: bool = False
) -> HistoryResult:
    """Series of the same system across rounds for ``model`` (a model id; optional) and/or one ``system_series``.

    ``single_rounds`` keeps lines seen in one round only (default: dropped and
    counted). Raises :class:`AnalysisError` for an unknown model.
    """
    model_rec = lookup(kb, model, "model") if model else None
    filters = {
        k: v for k, v in (("model", model_rec.id if model_rec else None), ("system_series", system_series), ("scenario", scenario)) if v
    }
    groups: dict[tuple, dict[str | None, list]] = {}
    without = 0
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            d = rec.data
            if model_rec is not None and d.get("model_id") != model_rec.id:
                continue
            if scenario and d.get("scenario") != scenario:
                continue
            series = d.get("system_series")
            if not isinstance(series, str) or not series:
                without += 1
                continue
            if system_series and series != system_series:
                continue
            if not is_number(d.get("value")):
                continue
            sub = d.get("submission") if isinstance(d.get("submission"), dict) else {}
            bench = sub.get("mlperf_model") or d.get("model_id") or d.get("model") or "?"
            key = (series, bench, d.get("scenario"), d.get("metric"), mlperf_division(d))
            groups.setdefault(key, {}).setdefault(mlperf_round(d), []).append(rec)
    lines: list[HistoryLine] = []
    single = 0
    for key, by_round in groups.items():
        if len(by_round) < 2 and not single_rounds:
            single += 1
            continue
        points: list[HistoryPoint] = []
        label = ""
        for rnd in sorted(by_round, key=round_order):
            recs = sorted(by_round[rnd], key=lambda r: r.id)
            chosen, rest = recs[0], recs[1:]
            linked = set(chosen.data.get("same_measurement_as") or [])
            folded = [r.id for r in rest if r.id in linked or chosen.id in (r.data.get("same_measurement_as") or [])]
            d = chosen.data
            label = rate_label(d)
            pa, _ = per_accelerator(d)
            software = {name: get(d) for name, get in SOFTWARE_FIELDS}
            point = HistoryPoint(rnd, chosen.id, float(d["value"]), d.get("unit"), pa.value if pa else None, software)
            point.experimental = d.get("experimental") is True
            point.same_measurement = folded
            if points:
                prev = points[-1]
                point.change_pct = _pct(prev.value, point.value)
                point.per_accelerator_change_pct = _pct(prev.per_accelerator, point.per_accelerator)
                point.software_changed = {n: [prev.software.get(n), v] for n, v in software.items() if _differs(n, prev.software.get(n), v)}
            points.append(point)
        lines.append(HistoryLine(key[0], key[1], key[2], key[3], key[4], label, points))
    lines.sort(key=lambda ln: (ln.system_series, ln.benchmark, str(ln.scenario)))
    if system_series and not lines and not single:
        raise AnalysisError(f"no benchmark has system_series {system_series!r}")
    return HistoryResult(filters, lines, without, single)
