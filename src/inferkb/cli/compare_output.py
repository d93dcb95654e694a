"""How ``inferkb compare`` shows a :class:`~inferkb.analysis.compare.CompareResult`: its rows for CSV/Markdown, the
text report (classes, ranked rows, arms, not-comparable records), and the lines that say why a selection is empty.
"""

from __future__ import annotations

from typing import Any

from .analysis_output import _Echo, _fmt_num, _table


def _compare_rows(result) -> list[dict[str, Any]]:
    rows = []
    for cls in result.classes:
        for r in cls.rows:
            row = {
                "class": cls.id,
                "rank": r.rank,
                "id": r.id,
                "value": r.value,
                "headline": r.headline,
                "unit": r.unit,
                "label": r.label,
                "per_accelerator": (r.per_accelerator or {}).get("value"),
                "divisor": (r.per_accelerator or {}).get("divisor"),
                "experimental": r.experimental,
                "origin": r.context.get("origin"),
                "same_measurement": ";".join(r.same_measurement) or None,
                "repeat_group": (r.repeats or {}).get("group"),
                "repeats": (r.repeats or {}).get("n"),
                "repeat_min": (r.repeats or {}).get("min"),
                "repeat_max": (r.repeats or {}).get("max"),
                "flags": ";".join(r.flags) or None,
            }
            row.update({f"varied.{k}": v for k, v in r.varied.items()})
            rows.append(row)
    for n in result.not_comparable:
        rows.append(
            {
                "class": "not-comparable",
                "id": n.id,
                "value": n.value,
                "unit": n.unit,
                "label": n.label,
                "missing": ";".join(n.missing) or None,
                "reason": n.reason,
                "repeat_group": (n.repeat or {}).get("group"),
                "repeat": f"{n.repeat['index']}/{n.repeat['n']}" if n.repeat else None,
                "flags": ";".join(n.flags) or None,
            }
        )
    return rows


def _filters_text(filters: dict) -> str:
    """``model = llama-2-70b, scenario = offline`` (values of list filters joined by ``|``), or ``no filter``."""
    parts = [f"{k} = {'|'.join(map(str, v)) if isinstance(v, (list, tuple, set, frozenset)) else v}" for k, v in (filters or {}).items()]
    return ", ".join(parts) or "no filter"


def _metric_absent_text(result) -> str:
    """The line saying that no selected benchmark has the metric asked for, and which metrics the rest of the selection has."""
    rest = _filters_text({k: v for k, v in result.filters.items() if k != "metric"})
    if result.metrics_without_filter:
        have = ", ".join(f"{m} {n}" for m, n in result.metrics_without_filter.items())
        return f"no benchmark selected by {rest} has metric {result.filters['metric']}; the metrics they have: {have}"
    return f"no benchmark is selected by {rest} with any metric"


def _values_absent_lines(result) -> list[str]:
    """One line per exact-match filter (scenario, origin) whose value the rest of the selection lacks: did you mean, and
    the values the rest has, with counts (``CompareResult.values_without_filter``)."""
    lines = []
    for name, values in result.values_without_filter.items():
        rest = _filters_text({k: v for k, v in result.filters.items() if k != name})
        near = result.did_you_mean.get(name)
        line = f"no benchmark selected by {rest} has {name} {result.filters[name]}"
        line += f" (did you mean {' or '.join(near)}?)" if near else ""
        have = ", ".join(f"{v} {n:,}" for v, n in values.items())
        lines.append(line + (f"; the {name} values they have: {have}" if have else "; they select no benchmark either"))
    return lines


def _print_compare(result, show_all: bool) -> None:
    console = _Echo()
    console.print(
        f"compare {result.selected} benchmark(s) selected by {_filters_text(result.filters)}; "
        f"{len(result.classes)} comparability class(es), {len(result.not_comparable)} not comparable"
        + (f"; varied: {', '.join(result.vary)}" if result.vary else "")
    )
    if result.metric_absent:
        console.print(_metric_absent_text(result))
    for line in _values_absent_lines(result):
        console.print(line)
    if result.hint:
        console.print(result.hint)
    if result.split_by:
        console.print("classes are split by: " + ", ".join(f"{k} ({v} values)" for k, v in result.split_by.items()))
    limit = None if show_all else 10
    for cls in result.classes[: None if show_all else 8]:
        key = ", ".join(f"{k}={'fixed' if k in cls.fixed_by else _short(v)}" for k, v in cls.key.items() if v != "n/a")
        if cls.spellings:
            key += "\n  merged spellings: " + "; ".join(f"{k}: {' = '.join(_short(v) for v in vs)}" for k, vs in cls.spellings.items())
        label = cls.rows[0].label if cls.rows else ""
        t = _table(
            f"\nclass {cls.id}: {cls.size} row(s), {label}; {cls.direction or 'no direction, unranked'}{' is better' if cls.direction else ''}\n  key: {key}",
            ["#", "value", "per accelerator", *list(result.vary), "benchmark", "notes"],
        )
        mixed_origins = len({r.context.get("origin") for r in cls.rows}) > 1
        for r in cls.rows[:limit]:
            notes = list(r.flags)
            if r.experimental:
                notes.append("EXPERIMENTAL")
            if r.same_measurement:
                notes.append("same measurement: " + ", ".join(r.same_measurement))
            if r.repeats:
                rp = r.repeats
                notes.append(f"median of {rp['n']} repeats (min {_fmt_num(rp['min'])}, max {_fmt_num(rp['max'])}): " + ", ".join(rp["ids"]))
            if mixed_origins and r.context.get("origin"):
                notes.append(r.context["origin"])
            pa = r.per_accelerator
            pa_text = f"{_fmt_num(pa['value'])} (÷{pa['divisor']})" if pa else "—"
            t.add_row(
                _fmt_num(r.rank),
                f"{_fmt_num(r.headline)} {r.unit or ''}",
                pa_text,
                *[_short(r.varied.get(v)) for v in result.vary],
                r.id,
                "; ".join(notes),
            )
        console.print(t)
        if limit and cls.size > limit:
            console.print(f"  ... {cls.size - limit} more (--all)")
        for r in cls.rows[:limit]:
            for arm in r.arms:
                delta = ", ".join(f"{k} {v:+.1f}%" for k, v in arm.delta_pct.items() if isinstance(v, (int, float)))
                tag = "baseline" if arm.baseline else ("better" if arm.better else "worse" if arm.better is False else "")
                console.print(f"  arm {arm.arm_id} of {r.id}: {tag} {delta}")
    if len(result.classes) > 8 and not show_all:
        console.print(f"... {len(result.classes) - 8} more classes (--all)")
    if result.not_comparable:
        t = _table("\nnot comparable (a condition is not stated, or no value)", ["value", "missing / reason", "benchmark"])
        for n in result.not_comparable[: None if show_all else 10]:
            shown = f"{n.id} (repeat {n.repeat['index']}/{n.repeat['n']})" if n.repeat else n.id
            why = ", ".join(n.missing) if n.missing else n.reason
            t.add_row(f"{_fmt_num(n.value)} {n.unit or ''}", "; ".join([why, *n.flags]), shown)
        console.print(t)
        if not show_all and len(result.not_comparable) > 10:
            console.print(f"... {len(result.not_comparable) - 10} more (--all)")


def _short(v: Any) -> str:
    s = _fmt_num(v)
    return s if len(s) <= 48 else s[:45] + "..."
