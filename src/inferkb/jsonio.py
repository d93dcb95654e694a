"""Strict JSON reading and canonical, atomic JSON writing for record files.

Reading is strict where Python's ``json`` is lenient: duplicate keys, NaN and
Infinity, a byte-order mark and non-UTF-8 bytes are each reported as a
:class:`ParseProblem` with a stable code instead of being silently accepted.
Writing keeps key order, 2-space indent, unescaped UTF-8 and a trailing
newline, and goes through a temp file + rename so a reader never sees half a
file.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class ParseProblem:
    """Why a file's bytes are not a usable record.

    ``code`` is one of ``empty``, ``bom``, ``not-utf8``, ``invalid-json``,
    ``duplicate-key``, ``non-finite``, ``not-object``, ``out-of-range`` (a
    number no float can hold: more than 308 integer digits, or a literal such
    as ``1e400``), ``surrogate`` (a ``\\ud800``-style escape with no pair, which
    no UTF-8 text can hold); ``line``/``col`` are 1-based when known and
    ``field`` is the dotted path of the offending value when known.
    """

    code: str
    message: str
    line: int | None = None
    col: int | None = None
    field: str | None = None


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


class _Unrepresentable:
    """Stands in for a number no float can hold while the document is decoded, so its field can be named."""

    __slots__ = ("text",)
    made = 0  # how many were ever made: a decode that made none needs no search for them

    def __init__(self, text: str) -> None:
        self.text = text
        _Unrepresentable.made += 1


# Integers up to 308 digits convert to a finite float (float max ~1.8e308); longer ones overflow every
# float() an audit or exporter makes, and past 4300 digits Python refuses int <-> str altogether.
MAX_INT_DIGITS = 308


# Arrays/objects nested deeper than this are refused (code ``invalid-json``): a record is under ten levels
# deep, while orjson stops serialising at 255 levels, the schema validator (jsonschema_rs) stops at 256 and
# Python's own decoder and every recursive walk of a document stop near 1,000.
MAX_DEPTH = 200


def nesting_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply arrays/objects nest in ``value`` (a scalar is 0, ``[]`` and ``{}`` are 1, ``[[1]]`` is 2).

    Iterative, so any depth is measured without recursion; stops counting once the
    depth passes ``limit`` (the return value is then ``limit + 1``).
    """
    depth = 0
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, level = stack.pop()
        if level > depth:
            depth = level
            if depth > limit:
                return depth
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, level + 1))
    return depth


def _too_deep() -> ParseProblem:
    return ParseProblem("invalid-json", f"arrays/objects nested deeper than {MAX_DEPTH} levels")


def _parse_int(text: str) -> int | _Unrepresentable:
    if len(text) - (text[0] == "-") > MAX_INT_DIGITS:
        return _Unrepresentable(text)
    return int(text)


def _parse_float(text: str) -> float | _Unrepresentable:
    value = float(text)
    return value if math.isfinite(value) else _Unrepresentable(text)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook, parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _dotted(path: list) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _find_bad(value: Any, path: list) -> tuple[str, str, str] | None:
    """``(code, field, what)`` of the first unrepresentable number or lone surrogate in ``value``, else ``None``."""
    stack: list[tuple[Any, list]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Unrepresentable):
            digits = node.text.lstrip("-")
            what = f"an integer of {len(digits)} digits" if digits.isdigit() else f"the number {node.text[:40]}"
            return "out-of-range", _dotted(where), what
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return "surrogate", _dotted(where), "a string holding an unpaired UTF-16 surrogate escape"
        elif isinstance(node, dict):
            for k, v in reversed(list(node.items())):
                if _SURROGATE.search(k):
                    return (
                        "surrogate",
                        _dotted(where + [k.encode("utf-8", "backslashreplace").decode()]),
                        "a key holding an unpaired surrogate",
                    )
                stack.append((v, where + [k]))
        elif isinstance(node, list):
            stack.extend((v, where + [i]) for i, v in reversed(list(enumerate(node))))
    return None


def _line_col(text: str, needle: str) -> tuple[int | None, int | None]:
    pos = text.find(needle)
    if pos < 0:
        return None, None
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def parse_bytes(raw: bytes, *, require_object: bool = True) -> tuple[Any, ParseProblem | None]:
    """Parse ``raw`` strictly. Returns ``(value, None)`` or ``(None, problem)``.

    Never raises for bad input. With ``require_object`` a top level that is not
    a JSON object is a ``not-object`` problem; nesting deeper than
    :data:`MAX_DEPTH` is an ``invalid-json`` problem.
    """
    value, problem, _, _ = parse_bytes_compact(raw, require_object=require_object)
    return value, problem


def parse_bytes_compact(raw: bytes, *, require_object: bool = True) -> tuple[Any, ParseProblem | None, bytes | None, int | None]:
    """:func:`parse_bytes`, plus what the fast path computed anyway: ``(value, problem, doc, colons)``.

    ``doc`` is an orjson serialisation of ``value`` when the fast path parsed
    the file: ``raw`` itself for a canonical file (``orjson.dumps(value,
    option=OPT_INDENT_2)`` and a newline), else ``orjson.dumps(value)``;
    ``colons`` is its count of ``:`` bytes when counted, else ``None``. Both
    are ``None`` and 0 after the strict path. The loader runs byte-level
    pre-filters (:func:`inferkb.urls.may_hold_unsafe_url`) on ``doc`` without
    serialising the record again.
    """
    if not raw.strip():
        return None, ParseProblem("empty", "file is empty (expected one JSON object)"), None, 0
    if raw.startswith(BOM):
        return None, ParseProblem("bom", "file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM", 1, 1), None, 0
    value, compact, colons = _fast_parse(raw)  # the common case: a well-formed record, parsed by orjson
    if value is not _SLOW:
        # The walk is skipped for nearly every record: a file with fewer brackets than MAX_DEPTH cannot nest
        # deeper, nor can a canonical file without a line indented MAX_DEPTH levels (a container at depth
        # D > 1 opens on a line indented 2 * (D - 1) spaces; a newline never occurs inside a JSON string).
        if (
            (len(raw) >= _DEEP_MIN_BYTES and _DEEP_INDENT in raw) if compact is raw else raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
        ) and nesting_depth(value) > MAX_DEPTH:
            return None, _too_deep(), None, 0
        if require_object and not isinstance(value, dict):
            return (*_not_object(value), None, 0)
        return value, None, compact, colons
    value, problem = _strict_parse(raw)
    if problem is None and require_object and not isinstance(value, dict):
        return (*_not_object(value), None, 0)
    return value, problem, None, 0


def _strict_parse(raw: bytes) -> tuple[Any, ParseProblem | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start]
        line = prefix.count(b"\n") + 1
        col = exc.start - (prefix.rfind(b"\n") + 1) + 1
        return None, ParseProblem("not-utf8", f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8", line, col)
    made = _Unrepresentable.made
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
        return None, _too_deep()
    except ValueError as exc:  # anything else the decoder refuses: never an uncaught error for bad input
        return None, ParseProblem("invalid-json", str(exc)[:200])
    if nesting_depth(value) > MAX_DEPTH:  # before _find_bad, which recurses
        return None, _too_deep()
    bad = _find_bad(value, []) if (_Unrepresentable.made != made or _SURROGATE_ESCAPE.search(text)) else None
    if bad is not None:
        code, fld, what = bad
        where = f"{fld}: " if fld else ""
        if code == "out-of-range":
            message = f"{where}{what} is beyond the range of a floating-point number (about 1.8e308); it cannot be used as a value"
        else:
            message = f"{where}{what}; it cannot be written as UTF-8 (use the character itself, or a valid surrogate pair)"
        return None, ParseProblem(code, message, field=fld or None)
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
_DEEP_INDENT = b"\n" + b" " * (2 * MAX_DEPTH)
# A canonical file nesting deeper than MAX_DEPTH opens a container on a line indented 2 * (D - 1) spaces for each
# depth D = 2 .. MAX_DEPTH + 1, each on its own line: at least 2 * (1 + ... + MAX_DEPTH) bytes of indentation. A
# smaller file (every real record) need not be searched for _DEEP_INDENT (0.8 us on 1.7 KB, 3 us on 6.7 KB).
_DEEP_MIN_BYTES = MAX_DEPTH * (MAX_DEPTH + 1)


def _fast_parse(raw: bytes) -> tuple[Any, bytes | None, int | None]:
    r"""Parse with orjson when that provably gives the strict parser's answer: ``(value, doc, colons)``, else ``(_SLOW, None, 0)``.

    ``doc`` is an orjson serialisation of ``value`` for an object or array
    (``None`` for a scalar): ``raw`` itself when it is the KB's canonical form
    (below), else ``orjson.dumps(value)``; ``colons`` is the number of ``:``
    bytes in ``doc`` when it was counted, else ``None``.

    orjson is several times faster than the stdlib decoder with a Python
    ``object_pairs_hook`` and rejects what the strict parser rejects (NaN,
    Infinity, invalid UTF-8, bad syntax, a lone surrogate escape), but it
    differs in two ways, both guarded here. (1) It turns integers beyond 64
    bits into floats. (2) It keeps the last value of a duplicate key silently.

    Canonical files (what the store writes: 2-space indent, unescaped UTF-8, a
    trailing newline) are checked by equality: when ``raw`` is byte for byte
    ``orjson.dumps(value, option=OPT_INDENT_2)`` plus a newline, the text is
    the serialisation of the parsed value, so no key was dropped (a dict
    serialises each of its keys once, and distinct keys serialise differently)
    and no number changed (a 64-bit-overflowing integer would come back as a
    float's text). Other files take the byte guards: a run of 19 or more digits
    (2**63 has 19) or a ``\u`` escape takes the strict path; otherwise every
    key in the text is followed by exactly one structural colon, and escapes
    other than ``\u`` never create or remove a colon inside a string, so the
    text has as many ``:`` bytes as orjson's compact re-serialisation exactly
    when no key was dropped. Any mismatch or orjson error takes the strict
    path, which then gives the exact diagnostic.
    """
    if raw.startswith(b'{\n  "') and raw.endswith(b"}\n"):  # looks canonical: try the equality guard first
        try:
            value = orjson.loads(raw)
            pretty = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            return _SLOW, None, 0
        if len(raw) == len(pretty) + 1 and raw.startswith(pretty):
            return value, raw, None
        return _guarded(raw, value)
    return _guarded(raw, _SLOW)


def _guarded(raw: bytes, value: Any) -> tuple[Any, bytes | None, int | None]:
    """The byte guards of :func:`_fast_parse` for a file that is not canonical (``value``: orjson's parse, or ``_SLOW``)."""
    if b"\\u" in raw or _LONG_DIGITS in raw.translate(_DIGIT_MAP):
        return _SLOW, None, 0
    if value is _SLOW:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _SLOW, None, 0
    compact = None
    colons = 0
    if isinstance(value, (dict, list)):
        try:
            compact = orjson.dumps(value)
        except orjson.JSONEncodeError:  # nesting deeper than orjson serialises
            return _SLOW, None, 0
        colons = compact.count(b":")
        if raw.count(b":") != colons:
            return _SLOW, None, 0
    return value, compact, colons


class NotRegularFile(OSError):
    """A path to read is a FIFO, socket, device or directory: reading it could block forever or mean nothing."""


def read_regular(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (following symlinks); never blocks on a FIFO.

    Opens non-blocking and checks the opened file (no race with a swap), so a
    named pipe, socket or device raises :class:`NotRegularFile` (an
    ``OSError``) instead of hanging. ``limit`` refuses larger files with
    ``OSError(EFBIG)``. Raises ``OSError`` (``FileNotFoundError``, ...) as ``open`` would.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, socket or device)"
            raise NotRegularFile(errno.EINVAL, f"{os.fspath(path)} is {kind}; only regular files are read")
        if limit is not None and info.st_size > limit:
            raise OSError(errno.EFBIG, f"{os.fspath(path)} is {info.st_size} bytes, over the {limit}-byte limit")
        chunks = []
        while True:
            chunk = os.read(fd, max(info.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            if limit is not None and sum(map(len, chunks)) > limit:
                raise OSError(errno.EFBIG, f"{os.fspath(path)} grew over the {limit}-byte limit while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike, *, errors: str = "strict") -> str:
    """:func:`read_regular` decoded as UTF-8 (``UnicodeDecodeError`` with ``errors="strict"``)."""
    return read_regular(path).decode("utf-8", errors)


def dumps_record(record: dict[str, Any]) -> str:
    """Serialise a record the way the KB stores it: key order kept, 2-space indent, unescaped UTF-8, trailing newline."""
    return json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# Temp and backup files of interrupted writes are recognisable by name: ".<target>.inferkb-<pid>-<hex>.tmp|.bak".
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.inferkb-(?P<pid>\d+)-(?P<token>[0-9a-f]{8})\.(?P<kind>tmp|bak)$")
# What earlier inferkb versions left (tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")): eight characters of [a-z0-9_].
LEGACY_TEMP_NAME = re.compile(r"^\.(?P<target>.+\.json)\.[a-z0-9_]{8}\.tmp$")
# A batch being applied keeps its journal here (KB root); see inferkb.store.batch.
JOURNAL_NAME = ".inferkb-journal.json"


def temp_path(path: Path, kind: str = "tmp") -> Path:
    """A fresh temp (``kind="tmp"``) or backup (``"bak"``) name beside ``path``, matching :data:`TEMP_NAME`."""
    import secrets  # here, not at the top: random and hmac (OpenSSL) are start-up time that reading never uses

    return path.with_name(f".{path.name}.inferkb-{os.getpid()}-{secrets.token_hex(4)}.{kind}")


def is_temp_name(name: str) -> bool:
    """True for a file name an interrupted inferkb write may have left (:data:`TEMP_NAME`, or the legacy mkstemp name)."""
    return bool(TEMP_NAME.match(name) or LEGACY_TEMP_NAME.match(name))


def new_mode(path: Path) -> int:
    """The permission bits a rewrite of ``path`` gets: the existing file's, else ``0o666`` less the umask (as ``open()``)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return default_mode()


def default_mode() -> int:
    """The permission bits a new file gets from ``open()``: ``0o666`` less the process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory (:func:`temp_path`), fsync, then rename.

    An interrupted write leaves either the old file or the new one, never half
    of either (and at worst a temp file named by :data:`TEMP_NAME`). For one
    file outside a KB (an export); records go through the store's batch
    writer. Raises ``OSError`` on failure (the temp file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    mode = new_mode(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
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
