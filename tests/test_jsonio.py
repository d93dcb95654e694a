"""Strict JSON reading: the orjson fast path must give exactly the strict parser's answer."""

from __future__ import annotations

import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from inferkb.jsonio import _SLOW, _fast_parse, parse_bytes

keys = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=20)
objects = st.dictionaries(keys, values, max_size=6)


@settings(max_examples=300, deadline=None)
@given(objects, st.booleans(), st.booleans())
def test_any_object_parses_to_itself(obj, indent, ascii_only):
    raw = json.dumps(obj, indent=2 if indent else None, ensure_ascii=ascii_only).encode()
    value, problem = parse_bytes(raw)
    assert problem is None and value == obj


@settings(max_examples=300, deadline=None)
@given(objects, keys, scalars, scalars)
def test_a_duplicated_key_is_always_caught(obj, key, first, second):
    body = json.dumps(obj)[1:-1]
    dup = f"{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(second)}"
    raw = ("{" + dup + (", " + body if body else "") + "}").encode()
    value, problem = parse_bytes(raw)
    assert value is None and problem.code == "duplicate-key"


@settings(max_examples=300, deadline=None)
@given(objects)
def test_fast_path_never_disagrees_with_the_strict_decoder(obj):
    raw = json.dumps(obj).encode()
    fast, compact, colons = _fast_parse(raw)
    assert fast is _SLOW or fast == json.loads(raw)
    if fast is not _SLOW and isinstance(fast, (dict, list)):
        assert compact == orjson.dumps(fast) and colons == raw.count(b":")


def test_big_integers_stay_exact():
    value, problem = parse_bytes(b'{"seed": 12345678901234567890123}')
    assert problem is None and value["seed"] == 12345678901234567890123


def test_escaped_duplicate_key_is_caught():
    value, problem = parse_bytes(b'{"a": 1, "\\u0061": 2}')
    assert problem.code == "duplicate-key"
