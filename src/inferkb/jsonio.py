"""Strict JSON reading and canonical, atomic JSON writing for record files.

Reading is strict where Python's ``json`` is lenient: duplicate keys, NaN and
Infinity, a byte-order mark and non-UTF-8 bytes are each reported as a
:class:`ParseProblem` with a stable code instead of being silently accepted.
Writing keeps key order, 2-space indent, unescaped UTF-8 and a trailing
newline, and goes through a temp file + rename so a reader never sees half a
file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class ParseProblem:
    """Why a file's bytes are not a usable record.

    ``code`` is one of ``empty``, ``bom``, ``not-utf8``, ``invalid-json``,
    ``duplicate-key``, ``non-finite``, ``not-object``; ``line``/``col`` are
    1-based when known.
    """

    code: str
    message: str
    line: int | None = None
    col: int | None = None


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NonFinite(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return obj


def _reject_constant(token: str) -> float:
    raise _NonFinite(token)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook, parse_constant=_reject_constant)


def _line_col(text: str, needle: str) -> tuple[int | None, int | None]:
    pos = text.find(needle)
    if pos < 0:
        return None, None
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def parse_bytes(raw: bytes, *, require_object: bool = True) -> tuple[Any, ParseProblem | None]:
    """Parse ``raw`` strictly. Returns ``(value, None)`` or ``(None, problem)``.

    Never raises for bad input. With ``require_object`` a top level that is not
    a JSON object is a ``not-object`` problem.
    """
    if not raw.strip():
        return None, ParseProblem("empty", "file is empty (expected one JSON object)")
    if raw.startswith(BOM):
        return None, ParseProblem("bom", "file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM", 1, 1)
    value = _fast_parse(raw)  # the common case: a well-formed record, parsed by orjson
    if value is not _SLOW:
        if require_object and not isinstance(value, dict):
            return _not_object(value)
        return value, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start]
        line = prefix.count(b"\n") + 1
        col = exc.start - (prefix.rfind(b"\n") + 1) + 1
        return None, ParseProblem("not-utf8", f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8", line, col)
    try:
        value = _DECODER.decode(text)
    except _Duplicate as exc:
        line, col = _line_col(text, json.dumps(exc.key, ensure_ascii=False) + ":")
        # find the second occurrence for a useful position
        first = text.find(json.dumps(exc.key, ensure_ascii=False))
        second = text.find(json.dumps(exc.key, ensure_ascii=False), first + 1) if first >= 0 else -1
        if second >= 0:
            line = text.count("\n", 0, second) + 1
            col = second - (text.rfind("\n", 0, second) + 1) + 1
        return None, ParseProblem("duplicate-key", f"key {exc.key!r} appears twice in one object", line, col)
    except _NonFinite as exc:
        line, col = _line_col(text, exc.token)
        return None, ParseProblem("non-finite", f"{exc.token} is not valid JSON (numbers must be finite)", line, col)
    except json.JSONDecodeError as exc:
        return None, ParseProblem("invalid-json", exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return None, ParseProblem("invalid-json", "nesting too deep")
    if require_object and not isinstance(value, dict):
        return _not_object(value)
    return value, None


def _not_object(value: Any) -> tuple[None, ParseProblem]:
    kind = type(value).__name__ if value is not None else "null"
    kind = {"list": "array", "str": "string", "int": "number", "float": "number", "bool": "boolean"}.get(kind, kind)
    return None, ParseProblem("not-object", f"top level is a JSON {kind}; expected an object")


_SLOW = object()
# orjson turns integers beyond 64 bits into floats where the stdlib keeps them exact;
# a run of 19+ digits (2**63 has 19) sends the file to the strict path.
_DIGIT_MAP = bytes(0x39 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_DIGITS = b"9" * 19


def _fast_parse(raw: bytes) -> Any:
    r"""Parse with orjson when that provably gives the strict parser's answer; else return ``_SLOW``.

    orjson is several times faster than the stdlib decoder with a Python
    ``object_pairs_hook`` and rejects what the strict parser rejects (NaN,
    Infinity, invalid UTF-8, bad syntax), but it differs in two ways, both
    guarded here. (1) It turns integers beyond 64 bits into floats: a run of
    19 or more digits takes the strict path. (2) It keeps the last value of a
    duplicate key silently. Every key in the text is followed by exactly one
    structural colon, and escapes other than ``\u`` never create or remove a
    colon inside a string, so a file without ``\u`` escapes has as many ``:``
    bytes as orjson's compact re-serialisation of the parsed value exactly
    when no key was dropped. Any mismatch, ``\u`` escape or orjson error takes
    the strict path, which then gives the exact diagnostic.
    """
    if b"\\u" in raw or _LONG_DIGITS in raw.translate(_DIGIT_MAP):
        return _SLOW
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _SLOW
    if isinstance(value, (dict, list)):
        try:
            compact = orjson.dumps(value)
        except orjson.JSONEncodeError:  # nesting deeper than orjson serialises
            return _SLOW
        if raw.count(b":") != compact.count(b":"):
            return _SLOW
    return value


def dumps_record(record: dict[str, Any]) -> str:
    """Serialise a record the way the KB stores it: key order kept, 2-space indent, unescaped UTF-8, trailing newline."""
    return json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, then rename.

    An interrupted write leaves either the old file or the new one, never half
    of either. Raises ``OSError`` on failure (the temp file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files; keep an existing file's mode, else honour the umask like open() would.
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
