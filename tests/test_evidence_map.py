"""The shared evidence-map loader (inferkb.intake.evidence_map) and the three maps that go through it."""

from __future__ import annotations

import pytest

from inferkb.errors import InputError
from inferkb.intake import evidence_map as M
from inferkb.intake import llm_inference_bench_formats as L
from inferkb.intake import mlperf_base_models as B
from inferkb.intake import mlperf_weight_formats as W

COMMIT = "a2f5d66d17e8f75c02fd74dfe810ecca6a046696"


def test_entries_name_each_table_by_its_index() -> None:
    got = list(M.entries('[[x]]\na = "1"\n[[x]]\na = "2"\n', "x", path="m.toml"))
    assert got == [("x[0]", {"a": "1"}), ("x[1]", {"a": "2"})]


def test_a_map_without_the_table_has_no_entries() -> None:
    assert list(M.entries('title = "nothing"\n', "x", path="m.toml")) == []


def test_broken_toml_names_the_file() -> None:
    with pytest.raises(InputError, match="not valid TOML") as exc:
        list(M.entries("[[x]\n", "x", path="m.toml"))
    assert exc.value.path == "m.toml"


def test_a_table_key_that_is_not_an_array_of_tables_is_refused() -> None:
    with pytest.raises(InputError, match=r"expected \[\[x\]\] tables") as exc:
        list(M.entries('x = "one"\n', "x", path="m.toml"))
    assert exc.value.field == "x"


def test_an_item_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(InputError, match="expected a table") as exc:
        list(M.entries("x = [1]\n", "x", path="m.toml"))
    assert exc.value.field == "x[0]"


@pytest.mark.parametrize("value", [None, "", "   ", 3])
def test_required_strings_name_the_first_bad_key(value: object) -> None:
    e = {"a": "ok", "b": value}
    with pytest.raises(InputError, match="non-empty string 'b'") as exc:
        M.require_strings(e, ("a", "b"), "m.toml", "x[2]")
    assert (exc.value.path, exc.value.field) == ("m.toml", "x[2].b")


@pytest.mark.parametrize("commit", [None, "a2f5d66", COMMIT.upper(), COMMIT[:-1] + "g", COMMIT + "0"])
def test_a_commit_must_be_40_lower_case_hex_digits(commit: object) -> None:
    with pytest.raises(InputError, match="40 lower-case hex digits") as exc:
        M.require_commit({"commit": commit}, "m.toml", "x[0]")
    assert exc.value.field == "x[0].commit"


def test_a_pinned_commit_is_returned() -> None:
    assert M.require_commit({"commit": COMMIT}, "m.toml", "x[0]") == COMMIT


def test_the_label_map_refuses_a_label_that_is_not_a_table() -> None:
    # Before the shared loader, this map alone raised AttributeError (a traceback) on such a file.
    with pytest.raises(InputError, match="expected a table") as exc:
        B.parse_map('label = ["llama"]\n', path="labels.toml")
    assert (exc.value.path, exc.value.field) == ("labels.toml", "label[0]")


@pytest.mark.parametrize(
    ("parse", "table"), [(W.parse_map, "entry"), (L.parse_map, "group"), (B.parse_map, "label")], ids=["weight", "bench", "label"]
)
def test_each_map_reports_a_missing_string_through_the_shared_check(parse, table: str) -> None:
    with pytest.raises(InputError, match="expected a non-empty string") as exc:
        parse(f"[[{table}]]\n", path="m.toml")
    assert exc.value.path == "m.toml" and exc.value.field.startswith(f"{table}[0].")


def test_the_bundled_maps_load() -> None:
    assert W.evidence_map() and L.group_map() and B.label_map()


def test_both_format_maps_decide_with_the_shared_decision_type() -> None:
    assert W.Decision is L.Decision is M.Decision
    assert W.decide({"origin": "other"}, frozenset(), W.evidence_map()) == M.Decision("not-applicable")
