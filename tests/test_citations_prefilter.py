"""The citations audit's record pre-filter never clears a record that holds a placeholder trigger."""

from __future__ import annotations

import orjson
import pytest

import inferkb
from inferkb.audit import citations


@pytest.mark.parametrize("trigger", citations._TRIGGERS_LOWER + citations._TRIGGERS_EXACT)
def test_every_trigger_is_seen_in_either_case(trigger):
    for t in {trigger, trigger.upper()}:
        assert citations._may_hold_placeholder(b'{"id":"x","notes":"before ' + t + b' after"}'), t


def test_format_index_and_clean_record():
    assert citations._may_hold_placeholder(b'{"notes":"see {0} here"}')
    assert not citations._may_hold_placeholder(b'{"id":"nvidia-h100-sxm","notes":"measured at 700 W"}')


@pytest.mark.parametrize(
    "text",
    [
        "rate %s tok/s",
        "see {0}",
        "at ${HOST}",
        "{{ model_name }}",
        "TODO: fill",
        "FIXME later",
        "TBD",
        "http://host.example.com/x",
        "a.invalid",
        "Lorem ipsum",
    ],
)
def test_every_placeholder_the_walk_finds_passes_the_prefilter(text):

    hits = citations.placeholder_hits(text)
    assert hits, text  # the walk itself finds it
    assert citations._may_hold_placeholder(orjson.dumps({"id": "b-1", "notes": text})), text


def test_prefilter_clears_the_real_records_that_hold_none(research_kb):
    # Neither real KB holds a placeholder; the filter must still agree with the field walk on every record.
    for kb in (inferkb.open(research_kb), inferkb.open()):
        for rec in kb.records.values():
            if citations.placeholders(rec, list(citations.iter_strings(rec.data))):
                assert citations._may_hold_placeholder(orjson.dumps(rec.data)), rec.id
