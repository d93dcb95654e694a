"""The synthetic KB generator (benchmarks/synth_kb.py) writes KBs that validate and whose references resolve."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import pytest

import inferkb

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "inference-research"


def _load_synth():
    spec = importlib.util.spec_from_file_location("synth_kb", REPO / "benchmarks" / "synth_kb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


synth = _load_synth()


@pytest.fixture(scope="module")
def kb150(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "kb"
    synth.generate(out, 150, seed=7)
    return out


def _files(root: Path) -> dict[str, dict]:
    """{dir/id: record} read with the stdlib, independently of inferkb's store."""
    return {f"{p.parent.name}/{p.stem}": json.loads(p.read_text(encoding="utf-8")) for p in (root / "data").glob("*/*.json")}


def test_generator_writes_exactly_the_requested_number_of_record_files(kb150: Path) -> None:
    assert len(list((kb150 / "data").glob("*/*.json"))) == 150


def test_generated_kb_validates_with_zero_findings_of_error_severity(kb150: Path) -> None:
    report = inferkb.open(kb150).validate()
    errors = [f for f in report.findings if f.severity == "error"]
    assert errors == []


def test_every_source_id_and_reference_field_resolves(kb150: Path) -> None:
    # Reference fields come from the copied kb.toml, resolved here without inferkb's own reference check.
    profile = tomllib.loads((kb150 / "kb.toml").read_text(encoding="utf-8"))["types"]
    records = _files(kb150)
    ids_by_type: dict[str, set[str]] = {}
    for key, rec in records.items():
        ids_by_type.setdefault(rec["type"], set()).add(key.split("/", 1)[1])
    all_ids = set().union(*ids_by_type.values())
    unresolved = []
    for key, rec in records.items():
        refs = {"sources": "source", **profile[rec["type"]].get("refs", {})}
        for fld, target in refs.items():
            value = rec.get(fld)
            for ref in [value] if isinstance(value, str) else (value or []):
                pool = all_ids if target == "*" else ids_by_type.get(target, set())
                if ref not in pool:
                    unresolved.append((key, fld, ref))
    assert unresolved == []


def test_ids_are_unique_across_types(kb150: Path) -> None:
    stems = [p.stem for p in (kb150 / "data").glob("*/*.json")]
    assert len(stems) == len(set(stems))


def test_benchmarks_are_the_largest_share_and_every_referenced_type_is_present(kb150: Path) -> None:
    counts: dict[str, int] = {}
    for rec in _files(kb150).values():
        counts[rec["type"]] = counts.get(rec["type"], 0) + 1
    assert max(counts, key=counts.get) == "benchmark"
    for needed in ("source", "engine", "accelerator", "interconnect", "quantization", "model"):
        assert counts.get(needed, 0) >= 1, needed


def test_same_seed_gives_identical_files(tmp_path: Path) -> None:
    synth.generate(tmp_path / "a", 150, seed=3)
    synth.generate(tmp_path / "b", 150, seed=3)
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b


def test_generating_into_an_existing_kb_is_refused(kb150: Path) -> None:
    with pytest.raises(FileExistsError):
        synth.generate(kb150, 150)


def test_corpus_like_kb_has_no_kb_toml_and_passes_the_corpus_schemas(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    synth.generate(tmp_path / "c", 150, seed=1, corpus_like=True)
    kb = inferkb.open(tmp_path / "c")
    assert kb.profile.origin == "built-in"
    schema_errors = [f for f in kb.validate().findings if f.code == "KB101"]
    assert schema_errors == []
