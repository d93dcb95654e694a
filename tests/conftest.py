"""Shared test helpers: where the real corpus lives, and tiny throwaway KBs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
RESEARCH = CORPUS / "inference-research"
BUNDLED = REPO / "src" / "inferkb" / "kb"

# A permissive schema per type so rule tests do not depend on the bundled schemas' details.
MINI_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["id", "type", "name"],
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string"},
        "name": {"type": "string"},
        "confidence": {"type": "number"},
        "sources": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.fixture(autouse=True, scope="session")
def _query_catalogue_in_tmp(tmp_path_factory):
    """Query catalogues (inferkb.query_index) of every test KB go to a temporary folder, never to ~/.cache; the CLI
    processes the tests start inherit the variable."""
    import os

    old = os.environ.get("INFERKB_CACHE_DIR")
    os.environ["INFERKB_CACHE_DIR"] = str(tmp_path_factory.mktemp("catalogues"))
    yield
    if old is None:
        os.environ.pop("INFERKB_CACHE_DIR", None)
    else:
        os.environ["INFERKB_CACHE_DIR"] = old


@pytest.fixture
def research_kb() -> Path:
    """Path of the real inference-research corpus sample (skips when ../shared is absent)."""
    if not RESEARCH.is_dir():
        pytest.skip(f"shared corpus not found at {RESEARCH}")
    return RESEARCH


def write_kb(root: Path, files: dict[str, object], *, schemas: bool = True, toml: str | None = None) -> Path:
    """Create a KB at ``root``. ``files`` maps ``"data/<dir>/<name>"`` to a dict (dumped as JSON), str or bytes.

    With ``schemas`` every built-in type gets :data:`MINI_SCHEMA`; ``toml`` is written as kb.toml.
    """
    from inferkb.profile import BUILTIN_TYPES

    (root / "data").mkdir(parents=True, exist_ok=True)
    if schemas:
        (root / "schemas").mkdir(exist_ok=True)
        for t in BUILTIN_TYPES:
            (root / "schemas" / f"{t.name}.schema.json").write_text(json.dumps(MINI_SCHEMA))
    if toml is not None:
        (root / "kb.toml").write_text(toml)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root


def rec(type_name: str, rid: str, **fields) -> dict:
    """A minimal record dict of ``type_name`` with id ``rid``."""
    base = {
        "id": rid,
        "type": type_name,
        "name": rid.replace("-", " "),
        "status": "draft",
        "confidence": 0.5,
        "updated": "2026-01-01",
        "sources": [],
    }
    base.update(fields)
    return base


@pytest.fixture
def bundled_copy(tmp_path) -> Path:
    """A writable copy of the bundled KB."""
    dest = tmp_path / "kb"
    shutil.copytree(BUNDLED, dest)
    return dest
