"""Conditions of ``inferkb where``: parsing ``FIELD OP VALUE`` expressions and testing them on a record.

Grammar (one or more conditions, all of which must hold)::

    condition := FIELD OP VALUE | FIELD in V1,V2,... | FIELD is null | FIELD is not null
    OP        := = | == | != | < | > | <= | >= | ~
    FIELD     := a dotted path: conditions.batch_size, arms.stats.p99, arms.0.id

Conditions are given as command-line words; a condition may be one word
(``'value>100'``) or several (``value > 100``), and several conditions may
follow each other, optionally joined by ``and``. A value with spaces must be
one word (quote it for the shell). Anything else is refused with a
:class:`~inferkb.errors.UsageError` naming the words it could not read:
nothing is ever glued into one value silently.

Semantics (:meth:`Condition.test`): a dotted path descends into objects; a
list matches when ANY element does, and a numeric segment indexes a list.
``=``/``==`` compare numbers numerically and strings exactly; ``!=`` is true
when the field is present and no value equals; ``<``/``>``/``<=``/``>=``
compare numbers, or strings that are ISO dates; ``~`` is a case-insensitive
substring of the value's text (numbers and booleans as JSON writes them);
``in`` is true when any value equals one of the listed ones; ``is null`` is
true when the field is absent, null or an empty list (``= null`` means the
same), ``is not null`` (``!= null``) the opposite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import UsageError

__all__ = ["Condition", "parse_conditions", "field_values", "OPS", "MISSING"]

OPS = ("=", "==", "!=", "<", ">", "<=", ">=", "~", "in", "is null", "is not null")
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}(-\d{2})?")
_FIELD = r"[A-Za-z0-9_][\w.\-]*"
# One word that is a whole condition: FIELD OP VALUE (the value may be empty only after 'is').
_WHOLE = re.compile(rf"^\s*({_FIELD})\s*(==|!=|>=|<=|=|<|>|~)\s*(.*?)\s*$", re.S)
_WORDY = re.compile(rf"^\s*({_FIELD})\s+(in|is\s+not|is)\s+(.*?)\s*$", re.S | re.I)
_OP_FIRST = re.compile(r"^\s*(==|!=|>=|<=|=|<|>|~)\s*(.*?)\s*$", re.S)
_OP_WORD = re.compile(r"^(in|is|is\s+not)$", re.I)


class _Missing:
    """Marker for "the path names nothing in this record" (distinct from a JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class Condition:
    """One parsed condition: ``field`` (dotted path), ``op`` (one of :data:`OPS`, ``==`` read as ``=``), ``values`` (the raw value
    texts: one, several for ``in``, none for ``is null``/``is not null``)."""

    field: str
    op: str
    values: tuple[str, ...] = ()

    @property
    def parts(self) -> list[str]:
        """The path split on dots."""
        return self.field.split(".")

    @property
    def value(self) -> str:
        """The single raw value text ('' when the operator takes none)."""
        return self.values[0] if self.values else ""

    def __str__(self) -> str:
        if self.op in ("is null", "is not null"):
            return f"{self.field} {self.op}"
        if self.op == "in":
            return f"{self.field} in {','.join(self.values)}"
        return f"{self.field} {self.op} {self.value}"

    @classmethod
    def make(cls, field: str, op: str, value: str | Sequence[str] | None = None) -> Condition:
        """Build and check a condition from its parts (the Python API's way in).

        ``op`` may be any of :data:`OPS`; ``value`` a string (for ``in``: a
        comma-separated string or a sequence). Raises :class:`UsageError` for an
        unknown operator, an empty path segment, a missing value, or a ``<``/``>``
        value that is neither a number nor an ISO date.
        """
        op = " ".join(op.split())
        if op.replace(" ", "").isalpha():
            op = op.lower()
        if op == "==":
            op = "="
        if op not in OPS:
            raise UsageError(f"unknown operator {op!r}; use one of {', '.join(OPS)}")
        if not field or not all(field.split(".")):
            raise UsageError(f"field {field!r} has an empty path segment")
        if op in ("is null", "is not null"):
            return cls(field, op)
        if op == "in":
            items = _split_list(value) if isinstance(value, str) or value is None else [str(v).strip() for v in value]
            if not items or not all(items):
                raise UsageError(f"condition {field} in: give the values separated by commas, e.g. {field} in a,b,c")
            return cls(field, op, tuple(_unquote(v) for v in items))
        text = "" if value is None else str(value).strip()
        if not text:
            raise UsageError(f"condition {field} {op} has no value")
        text = _unquote(text)
        if op in ("=", "!=") and text.lower() in ("null", "none"):
            return cls(field, "is null" if op == "=" else "is not null")
        if op in ("<", ">", "<=", ">=") and not isinstance(coerce(text), (int, float)) and not _DATE_LIKE.match(text):
            raise UsageError(f"{field} {op} {text}: {op} compares numbers or ISO dates (YYYY-MM-DD); {text!r} is neither")
        return cls(field, op, (text,))

    # ---- testing ----------------------------------------------------------
    def test(self, data: dict[str, Any]) -> tuple[bool, bool]:
        """``(holds, found)`` for one record's data: whether the condition holds, and whether the path named anything."""
        values = list(_walk(data, self.parts))
        found = bool(values)
        scalars = [v for v in values if not isinstance(v, (dict, list))]
        if self.op == "is null":
            return (not scalars or any(v is None for v in scalars)), found
        if self.op == "is not null":
            return (any(v is not None for v in scalars)), found
        if self.op == "!=":
            return (found and not any(_equal(v, self.value) for v in scalars)), found
        if self.op == "=":
            return any(_equal(v, self.value) for v in scalars), found
        if self.op == "in":
            return any(_equal(v, w) for v in scalars for w in self.values), found
        if self.op == "~":
            needle = self.value.lower()
            return any(v is not None and needle in value_text(v).lower() for v in scalars), found
        return any(_order(v, self.op, self.value) for v in scalars), found


def parse_conditions(words: Sequence[str]) -> list[Condition]:
    """Read command-line ``words`` into conditions (see the module docstring); at least one.

    Raises :class:`UsageError` naming what could not be read — never guesses.
    """
    out: list[Condition] = []
    pending: list[str] = []  # [field] or [field, op] waiting for the rest
    i = 0
    items = [w for w in words]
    while i < len(items):
        word = items[i]
        i += 1
        if not pending:
            if not word.strip():
                continue
            if word.strip().lower() == "and" and out:
                continue
            if word.strip().lower() == "or":
                raise UsageError("where joins conditions with AND only; 'or' is not supported (use 'FIELD in A,B' for one field)")
            m = _WORDY.match(word)
            if m:
                field, op, rest = m.group(1), m.group(2), m.group(3)
                if op.lower() == "in":
                    out.append(Condition.make(field, "in", rest))
                    continue
                words_after = rest.split()
                consumed, cond = _is_null(field, op, words_after, items[i:])
                out.append(cond)
                i += consumed
                continue
            m = _WHOLE.match(word)
            if m and m.group(3):
                out.append(Condition.make(m.group(1), m.group(2), m.group(3)))
                continue
            if m:  # 'field=' with the value in the next word
                pending = [m.group(1), m.group(2)]
                continue
            if re.fullmatch(_FIELD, word.strip()):
                pending = [word.strip()]
                continue
            raise UsageError(_unreadable(word))
        if len(pending) == 1:
            field = pending[0]
            stripped = word.strip()
            if _OP_WORD.match(" ".join(stripped.split())):
                op = " ".join(stripped.lower().split())
                if op == "in":
                    if i >= len(items):
                        raise UsageError(f"condition {field} in: give the values, e.g. {field} in a,b,c")
                    out.append(Condition.make(field, "in", items[i]))
                    i += 1
                else:
                    consumed, cond = _is_null(field, op, [], items[i:])
                    out.append(cond)
                    i += consumed
                pending = []
                continue
            m = _WORDY.match(f"{field} {word}")
            if m and m.group(2).lower() != "in":
                consumed, cond = _is_null(field, m.group(2), m.group(3).split(), items[i:])
                out.append(cond)
                i += consumed
                pending = []
                continue
            if m:
                out.append(Condition.make(field, "in", m.group(3)))
                pending = []
                continue
            m = _OP_FIRST.match(word)
            if not m:
                raise UsageError(_unreadable(f"{field} {word}", hint=f"{word!r} is not an operator"))
            if m.group(2):
                out.append(Condition.make(field, m.group(1), m.group(2)))
                pending = []
            else:
                pending = [field, m.group(1)]
            continue
        # pending == [field, op]: this whole word is the value
        out.append(Condition.make(pending[0], pending[1], word))
        pending = []
    if pending:
        raise UsageError(_unreadable(" ".join(pending), hint="it has no " + ("operator" if len(pending) == 1 else "value")))
    if not out:
        raise UsageError("give at least one condition, e.g. inferkb where 'metric = ttft_ms'")
    return out


def _is_null(field: str, op: str, rest: list[str], following: Sequence[str]) -> tuple[int, Condition]:
    """Finish ``FIELD is [not] null`` whose remaining words are ``rest`` (same word) or the ``following`` words."""
    op = " ".join(op.lower().split())
    words = [w.lower() for w in rest]
    consumed = 0
    while not (words and words[-1] == "null") and consumed < len(following) and len(words) < 2:
        words.extend(w.lower() for w in following[consumed].split())
        consumed += 1
    phrase = " ".join([op, *words])
    if phrase not in ("is null", "is not null"):
        raise UsageError(f"cannot read condition {field} {phrase!r}; 'is' takes 'null' or 'not null' (FIELD is null, FIELD is not null)")
    return consumed, Condition(field, phrase)


def _unreadable(text: str, hint: str = "") -> str:
    extra = f" ({hint})" if hint else ""
    return (
        f"cannot read condition {text!r}{extra}; expected FIELD OP VALUE with OP one of {' '.join(OPS[:8])}, "
        "or FIELD in A,B,C, FIELD is null, FIELD is not null; quote a value that has spaces: 'hardware_raw = NVIDIA H100 80GB HBM3'"
    )


def _split_list(text: str | None) -> list[str]:
    body = (text or "").strip()
    if len(body) >= 2 and body[0] + body[-1] in ("()", "[]"):
        body = body[1:-1]
    return [p.strip() for p in body.split(",")] if body.strip() else []


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


# ---- values ------------------------------------------------------------------


def coerce(text: str) -> Any:
    """``"8"`` -> 8, ``"1.5"`` -> 1.5, ``"true"`` -> True, ``"null"`` -> None, anything else the text itself."""
    low = text.lower()
    if low in ("null", "none"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def value_text(v: Any) -> str:
    """A scalar as text: strings as they are, numbers and booleans as the catalogue's JSON writes them (``true``, ``0.00001``)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        import orjson

        return orjson.dumps(v).decode()
    return str(v)


def _equal(actual: Any, raw: str) -> bool:
    if isinstance(actual, str):
        return actual == raw
    wanted = coerce(raw)
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return isinstance(actual, bool) and isinstance(wanted, bool) and actual == wanted
    if _is_num(actual) and _is_num(wanted):
        return float(actual) == float(wanted)
    return False


def _order(actual: Any, op: str, raw: str) -> bool:
    wanted = coerce(raw)
    if _is_num(actual) and _is_num(wanted):
        a: Any = float(actual)
        w: Any = float(wanted)
    elif isinstance(actual, str) and _DATE_LIKE.match(raw) and _DATE_LIKE.match(actual):
        a, w = actual, raw
    else:
        return False
    return {"<": a < w, ">": a > w, "<=": a <= w, ">=": a >= w}[op]


def _walk(value: Any, parts: list[str]) -> Iterator[Any]:
    if not parts:
        if isinstance(value, list):
            yield from value
            if not value:
                yield value  # an empty list is present (and empty): 'is null' holds, '!=' sees a field
        else:
            yield value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, list):
        if head.isdigit() and int(head) < len(value):
            yield from _walk(value[int(head)], rest)
            return
        for item in value:
            yield from _walk(item, parts)
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest)


def field_values(data: dict[str, Any], field: str) -> Any:
    """The value(s) at dotted ``field`` for display: a scalar or object when the path names one value through objects only,
    a list when it ends at or passes through a list, :data:`MISSING` when it names nothing.

    ``field_values({"arms": [{"id": "a"}, {"id": "b"}]}, "arms.id")`` -> ``["a", "b"]``.
    """
    parts = field.split(".")
    value: Any = data
    for i, head in enumerate(parts):
        if isinstance(value, dict):
            if head not in value:
                return MISSING
            value = value[head]
        elif isinstance(value, list):
            if head.isdigit() and int(head) < len(value):
                value = value[int(head)]
                continue
            return [v for v in _walk(value, parts[i:]) if v is not MISSING and not (isinstance(v, list) and not v)]
        else:
            return MISSING
    return value


def absent_value_near(asked: Iterable[str], rest: Iterable[str], everywhere: Iterable[str]) -> list[str] | None:
    """For one filter of a selection that matched nothing: is its value to blame, and which values it may have meant.

    ``asked``: the filter's value(s); ``rest``: the values of its field in the records the
    other filters select; ``everywhere``: the field's values in every record. ``None`` when
    the value is not to blame — a record the others select has it, or the others select
    nothing and it is somewhere in the KB (a right value beside a typo is not blamed); else
    :func:`close_values` of each asked value, first seen first (possibly empty). Serves
    ``where``/``query`` (:func:`inferkb.query.find`) and ``compare``'s empty selections.
    """
    asked = list(asked)
    rest, everywhere = set(rest), set(everywhere)
    if set(asked) & rest or (not rest and set(asked) & everywhere):
        return None
    return list(dict.fromkeys(v for a in asked for v in close_values(a, everywhere)))


def close_values(asked: str, values: Iterable[str], limit: int = 3) -> list[str]:
    """The ``values`` close to ``asked``: those it is a prefix or part of (``mlperf`` -> ``mlperf-inference``), then difflib's
    near matches (ratio >= 0.6: ``ofline`` -> ``offline``); at most ``limit``, in that order."""
    import difflib

    pool = sorted({v for v in values if v != asked})
    low = asked.lower()
    near = [v for v in pool if low and low in v.lower()]
    near += [v for v in difflib.get_close_matches(asked, pool, n=limit, cutoff=0.6) if v not in near]
    return near[:limit]
