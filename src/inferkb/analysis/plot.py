"""Charts as Vega-Lite specifications, written to HTML, SVG or PNG with vl-convert.

The spec builders return plain dicts (Vega-Lite v5 JSON), so a site can embed
them as they are; :func:`write` renders one to a file chosen by its suffix
(``.html`` self-contained with the JavaScript bundled, ``.svg``, ``.png``,
``.json`` the spec itself), atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..jsonio import atomic_write_text
from .common import AnalysisError

if TYPE_CHECKING:
    from .compare import CompareResult
    from .pareto import ParetoResult
    from .roofline import RooflineResult

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
SUFFIXES = (".html", ".svg", ".png", ".json")


def compare_spec(result: CompareResult, *, max_classes: int = 6) -> dict[str, Any]:
    """Horizontal bars of each class's ranked values, one panel per class (the largest ``max_classes``)."""
    rows = []
    for cls in result.classes[:max_classes]:
        for row in cls.rows:
            rows.append(
                {
                    "class": f"class {cls.id}: {cls.key.get('model')}, {cls.key.get('scenario')}, {row.label}",
                    "id": row.id,
                    "value": row.value,
                    "label": row.label,
                    "rank": row.rank,
                    "experimental": row.experimental,
                }
            )
    return {
        "$schema": SCHEMA,
        "title": "inferkb compare: ranked within comparability classes",
        "data": {"values": rows},
        "facet": {
            "row": {
                "field": "class",
                "type": "nominal",
                "title": None,
                "header": {"labelAngle": 0, "labelOrient": "top", "labelAnchor": "start"},
            }
        },
        "resolve": {"scale": {"y": "independent", "x": "independent"}},
        "spec": {
            "mark": "bar",
            "encoding": {
                "y": {"field": "id", "type": "nominal", "sort": "-x", "title": None},
                "x": {"field": "value", "type": "quantitative", "title": "value (see label)"},
                "color": {"field": "experimental", "type": "nominal"},
                "tooltip": [{"field": "id"}, {"field": "value"}, {"field": "label"}, {"field": "rank"}],
            },
        },
    }


def pareto_spec(result: ParetoResult) -> dict[str, Any]:
    """Scatter of every class's points with the frontier drawn as a line, coloured by class."""
    rows = [
        {"class": cls.id, "id": p.id, "x": p.x, "y": p.y, "frontier": p.on_frontier, "load": str(p.load)}
        for cls in result.classes
        for p in cls.points
    ]
    return {
        "$schema": SCHEMA,
        "title": f"Pareto frontier within each class: {result.y} vs {result.x}",
        "data": {"values": rows},
        "layer": [
            {
                "mark": {"type": "point", "filled": True},
                "encoding": {
                    "x": {"field": "x", "type": "quantitative", "title": result.x},
                    "y": {"field": "y", "type": "quantitative", "title": result.y},
                    "color": {"field": "class", "type": "nominal"},
                    "shape": {"field": "frontier", "type": "nominal"},
                    "tooltip": [{"field": "id"}, {"field": "load"}, {"field": "x"}, {"field": "y"}],
                },
            },
            {
                "transform": [{"filter": "datum.frontier"}],
                "mark": "line",
                "encoding": {
                    "x": {"field": "x", "type": "quantitative"},
                    "y": {"field": "y", "type": "quantitative"},
                    "color": {"field": "class"},
                },
            },
        ],
    }


def roofline_spec(result: RooflineResult, *, batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)) -> dict[str, Any]:
    """Aggregate decode ceiling against batch size (bandwidth line, compute cap), log-log."""
    kv_seq = (result.step_bytes - result.active_params * result.bytes_per_weight) / result.batch
    weights = result.active_params * result.bytes_per_weight
    rows = []
    for b in batches:
        bw_bound = b * result.count * result.bandwidth_gbps * 1e9 / (weights + b * kv_seq)
        rows.append({"batch": b, "tok_s": bw_bound, "ceiling": "memory bandwidth"})
        if result.prefill_tok_s is not None:
            rows.append({"batch": b, "tok_s": result.prefill_tok_s, "ceiling": "compute"})
    return {
        "$schema": SCHEMA,
        "title": f"{result.model} on {result.count}x {result.accelerator} ({result.weight_format}, context {result.context})",
        "data": {"values": rows},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "batch", "type": "quantitative", "scale": {"type": "log", "base": 2}},
            "y": {"field": "tok_s", "type": "quantitative", "scale": {"type": "log"}, "title": "aggregate decode ceiling, tok/s"},
            "color": {"field": "ceiling", "type": "nominal"},
        },
    }


def write(spec: dict[str, Any], path: str | Path) -> Path:
    """Render ``spec`` to ``path`` by suffix (.html, .svg, .png, .json); AnalysisError for another suffix.

    Written through a temp file and renamed, so a failure leaves no partial file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise AnalysisError(f"--plot {path}: unknown chart format {suffix or '(none)'!r}; use one of {', '.join(SUFFIXES)}")
    if suffix == ".json":
        atomic_write_text(path, json.dumps(spec, indent=2) + "\n")
        return path
    import vl_convert as vlc

    if suffix == ".html":
        atomic_write_text(path, vlc.vegalite_to_html(spec, bundle=True))
    elif suffix == ".svg":
        atomic_write_text(path, vlc.vegalite_to_svg(spec))
    else:
        _atomic_write_bytes(path, vlc.vegalite_to_png(spec, scale=2))
    return path


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
