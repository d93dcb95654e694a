"""query_index.split_words: the digit-run version marks exactly the letter/digit joins the lookaround regex marks."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BUNDLED
from inferkb import query_index
from inferkb.query_index import _LETTER_DIGIT, ZWSP, split_words


def reference(text: str) -> str:
    return _LETTER_DIGIT.sub(ZWSP, text)


# Letters, ASCII and other decimal digits (Arabic-Indic, fullwidth), superscripts (numeric but not decimal: letters to
# the regex), underscores, combining marks, spaces and punctuation.
ALPHABET = st.sampled_from(list("aZé7٣７²_\u0301 -.\n") + ["Ω", "中", "Ⅻ"])


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40) | st.text(max_size=40))
def test_same_marks_as_the_lookaround_regex(text):
    assert split_words(text) == reference(text)


def test_examples():
    assert split_words("H100") == f"H{ZWSP}100"
    assert split_words("llama3_1-70b") == f"llama{ZWSP}3_1-70{ZWSP}b"
    assert split_words("a1b2") == f"a{ZWSP}1{ZWSP}b{ZWSP}2"
    assert split_words("no digits here") == "no digits here"
    assert split_words("") == ""


def test_bundled_record_bodies_unchanged():
    # The indexed text of every bundled record is what the reference regex gives (the catalogue FORMAT stays "1").
    for path in sorted((BUNDLED / "data").glob("*/*.json"))[::7]:
        out: list[str] = []
        query_index._flatten_values(json.loads(Path(path).read_text(encoding="utf-8")), out)
        text = "\n".join(out)
        assert split_words(text) == reference(text), path
