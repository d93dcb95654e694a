"""The device count of one benchmark record, read once for both audits that need it: the load-conditions audit (the
``hardware`` condition) and the physical-plausibility audit (the devices a rate is divided over).

``accelerator_count`` when stated; else a count quoted from the record's own text, dropped when it names another part,
and refused as ambiguous for a sweep over counts, several counts, or a count beyond a stated TP size with no DP/EP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hardware import normalise
from . import conditions_patterns as P
from .conditions_reading import VALUE_FIELDS, _bounded, _Hit, _negation_reason, _Record, _scan

__all__ = ["DeviceCount", "device_count"]

_may = P.may_match


@dataclass(frozen=True, slots=True)
class DeviceCount:
    """How many devices a benchmark record says its value ran on: ``count`` (``None`` when unknown or
    ambiguous), the ``field`` and exact ``quote`` it was read from, and ``reason`` (the basis, or why none).

    The one reading of device counts: the load-conditions audit (the ``hardware``
    condition) and the physical-plausibility audit (the devices a rate is divided
    over) both use :func:`device_count`, so they cannot disagree.
    """

    count: int | None
    field: str | None
    quote: str | None
    reason: str


# Words that say nothing about which part a count is of ("8x GPUs", "single GPU").
_GENERIC_DEVICE_WORDS = frozenset(
    {"gpu", "gpus", "nvidia", "amd", "intel", "google", "instinct", "radeon", "single", "one", "chip", "chips", "card", "cards"}
    | {"accelerator", "accelerators", "device", "devices", "npu", "npus", "tpu", "tpus", "laptop", "instance", "a"}
)
_LEADING_COUNT = re.compile(r"^\s*\d{1,4}\s?[x\u00d7]\s?|^\s*(?:single|one)\b", re.I)


def _same_part_word(word: str, token: str) -> bool:
    """A quoted word names the accelerator's token: equal, or one a variant suffix of the other ("MI50" / "mi50x")."""
    if word == token:
        return True
    short, long_ = sorted((word, token), key=len)
    return len(short) >= 4 and any(c.isdigit() for c in short) and long_.startswith(short) and long_[len(short) :].isalpha()


def _names_other_part(quote: str, accelerator_tokens: frozenset[str]) -> bool:
    """True when a count's quote names an accelerator that is not the record's ("8xMI325X" in an MI355X record)."""
    if not accelerator_tokens:
        return False
    words = {t for t in normalise(_LEADING_COUNT.sub(" ", quote)).split() if t not in _GENERIC_DEVICE_WORDS and not t.isdigit()}
    return bool(words) and not any(_same_part_word(w, t) for w in words for t in accelerator_tokens)


def _named_counts(rec: _Record) -> list[_Hit]:
    """``N x <name>`` counts whose following words name the record's accelerator (any spelling of its name)."""
    tokens = rec.accelerator_tokens
    if not tokens or not _may(P.COUNT_NAMED, rec.vlow):
        return []
    out = []
    for fld, clause, low in rec.value_clauses("hardware"):
        if not _may(P.COUNT_NAMED, low):
            continue
        for m in P.COUNT_NAMED.finditer(clause):
            following = normalise(clause[m.end() : m.end() + 30]).split()[:4]
            if tokens.intersection(following) and not _bounded(clause, low, m, m.end(1)):
                out.append(_Hit(int(m.group(1)), fld, clause[m.start() : m.end() + 12].strip()))
    return out


def _highest_field(hits: list[_Hit]) -> list[_Hit]:
    """The hits of the highest-priority field that has any (as :func:`_scan` keeps them)."""
    for fld in VALUE_FIELDS:
        kept = [h for h in hits if h.field == fld]
        if kept:
            return kept
    return []


def _count_sweep(rec: _Record) -> DeviceCount | None:
    """A sweep over device counts ("from 2 to 4 to 6 to 8 cards") in the highest-priority field that states one: ambiguous."""
    if not _may(P.COUNT_SWEEP, rec.vlow):
        return None
    for fld in VALUE_FIELDS:
        for f, clause, low in rec.value_clauses("hardware"):
            if f != fld or not _may(P.COUNT_SWEEP, low):
                continue
            m = P.COUNT_SWEEP.search(clause)
            if m:
                counts = [m.group(1), m.group(2), *re.findall(r"\d+", m.group(3) or "")]
                quote = m.group(0).strip()
                return DeviceCount(
                    None, fld, quote, f"ambiguous count: a sweep over {', '.join(counts)} devices ({quote!r}), not one run's count"
                )
    return None


def _device_count(rec: _Record) -> DeviceCount:
    count = rec.record.get("accelerator_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return DeviceCount(count, "accelerator_count", str(count), "accelerator_count")
    if "hardware" in rec.negated:
        return DeviceCount(None, None, None, _negation_reason(rec, ("hardware",)) or "the record says the hardware is not given")
    sweep = _count_sweep(rec)
    if sweep is not None:
        return sweep
    hits = [h for h in _scan(rec, P.COUNT, "hardware") if not _names_other_part(h.quote, rec.accelerator_tokens)]
    hits = _highest_field(hits + _named_counts(rec))
    counts = {h.value for h in hits}
    if not hits:
        return DeviceCount(None, None, None, "no device count is stated in name, unit or methodology")
    if len(counts) > 1:
        return DeviceCount(None, hits[0].field, None, f"ambiguous count: {', '.join(sorted({h.quote for h in hits}))}")
    # The TP/DP/EP layout matters only for a single count read from the text.
    tp = _may(P.TP_SIZE, rec.vlow) and {
        int(next(g for g in m.groups() if g)) for _, c, low in rec.value_clauses() if _may(P.TP_SIZE, low) for m in P.TP_SIZE.finditer(c)
    }
    other = tp and any(_may(P.OTHER_PARALLEL, low) and P.OTHER_PARALLEL.search(c) for _, c, low in rec.value_clauses())
    h = hits[0]
    if tp and max(tp) < h.value and not other:
        return DeviceCount(None, h.field, h.quote, f"ambiguous count: {h.quote!r} but tensor-parallel size {max(tp)} with no DP/EP stated")
    return DeviceCount(h.value, h.field, h.quote, f"device count from {h.field}: {h.quote!r}")


def device_count(record: dict, *, accelerator_tokens=None) -> DeviceCount:
    """Read the device count of one benchmark record (see :class:`DeviceCount`).

    Order: ``accelerator_count``; else a count quoted from ``name``, ``unit``
    or ``methodology`` (the highest-priority field with one): ``8x H100``,
    ``8-GPU``, ``4 GPUs``, ``single GPU``, ``one L4``. ``accelerator_tokens``
    (distinctive tokens of the record's accelerator, e.g. ``{"mi355x"}``) drops
    counts of another part ("8xMI325X" quoted from a sibling submission).
    Several distinct counts, or a count larger than a stated TP size with no
    DP/EP, give ``None`` as ambiguous; a clause saying the hardware is not
    given gives ``None``. Never raises.
    """
    return _device_count(_Record(record if isinstance(record, dict) else {}, accelerator_tokens=accelerator_tokens))
