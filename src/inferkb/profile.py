"""Record types, their directories and their reference fields, defined once.

A KB with a ``kb.toml`` declares them there; a KB without one (such as the
inference-research corpus) is read with :data:`BUILTIN_TYPES`, the 13-type
profile of DESIGN.md ("Layout of a knowledge base").
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import KBError
from .jsonio import read_regular

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
            budget = int(json.loads(read_regular(budget_file, 1 << 20))["max_dangling_refs"])
            origin = "tools/ref_budget.json"
        except (ValueError, KeyError, TypeError, OSError, OverflowError):
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
    if not os.path.lexists(path):
        return builtin_profile(root)
    try:
        doc = tomllib.loads(read_regular(path, 1 << 20).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise KBError(f"{path}: kb.toml does not parse: {exc}") from None
    except OSError as exc:
        raise KBError(f"{path}: kb.toml cannot be read: {exc.strerror or exc}") from None
    declared = doc.get("types") or {}
    if not isinstance(declared, dict) or not declared:
        raise KBError(f"{path}: [types] is missing or empty; expected one table per record type")
    types: dict[str, TypeSpec] = {}
    dirs: dict[str, str] = {}
    for name, spec in declared.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("dir"), str):
            raise KBError(f"{path}: types.{name}.dir: expected a directory name string")
        problem = dir_name_problem(spec["dir"])
        if problem:
            raise KBError(
                f"{path}: types.{name}.dir: {spec['dir']!r} {problem}; expected one folder name under data/, such as 'benchmarks'"
            )
        if spec["dir"] in dirs:
            raise KBError(f"{path}: types.{name}.dir: {spec['dir']!r} is already the directory of type {dirs[spec['dir']]!r}")
        dirs[spec["dir"]] = name
        refs = spec.get("refs") or {}
        strict = spec.get("strict_refs") or []
        if not isinstance(refs, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in refs.items()):
            raise KBError(f"{path}: types.{name}.refs: expected a table of field = target type name")
        if not isinstance(strict, list) or not all(isinstance(x, str) for x in strict):
            raise KBError(f"{path}: types.{name}.strict_refs: expected a list of field names")
        types[name] = TypeSpec(name, spec["dir"], dict(refs), frozenset(strict))
    for t in types.values():
        for fld, target in t.refs.items():
            if target != ANY_TYPE and target not in types:
                raise KBError(f"{path}: types.{t.name}.refs.{fld}: target type {target!r} is not declared")
    meta = doc.get("kb") or {}
    if not isinstance(meta, dict):
        raise KBError(f"{path}: [kb] must be a table")
    budget = meta.get("max_dangling_refs")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
        raise KBError(f"{path}: kb.max_dangling_refs: expected a whole number >= 0, found {budget!r}")
    limit = meta.get("max_record_bytes", DEFAULT_MAX_RECORD_BYTES)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise KBError(f"{path}: kb.max_record_bytes: expected a whole number >= 1, found {limit!r}")
    metrics = meta.get("metrics")
    if metrics is not None and (not isinstance(metrics, str) or _path_problem(metrics)):
        why = _path_problem(metrics) if isinstance(metrics, str) else "is not a string"
        raise KBError(f"{path}: kb.metrics: {metrics!r} {why}; expected a file path inside the KB, such as 'metrics.json'")
    return Profile(
        types=types,
        origin="kb.toml",
        name=str(meta.get("name", "")),
        max_dangling_refs=budget,
        budget_origin="kb.toml" if budget is not None else None,
        metrics_file=metrics,
        max_record_bytes=limit,
    )


def dir_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a type directory (one plain folder name under ``data/``), or ``None``.

    Refused: empty, ``.``/``..``, a leading dot (hidden; temp files use it),
    any path separator, a drive (``C:``) and NUL, so that ``data/<dir>`` can
    never name a folder outside ``data/``.
    """
    if not name or name.strip() != name:
        return "is empty or has surrounding spaces"
    if name in (".", "..") or name.startswith("."):
        return "starts with '.'"
    if any(c in name for c in "/\\:\x00"):
        return "contains a path separator, ':' or NUL"
    return None


def _path_problem(rel: str) -> str | None:
    """Why ``rel`` is not a relative path inside the KB (absolute, a drive, ``..``, NUL), or ``None``."""
    if not rel or "\x00" in rel:
        return "is empty or holds NUL"
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        return "is absolute"
    if ".." in rel.replace("\\", "/").split("/"):
        return "contains '..'"
    return None
