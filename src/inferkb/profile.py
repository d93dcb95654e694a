"""Record types, their directories and their reference fields, defined once.

A KB with a ``kb.toml`` declares them there; a KB without one (such as the
inference-research corpus) is read with :data:`BUILTIN_TYPES`, the 13-type
profile of DESIGN.md ("Layout of a knowledge base").
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import KBError

ANY_TYPE = "*"
DEFAULT_MAX_RECORD_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TypeSpec:
    """One record type: ``name`` (``benchmark``), ``dir`` (``benchmarks``),
    ``refs`` (field -> target type name or ``"*"``), ``strict_refs`` (fields
    whose unresolved values are errors rather than budgeted warnings)."""

    name: str
    dir: str
    refs: dict[str, str] = field(default_factory=dict)
    strict_refs: frozenset[str] = frozenset()


# DESIGN.md, table "Facts about that existing KB's layout".
BUILTIN_TYPES: tuple[TypeSpec, ...] = (
    TypeSpec("accelerator", "accelerators", {"interconnect": "interconnect"}),
    TypeSpec("flop", "flops", {"affected_by_hardware": "accelerator"}),
    TypeSpec("engine", "engines"),
    TypeSpec("quantization", "quantization", {"native_support": "accelerator", "emulated_support": "accelerator"}),
    TypeSpec("interconnect", "interconnect"),
    TypeSpec(
        "benchmark",
        "benchmarks",
        {
            "engine_id": "engine",
            "accelerator_ids": "accelerator",
            "interconnect_ids": "interconnect",
            "format_id": "quantization",
        },
        frozenset({"engine_id"}),
    ),
    TypeSpec("gotcha", "gotchas", {"affects": ANY_TYPE}),
    TypeSpec("supply", "supply", {"accelerator_ids": "accelerator"}),
    TypeSpec("model", "models"),
    TypeSpec("paper", "papers", {"hardware_relevance": "accelerator"}),
    TypeSpec("source", "sources"),
    TypeSpec("compiler", "compilers"),
    TypeSpec("metric_exposure", "metric-exposures", {"engine_id": "engine"}),
)


@dataclass(frozen=True, slots=True)
class Profile:
    """How to read one KB: its types, budgets and where its metric registry is.

    ``origin`` is ``"kb.toml"`` or ``"built-in"``. ``max_dangling_refs`` is
    ``None`` when the KB declares no budget.
    """

    types: dict[str, TypeSpec]
    origin: str
    name: str = ""
    max_dangling_refs: int | None = None
    budget_origin: str | None = None
    metrics_file: str | None = None
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES

    def by_dir(self) -> dict[str, TypeSpec]:
        """``{directory name: TypeSpec}``."""
        return {t.dir: t for t in self.types.values()}


def builtin_profile(root: Path) -> Profile:
    """The built-in 13-type profile; picks up the corpus's ``tools/ref_budget.json`` budget if present."""
    budget, origin = None, None
    budget_file = root / "tools" / "ref_budget.json"
    if budget_file.is_file():
        try:
            budget = int(json.loads(budget_file.read_text(encoding="utf-8"))["max_dangling_refs"])
            origin = "tools/ref_budget.json"
        except (ValueError, KeyError, TypeError, OSError):
            budget = None
    return Profile(
        types={t.name: t for t in BUILTIN_TYPES},
        origin="built-in",
        max_dangling_refs=budget,
        budget_origin=origin,
    )


def load_profile(root: Path) -> Profile:
    """Read ``root/kb.toml`` if it exists, else return :func:`builtin_profile`.

    Raises :class:`KBError` when ``kb.toml`` does not parse or declares a type
    without a ``dir`` or with a reference to an undeclared type.
    """
    path = root / "kb.toml"
    if not path.is_file():
        return builtin_profile(root)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KBError(f"{path}: kb.toml does not parse: {exc}") from None
    declared = doc.get("types") or {}
    if not isinstance(declared, dict) or not declared:
        raise KBError(f"{path}: [types] is missing or empty; expected one table per record type")
    types: dict[str, TypeSpec] = {}
    for name, spec in declared.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("dir"), str):
            raise KBError(f"{path}: types.{name}.dir: expected a directory name string")
        refs = spec.get("refs") or {}
        strict = spec.get("strict_refs") or []
        types[name] = TypeSpec(name, spec["dir"], dict(refs), frozenset(strict))
    for t in types.values():
        for fld, target in t.refs.items():
            if target != ANY_TYPE and target not in types:
                raise KBError(f"{path}: types.{t.name}.refs.{fld}: target type {target!r} is not declared")
    meta = doc.get("kb") or {}
    budget = meta.get("max_dangling_refs")
    return Profile(
        types=types,
        origin="kb.toml",
        name=str(meta.get("name", "")),
        max_dangling_refs=int(budget) if budget is not None else None,
        budget_origin="kb.toml" if budget is not None else None,
        metrics_file=meta.get("metrics"),
        max_record_bytes=int(meta.get("max_record_bytes", DEFAULT_MAX_RECORD_BYTES)),
    )
