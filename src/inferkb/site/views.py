"""How records look on the site: field labels and units, a render tree for any value, table columns and facets per type.

Everything here is data for the Jinja templates; no HTML is produced in
Python (the templates escape every string). Unknown fields and unknown
record types are rendered generically, so a KB that grows new fields needs
no change here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from ..urls import is_dangerous_url, is_url_key, safe_href

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

# Field name -> label, where the plain name would not say it in the field's standard terms.
LABELS: dict[str, str] = {
    "id": "id",
    "tensor_parallel": "tensor parallel (TP)",
    "pipeline_parallel": "pipeline parallel (PP)",
    "expert_parallel": "expert parallel (EP)",
    "data_parallel": "data parallel (DP)",
    "input_tokens": "input tokens (ISL)",
    "output_tokens": "output tokens (OSL)",
    "max_model_len": "max model length",
    "engine_id": "engine",
    "accelerator_ids": "accelerators",
    "accelerator_count": "accelerator count",
    "interconnect_ids": "interconnects",
    "format_id": "format",
    "model_id": "model record",
    "base_model_id": "base model (derived from; not model identity)",
    "vram_gb": "memory (VRAM)",
    "tdp_w": "TDP",
    "params_b": "parameters",
    "active_params_b": "active parameters",
    "ttft_ms": "TTFT",
    "tpot_ms": "TPOT",
    "itl_ms": "ITL",
    "p50": "P50",
    "p90": "P90",
    "p95": "P95",
    "p99": "P99",
    "p999": "P99.9",
    "n": "n",
    "stdev": "stdev",
    "kv_cache_bytes_per_token": "KV cache per token",
    "per_accelerator": "per accelerator",
    "same_measurement_as": "same measurement as",
    "system_series": "system series",
    "value_scope": "value scope",
}

# (referring type, field) -> what a back-reference through that field means, where "N records via FIELD" would mislead:
# a result derived from a model (pruned, retrained, requantised) is not a benchmark of that model.
BACKREF_LABELS: dict[tuple[str, str], str] = {
    ("benchmark", "model_id"): "benchmarks of this model",
    ("benchmark", "base_model_id"): "results of models derived from this one (base-model use; not benchmarks of this model)",
}

# Field-name suffix -> unit, checked in order (longest first where they overlap).
UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_tok_s", "tok/s"),
    ("_gbps", "GB/s"),
    ("_tbps", "TB/s"),
    ("_gb", "GB"),
    ("_mb", "MB"),
    ("_kb", "KB"),
    ("_tflops", "TFLOPS"),
    ("_mhz", "MHz"),
    ("_ghz", "GHz"),
    ("_nm", "nm"),
    ("_ms", "ms"),
    ("_us", "µs"),
    ("_w", "W"),
    ("_pct", "%"),
    ("_usd", "USD"),
    ("_rps", "req/s"),
    ("_bit", "bit"),
    ("_bits", "bits"),
    ("_b", "billion"),
    ("_bytes_per_token", "bytes/token"),
    ("_per_token_active", "FLOPs/token"),
)
UNITS: dict[str, str] = {"tflops": "TFLOPS", "bandwidth": "GB/s", "kv_cache_bytes_per_token": "bytes/token"}


@cache
def label(name: str) -> str:
    """Human label for a field name (``memory_bandwidth_gbps`` -> ``memory bandwidth``)."""
    if name in LABELS:
        return LABELS[name]
    base = name
    for suffix, _unit in UNIT_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    return base.replace("_", " ")


@cache
def unit_of(name: str) -> str | None:
    """The unit a field's name carries (``tdp_w`` -> ``W``), or ``None``."""
    if name in UNITS:
        return UNITS[name]
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return unit
    return None


def fmt_scalar(value: Any) -> str:
    """Text for a scalar exactly as stored: ``True`` -> ``yes``, floats by their shortest repr, never rounded."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(slots=True)
class Node:
    """One rendered value: ``kind`` is ``null | text | link | ref | url-refused | list | map | table``.

    ``text`` is the display text; ``href`` the link target (relative to the
    site root for ``ref``); ``items`` children (``list``/``map``: Nodes with
    ``name``/``label``/``unit``); ``columns``/``rows`` for a list of objects.
    """

    kind: str
    text: str = ""
    href: str | None = None
    name: str = ""
    label: str = ""
    unit: str | None = None
    items: list[Node] = field(default_factory=list)
    columns: list[tuple[str, str, str | None]] = field(default_factory=list)
    rows: list[list[Node]] = field(default_factory=list)
    note: str | None = None


class Linker:
    """Turns reference values into site links; knows the KB's reference fields and records."""

    def __init__(self, kb: KB) -> None:
        self.kb = kb
        self.types = kb.profile.types

    def record_href(self, rec: Record) -> str:
        """Site-root-relative URL of a record page."""
        return f"{rec.dir}/{rec.id}.html"

    def target(self, type_name: str, field_name: str, ref: str) -> Record | None:
        """The record a reference value names, or ``None`` when unresolved."""
        if field_name == "sources":
            return self.kb.resolve(ref, "source")
        spec = self.types.get(type_name)
        target = spec.refs.get(field_name) if spec else None
        if target is None:
            return None
        return self.kb.resolve(ref, None if target == "*" else target)

    def is_ref(self, type_name: str, field_name: str) -> bool:
        """True when ``field_name`` is a reference field of ``type_name`` (or ``sources``)."""
        spec = self.types.get(type_name)
        return field_name == "sources" or bool(spec and field_name in spec.refs)


def _ref_node(linker: Linker, type_name: str, name: str, ref: Any) -> Node:
    if not isinstance(ref, str):
        return _scalar_node(name, ref)
    rec = linker.target(type_name, name, ref)
    if rec is None:
        return Node("text", ref, note="unresolved reference")
    title = rec.data.get("name") if isinstance(rec.data.get("name"), str) else rec.id
    return Node("ref", ref, href=linker.record_href(rec), note=title if title != ref else None)


def _scalar_node(name: str, value: Any) -> Node:
    if value is None:
        return Node("null", "null")
    text = fmt_scalar(value)
    if isinstance(value, str):
        url_field = is_url_key(name)
        if url_field or value.startswith(("http://", "https://")):
            href = safe_href(value)
            if href is not None:
                return Node("link", text, href=href)
        if (url_field and value.strip()) or is_dangerous_url(value):
            return Node("url-refused", text, note="not an http(s) or relative link; shown as text")
    return Node("text", text)


def value_node(linker: Linker, type_name: str, name: str, value: Any, depth: int = 0) -> Node:
    """The render tree of ``value`` stored under field ``name`` of a ``type_name`` record."""
    if linker.is_ref(type_name, name) and depth == 0:
        if isinstance(value, list):
            return Node("list", items=[_ref_node(linker, type_name, name, v) for v in value])
        if isinstance(value, str):
            return _ref_node(linker, type_name, name, value)
    if isinstance(value, dict):
        return Node(
            "map",
            items=[
                _named(value_node(linker, type_name, k, v, depth + 1), k)
                for k, v in value.items()
                if not (isinstance(v, (dict, list)) and not v and depth > 3)
            ],
        )
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            keys: list[str] = []
            for v in value:
                keys.extend(k for k in v if k not in keys)
            cols = [(k, label(k), unit_of(k)) for k in keys]
            rows = [[value_node(linker, type_name, k, v.get(k), depth + 1) if k in v else Node("null", "") for k in keys] for v in value]
            return Node("table", columns=cols, rows=rows)
        return Node("list", items=[value_node(linker, type_name, name, v, depth + 1) for v in value])
    return _scalar_node(name, value)


def _named(node: Node, name: str) -> Node:
    node.name, node.label, node.unit = name, label(name), unit_of(name)
    return node


def field_nodes(linker: Linker, rec: Record, skip: frozenset[str] = frozenset()) -> list[Node]:
    """Every top-level field of ``rec`` (in stored order) as a named :class:`Node`, except ``skip``."""
    return [_named(value_node(linker, rec.type, k, v), k) for k, v in rec.data.items() if k not in skip]


# ---- tables and facets per type ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: dotted ``path`` into the record, header ``label`` and ``unit`` (``"@unit"`` = the record's own unit field)."""

    path: str
    label: str
    unit: str | None = None
    numeric: bool = False


def C(path: str, lab: str | None = None, unit: str | None = None, numeric: bool = False) -> Column:  # noqa: N802 - tiny constructor
    """Shorthand for :class:`Column` with the label and unit taken from the field name when not given."""
    last = path.rsplit(".", 1)[-1]
    return Column(path, lab or label(last), unit if unit is not None else unit_of(last), numeric)


COLUMNS: dict[str, tuple[Column, ...]] = {
    "benchmark": (
        C("model"),
        C("accelerator_ids"),
        C("accelerator_count", "count", numeric=True),
        C("engine_id"),
        C("format_id"),
        C("scenario"),
        C("metric"),
        C("value", "value", "@unit", numeric=True),
        C("origin"),
    ),
    "accelerator": (
        C("vendor"),
        C("architecture"),
        C("vram_gb", numeric=True),
        C("memory_type", "memory"),
        C("memory_bandwidth_gbps", numeric=True),
        C("tdp_w", numeric=True),
        C("release_year", "year", numeric=True),
    ),
    "model": (
        C("vendor"),
        C("family"),
        C("architecture"),
        C("params_b", numeric=True),
        C("active_params_b", numeric=True),
        C("max_position_embeddings", "context", "tokens", numeric=True),
    ),
    "engine": (C("languages"), C("license"), C("first_release_year", "first release", numeric=True)),
    "quantization": (C("scheme"), C("bits", numeric=True), C("activation_scheme", "activations")),
    "interconnect": (C("kind"), C("version"), C("bandwidth_gbps", numeric=True), C("scale_up"), C("scale_out")),
    "source": (C("publisher"), C("kind"), C("published"), C("url")),
    "gotcha": (C("class"), C("severity"), C("affects")),
}


def column_value(rec: Record, col: Column) -> Any:
    """The raw value at ``col.path`` (``None`` when absent)."""
    node: Any = rec.data
    for part in col.path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


@dataclass(frozen=True, slots=True)
class Facet:
    """A filter: ``name`` (also the Pagefind filter key), header ``label``, and how to read values from a record."""

    name: str
    label: str
    path: str | None = None
    via: str | None = None  # "accelerator:<field>": a field of the benchmark's accelerator records; "site:<name>": computed by the site


FACETS: dict[str, tuple[Facet, ...]] = {
    "benchmark": (
        Facet("vendor", "vendor", via="accelerator:vendor"),
        Facet("architecture", "architecture", via="accelerator:architecture"),
        Facet("accelerator", "accelerator", "accelerator_ids"),
        Facet("model", "model", "model"),
        Facet("engine", "engine", "engine_id"),
        Facet("format", "format", "format_id"),
        Facet("scenario", "scenario", "scenario"),
        Facet("metric", "metric", "metric"),
        Facet("origin", "origin", "origin"),
        Facet("experimental", "experimental", "experimental"),
        Facet("lacks", "lacks load condition", via="site:lacks"),
        Facet("status", "status", "status"),
    ),
    "accelerator": (
        Facet("vendor", "vendor", "vendor"),
        Facet("architecture", "architecture", "architecture"),
        Facet("memory", "memory type", "memory_type"),
        Facet("status", "status", "status"),
    ),
    "model": (
        Facet("vendor", "vendor", "vendor"),
        Facet("architecture", "architecture", "architecture"),
        Facet("status", "status", "status"),
    ),
    "quantization": (Facet("scheme", "scheme", "scheme"), Facet("status", "status", "status")),
    "interconnect": (Facet("kind", "kind", "kind"), Facet("status", "status", "status")),
    "source": (Facet("kind", "kind", "kind"), Facet("publisher", "publisher", "publisher"), Facet("status", "status", "status")),
    "gotcha": (Facet("class", "class", "class"), Facet("severity", "severity", "severity"), Facet("status", "status", "status")),
}
DEFAULT_FACETS = (Facet("status", "status", "status"),)


def _strings(value: Any) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, list):
        return [fmt_scalar(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    if isinstance(value, dict):
        return []
    return [fmt_scalar(value)]


def facet_values(kb: KB, rec: Record, facet: Facet, computed: dict[str, Any] | None = None) -> list[str]:
    """The facet's values for one record (several for a list field; ``[]`` when not stated).

    ``computed`` maps a ``site:<name>`` facet to a function ``record -> list[str]``.
    """
    if facet.via and facet.via.startswith("site:"):
        func = (computed or {}).get(facet.via[5:])
        return list(func(rec)) if func else []
    if facet.via:
        kind, fld = facet.via.split(":", 1)
        out: list[str] = []
        if kind == "accelerator":
            for aid in rec.data.get("accelerator_ids") or []:
                acc = kb.resolve(aid, "accelerator") if isinstance(aid, str) else None
                for v in _strings(acc.data.get(fld)) if acc else []:
                    if v not in out:
                        out.append(v)
        return out
    node: Any = rec.data
    for part in (facet.path or facet.name).split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return _strings(node)


def facets_for(type_name: str) -> tuple[Facet, ...]:
    """The facets of a type (``status`` alone for types without a declared set)."""
    return FACETS.get(type_name, DEFAULT_FACETS)


def columns_for(type_name: str) -> tuple[Column, ...]:
    """Key columns of a type's index table (``name``, ``status`` and ``updated`` are always added by the page)."""
    return COLUMNS.get(type_name, ())
