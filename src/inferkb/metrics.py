"""The metric registry: name -> dimension, unit, direction, measured quantity (DESIGN.md, "Records").

A KB names its registry file in ``kb.toml`` (``[kb] metrics = "metrics.json"``).
A KB without one (the corpus) has an empty registry and its schema's enum is
the only check on metric names; audits that need a metric's meaning fall back
to inferkb's own registry (:func:`bundled_metrics`). The registry is data:
``metrics.json`` is the only place metrics are described.

Entry fields: ``name``, ``dimension`` (one of :data:`DIMENSIONS`), ``unit``,
``direction`` (higher | lower is better), optional ``measures`` (the quantity:
decode, prefill, throughput, requests, samples, ttft, itl, e2e, memory,
quality, energy, ratio), ``requires_baseline``, ``description``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import KBError
from .jsonio import parse_bytes, read_regular

if TYPE_CHECKING:
    from .kb import KB

DIMENSIONS = ("rate", "latency", "ratio", "energy", "quality", "memory")


def load_metrics(kb: KB) -> dict[str, dict[str, Any]]:
    """Return ``{name: entry}`` from the KB's registry file, or ``{}``.

    Raises :class:`KBError` when the file is named but missing, does not parse,
    or an entry lacks name/dimension/unit/direction or uses an unknown dimension.
    """
    rel = kb.profile.metrics_file
    if not rel:
        return {}
    return read_registry(kb.root / rel)


_BUNDLED: dict[str, dict[str, Any]] | None = None


def bundled_metrics() -> dict[str, dict[str, Any]]:
    """The bundled KB's registry (``src/inferkb/kb/metrics.json``), read once per process."""
    global _BUNDLED
    if _BUNDLED is None:
        from .store import bundled_root

        _BUNDLED = read_registry(bundled_root() / "metrics.json")
    return _BUNDLED


def read_registry(path: Path) -> dict[str, dict[str, Any]]:
    """``{name: entry}`` of one registry file; :class:`KBError` naming the file and entry when it is malformed."""
    try:
        raw = read_regular(path, 16 << 20)
    except FileNotFoundError:
        raise KBError(f"{path}: metric registry named in kb.toml is missing") from None
    except OSError as exc:
        raise KBError(f"{path}: metric registry named in kb.toml cannot be read: {exc.strerror or exc}") from None
    doc, problem = parse_bytes(raw)
    if problem:
        raise KBError(f"{path}: {problem.message} (line {problem.line})")
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(doc.get("metrics") or []):
        missing = [k for k in ("name", "dimension", "unit", "direction") if not entry.get(k)]
        if missing:
            raise KBError(f"{path}: metrics[{i}]: missing {', '.join(missing)}")
        if entry["dimension"] not in DIMENSIONS:
            raise KBError(f"{path}: metrics[{i}].dimension: {entry['dimension']!r} is not one of {', '.join(DIMENSIONS)}")
        if entry["direction"] not in ("higher", "lower"):
            raise KBError(f"{path}: metrics[{i}].direction: expected 'higher' or 'lower'")
        out[entry["name"]] = entry
    return out
