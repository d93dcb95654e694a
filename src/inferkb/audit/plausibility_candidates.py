"""The roofline check for a benchmark whose part is known only up to a family: one ceiling per candidate part.

A record with empty ``accelerator_ids`` and a list of parts in
``accelerator_alternates`` (Argonne's "Nvidia A100 GPU": four A100 parts;
InferenceX "h200": NVL or SXM) has no single ceiling, but each candidate has
one. The measured rate is checked against every candidate's roofline, as
:mod:`inferkb.audit.plausibility` does for one part (memory bandwidth for a
per-request decode rate, MBU; the fastest dense peak at the weight format or
wider for throughput, MFU; formulas in :mod:`inferkb.roofline`):

- above the ceiling of every candidate, with none left unchecked: impossible
  whatever the part was (KB501/KB503, as for one part; a warning when the
  text mentions speculative decoding);
- above some ceilings only: KB507 (info) names the parts the rate rules out;
- within all: no finding (KB502 when even the fastest candidate puts MBU above
  90%, KB506 when every candidate's stated-format peak is exceeded), and the
  MBU/MFU range goes into the figures.

A candidate with no accelerator record, no bandwidth or no fitting flops row
is named as unchecked; it can neither be ruled out nor bound the rate, so with
one left no verdict of "impossible" is given. With the device count unknown
the utilisations are those of ONE device (upper bounds): only KB505 (count
needed) can follow. Nothing is written into the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import roofline
from .plausibility_rules import KB501, KB502, KB503, KB504, KB505, KB506, KB507, MBU_SUSPICIOUS, SPEC_DECODE
from .roofline_inputs import decode_bytes, incomplete_ceiling, mfu_peak, size_note, weight_bytes

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record


def candidate_ids(data: dict[str, Any]) -> list[str]:
    """The distinct string ids in ``accelerator_alternates``, in record order (``[]`` when absent or not a list)."""
    alternates = data.get("accelerator_alternates")
    if not isinstance(alternates, list):
        return []
    return [i for i in dict.fromkeys(a for a in alternates if isinstance(a, str)) if i]


def _ceiling(kb: KB, acc_id: str, kind: str, bpw: float | None) -> tuple[float | None, str, str]:
    """``(bandwidth GB/s | dense TFLOPS | None, label, why unchecked)`` of one candidate part."""
    acc = kb.resolve(acc_id, "accelerator")
    if acc is None:
        return None, "", "no accelerator record"
    if kind == "decode":
        bw = acc.data.get("memory_bandwidth_gbps")
        if isinstance(bw, (int, float)) and not isinstance(bw, bool) and bw > 0:
            return float(bw), f"{bw:g} GB/s", ""
        return None, "", "no memory_bandwidth_gbps"
    rows = acc.data.get("flops") or []
    peak = roofline.peak_dense_tflops(rows, (bpw or 0) * 8)
    if peak is None:
        return None, "", f"no dense flops row at {bpw * 8:g}-bit or wider" if bpw else "no dense flops row"
    why = incomplete_ceiling(acc.data, (bpw or 0) * 8, peak)
    if why:
        return None, "", why
    return peak[0], f"{peak[0]:g} dense {peak[1]} TFLOPS", ""


def check_candidates(
    kb: KB,
    rec: Record,
    figures: dict[str, Any],
    *,
    kind: str,
    rate: float,
    params: float | None,
    size_info: dict[str, Any],
    devices: int | None,
    dev_basis: str,
) -> list:
    """Check ``rec``'s rate against every candidate part's roofline; findings, and the range in ``figures``.

    ``kind`` is ``"decode"`` (``rate`` tok/s per request, checked as MBU) or
    ``"throughput"`` (``rate`` tok/s, MFU); ``params`` the active parameters
    (``None`` when unknown, then KB504 names it); ``devices`` the device count
    or ``None``. Adds ``figures["candidate_per_record"][rec.id] = {"mbu_min"|"mfu_min",
    "mbu_max"|"mfu_max", "min_candidate", "max_candidate", "candidates": {id: utilisation},
    "ruled_out": [ids over 100%], "devices", "size_basis"[, "unchecked": {id: why}][, "note"]}``
    (utilisations as fractions, 4 decimals) and counts it in ``candidate_ranges``.
    """
    data = rec.data
    metric, value = data.get("metric"), data.get("value")
    where = {"record": rec.key, "path": rec.path, "field": "value"}
    alternates = candidate_ids(data)
    bpw, fmt_basis = weight_bytes(kb, data)
    missing = [size_info["missing"]] if params is None else []
    if kind == "decode" and bpw is None:
        missing.append(fmt_basis)
    ceilings: dict[str, tuple[float, str]] = {}
    unchecked: dict[str, str] = {}
    for acc_id in alternates:
        ceiling, label, why = _ceiling(kb, acc_id, kind, bpw)
        if ceiling is None:
            unchecked[acc_id] = why
        else:
            ceilings[acc_id] = (ceiling, label)
    if not ceilings:
        missing.append(
            "no accelerator_ids, and no candidate in accelerator_alternates has a ceiling ("
            + "; ".join(f"{a}: {w}" for a, w in unchecked.items())
            + ")"
        )
    if missing:
        figures["unchecked"] += 1
        return [KB504.finding(f"{metric} not checked against the roofline: " + "; ".join(missing), extra={"missing": missing}, **where)]

    n = devices or 1
    what = "MBU" if kind == "decode" else "MFU"
    if kind == "decode":
        per_token, kv_note = decode_bytes(data, params, bpw, size_info)
        util = {a: roofline.mbu(rate, per_token, c, n) for a, (c, _) in ceilings.items()}
        head = f"{rate:g} tok/s x {per_token / 1e9:.3g} GB/token = {rate * per_token / 1e9:.4g} GB/s"
        tail = f"{fmt_basis}; {kv_note}"
    else:
        util = {a: roofline.mfu(rate, params, c, n) for a, (c, _) in ceilings.items()}
        head = f"{rate:g} tok/s x 2 x {params / 1e9:g}e9 FLOP = {rate * 2 * params / 1e12:.4g} TFLOP/s"
        tail = fmt_basis if bpw else "format unknown, so the fastest dense peak of any precision is used"
    low_id, high_id = min(util, key=util.__getitem__), max(util, key=util.__getitem__)
    ruled_out = [a for a in util if util[a] > 1]
    per_part = ", ".join(f"{a} {n} x {ceilings[a][1]} -> {util[a]:.0%}" for a in util)
    skipped = f"; unchecked: {', '.join(f'{a} ({w})' for a, w in unchecked.items())}" if unchecked else ""
    detail = f"{head} vs each candidate ({per_part}){skipped}; {size_note(params, size_info)}; {tail}; devices: {dev_basis}"

    key = what.lower()
    entry: dict[str, Any] = {
        f"{key}_min": round(util[low_id], 4),
        f"{key}_max": round(util[high_id], 4),
        "min_candidate": low_id,
        "max_candidate": high_id,
        "candidates": {a: round(u, 4) for a, u in util.items()},
        "ruled_out": ruled_out,
        "devices": devices,
        "size_basis": size_info["basis"],
    }
    if unchecked:
        entry["unchecked"] = unchecked
    if devices is None:
        entry["note"] = "device count unknown: utilisation of ONE device, an upper bound"
    figures["candidate_ranges"] += 1
    figures["candidate_per_record"][rec.id] = entry
    extra = {f"{key}_min": entry[f"{key}_min"], f"{key}_max": entry[f"{key}_max"], "candidates": entry["candidates"], "devices": devices}
    low = util[low_id]
    span = f"{what} {low:.0%} ({low_id}) to {util[high_id]:.0%} ({high_id})"

    if devices is None:
        if low > 1:
            return [
                KB505.finding(
                    f"{metric} {value:g} implies {span} of ONE device even on the fastest candidate and the device count is not stated: {detail}",
                    extra=extra,
                    **where,
                )
            ]
        return []
    if ruled_out and (len(ruled_out) < len(util) or unchecked):
        left = [a for a in util if a not in ruled_out] + list(unchecked)
        return [
            KB507.finding(
                f"{metric} {value:g} implies {span}: over 100% on {', '.join(ruled_out)}, so the run was not on "
                f"{'that part' if len(ruled_out) == 1 else 'those parts'}; still possible: {', '.join(left)}: {detail}",
                extra=dict(extra, ruled_out=ruled_out, still_possible=left),
                **where,
            )
        ]
    if ruled_out:
        rule = KB501 if kind == "decode" else KB503
        if kind == "decode" and any(SPEC_DECODE.search(data.get(f) or "") for f in ("name", "unit", "methodology", "notes")):
            return [
                rule.finding(
                    f"{metric} {value:g} implies {span}, over 100% on every candidate part: possible only because the text mentions "
                    f"speculative decoding (several tokens per weight read): {detail}",
                    severity="warning",
                    extra=extra,
                    **where,
                )
            ]
        return [
            rule.finding(
                f"{metric} {value:g} implies {span}: over 100% on every candidate part, impossible whatever the part was: {detail}",
                extra=extra,
                **where,
            )
        ]
    if unchecked:
        return []
    if kind == "decode" and low > MBU_SUSPICIOUS:
        return [
            KB502.finding(f"{metric} {value:g} implies {span}: above 90% even on the fastest candidate: {detail}", extra=extra, **where)
        ]
    if kind == "throughput":
        return _stated_format(kb, rec, alternates, rate, params, n, dev_basis, extra, where)
    return []


def _stated_format(
    kb: KB, rec: Record, alternates: list[str], rate: float, params: float, n: int, dev_basis: str, extra: dict, where: dict
) -> list:
    """KB506 when every candidate's dense peak at the record's STATED format (what ``roofline`` and the site use) is exceeded."""
    stated: dict[str, tuple[float, str]] = {}
    for acc_id in alternates:
        acc = kb.resolve(acc_id, "accelerator")
        peak, which = mfu_peak(kb, rec.data, acc.data if acc else {})
        if peak is None:
            return []
        stated[acc_id] = (roofline.mfu(rate, params, peak[0], n), which)
    low_id = min(stated, key=lambda a: stated[a][0])
    if stated[low_id][0] <= 1:
        return []
    metric, value = rec.data.get("metric"), rec.data.get("value")
    return [
        KB506.finding(
            f"{rec.id}: {metric} {value:g} implies MFU {stated[low_id][0]:.0%} or more against every candidate part's dense peak "
            f"(lowest on {low_id}; {stated[low_id][1]}), more than any hardware can do; likely a wrong format_id, a wrong device "
            f"count ({dev_basis}) or a per-system value labelled per accelerator",
            extra=dict(extra, mfu_stated_format_min=round(stated[low_id][0], 4)),
            **where,
        )
    ]
