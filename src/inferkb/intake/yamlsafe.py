"""YAML for importers: PyYAML's safe loader with bounds, so a hostile file cannot exhaust memory or crash.

``yaml.safe_load`` already refuses arbitrary Python objects, but three things
remain that a 2 KB file can do to it:

- **alias bombs** ("billion laughs"): anchors referring to anchors make a tiny
  document expand into billions of nodes once constructed (1.6 KB grew the
  llm-d importer past 2 GB). Here the composed node graph is measured before
  anything is built: more than :data:`MAX_NODES` nodes after expanding every
  alias, or an alias that contains itself, is refused.
- **values JSON cannot hold**: timestamps (``2025-11-05T18:01:00Z`` unquoted)
  become ``datetime``, ``!!binary`` bytes, ``!!set`` a ``set``; here they stay
  the text they were written as (a set becomes a list of its members), so a
  record built from them can always be written.
- **numbers no float can hold**: an integer of more than 308 digits
  (:data:`inferkb.jsonio.MAX_INT_DIGITS`) is refused, as the JSON reader does.

:func:`load_yaml` raises :class:`~inferkb.errors.InputError` naming the file
(and the line when known) for every refusal.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import InputError
from ..jsonio import MAX_DEPTH, MAX_INT_DIGITS, nesting_depth

# Expanded node count (every alias counted as a full copy of its target) a document may reach; a
# benchmark report is a few thousand nodes.
MAX_NODES = 200_000
# Bytes of YAML text an importer parses at most (read_input enforces it before parsing).
MAX_BYTES = 32 * 1024 * 1024


class _Refused(yaml.YAMLError):
    def __init__(self, message: str, mark: Any = None) -> None:
        super().__init__(message)
        self.problem = message
        self.problem_mark = mark


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Nodes the document would hold once every alias is expanded; raises :class:`_Refused` over ``limit`` or on a cycle."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(node))
            if total > limit:
                raise _Refused(f"the document expands to more than {limit:,} nodes (an alias bomb?); refused", node.start_mark)
            size[key] = total
            continue
        if key in size:
            continue
        if key in on_path:
            raise _Refused("an alias refers to a node that contains it (a recursive document); refused", node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses alias bombs and recursive aliases, and keeps JSON-incompatible scalars as text."""

    max_nodes = MAX_NODES

    def compose_document(self) -> yaml.Node:  # noqa: D102 - measured before construction
        node = super().compose_document()
        if node is not None:
            _expanded_size(node, self.max_nodes)
        return node

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:  # noqa: D102
        digits = node.value.lstrip("+-").replace("_", "")
        if len(digits) > MAX_INT_DIGITS:
            raise _Refused(f"an integer of {len(digits)} digits is beyond the range of a floating-point number; refused", node.start_mark)
        return super().construct_yaml_int(node)

    def construct_as_text(self, node: yaml.ScalarNode) -> str:  # noqa: D102
        return str(node.value)

    def construct_set_as_list(self, node: yaml.MappingNode) -> list[Any]:  # noqa: D102
        return [self.construct_object(k) for k, _ in node.value]


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", BoundedLoader.construct_as_text)
BoundedLoader.add_constructor("tag:yaml.org,2002:binary", BoundedLoader.construct_as_text)
BoundedLoader.add_constructor("tag:yaml.org,2002:set", BoundedLoader.construct_set_as_list)


def load_yaml(text: str, path: str) -> Any:
    """Parse one YAML document from ``text`` with :class:`BoundedLoader`; :class:`InputError` naming ``path`` otherwise.

    Refused: syntax errors, more than one document, alias bombs and recursive
    aliases, integers beyond float range, nesting deeper than
    :data:`inferkb.jsonio.MAX_DEPTH`.
    """
    try:
        value = yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise InputError(f"not usable YAML: {getattr(exc, 'problem', None) or exc}{where}", path=path) from None
    except RecursionError:
        value = _TOO_DEEP
    if value is _TOO_DEEP or nesting_depth(value) > MAX_DEPTH:
        raise InputError(f"not usable YAML: mappings/sequences nested deeper than {MAX_DEPTH} levels", path=path)
    return value


_TOO_DEEP = object()
