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
HARNESS = CORPUS / "harness"


def harness_file(rel: str) -> Path:
    """``../shared/corpus/harness/<rel>``; skips the test, naming the path, when the corpus file is absent."""
    path = HARNESS / rel
    if not path.is_file():
        pytest.skip(f"harness corpus file not found at {path}")
    return path


def import_with(fmt: str, paths, kb, **opts):
    """``IntakeResult`` of importer ``fmt`` on ``paths`` with ``IntakeOptions(**opts)``: parsed, nothing written."""
    from inferkb.intake import IntakeOptions, load_all

    return load_all()[fmt].parse([Path(p) for p in paths], IntakeOptions(**opts), kb)


def benchmarks_of(result) -> list[dict]:
    """The benchmark records of an ``IntakeResult`` (sources and other types left out)."""
    return [r for r in result.records if r["type"] == "benchmark"]


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


@pytest.fixture(autouse=True, scope="session")
def _load_cache_off():
    """The load cache (inferkb.store.cache) is off in every test but its own (they clear the variable): a test sees
    what the files say, and the CLI processes the tests start inherit the setting."""
    import os

    old = os.environ.get("INFERKB_NO_CACHE")
    os.environ["INFERKB_NO_CACHE"] = "1"
    yield
    if old is None:
        os.environ.pop("INFERKB_NO_CACHE", None)
    else:
        os.environ["INFERKB_NO_CACHE"] = old


@pytest.fixture
def caching(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caching on (the suite turns it off), in a folder of this test; files count as settled at once (no racy window)."""
    from inferkb.store import cache as load_cache

    folder = tmp_path / "cache"
    monkeypatch.delenv("INFERKB_NO_CACHE", raising=False)
    monkeypatch.setenv("INFERKB_CACHE_DIR", str(folder))
    monkeypatch.setattr(load_cache, "RACY_NS", -(10**18))
    return folder


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


@pytest.fixture(scope="session")
def bundled_site(tmp_path_factory):
    """The bundled KB's site, built once per test session with search: ``(out_dir, SiteBuild)``."""
    import inferkb
    from inferkb.site import build_site

    out = tmp_path_factory.mktemp("site") / "bundled"
    return out, build_site(inferkb.open(), out)


HOSTILE_NAME = 'Evil <script>window.__pwned = 1</script> "quoted" & <b>bold</b>'


def hostile_kb(root: Path) -> Path:
    """A bundled-schema KB whose records carry script text, an ``onerror`` attribute and ``javascript:`` URLs."""
    shutil.copytree(BUNDLED / "schemas", root / "schemas")
    shutil.copy2(BUNDLED / "kb.toml", root / "kb.toml")
    shutil.copy2(BUNDLED / "metrics.json", root / "metrics.json")
    src = json.loads((BUNDLED / "data" / "sources" / "repo-sglang.json").read_text())
    src.update(
        id="evil-source",
        name=HOSTILE_NAME,
        url="javascript:window.__pwned=2",
        archived_url="JaVa\tScript:window.__pwned=3",
        notes='<img src=x onerror="window.__pwned=4"> see javascript:alert(1)',
    )
    good = dict(src, id="good-source", name="A good source", url="https://example.org/report", archived_url=None, notes=None)
    eng = json.loads((BUNDLED / "data" / "engines" / "vllm.json").read_text())
    eng.update(sources=["evil-source", "good-source"], notes="</script><script>window.__pwned=5</script>", docs_url="https://docs.vllm.ai/")
    files = {
        "data/sources/evil-source.json": src,
        "data/sources/good-source.json": good,
        "data/engines/vllm.json": eng,
        "docs/hostile.md": (
            "# Hostile doc\n\n<script>window.__pwned=6</script>\n\n[click](javascript:window.__pwned=7) and "
            "[ok](https://example.org/) and [[engines/vllm]] and [[benchmarks/no-such-record]].\n"
        ),
    }
    for d in ("accelerators", "benchmarks", "models", "quantization", "interconnect"):
        (root / "data" / d).mkdir(parents=True, exist_ok=True)
    write_kb(root, files, schemas=False)
    return root


SITE_ANALYSIS = REPO / "tests" / "data" / "site_analysis" / "benchmarks.json"


def analysis_kb(root: Path) -> Path:
    """A KB with the bundled schemas and every bundled record except benchmarks, plus the hand-written
    benchmarks of ``tests/data/site_analysis/benchmarks.json`` (each its ``base`` updated with its own fields)."""
    shutil.copytree(BUNDLED / "schemas", root / "schemas")
    for name in ("kb.toml", "metrics.json"):
        shutil.copy2(BUNDLED / name, root / name)
    for d in (BUNDLED / "data").iterdir():
        if d.is_dir() and d.name != "benchmarks":
            shutil.copytree(d, root / "data" / d.name)
    spec = json.loads(SITE_ANALYSIS.read_text(encoding="utf-8"))
    (root / "data" / "sources" / f"{spec['source']['id']}.json").write_text(json.dumps(spec["source"], indent=2) + "\n", encoding="utf-8")
    bench = root / "data" / "benchmarks"
    bench.mkdir(parents=True)
    for fields in spec["records"]:
        record = {**json.loads(json.dumps(spec["base"])), **fields}
        (bench / f"{record['id']}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return root


def synth_kb(root: Path, records: int, seed: int = 0) -> Path:
    """A synthetic KB of ``records`` records at ``root`` from ``benchmarks/synth_kb.py`` (the benchmarks' generator)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("synth_kb", REPO / "benchmarks" / "synth_kb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(root, records, seed=seed)
    return root


def edit_record(path: Path, **fields) -> None:
    """Set ``fields`` at the top level of the record file ``path`` (rewritten with indent 2)."""
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data, indent=2))


def rewrite_cache_entry(cache, key: str, entry: list) -> None:
    """Store ``entry`` for ``key`` in an audit's cache file through its own API (valid header and checksum), keeping
    every other entry: what a later warm run reads is then exactly this entry."""
    for other in cache.entries:
        cache.keep(other)
    cache.put(key, entry)
    cache.save()
