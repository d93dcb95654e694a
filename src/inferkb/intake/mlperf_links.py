"""Links between MLPerf benchmark records: ``same_measurement_as`` and ``system_series``.

Same measurement (:func:`link_same_measurement`): MLPerf scores one run
against two accuracy targets (``llama2-70b-99`` and ``llama2-70b-99.9``: 99%
and 99.9% of the reference score), and a submitter that meets both may
report the same run twice. Two records are taken to repeat one measurement
when they have the same round, division, submitter, platform and scenario,
the same model once the ``-99``/``-99.9`` suffix is removed, and an
identical metric, unit and value. Every record of such a group lists the
others (sorted ids); a ranking counts one record per group.

System series (:func:`system_series_key`): the same system across rounds is
the same submitter with the same hardware configuration: the accelerator
(KB ids when resolved, else the normalised raw string), the node count, the
accelerators per node and the host processor (normalised: trademarks,
"Processor" and punctuation dropped). Platform and system names are not
used because submitters rename them between rounds. The key is a kebab-case
string; records sharing it form one history.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .base import today

_NOISE = re.compile(r"\((r|tm)\)|®|™|\bprocessor\b|\bcpu\b", re.I)


def _norm(text: str | None) -> str:
    t = _NOISE.sub(" ", (text or "").lower())
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")


def _base_model(model: str) -> str:
    return re.sub(r"-99(\.9)?$", "", (model or "").strip().lower())


def link_same_measurement(records: Iterable[dict[str, Any]]) -> int:
    """Set ``same_measurement_as`` on MLPerf records that repeat one measurement (see the module docstring); returns groups linked.

    Records outside a group get no field (absence = none known). Records are
    changed in place.
    """
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        sub = rec.get("submission") or {}
        if sub.get("suite") != "MLPerf Inference" or rec.get("value") is None:
            continue
        key = (
            sub.get("round"),
            sub.get("division"),
            sub.get("submitter"),
            sub.get("platform"),
            (sub.get("scenario_raw") or "").lower(),
            _base_model(sub.get("mlperf_model") or rec.get("model") or ""),
            rec.get("metric"),
            rec.get("unit"),
            rec.get("value"),
        )
        groups[key].append(rec)
    linked = 0
    for members in groups.values():
        rec_ids = sorted({r["id"] for r in members})
        if len(rec_ids) < 2:
            for r in members:
                r.pop("same_measurement_as", None)
            continue
        linked += 1
        for r in members:
            r["same_measurement_as"] = [i for i in rec_ids if i != r["id"]]
            r.setdefault("provenance", []).append(
                {
                    "date": today(),
                    "tag": "mlperf-links",
                    "field": "same_measurement_as",
                    "action": "import",
                    "method": "same round, division, submitter, platform and scenario; same model up to the -99/-99.9 "
                    "accuracy suffix; identical metric, unit and value",
                    "evidence": {"field": "value", "quote": str(r.get("value"))},
                    "basis": "MLPerf scores one run against the 99% and 99.9% accuracy targets; a submitter meeting both may "
                    "report that run twice (rule in inferkb.intake.mlperf_links)",
                    "numbers_changed": False,
                }
            )
    return linked


def system_series_key(rec: dict[str, Any]) -> str | None:
    """The ``system_series`` key of an MLPerf record, or ``None`` when the record has no submitter or hardware string."""
    sub = rec.get("submission") or {}
    submitter = sub.get("submitter")
    hw = _norm("+".join(sorted(rec.get("accelerator_ids") or [])) or rec.get("hardware_raw")) or "no-accelerator"
    if not submitter:
        return None
    nodes, per_node = sub.get("number_of_nodes"), sub.get("accelerators_per_node")
    cpu = _norm((rec.get("environment") or {}).get("host_cpu"))
    parts = [_norm(submitter), hw, f"{nodes or 0}x{per_node or 0}", cpu or "host-unknown"]
    key = "-".join(p for p in parts if p)
    if len(key) > 100:
        key = key[:90].strip("-") + "-" + hashlib.sha1(key.encode()).hexdigest()[:8]
    return key


def set_system_series(records: Iterable[dict[str, Any]]) -> int:
    """Set ``system_series`` on every MLPerf record; returns how many series span more than one round."""
    rounds: dict[str, set] = defaultdict(set)
    for rec in records:
        sub = rec.get("submission") or {}
        if sub.get("suite") != "MLPerf Inference":
            continue
        key = system_series_key(rec)
        rec["system_series"] = key
        if key:
            rounds[key].add(sub.get("round"))
    return sum(1 for r in rounds.values() if len(r) > 1)


__all__ = ["link_same_measurement", "system_series_key", "set_system_series"]
