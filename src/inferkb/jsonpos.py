"""Line numbers of fields in a JSON text, for reporters that point at a line (GitHub annotations).

:func:`field_lines` maps every path in a JSON document (``conditions.warmup``,
``arms[0].stats.p99``) to the 1-based line where its key (or, for a list
element, the element) starts; :func:`field_line` looks one finding's field up,
falling back to the deepest enclosing field the file has (a missing
``conditions.warmup`` points at ``conditions``). Works on any JSON layout,
not only the store's 2-space indent; text that does not tokenize as JSON
gives no lines rather than an error.
"""

from __future__ import annotations

import json
import re

__all__ = ["field_lines", "field_line", "split_field"]

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\\n]|\\.)*")|([{}\[\]:,])|([^\s{}\[\]:,"]+))', re.S)
_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def split_field(field: str) -> list[str | int]:
    """``"arms[0].stats.p99"`` -> ``["arms", 0, "stats", "p99"]``; a dotted numeric segment (``arms.0``) is an index too."""
    out: list[str | int] = []
    for name, index in _PART.findall(field):
        if index:
            out.append(int(index))
        elif name.isdigit() and out:
            out.append(int(name))
        else:
            out.append(name)
    return out


def field_lines(text: str) -> dict[tuple, int]:
    """``{path tuple: line}`` for every key and list element of the JSON ``text`` (first occurrence); ``{}`` if it does not
    tokenize."""
    lines: dict[tuple, int] = {}
    stack: list[list] = []  # per open container: [kind, path, next list index]
    pending_key: str | None = None
    line, last = 1, 0
    try:
        for m in _TOKEN.finditer(text):
            start = m.start(m.lastindex or 0)
            line += text.count("\n", last, start)
            last = start
            string, punct, _scalar = m.groups()
            if punct in (":", ","):
                continue
            if punct in ("}", "]"):
                if stack:
                    stack.pop()
                continue
            top = stack[-1] if stack else None
            if top is not None and top[0] == "obj" and pending_key is None:
                if string is None:
                    return {}  # a key must be a string: not JSON
                pending_key = json.loads(string)
                lines.setdefault((*top[1], pending_key), line)
                continue
            if top is None:
                path: tuple = ()
            elif top[0] == "obj":
                path, pending_key = (*top[1], pending_key), None
            else:
                path = (*top[1], top[2])
                lines.setdefault(path, line)
                top[2] += 1
            if punct == "{":
                stack.append(["obj", path, 0])
            elif punct == "[":
                stack.append(["arr", path, 0])
    except ValueError:
        return {}
    return lines


def field_line(text_or_lines: str | dict[tuple, int], field: str | None) -> int | None:
    """The line of ``field`` in a JSON text (or in :func:`field_lines` of it), else of its deepest enclosing field the
    text has; ``None`` when ``field`` is empty or not even its first segment is present."""
    if not field:
        return None
    lines = field_lines(text_or_lines) if isinstance(text_or_lines, str) else text_or_lines
    parts = tuple(split_field(field))
    while parts:
        if parts in lines:
            return lines[parts]
        parts = parts[:-1]
    return None
