"""Strict JSON reading: the orjson fast path must give exactly the strict parser's answer."""

from __future__ import annotations

import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from inferkb.jsonio import _SLOW, _fast_parse, dumps_record, parse_bytes

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


@settings(max_examples=300, deadline=None)
@given(objects)
def test_a_file_in_the_stores_layout_parses_to_itself(obj):
    raw = dumps_record(obj).encode()  # the layout the store writes; orjson's indent-2 form for most values
    fast, doc, _ = _fast_parse(raw)
    assert fast is _SLOW or fast == obj
    if doc is raw:  # taken by equality: only when the file is exactly orjson's indent-2 form
        assert orjson.dumps(fast, option=orjson.OPT_INDENT_2) + b"\n" == raw
    value, problem = parse_bytes(raw)
    assert problem is None and value == obj


@settings(max_examples=300, deadline=None)
@given(objects, keys, scalars, scalars)
def test_a_duplicated_key_in_canonical_layout_is_always_caught(obj, key, first, second):
    lines = [f"  {json.dumps(key, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for v in (first, second)]
    body = json.dumps(obj, indent=2, ensure_ascii=False)[1:-1].strip("\n")
    raw = ("{\n" + ",\n".join(lines + ([body] if body else [])) + "\n}\n").encode()
    value, problem = parse_bytes(raw)
    assert value is None and problem.code == "duplicate-key"


def test_a_canonical_file_is_its_own_serialisation():
    raw = b'{\n  "id": "x",\n  "n": [\n    1,\n    2.5\n  ]\n}\n'
    fast, doc, _ = _fast_parse(raw)
    assert fast == {"id": "x", "n": [1, 2.5]} and doc is raw


def test_a_big_integer_in_canonical_layout_stays_exact():
    value, problem = parse_bytes(b'{\n  "seed": 123456789012345678901\n}\n')
    assert problem is None and value["seed"] == 123456789012345678901


def test_a_deep_canonical_file_is_refused():
    from inferkb.jsonio import MAX_DEPTH

    value: object = 1
    for _ in range(MAX_DEPTH):
        value = [value]
    raw = orjson.dumps({"a": value}, option=orjson.OPT_INDENT_2) + b"\n"
    got, problem = parse_bytes(raw)
    assert got is None and problem.code == "invalid-json" and "deeper" in problem.message
    shallower = orjson.dumps({"a": value[0]}, option=orjson.OPT_INDENT_2) + b"\n"
    assert parse_bytes(shallower)[1] is None


def test_the_smallest_too_deep_canonical_file_is_refused():
    # Innermost an empty array, one one-letter key: the fewest bytes a canonical object nesting MAX_DEPTH + 1 deep
    # can have. The size bound in front of the deep-indent search must not let it through.
    from inferkb.jsonio import _DEEP_MIN_BYTES, MAX_DEPTH

    value: list = []
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    raw = orjson.dumps({"a": value}, option=orjson.OPT_INDENT_2) + b"\n"
    assert len(raw) >= _DEEP_MIN_BYTES  # about twice: closing brackets are indented too
    got, problem = parse_bytes(raw)
    assert got is None and problem.code == "invalid-json" and "deeper" in problem.message
