"""Audit ``datasheet-consistency``: accelerator peak-FLOPs rows that contradict each other.

KB1301 ``sparse-dense-mismatch`` (warning): where an accelerator record gives
both a dense and a sparse peak for the same precision (and the same hardware
path, the row's ``unit`` such as ``fp64-tensor-core``), the sparse figure
should be twice the dense one. Vendors quote 2:4 structured sparsity as
exactly 2x the dense rate (NVIDIA's datasheets print "with sparsity" figures
that are twice the dense ones; e.g. H100 SXM FP8 3,958 vs 1,979 TFLOPS), so a
ratio away from 2 means one of the two rows was copied from another mode or
another part. Tolerance: :data:`TOLERANCE` (3 % of 2x, to absorb datasheet
rounding such as 989.5 printed as 989). The finding names the precision and
both values.

KB1302 ``verified-spec-unconfirmed`` (error): an accelerator marked
``verified`` while one of its key figures is not confirmed on a primary page:
the record lists the field in its own ``spec_gaps`` (the structured note of
what stays unconfirmed, why, what was checked and what would confirm it), or
it cites a source record whose notes say the page was "not re-read" (the
phrase this KB's source records use for a URL recorded without reading it).
Issue 7: "Accelerator specs marked verified whose sources say 'page not
re-read' are not verified".

Figures: ``{"accelerators": n, "pairs_checked": n, "mismatches": n,
"verified": n, "with_spec_gaps": n, "spec_gap_fields": {field: n}}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB

TOLERANCE = 0.03

KB1301 = register(
    Rule(
        "KB1301",
        "sparse-dense-mismatch",
        "warning",
        "datasheet-consistency",
        "An accelerator's sparse peak for a precision is not about twice its dense peak for the same precision.",
        "2:4 structured sparsity doubles the quoted peak and nothing else does; a sparse row that is not 2x the dense row of the "
        f"same precision and hardware path means one of them came from another mode or another part (tolerance {TOLERANCE:.0%}).",
        '{"flops": [{"precision": "fp4", "tflops": 494, "dense": true}, {"precision": "fp4", "tflops": 988, "dense": false}]}',
        '{"flops": [{"precision": "fp8", "tflops": 450, "dense": true}, {"precision": "fp8", "tflops": 1801, "dense": false}]}',
    )
)


KB1302 = register(
    Rule(
        "KB1302",
        "verified-spec-unconfirmed",
        "error",
        "datasheet-consistency",
        "An accelerator is marked verified but a key figure is unconfirmed (spec_gaps) or a cited source was not re-read.",
        "verified means every key number (memory, bandwidth, peak FLOPs per format, TDP, die) was confirmed on a primary page; "
        "a spec_gaps entry or a source whose notes say 'not re-read' contradicts that, so the status must be draft.",
        '{"status": "draft", "spec_gaps": {"tdp_w": {"reason": "the ROCm page read gives no power figure"}}}',
        '{"status": "verified", "spec_gaps": {"tdp_w": {"reason": "the ROCm page read gives no power figure"}}}',
    )
)

NOT_RE_READ = "not re-read"


def unread_sources(kb: KB, data: dict[str, Any]) -> list[str]:
    """Ids of the record's ``sources`` whose source record's notes say the page was not re-read."""
    out = []
    for sid in data.get("sources") or []:
        src = kb.resolve(sid, "source") if isinstance(sid, str) else None
        notes = (src.data.get("notes") or "") if src is not None else ""
        if NOT_RE_READ in notes.lower():
            out.append(sid)
    return out


def _rate(row: dict[str, Any]) -> float | None:
    x = row.get("tflops")
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 else None


def sparse_dense_pairs(flops: list[Any]) -> list[tuple[str, list[float], float]]:
    """``[(label, dense values, sparse value)]`` for every sparse row that has dense rows of the same precision and unit."""
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}
    for row in flops:
        if not isinstance(row, dict) or _rate(row) is None or not isinstance(row.get("precision"), str):
            continue
        key = (row["precision"], str(row.get("unit") or ""))
        kind = "dense" if row.get("dense", True) is not False else "sparse"
        groups.setdefault(key, {"dense": [], "sparse": []})[kind].append(_rate(row))
    out = []
    for (precision, unit), rows in groups.items():
        label = f"{precision} ({unit})" if unit else precision
        out.extend((label, rows["dense"], sparse) for sparse in rows["sparse"] if rows["dense"])
    return out


def consistent(dense: list[float], sparse: float, tolerance: float = TOLERANCE) -> bool:
    """True when ``sparse`` is within ``tolerance`` (relative) of twice one of the ``dense`` values."""
    return any(abs(sparse - 2 * d) <= tolerance * 2 * d for d in dense)


@audit("datasheet-consistency", "accelerator datasheet figures that contradict each other (sparse vs dense peaks)", cost=0.01)
def run(kb: KB) -> AuditResult:
    """KB1301 for every sparse peak that is not ~2x its dense peak, KB1302 for a verified record with unconfirmed figures."""
    result = AuditResult("datasheet-consistency")
    accelerators = pairs = verified = with_gaps = 0
    gap_fields: dict[str, int] = {}
    for rec in kb.by_type("accelerator"):
        gaps = rec.data.get("spec_gaps")
        gaps = gaps if isinstance(gaps, dict) else {}
        with_gaps += bool(gaps)
        for key in gaps:
            top = key.split(".", 1)[0]
            gap_fields[top] = gap_fields.get(top, 0) + 1
        if rec.data.get("status") == "verified":
            verified += 1
            unread = unread_sources(kb, rec.data)
            if gaps or unread:
                why = []
                if gaps:
                    why.append("spec_gaps lists " + ", ".join(sorted(gaps)))
                if unread:
                    why.append("cited source(s) not re-read: " + ", ".join(unread))
                result.findings.append(
                    KB1302.finding(
                        "status is verified but " + "; ".join(why),
                        record=rec.key,
                        path=rec.path,
                        field="status",
                        extra={"spec_gaps": sorted(gaps), "unread_sources": unread},
                    )
                )
        flops = rec.data.get("flops")
        if not isinstance(flops, list):
            continue
        accelerators += 1
        for label, dense, sparse in sparse_dense_pairs(flops):
            pairs += 1
            if consistent(dense, sparse):
                continue
            shown = " / ".join(f"{d:g}" for d in dense)
            result.findings.append(
                KB1301.finding(
                    f"{label}: sparse {sparse:g} TFLOPS is {sparse / max(dense):.3g}x the dense {shown} TFLOPS, not 2x "
                    f"(tolerance {TOLERANCE:.0%})",
                    record=rec.key,
                    path=rec.path,
                    field="flops",
                    extra={"precision": label, "dense": dense, "sparse": sparse},
                )
            )
    mismatches = sum(1 for f in result.findings if f.code == "KB1301")
    result.figures = {
        "accelerators": accelerators,
        "pairs_checked": pairs,
        "mismatches": mismatches,
        "tolerance": TOLERANCE,
        "verified": verified,
        "with_spec_gaps": with_gaps,
        "spec_gap_fields": dict(sorted(gap_fields.items())),
    }
    return result
