"""Structural proof that a derivation changed only what it may, and no number anywhere.

Old and new JSON trees are compared path by path (``conditions.tensor_parallel``,
``provenance[2].basis``). A file passes when

1. every changed, added or removed path lies under an allowed prefix (the
   derivation's target fields, ``provenance`` and ``updated`` for a record;
   ``record``, ``provenance`` and ``derived.<target>`` for a sidecar), and
2. the set of numeric leaves (ints and floats; booleans are not numbers) is
   identical: same paths, same values, same Python type. A number added,
   removed, moved to another path or changed in value is a violation, even
   under an allowed prefix. The one exception is a derivation that declares
   *computed* fields (``per-accelerator``: a rate divided by a count): numbers
   may be added under those prefixes only, and every number that existed
   before must still be there, unchanged.

This is what DESIGN.md rule 3 ("a derivation never changes a measured number;
tools prove that by diffing") asks for. A write is refused when the proof fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def diff_paths(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(path, kind)`` for every difference; ``kind`` is ``added``, ``removed`` or ``changed``.

    Objects recurse by key, arrays by index; an added or removed object or
    array is reported leaf by leaf (an empty one at its own path), so an
    allowed prefix cannot hide a disallowed key inside a new container. A
    type change (or any scalar change) is reported where it happens.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                yield from _leaves(old[key], _join(path, key), "removed")
            else:
                yield from diff_paths(old[key], new[key], _join(path, key))
        for key in new:
            if key not in old:
                yield from _leaves(new[key], _join(path, key), "added")
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            if i >= len(new):
                yield from _leaves(old[i], _join(path, i), "removed")
            elif i >= len(old):
                yield from _leaves(new[i], _join(path, i), "added")
            else:
                yield from diff_paths(old[i], new[i], _join(path, i))
        return
    if type(old) is not type(new) or old != new:
        yield path or "(root)", "changed"


def _leaves(node: Any, path: str, kind: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, _join(path, key), kind)
    elif isinstance(node, list) and node:
        for i, value in enumerate(node):
            yield from _leaves(value, _join(path, i), kind)
    else:
        yield path, kind


def number_leaves(tree: Any, path: str = "") -> dict[str, int | float]:
    """``{path: number}`` for every int/float leaf (``bool`` excluded) in a JSON tree."""
    out: dict[str, int | float] = {}
    stack: list[tuple[str, Any]] = [(path, tree)]
    while stack:
        here, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((_join(here, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((_join(here, i), v) for i, v in enumerate(node))
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            out[here] = node
    return out


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in prefixes)


@dataclass
class FileProof:
    """Proof for one file: ``changed`` paths, ``violations`` (empty = pass), ``numbers_compared``."""

    path: str
    changed: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    numbers_compared: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations


def prove_file(path: str, old: Any, new: Any, allowed: Iterable[str], computed: Iterable[str] = ()) -> FileProof:
    """Compare ``old`` and ``new`` (parsed JSON; ``None``/``{}`` for a new file) under ``allowed`` path prefixes.

    ``computed`` lists path prefixes under which new numbers may appear (a
    derived figure); an existing number changing or vanishing is still a violation.
    """
    allowed = tuple(allowed)
    computed = tuple(computed)
    proof = FileProof(path)
    for where, kind in diff_paths(old if old is not None else {}, new):
        proof.changed.append(where)
        if not _under(where, allowed):
            proof.violations.append(f"{where} {kind}, outside the fields this derivation may touch ({', '.join(allowed)})")
    old_nums = number_leaves(old if old is not None else {})
    new_nums = number_leaves(new)
    proof.numbers_compared = len(old_nums)
    for where, value in old_nums.items():
        if where not in new_nums:
            proof.violations.append(f"number at {where} ({value!r}) is gone")
        elif type(new_nums[where]) is not type(value) or new_nums[where] != value:
            proof.violations.append(f"number at {where} changed: {value!r} -> {new_nums[where]!r}")
    for where in new_nums.keys() - old_nums.keys():
        if not _under(where, computed):
            proof.violations.append(f"number added at {where} ({new_nums[where]!r})")
    return proof


@dataclass
class Proof:
    """Proof over every file a derivation run would write. ``ok`` only when every file passes."""

    files: list[FileProof] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files)

    @property
    def numbers_compared(self) -> int:
        return sum(f.numbers_compared for f in self.files)

    def changed_fields(self) -> dict[str, int]:
        """``{top-level field: number of files where it changed}``."""
        counts: dict[str, int] = {}
        for f in self.files:
            tops = {p.split("[")[0].split(".")[0] for p in f.changed}
            for top in tops:
                counts[top] = counts.get(top, 0) + 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "files": len(self.files),
            "numbers_compared": self.numbers_compared,
            "changed_fields": self.changed_fields(),
            "violations": {f.path: f.violations for f in self.files if f.violations},
        }

    def to_text(self) -> str:
        """A few lines for humans: verdict, files, numbers compared, fields changed, and any violations."""
        verdict = "PASS" if self.ok else "FAIL"
        fields = ", ".join(f"{k} ({v})" for k, v in self.changed_fields().items()) or "none"
        lines = [
            f"proof: {verdict}: {len(self.files)} file(s) compared path by path; "
            f"{self.numbers_compared} number(s) checked, "
            f"{sum(1 for f in self.files for v in f.violations if v.startswith('number'))} changed",
            f"proof: fields changed: {fields}",
        ]
        for f in self.files:
            lines.extend(f"proof: {f.path}: {v}" for v in f.violations)
        return "\n".join(lines)
