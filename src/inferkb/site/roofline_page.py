"""Data of the Roofline page: measured benchmark throughput per device against each accelerator's ceilings.

Uses the calculators of :mod:`inferkb.roofline` (compute ceiling
``devices × peak TFLOPS × 1e12 / (2 × active params)``, Kaplan et al. 2020;
memory-bandwidth ceiling ``bandwidth × 1e9 / (active params × bytes per
weight)`` for one request, Databricks/MosaicML 2023). A benchmark becomes a
point only when the KB states everything the bound needs: one accelerator
type with its count, a throughput rate metric counted per system or per
device, and a model record with its active parameter count. What is missing
for the others is counted, not guessed.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from .. import roofline as R
from ..audit.roofline_inputs import UNKNOWN_FORMAT_BITS, mfu_peak, stated_weight_bits

if TYPE_CHECKING:
    from ..store import Record
    from .data import SiteData

RATE_METRICS = ("output_tok_s", "total_tok_s", "decode_tok_s", "prefill_tok_s")
SYSTEM_SCOPES = (None, "per-system", "aggregate", "per-node")


def _active_params(site: SiteData, rec: Record) -> float | None:
    mid = rec.data.get("model_id")
    model = site.kb.resolve(mid, "model") if isinstance(mid, str) else None
    if model is None:
        return None
    for fld in ("active_params_b", "params_b"):
        v = model.data.get(fld)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def roofline_data(site: SiteData) -> dict[str, Any]:
    """``{"accelerators": [{id, name, href, bandwidth_gbps, points, ceilings}], "skipped": {reason: n}}``.

    A point: ``{key, title, href, scenario, metric, active_params_b,
    per_device_tok_s, weight_bits, bits_basis, peak_tflops, precision, peak_basis (which peak the MFU uses),
    compute_ceiling, mfu, bandwidth_ceiling}`` (tok/s per device).
    """
    kb = site.kb
    skipped: Counter[str] = Counter()
    per_acc: dict[str, list[dict[str, Any]]] = {}
    if "benchmark" not in kb.profile.types:
        return {"accelerators": [], "skipped": {}}
    for rec in kb.by_type("benchmark"):
        d = rec.data
        if d.get("metric") not in RATE_METRICS:
            skipped["not a token-rate metric"] += 1
            continue
        value = d.get("value")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            skipped["no positive value"] += 1
            continue
        ids = [a for a in d.get("accelerator_ids") or [] if isinstance(a, str)]
        if len(set(ids)) != 1:
            skipped["not exactly one accelerator type"] += 1
            continue
        acc = kb.resolve(ids[0], "accelerator")
        count = d.get("accelerator_count")
        if acc is None or not isinstance(count, int) or isinstance(count, bool) or count < 1:
            skipped["accelerator record or count missing"] += 1
            continue
        scope = d.get("value_scope")
        if scope == "per-device":
            per_device = float(value)
        elif scope in SYSTEM_SCOPES:
            per_device = float(value) / count
        else:
            skipped[f"value counted {scope}"] += 1
            continue
        params_b = _active_params(site, rec)
        if params_b is None:
            skipped["no model record with a parameter count"] += 1
            continue
        bits, basis = stated_weight_bits(kb, d)
        eff_bits = bits if bits is not None else UNKNOWN_FORMAT_BITS
        peak, peak_basis = mfu_peak(kb, d, acc.data, stated=(bits, basis))
        bw = acc.data.get("memory_bandwidth_gbps")
        params = params_b * 1e9
        point = {
            "key": rec.key,
            "title": site.title(rec),
            "href": site.linker.record_href(rec),
            "scenario": d.get("scenario"),
            "metric": d.get("metric"),
            "active_params_b": params_b,
            "per_device_tok_s": per_device,
            "weight_bits": bits,
            "bits_basis": basis,
            "peak_tflops": peak[0] if peak else None,
            "precision": peak[1] if peak else None,
            "peak_basis": peak_basis,
            "compute_ceiling": R.flops_bound_tok_s(peak[0], 1, params) if peak else None,
            "mfu": R.mfu(per_device, params, peak[0], 1) if peak else None,
            "bandwidth_ceiling": (
                R.decode_bound_tok_s(bw, 1, R.bytes_per_decode_token(params, eff_bits / 8))
                if isinstance(bw, (int, float)) and not isinstance(bw, bool) and bw > 0
                else None
            ),
        }
        per_acc.setdefault(acc.id, []).append(point)
    out = []
    for aid, points in sorted(per_acc.items()):
        acc = kb.resolve(aid, "accelerator")
        out.append(
            {
                "id": aid,
                "name": site.title(acc),
                "href": site.linker.record_href(acc),
                "bandwidth_gbps": acc.data.get("memory_bandwidth_gbps"),
                "points": sorted(points, key=lambda p: (p["active_params_b"], p["per_device_tok_s"])),
                "ceilings": _ceiling_lines(acc, points),
            }
        )
    return {"accelerators": out, "skipped": dict(skipped.most_common())}


def _ceiling_lines(acc: Record, points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sampled ceiling curves over the points' parameter range (one per precision used, plus batch-1 bandwidth)."""
    lo = min(p["active_params_b"] for p in points) / 1.5
    hi = max(p["active_params_b"] for p in points) * 1.5
    xs = [lo * (hi / lo) ** (i / 8) for i in range(9)]
    rows = []
    for precision, peak in sorted({(p["precision"], p["peak_tflops"]) for p in points if p["peak_tflops"]}):
        for x in xs:
            rows.append(
                {
                    "ceiling": f"compute, {precision} peak {peak:g} TFLOPS",
                    "active parameters (B)": x,
                    "tok/s per device": R.flops_bound_tok_s(peak, 1, x * 1e9),
                }
            )
    bw = acc.data.get("memory_bandwidth_gbps")
    for bits in sorted({p["weight_bits"] or UNKNOWN_FORMAT_BITS for p in points}):
        if isinstance(bw, (int, float)) and not isinstance(bw, bool) and bw > 0:
            for x in xs:
                per_token = R.bytes_per_decode_token(x * 1e9, bits / 8)
                rows.append(
                    {
                        "ceiling": f"bandwidth, batch 1, {bits:g}-bit weights",
                        "active parameters (B)": x,
                        "tok/s per device": R.decode_bound_tok_s(bw, 1, per_token),
                    }
                )
    return rows
