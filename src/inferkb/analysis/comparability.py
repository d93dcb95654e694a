"""Comparability classes: which benchmark numbers may be ranked against each other.

DESIGN.md rule 6: two numbers are ranked together only when their load
conditions match or are explicitly declared irrelevant. A record's **class
key** is the value of each condition below; records with equal keys form one
class. A condition the record does not state is *missing*, and a record with
a missing condition is **not comparable** (listed apart, naming what is
missing) — an absent value is never treated as equal to another absent value.

Conditions, in key order (:data:`CONDITIONS`):

- ``model`` (``model_id``, else the ``model`` text), ``metric`` (which also
  carries the token basis: output vs input + output), ``value_scope``;
- ``format`` (``format_id``), ``hardware`` (``accelerator_ids``; missing when
  ``accelerator_alternates`` lists other parts the hardware string may name),
  ``accelerator_count`` (nodes × accelerators per node, else ``accelerator_count``);
- ``scenario``; ``division`` (MLPerf closed/open; "n/a" elsewhere — never varied,
  so closed and open results are never ranked together);
- ``benchmark_definition``: for a record from a suite whose rules fix the load
  (MLPerf Inference: round + benchmark + scenario), the definition; "n/a" elsewhere;
- ``input_tokens``, ``output_tokens``, ``load`` (concurrency, else batch size,
  else request rate), ``warmup``: stated values; for a suite-defined record,
  "fixed by" its definition (the suite's rules set the dataset, sequence
  lengths, load pattern and run duration, so they are declared, not missing);
- ``engine`` (``engine_id``), ``engine_version`` (``conditions.engine_version``,
  else ``environment.engine_version``), compared as a version
  (:func:`version_key`: ``v0.9.2`` = ``0.9.2``, ``10.2`` = ``10.2.0``, but
  ``10.2.0.19`` is another build); a class lists the spellings it merged.

A caller may **vary** conditions (``vary=("engine", "engine_version")``): they
leave the key and become columns of the ranking. ``division`` cannot be varied.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.utils import canonicalize_version
from packaging.version import InvalidVersion, Version

from .common import devices_of, is_number, mlperf_division, mlperf_round

MISSING = None  # a condition value the record does not state
NOT_APPLICABLE = "n/a"

# Conditions a caller may not declare irrelevant.
NEVER_VARIED = frozenset({"division", "model", "metric"})
# Conditions fixed by a suite's rules when the record comes from one.
SUITE_FIXED = ("input_tokens", "output_tokens", "load", "warmup")
# A commit id: PEP 440 would read an all-digit one ("8907517") as a release number, and drop its leading zeros.
_COMMIT = re.compile(r"[0-9a-f]{7,40}", re.I)


def version_key(text: str) -> str:
    """The form an engine version is compared in: ``"v0.9.2"`` and ``"0.9.2"`` -> ``"0.9.2"``, ``"10.2"`` and ``"10.2.0"`` -> ``"10.2"``.

    A string that parses as a PEP 440 version (packaging's ``Version``, after
    stripping surrounding whitespace and one leading ``v``/``V``) becomes its
    canonical form with trailing zero release parts dropped
    (``canonicalize_version(..., strip_trailing_zero=True)``), so spellings PEP 440
    calls equal meet; a more precise build stays apart (``"10.2.0.19"`` !=
    ``"10.2.0"``). Anything else (``"nightly, commit dea63512"``, a commit id
    such as ``"ee59a7c6..."`` or ``"8907517"``, a branch ``"feat/1.2-mlpinf"``)
    is compared as the exact string, stripped of surrounding whitespace.
    Source of the equality rule: PEP 440, "Version matching" (release segments
    compared with zero padding) as implemented by ``packaging.version``.
    """
    raw = text.strip()
    if _COMMIT.fullmatch(raw):
        return raw
    bare = raw[1:] if raw[:1] in ("v", "V") else raw
    try:
        return canonicalize_version(Version(bare), strip_trailing_zero=True)
    except InvalidVersion:
        return raw


def _suite_definition(data: dict[str, Any]) -> str | None:
    sub = data.get("submission")
    if not isinstance(sub, dict):
        return None
    suite = sub.get("suite")
    if not (isinstance(suite, str) and "mlperf" in suite.lower()) and data.get("origin") != "mlperf-inference":
        return None
    bench = sub.get("mlperf_model") or data.get("model")
    scenario = sub.get("scenario_raw") or data.get("scenario")
    rnd = mlperf_round(data)
    if not (bench and scenario and rnd):
        return None
    return f"MLPerf Inference {rnd} {bench} {scenario}"


def _model(d: dict[str, Any]) -> Any:
    return d.get("model_id") or d.get("model") or MISSING


def _hardware(d: dict[str, Any]) -> Any:
    # Alternates mean the hardware string fits several parts: the hardware is not established (DESIGN.md rule 4).
    if d.get("accelerator_alternates"):
        return MISSING
    ids = [i for i in d.get("accelerator_ids") or [] if isinstance(i, str)]
    return "+".join(sorted(set(ids))) if ids else MISSING


def _count(d: dict[str, Any]) -> Any:
    n, _ = devices_of(d)
    return n if n is not None else MISSING


def _cond(name: str) -> Callable[[dict[str, Any]], Any]:
    def get(d: dict[str, Any]) -> Any:
        c = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
        v = c.get(name)
        return MISSING if v is None else v

    return get


LOAD_FIELDS = ("concurrency", "batch_size", "request_rate")
"""The ``conditions`` fields that make up the ``load`` condition, in the order it takes the first one present."""


def _load(d: dict[str, Any]) -> Any:
    c = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
    for name in LOAD_FIELDS:
        if c.get(name) is not None:
            return f"{name}={c[name]}"
    return MISSING


def _warmup(d: dict[str, Any]) -> Any:
    c = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
    v = c.get("warmup")
    if v is None:
        return MISSING
    return "none" if v is False else v


def _engine_version(d: dict[str, Any]) -> Any:
    c = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
    env = d.get("environment") if isinstance(d.get("environment"), dict) else {}
    return c.get("engine_version") or env.get("engine_version") or MISSING


def _simple(field_name: str) -> Callable[[dict[str, Any]], Any]:
    def get(d: dict[str, Any]) -> Any:
        v = d.get(field_name)
        return MISSING if v is None or v == "" else v

    return get


CONDITIONS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("model", _model),
    ("metric", _simple("metric")),
    ("value_scope", _simple("value_scope")),
    ("format", _simple("format_id")),
    ("hardware", _hardware),
    ("accelerator_count", _count),
    ("scenario", _simple("scenario")),
    ("division", lambda d: mlperf_division(d) or NOT_APPLICABLE),
    ("benchmark_definition", lambda d: _suite_definition(d) or NOT_APPLICABLE),
    ("input_tokens", _cond("input_tokens")),
    ("output_tokens", _cond("output_tokens")),
    ("load", _load),
    ("warmup", _warmup),
    ("engine", _simple("engine_id")),
    ("engine_version", _engine_version),
)
CONDITION_NAMES = tuple(name for name, _ in CONDITIONS)


def check_vary(vary: Iterable[str]) -> tuple[str, ...]:
    """Validate condition names a caller wants to vary; ``ValueError`` naming the known ones otherwise."""
    out = []
    for name in vary:
        if name not in CONDITION_NAMES:
            raise ValueError(f"unknown condition {name!r} to vary; conditions: {', '.join(CONDITION_NAMES)}")
        if name in NEVER_VARIED:
            raise ValueError(f"condition {name!r} cannot be varied (rows that differ in it are never ranked together)")
        if name not in out:
            out.append(name)
    return tuple(out)


@dataclass
class ConditionSet:
    """The conditions of one record: ``values`` (name -> value or None when missing) and ``fixed_by`` (name -> suite definition).

    ``missing(vary)`` lists the conditions the record does not state, among those not varied.
    """

    values: dict[str, Any]
    fixed_by: dict[str, str] = field(default_factory=dict)

    def missing(self, vary: Iterable[str] = ()) -> list[str]:
        """Names of conditions with no value, excluding the varied ones."""
        skip = set(vary)
        return [n for n in CONDITION_NAMES if n not in skip and self.values.get(n) is MISSING]

    def key(self, vary: Iterable[str] = ()) -> tuple[tuple[str, Any], ...]:
        """The class key: ``((name, value), ...)`` in :data:`CONDITION_NAMES` order, varied conditions left out.

        Values are in their compared form (:func:`match_value`).
        """
        skip = set(vary)
        get = self.values.get
        return tuple([_matched(n, get(n)) for n in CONDITION_NAMES if n not in skip])

    def to_dict(self) -> dict[str, Any]:
        """``{"values": {...}, "fixed_by": {...}}``; a missing value is ``null``."""
        return {"values": dict(self.values), "fixed_by": dict(self.fixed_by)}


def conditions_of(data: dict[str, Any]) -> ConditionSet:
    """Extract the class conditions of one benchmark record (``data`` is the record dict)."""
    values = {name: get(data) for name, get in CONDITIONS}
    fixed: dict[str, str] = {}
    definition = values.get("benchmark_definition")
    if definition not in (None, NOT_APPLICABLE):
        for name in SUITE_FIXED:
            if values[name] is MISSING:
                values[name] = f"fixed by {definition}"
                fixed[name] = definition
    return ConditionSet(values, fixed)


def key_id(key: tuple[tuple[str, Any], ...]) -> str:
    """Short stable id of a class key (first 10 hex digits of SHA-1 over its JSON-ish text)."""
    text = "|".join(f"{n}={v!r}" for n, v in key)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


@dataclass
class Split:
    """Why two records are not in one class: ``differ`` (condition -> (value a, value b)) and ``missing`` (condition -> which side lacks it)."""

    a: str
    b: str
    differ: dict[str, tuple[Any, Any]]
    missing: dict[str, str]

    @property
    def comparable(self) -> bool:
        """True when nothing differs and nothing is missing."""
        return not self.differ and not self.missing

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``{"a", "b", "comparable", "differ": {cond: [a, b]}, "missing": {cond: "a"|"b"|"both"}}``."""
        return {
            "a": self.a,
            "b": self.b,
            "comparable": self.comparable,
            "differ": {k: list(v) for k, v in self.differ.items()},
            "missing": dict(self.missing),
        }


def split(a_id: str, a: dict[str, Any], b_id: str, b: dict[str, Any], vary: Iterable[str] = ()) -> Split:
    """Which conditions keep records ``a`` and ``b`` apart (varied conditions ignored).

    A condition missing on either side is reported under ``missing`` — never
    as equal, even when both lack it.
    """
    skip = set(vary)
    ca, cb = conditions_of(a), conditions_of(b)
    differ: dict[str, tuple[Any, Any]] = {}
    missing: dict[str, str] = {}
    for name in CONDITION_NAMES:
        if name in skip:
            continue
        va, vb = ca.values.get(name), cb.values.get(name)
        if va is MISSING or vb is MISSING:
            missing[name] = "both" if va is MISSING and vb is MISSING else ("a" if va is MISSING else "b")
        elif match_value(name, va) != match_value(name, vb):
            differ[name] = (va, vb)
    return Split(a_id, b_id, differ, missing)


# (name, match_value(name, value)) by (name, type, value): a whole-KB compare builds some 8,000 keys of 15 pairs each
# from a few thousand distinct values. The type is part of the memo key because 1, 1.0 and True are equal keys but not
# equal inputs. Bounded so that a long-lived process over changing KBs cannot grow it without end.
_MATCHED: dict[tuple[str, type, Any], tuple[str, Any]] = {}
_MATCHED_MAX = 65536


def _matched(name: str, value: Any) -> tuple[str, Any]:
    """The class-key pair ``(name, match_value(name, value))``, remembered for hashable values."""
    memo_key = (name, type(value), value)
    try:
        return _MATCHED[memo_key]
    except KeyError:
        pass
    except TypeError:  # an unhashable value (a list or dict a record put there): computed every time
        return (name, match_value(name, value))
    if len(_MATCHED) >= _MATCHED_MAX:
        _MATCHED.clear()
    out = _MATCHED[memo_key] = (name, match_value(name, value))
    return out


def match_value(name: str, value: Any) -> Any:
    """The form condition ``name``'s ``value`` is compared in: an engine version by :func:`version_key`, other strings
    case- and whitespace-insensitively, numbers as floats; ``None`` (missing) stays ``None``."""
    if name == "engine_version" and (isinstance(value, str) or is_number(value)):
        return version_key(str(value))
    if is_number(value):
        return float(value)
    return value.strip().lower() if isinstance(value, str) else value
