"""Measured benchmarks placed against the analysis roofline (MBU/MFU), per accelerator, for the roofline pages.

Uses :func:`inferkb.analysis.roofline.roofline` (formulas and sources there)
for every (model, accelerator, weight format) the KB's benchmarks cover, where
the pair allows it: a benchmark needs a ``model_id``, exactly one accelerator
type, and a stated weight format (``format_id``, else the submission's
``weight_data_types``, which MLPerf tables state) — bytes per weight set the
bandwidth bound and MBU. The analysis then places each benchmark with its own
device count: MBU for per-request/per-user decode rates, MFU for throughput,
both lower bounds. Whatever stops a benchmark from being placed (the model has
no active parameter count, the accelerator no bandwidth, the metric is not a
token rate, the device count is unknown ...) is counted by that reason.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..analysis.common import AnalysisError
from ..analysis.roofline import roofline

if TYPE_CHECKING:
    from ..store import Record
    from .data import SiteData


def weight_format(rec: Record) -> str | None:
    """The weight format a benchmark states: ``format_id``, else ``submission.weight_data_types``; ``None`` when neither.

    A ``weight_data_types`` that the record's ``condition_gaps.format_id`` says the harness config contradicts is not used.
    """
    fid = rec.data.get("format_id")
    if isinstance(fid, str) and fid:
        return fid
    from ..intake.mlperf_weight_formats import table_contradicted

    if table_contradicted(rec.data):
        return None
    sub = rec.data.get("submission") if isinstance(rec.data.get("submission"), dict) else {}
    wdt = sub.get("weight_data_types")
    return wdt if isinstance(wdt, str) and wdt.strip() else None


def measured_utilisation(site: SiteData) -> dict[str, dict[str, Any]]:
    """Accelerator id -> ``{"placed": [...], "ceilings": [...], "skipped": {reason: n}}``.

    A placed entry: ``{key, title, href, model, model_name, weights, metric, value, label, devices, kind (MBU|MFU),
    utilisation (fraction), basis}``. A ceiling: ``{model, model_name, weights, bytes_per_weight,
    decode_per_device (tok/s, batch 1, context 0), prefill_per_device (tok/s or None), peak (TFLOPS, precision)}``.
    """
    kb = site.kb
    groups: dict[tuple[str, str, str], list[Record]] = {}
    out: dict[str, dict[str, Any]] = {}

    def entry(acc_id: str) -> dict[str, Any]:
        return out.setdefault(acc_id, {"placed": [], "ceilings": [], "skipped": Counter()})

    if "benchmark" not in kb.profile.types:
        return {}
    for rec in kb.by_type("benchmark"):
        d = rec.data
        ids = list(dict.fromkeys(a for a in d.get("accelerator_ids") or [] if isinstance(a, str)))
        if len(ids) != 1 or not isinstance(d.get("model_id"), str):
            continue  # not a pair the analysis can place
        fmt = weight_format(rec)
        if fmt is None:
            entry(ids[0])["skipped"]["weight format not stated (bytes per weight set the bound)"] += 1
            continue
        groups.setdefault((d["model_id"], ids[0], fmt), []).append(rec)
    for (model_id, acc_id, fmt), recs in sorted(groups.items()):
        e = entry(acc_id)
        try:
            res = roofline(kb, model_id, acc_id, count=1, fmt=fmt, batch=1, context=0)
        except AnalysisError as exc:
            e["skipped"][str(exc)] += len(recs)
            continue
        mrec = kb.resolve(model_id, "model")
        model_name = site.title(mrec) if mrec is not None else model_id
        e["ceilings"].append(
            {
                "model": model_id,
                "model_name": model_name,
                "weights": fmt,
                "bytes_per_weight": res.bytes_per_weight,
                "decode_per_device": res.decode_per_request_tok_s,
                "prefill_per_device": res.prefill_tok_s,
                "peak": (res.peak_tflops, res.peak_precision) if res.peak_tflops is not None else None,
                "records": len(recs),
            }
        )
        wanted = {r.id for r in recs}
        for placed in res.measured:
            if placed.id not in wanted:
                continue  # measured at another weight format: placed with that format's bytes
            if placed.utilisation is None:
                e["skipped"][placed.basis] += 1
                continue
            rec = kb.resolve(placed.id, "benchmark")
            e["placed"].append(
                {
                    "key": rec.key if rec else placed.id,
                    "title": site.title(rec) if rec else placed.id,
                    "href": site.linker.record_href(rec) if rec else None,
                    "model": model_id,
                    "model_name": model_name,
                    "weights": fmt,
                    "metric": placed.metric,
                    "value": placed.value,
                    "label": placed.label,
                    "devices": placed.devices,
                    "kind": placed.kind,
                    "utilisation": placed.utilisation,
                    "basis": placed.basis,
                }
            )
    for e in out.values():
        e["placed"].sort(key=lambda p: (p["model_name"], p["kind"] or "", -(p["utilisation"] or 0)))
        e["skipped"] = dict(e["skipped"].most_common())
    return out


def utilisation_points(placed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chart rows of :func:`inferkb.site.analysis_charts.utilisation_dots` from placed entries."""
    return [
        {
            "model": p["model_name"],
            "kind": p["kind"],
            "utilisation %": round(p["utilisation"] * 100, 3),
            "record": p["title"],
            "devices": p["devices"],
            "weights": p["weights"],
        }
        for p in placed
    ]
