"""The byte pre-filter in front of rule KB112 (``urls.may_hold_unsafe_url``) never hides a finding.

The walk (``unsafe_urls(..., prefilter=False)``) is the reference: for any value,
the pre-filtered result must be the same, and a record the loader marks as clear
must have no finding. Values are built from the pieces that make the filter's
edge cases: the three schemes in mixed case, the non-ASCII letters Python's
case-insensitive match accepts for ASCII ones, the junk a browser drops, colons,
quotes and backslashes.
"""

from __future__ import annotations

import json
import re
import sys

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

import inferkb
from inferkb import urls
from inferkb.jsonio import parse_bytes_compact

_EVERY_CHARACTER = "".join(map(chr, range(sys.maxunicode + 1)))


def _case_insensitive_matches(letter: str) -> set[str]:
    return {m.group() for m in re.finditer(letter, _EVERY_CHARACTER, re.IGNORECASE)}


def test_letter_table_is_what_python_matches_case_insensitively():
    for letter in sorted(set("".join(urls.DANGEROUS_SCHEMES))):
        byte_class = urls._LETTER.get(letter, f"[{letter}{letter.upper()}]".encode())
        accepted = re.compile(byte_class + b"$")
        expected = _case_insensitive_matches(letter)
        # Every character that matches the letter is accepted in UTF-8 ...
        assert all(accepted.match(ch.encode()) for ch in expected), letter
        # ... and nothing else of the Latin blocks is.
        others = {chr(c) for c in range(0x250)} - expected
        assert not [ch for ch in others if accepted.match(ch.encode())], letter


_PIECES = st.sampled_from(
    [
        "javascript",
        "JavaScript",
        "JAVA",
        "script",
        "vbscript",
        "VBScript",
        "data",
        "DATA",
        "Data",
        "java\u017fcript",
        "vb\u017fcr\u0131pt",
        "javascr\u0130pt",
        ":",
        ": ",
        "text/html,",
        ";base64,",
        "http",
        "https://example.org/a:b",
        " ",
        "\t",
        "\n",
        "\r",
        "\x00",
        "\x01",
        "\x1f",
        "\x7f",
        "\b",
        "\f",
        '"',
        '\\"',
        "\\",
        "\\t",
        "x",
        "Note",
        "é",
        "\u0142",
        "\u2028",
    ]
)
_TEXT = st.lists(_PIECES, max_size=8).map("".join)
_KEYS = st.sampled_from(["url", "docs_url", "links", "href", "notes", "name", "link", "urls", "x"])
_VALUES = st.recursive(
    _TEXT | st.integers(-5, 5) | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


_JUNK = st.lists(st.sampled_from([" ", "\t", "\n", "\r", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f"]), max_size=3).map("".join)
_LETTERS = {"s": "sS\u017f", "i": "iI\u0130\u0131"}


@st.composite
def _scheme_like(draw) -> str:
    """A string that is (or nearly is) a dangerous URL: junk, a scheme letter by letter with junk between, junk, ':'."""
    word = draw(st.sampled_from(sorted(urls.DANGEROUS_SCHEMES) + ["javascrip", "dat", "vbscrip"]))
    out = [draw(_JUNK)]
    for ch in word:
        out.append(draw(st.sampled_from(_LETTERS.get(ch, ch + ch.upper()))))
        if draw(st.integers(0, 3)) == 0:
            out.append(draw(_JUNK))
    out.append(draw(_JUNK))
    out.append(draw(st.sampled_from([":", ";", ":text/html,x", ":alert(1)", ":;base64,", ""])))
    return "".join(out)


@settings(max_examples=600, deadline=None)
@given(_KEYS, _scheme_like())
def test_prefilter_keeps_every_obfuscated_scheme(key, text):
    for data in ({key: text}, {key: [text]}, {"nested": {key: text}}):
        reference = urls.unsafe_urls(data, prefilter=False)
        assert urls.unsafe_urls(data) == reference
        raw = json.dumps(data, indent=2, ensure_ascii=False).encode()
        _, _, compact, colons = parse_bytes_compact(raw)
        if reference:
            assert compact is None or urls.may_hold_unsafe_url(compact, colons)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_prefilter_never_changes_the_result(data):
    reference = urls.unsafe_urls(data, prefilter=False)
    assert urls.unsafe_urls(data) == reference
    if reference:
        assert urls.may_hold_unsafe_url(orjson.dumps(data))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5), st.booleans())
def test_loader_bytes_never_clear_a_record_with_a_finding(data, pretty):
    raw = (json.dumps(data, indent=2, ensure_ascii=False) if pretty else json.dumps(data)).encode()
    value, problem, compact, colons = parse_bytes_compact(raw)
    assert problem is None and value == data
    if compact is not None and not urls.may_hold_unsafe_url(compact, colons):
        assert urls.unsafe_urls(data, prefilter=False) == []


def test_obfuscated_schemes_are_reported_after_loading(tmp_path):
    # One suspicious value per record: the loader's pre-filter decides per record.
    kb_dir = tmp_path / "kb"
    (kb_dir / "data" / "sources").mkdir(parents=True)
    values = {
        "src-tab": ("url", " Java\tScript:alert(1)"),
        "src-data": ("archived_url", "DATA:text/html,<b>x</b>"),
        "src-long-s": ("notes", "vb\u017fcript:msgbox(1)"),
        "src-escaped-nul": ("notes", "\x00javascript:alert(2)"),
        "src-clean": ("notes", "see https://example.org/a for the data: all of it"),
    }
    for rid, (field, value) in values.items():
        record = {"id": rid, "type": "source", "title": rid, field: value}
        (kb_dir / "data" / "sources" / f"{rid}.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    kb = inferkb.open(kb_dir)
    found = {(f.record, f.field) for f in kb.validate().findings if f.code == "KB112"}
    assert found == {
        ("sources/src-tab", "url"),
        ("sources/src-data", "archived_url"),
        ("sources/src-long-s", "notes"),
        ("sources/src-escaped-nul", "notes"),
    }


def test_prefilter_flags_each_non_ascii_letter_and_each_scheme():
    # The lead-byte shortcut (0xC5, 0xC4) and the one-regex scheme search must still let each case through.
    padding = {"notes": "a note: long enough to hold a colon that ends no key", "title": "x" * 200}
    for text in ("java\u017fcript:x", "javascr\u0130pt:x", "vbscr\u0131pt:x", "JavaScript:x", "VBScript:x", "Data:text/html,x"):
        doc = orjson.dumps({**padding, "url": text})
        assert urls.may_hold_unsafe_url(doc), text
        assert urls.may_hold_unsafe_url(orjson.dumps({**padding, "url": text}, option=orjson.OPT_INDENT_2) + b"\n"), text
    assert not urls.may_hold_unsafe_url(orjson.dumps({**padding, "url": "https://example.org/\u0142\u00e9"}))
