"""Helpers every analysis shares: typed lookups with near-match hints, and the labels throughput always carries.

Throughput in inferkb is never a bare "tok/s": it is labelled with its **token
basis** (output tokens only, or input + output) from the metric name, and
with what it is counted over (``value_scope``: per system, per node, per
device, ...). The **per-accelerator figure** divides a per-system (or
aggregate) rate by nodes × accelerators per node — what MLPerf tables leave
to the reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

# Token basis by metric name (shared data contract: the metric name carries the basis).
TOKEN_BASIS: dict[str, str] = {
    "output_tok_s": "output tokens",
    "total_tok_s": "input + output tokens",
    "prefill_tok_s": "prompt (prefill) tokens",
    "decode_tok_s": "decode (output) tokens",
    "tok_s_per_user": "output tokens, per user",
    "tps_aggregate": "token basis not stated",
}
# Scopes a rate can be divided down from to a per-accelerator figure.
DIVISIBLE_SCOPES = ("per-system", "aggregate", "per-node")


class AnalysisError(UsageError):
    """An analysis cannot run on the inputs given (unknown id, missing field, bad number). Exit code 2."""


def is_number(value: Any) -> bool:
    """True for an int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def lookup(kb: KB, ref: str, type_name: str, *, what: str | None = None) -> Record:
    """The record of ``type_name`` that ``ref`` names: an id (or ``dir/id``), else a name or alias.

    Names go through the one resolver (:func:`inferkb.resolve.resolve`: exact
    alias, then normalised; candidates listed, never chosen between). Raises
    :class:`AnalysisError` listing the candidates when ``ref`` fits several
    records, or naming up to five near matches of that type when it fits none.
    """
    from ..resolve import resolve

    label = what or type_name
    if type_name not in kb.profile.types:
        raise AnalysisError(f"this KB has no {type_name} records (no type {type_name!r})")
    rec = kb.resolve(ref, type_name)
    if rec is not None:
        return rec
    res = resolve(kb, type_name, ref)
    if res.id is not None:
        found = kb.resolve(res.id, type_name)
        if found is not None:
            return found
    if res.ambiguous or len(res.ids) > 1:
        raise AnalysisError(f"{label} {ref!r} is ambiguous: {', '.join(res.ids)}; give one id")
    near = suggest(kb, ref, type_name)
    hint = f"; did you mean: {', '.join(near)}" if near else ""
    raise AnalysisError(f"no {label} {ref!r} in {kb.root}{hint}")


def suggest(kb: KB, ref: str, type_name: str, limit: int = 5) -> list[str]:
    """Up to ``limit`` ids of ``type_name`` close to ``ref`` (rapidfuzz WRatio over ids and names, score >= 60)."""
    from rapidfuzz import fuzz, process, utils

    choices: dict[str, str] = {}
    for r in kb.by_type(type_name):
        choices[r.id] = r.id
        if isinstance(r.data.get("name"), str):
            choices[f"{r.id}\x00name"] = r.data["name"]
    hits = process.extract(ref, choices, scorer=fuzz.WRatio, processor=utils.default_process, limit=limit * 2, score_cutoff=60)
    out: list[str] = []
    for _, _, key in hits:
        rid = key.split("\x00", 1)[0]
        if rid not in out:
            out.append(rid)
    return out[:limit]


def require_number(rec: Record, field: str, *, positive: bool = True) -> float:
    """``rec.data[field]`` as a float; :class:`AnalysisError` naming the record and field when it is missing or not positive."""
    value = rec.data.get(field)
    if not is_number(value):
        raise AnalysisError(
            f"{rec.path}: field {field!r} is {'missing' if value is None else repr(value)}; expected a number (no default is assumed)"
        )
    if positive and value <= 0:
        raise AnalysisError(f"{rec.path}: field {field!r} is {value!r}; expected a positive number")
    return float(value)


def positive_int(value: Any, name: str) -> int:
    """``value`` as an int >= 1, else :class:`AnalysisError` (``name`` is the option or field for the message)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise AnalysisError(f"{name} must be a positive integer, got {value!r}")
    return value


def token_basis(metric: str | None) -> str | None:
    """What a rate metric counts ("output tokens", "input + output tokens", ...); ``None`` for a non-token metric."""
    if metric is None:
        return None
    return TOKEN_BASIS.get(metric)


@dataclass
class PerAccelerator:
    """A rate divided down to one accelerator.

    ``value`` (same unit as the record's), ``divisor`` (devices divided by),
    ``divisor_basis`` (which fields gave it, e.g. "submission: 18 nodes x 4
    accelerators per node") and ``source`` ("record" when the record carries a
    derived ``per_accelerator`` field, "computed" when derived here).
    """

    value: float
    divisor: int
    divisor_basis: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of the four fields."""
        return {"value": self.value, "divisor": self.divisor, "divisor_basis": self.divisor_basis, "source": self.source}


def devices_of(data: dict[str, Any]) -> tuple[int | None, str]:
    """Devices a benchmark ran on and the basis: submission nodes x accelerators per node, else ``accelerator_count``.

    Returns ``(None, reason)`` when neither is stated or they disagree.
    """
    sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
    nodes, per_node = sub.get("number_of_nodes"), sub.get("accelerators_per_node")
    count = data.get("accelerator_count")
    if isinstance(nodes, int) and isinstance(per_node, int) and nodes > 0 and per_node > 0:
        total = nodes * per_node
        if isinstance(count, int) and count != total:
            return None, f"submission says {nodes} nodes x {per_node} = {total} accelerators but accelerator_count is {count}"
        return total, f"submission: {nodes} node(s) x {per_node} accelerators per node"
    if isinstance(count, int) and count > 0:
        return count, "accelerator_count"
    return None, "device count not stated (no accelerator_count, no nodes x accelerators per node)"


def per_accelerator(data: dict[str, Any]) -> tuple[PerAccelerator | None, str]:
    """The record's rate per accelerator, or ``(None, why not)``.

    Uses the record's derived ``per_accelerator`` field when present (shared
    contract; produced by a derivation with provenance). Otherwise: a
    ``per-device`` value is already per accelerator; ``per-system`` and
    ``aggregate`` values are divided by nodes x accelerators per node (or
    ``accelerator_count``); ``per-node`` values by accelerators per node.
    Per-request and per-user rates have no per-accelerator figure, and
    neither has a system of more than one accelerator type (the derivation
    ``per-accelerator`` refuses those too).
    """
    stored = data.get("per_accelerator")
    if isinstance(stored, dict) and is_number(stored.get("value")) and isinstance(stored.get("divisor"), int):
        return PerAccelerator(float(stored["value"]), stored["divisor"], str(stored.get("divisor_basis") or "record"), "record"), ""
    value = data.get("value")
    if not is_number(value):
        return None, "no numeric value"
    scope = data.get("value_scope")
    if scope == "per-device":
        return PerAccelerator(float(value), 1, "value is per device", "computed"), ""
    if scope == "per-node":
        sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
        per_node = sub.get("accelerators_per_node")
        if isinstance(per_node, int) and per_node > 0:
            return PerAccelerator(value / per_node, per_node, f"submission: {per_node} accelerators per node", "computed"), ""
        return None, "value is per node but accelerators per node is not stated"
    if scope in ("per-system", "aggregate"):
        parts = sorted({a for a in data.get("accelerator_ids") or [] if isinstance(a, str)})
        if len(parts) > 1:
            # As the per-accelerator derivation does: one divisor over different parts would average
            # them (MangoBoost's 32 x MI300X + 16 x MI325X is not 48 of either).
            return None, f"mixed hardware ({' + '.join(parts)}): a per-accelerator figure would average different parts"
        devices, basis = devices_of(data)
        if devices is None:
            return None, basis
        return PerAccelerator(value / devices, devices, basis, "computed"), ""
    return None, f"value_scope {scope!r} has no per-accelerator figure" if scope else "value_scope not stated"


def rate_label(data: dict[str, Any]) -> str:
    """Human label of a record's headline number: ``"output tokens/s, per system"``, ``"ms, per request"``, ..."""
    metric = data.get("metric")
    basis = token_basis(metric)
    scope = data.get("value_scope") or "scope not stated"
    unit = data.get("unit") or ""
    if basis:
        return f"{basis}/s, {scope}"
    return f"{metric} ({unit}), {scope}" if unit else f"{metric}, {scope}"


def mlperf_division(data: dict[str, Any]) -> str | None:
    """MLPerf division (closed/open) of a record with a ``submission`` block, else ``None``."""
    sub = data.get("submission")
    if isinstance(sub, dict) and isinstance(sub.get("division"), str):
        return sub["division"].lower()
    return None


def mlperf_round(data: dict[str, Any]) -> str | None:
    """MLPerf round ("v6.1") of a record with a ``submission`` block, else ``None``."""
    sub = data.get("submission")
    if isinstance(sub, dict) and isinstance(sub.get("round"), str):
        return sub["round"]
    return None


def round_order(label: str | None) -> tuple:
    """Sort key for round labels such as ``v4.1`` < ``v5.0`` < ``v6.1`` (unknown last)."""
    if not label:
        return (1, ())
    parts = []
    for p in label.lstrip("vV").split("."):
        parts.append(int(p) if p.isdigit() else 0)
    return (0, tuple(parts))
