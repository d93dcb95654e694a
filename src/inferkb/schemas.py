"""Where each record type's JSON Schema comes from, and its compiled validator.

A KB is validated against its own ``schemas/<type>.schema.json``; a type the
KB has no schema for falls back to inferkb's bundled schema (and the report
says so). Query, skeleton (``inferkb new``), derivations and validation all
look schemas up here, so the KB-then-bundled rule is stated once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import validate_rules as R
from .findings import Finding
from .jsonio import parse_bytes, read_regular
from .store import bundled_root

if TYPE_CHECKING:
    from .store import Store

__all__ = ["schema_file", "schema_doc", "SchemaSet", "schema_set", "object_keys"]


def schema_file(kb: Store, type_name: str) -> tuple[Path, str] | None:
    """The schema a type is checked against: ``(path, "kb")`` for the KB's own
    ``schemas/<type>.schema.json``, else ``(path, "bundled")`` for inferkb's, else ``None``."""
    own = kb.root / "schemas" / f"{type_name}.schema.json"
    if own.exists():  # a FIFO or folder of that name is the KB's schema too: reading it fails with KB111, it never hangs
        return own, "kb"
    bundled = bundled_root() / "schemas" / f"{type_name}.schema.json"
    return (bundled, "bundled") if bundled.is_file() else None


def schema_doc(kb: Store, type_name: str) -> dict[str, Any] | None:
    """The parsed schema of :func:`schema_file` (cached on the KB); ``None`` when absent or unparsable."""
    cache = kb.memo("schema_docs", dict)
    if type_name not in cache:
        found = schema_file(kb, type_name)
        try:
            doc, problem = parse_bytes(read_regular(found[0])) if found else (None, None)
        except OSError:
            doc, problem = None, None
        cache[type_name] = doc if problem is None and isinstance(doc, dict) else None
    return cache[type_name]


class SchemaSet:
    """Compiled validators per type for one KB, with where each schema came from.

    ``origin[type]`` is ``"kb"``, ``"bundled"`` (fallback) or ``None`` (no schema
    anywhere). ``problems`` holds KB110/KB111 findings met while loading.
    ``fingerprint`` digests each schema file's path and bytes as read (schemas
    fetch nothing, so that is all validation depends on): the load cache's key.
    """

    def __init__(self, kb: Store) -> None:
        self.validators: dict[str, Any] = {}
        self.origin: dict[str, str | None] = {}
        self.problems: list[Finding] = []
        self._digest = hashlib.sha256()
        missing: list[str] = []
        for type_name in kb.profile.types:
            found = schema_file(kb, type_name)
            if found is None:
                self.origin[type_name] = None
                continue
            path, origin = found
            if origin == "bundled":
                missing.append(type_name)
            self._digest.update(f"{type_name}={origin}:{path}\n".encode())
            compiled = self._compile(path, kb.root if origin == "kb" else bundled_root())
            if compiled is not None:
                self.validators[type_name] = compiled
                self.origin[type_name] = origin
        self.fingerprint = self._digest.hexdigest()
        if missing:
            own = kb.root / "schemas"
            where = "has no schemas/ directory" if not own.is_dir() else f"has no schema for: {', '.join(missing)}"
            self.problems.append(
                R.KB110.finding(
                    f"the KB {where}; those records were validated against inferkb's bundled schemas",
                    path="schemas/",
                    extra={"types": missing},
                )
            )

    def _compile(self, path: Path, root: Path) -> Any | None:
        import jsonschema_rs  # only validation needs the compiled validators

        rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        try:
            raw = read_regular(path)
        except OSError as exc:
            self.problems.append(R.KB111.finding(f"schema cannot be read: {exc.strerror or exc}", path=rel))
            return None
        self._digest.update(hashlib.sha256(raw).digest())
        schema, problem = parse_bytes(raw)
        if problem:
            self.problems.append(R.KB111.finding(f"schema does not parse: {problem.message}", path=rel))
            return None
        refused: list[str] = []
        try:
            return jsonschema_rs.validator_for(schema, retriever=_no_retrieval(refused))
        except (jsonschema_rs.ValidationError, ValueError, jsonschema_rs.ReferencingError) as exc:
            if refused:
                self.problems.append(
                    R.KB113.finding(
                        f"$ref {refused[0]!r} points outside the KB and is not fetched; records of this type are not "
                        "checked against the schema until it refers to a local definition",
                        path=rel,
                        extra={"refs": refused},
                    )
                )
            else:
                self.problems.append(R.KB111.finding(f"not a valid JSON Schema: {str(exc).splitlines()[0][:300]}", path=rel))
            return None


def _no_retrieval(refused: list[str]):
    """A jsonschema-rs ``retriever`` that fetches nothing (no network, no file outside the schema): it records the URI and refuses."""

    def retrieve(uri: str) -> Any:
        refused.append(uri)
        raise ValueError(f"inferkb does not fetch {uri}: a KB's schemas must be self-contained")

    return retrieve


def schema_set(kb: Store) -> SchemaSet:
    """The :class:`SchemaSet` of ``kb``, compiled once per KB object (schemas do not change with record writes)."""
    return kb.memo("schema_set", lambda: SchemaSet(kb))


_BUNDLED_DOCS: dict[str, dict[str, Any] | None] = {}


def object_keys(type_name: str, field: str, *, accepts: str | None = None, kb: Store | None = None) -> tuple[str, ...]:
    """The property names of object field ``field`` in the ``type_name`` schema, in schema order.

    The schema is the contract (STYLE.md): importers take the benchmark
    ``conditions`` and ``environment`` keys from here instead of restating them.
    ``accepts`` keeps only properties whose ``type`` admits that JSON type
    (``"string"``). ``kb`` picks that KB's schema (else inferkb's bundled one);
    ``()`` when the schema or the field is absent.
    """
    if kb is not None:
        doc = schema_doc(kb, type_name)
    else:
        if type_name not in _BUNDLED_DOCS:
            path = bundled_root() / "schemas" / f"{type_name}.schema.json"
            parsed, problem = parse_bytes(read_regular(path)) if path.is_file() else (None, None)
            _BUNDLED_DOCS[type_name] = parsed if problem is None and isinstance(parsed, dict) else None
        doc = _BUNDLED_DOCS[type_name]
    props = (((doc or {}).get("properties") or {}).get(field) or {}).get("properties") or {}
    out = []
    for key, spec in props.items():
        kinds = spec.get("type") if isinstance(spec, dict) else None
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if accepts is None or accepts in kinds:
            out.append(key)
    return tuple(out)
