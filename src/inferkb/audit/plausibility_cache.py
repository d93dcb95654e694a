"""The physical-plausibility audit's result for each unchanged benchmark file, kept between runs in the load cache.

A benchmark's roofline check (:func:`inferkb.audit.plausibility._check`)
reads the record itself and, through the KB, the model, accelerator and
format records it names (sizes, bandwidths, flops rows, ``spec_gaps``), the
candidate parts of ``accelerator_alternates`` and the metric registry. So the
fingerprint of its cache file (:mod:`inferkb.audit.record_cache`, kind
``plausibility``) adds a digest of every record that is not a benchmark and of
the KB's and the bundled metric registries: an edited model, accelerator or
format record, or another registry, checks every benchmark again; an edited
benchmark is checked again alone (its file stamp).

A payload is ``[finding rows, figures]``: the rows of
:func:`inferkb.audit.record_cache.finding_rows` and what the record added to
the audit's figures (:func:`figures_skeleton`, zeros and empty parts left out),
which :func:`add_figures` adds to the totals the same way for a fresh and a
kept result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..metrics import bundled_metrics
from ..store import cache as load_cache
from . import record_cache

if TYPE_CHECKING:
    from ..kb import KB

KIND = "plausibility"
BANDS = ("<=50%", "50-90%", "90-100%", ">100%")
_ENTRIES = ("per_record", "candidate_per_record")  # {record id: entry}, added by update


def figures_skeleton() -> dict[str, Any]:
    """The audit's figures with nothing counted yet (see :func:`inferkb.audit.plausibility.run`)."""
    bands = dict.fromkeys(BANDS, 0)
    return {
        "rate_records": 0,
        "unchecked": 0,
        "mbu_bands": dict(bands),
        "mfu_bands": dict(bands),
        "per_record": {},
        "candidate_ranges": 0,
        "candidate_per_record": {},
    }


def compact(figures: dict[str, Any]) -> dict[str, Any]:
    """One record's figures (a :func:`figures_skeleton` it filled) without the zero counts and empty parts."""
    out: dict[str, Any] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            kept = value if key in _ENTRIES else {k: n for k, n in value.items() if n}
            if kept:
                out[key] = kept
        elif value:
            out[key] = value
    return out


def add_figures(total: dict[str, Any], part: dict[str, Any]) -> None:
    """Add one record's :func:`compact` figures to ``total`` (counts summed, per-record entries added in order)."""
    for key, value in part.items():
        if key in _ENTRIES:
            total[key].update(value)
        elif isinstance(value, dict):
            counts = total[key]
            for band, n in value.items():
                counts[band] += n
        else:
            total[key] += value


def plausibility_cache(kb: KB) -> load_cache.CacheFile | None:
    """The ``plausibility`` cache file of ``kb``, or ``None`` when the load cache is off."""

    def digest() -> str:
        others = [[rec.key, rec.data] for rec in kb.records.values() if rec.type != "benchmark"]
        return record_cache.digest_of(others, kb.metrics, bundled_metrics())

    return record_cache.open_cache(kb, KIND, digest)


def well_formed(payload: object) -> bool:
    """True for a payload of the shape this module stores."""
    return type(payload) is list and len(payload) == 2 and type(payload[0]) is list and type(payload[1]) is dict
