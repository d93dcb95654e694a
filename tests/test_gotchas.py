"""Known traps: the bundled gotcha records are sourced and point at real records, and every record a gotcha names in
``affects`` shows it (``inferkb show`` text and JSON, the site's record page), while the gotcha type gets an index."""

from __future__ import annotations

import json
import subprocess
import sys

import inferkb
from conftest import rec, write_kb
from inferkb.record_view import record_document, summary_lines
from inferkb.site import build_site
from inferkb.traps import known_traps


def _gotcha(gid: str, affects: list[str], severity: str | None = "minor", **fields) -> dict:
    extra = {"severity": severity} if severity else {}
    return rec("gotcha", gid, affects=affects, symptom=f"symptom of {gid}", workaround=f"workaround of {gid}", **extra, **fields)


def _small_kb(tmp_path):
    return write_kb(
        tmp_path / "kb",
        {
            "data/engines/e1.json": rec("engine", "e1"),
            "data/engines/e2.json": rec("engine", "e2"),
            "data/engines/twin.json": rec("engine", "twin"),
            "data/models/twin.json": rec("model", "twin"),
            "data/gotchas/g-minor.json": _gotcha("g-minor", ["e1"], "minor", name="A minor trap"),
            "data/gotchas/g-major.json": _gotcha("g-major", ["engines/e1", "twin"], "major", name="Z major trap"),
            "data/gotchas/g-other.json": _gotcha("g-other", ["e2"], None),
        },
    )


# ---- the bundled records ----------------------------------------------------------


def test_bundled_kb_has_sourced_gotchas_whose_affects_all_resolve():
    kb = inferkb.open()
    gotchas = list(kb.by_type("gotcha"))
    assert len(gotchas) >= 6
    for g in gotchas:
        assert g.data["sources"], g.key
        for sid in g.data["sources"]:
            src = kb.resolve(sid, "source")
            assert src is not None and src.data["url"].startswith("https://"), (g.key, sid)
        assert g.data.get("affects"), g.key
        for ref in g.data["affects"]:
            assert kb.resolve(ref) is not None, f"{g.key}: affects {ref!r} names no single record"
        assert g.data["symptom"] and g.data.get("root_cause") and g.data.get("workaround"), g.key


def test_bundled_gotchas_validate_without_findings():
    kb = inferkb.open()
    keys = {g.key for g in kb.by_type("gotcha")}
    assert not [f for f in kb.validate().findings if f.record in keys]


# ---- the reverse of affects ---------------------------------------------------------


def test_known_traps_follow_bare_ids_and_dir_ids_worst_severity_first(tmp_path):
    kb = inferkb.open(_small_kb(tmp_path))
    assert [g.id for g in known_traps(kb, kb.get("engines/e1"))] == ["g-major", "g-minor"]
    assert [g.id for g in known_traps(kb, kb.get("engines/e2"))] == ["g-other"]


def test_an_id_two_types_share_names_neither_record(tmp_path):
    kb = inferkb.open(_small_kb(tmp_path))
    assert known_traps(kb, kb.get("engines/twin")) == []
    assert known_traps(kb, kb.get("models/twin")) == []


def test_show_text_and_json_list_the_known_traps(tmp_path):
    kb = inferkb.open(_small_kb(tmp_path))
    text = "\n".join(summary_lines(kb, kb.get("engines/e1")))
    assert "known traps" in text
    assert text.index("[major] gotchas/g-major  Z major trap") < text.index("[minor] gotchas/g-minor  A minor trap")
    assert record_document(kb, kb.get("engines/e1"))["computed"]["known_traps"] == ["gotchas/g-major", "gotchas/g-minor"]
    assert "known traps" not in "\n".join(summary_lines(kb, kb.get("models/twin")))
    assert record_document(kb, kb.get("models/twin"))["computed"]["known_traps"] == []


def test_cli_show_of_a_bundled_engine_names_its_traps():
    proc = subprocess.run([sys.executable, "-m", "inferkb", "show", "sglang"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "known traps" in proc.stdout and "gotchas/sglang-concurrency-is-measured-average" in proc.stdout


# ---- the site ---------------------------------------------------------------------


def test_site_record_page_lists_known_traps_and_gotchas_get_an_index(tmp_path):
    kb = inferkb.open(_small_kb(tmp_path))
    build_site(kb, tmp_path / "out", search=False)
    out = tmp_path / "out"
    e1 = (out / "engines" / "e1.html").read_text(encoding="utf-8")
    section = e1.split('id="known-traps"', 1)[1].split("</section>", 1)[0]
    assert section.index('href="../gotchas/g-major.html"') < section.index('href="../gotchas/g-minor.html"')
    assert "symptom of g-major" in section and "Workaround: workaround of g-major" in section
    assert 'id="known-traps"' not in (out / "models" / "twin.html").read_text(encoding="utf-8")
    index = (out / "gotchas" / "index.html").read_text(encoding="utf-8")
    assert 'href="g-major.html"' in index and 'href="g-minor.html"' in index and 'href="g-other.html"' in index
    assert ">severity<" in index and 'href="../engines/e1.html"' in index  # the severity and affects columns


def test_bundled_site_shows_traps_on_affected_records(bundled_site):
    out, _ = bundled_site
    kb = inferkb.open()
    for key in ("engines/vllm", "quantization/w4a16", "engines/llama-cpp"):
        html = (out / f"{key}.html").read_text(encoding="utf-8")
        section = html.split('id="known-traps"', 1)[1].split("</section>", 1)[0]
        for g in known_traps(kb, kb.get(key)):
            assert f'href="../{g.key}.html"' in section, (key, g.key)
    assert (out / "gotchas" / "index.html").is_file()
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "inferkb", "show", "w4a16", "--format", "json"], capture_output=True, text=True, timeout=300
        ).stdout
    )
    assert "gotchas/vllm-flashinfer-b12x-moe-w4a16-runs-as-w4a4" in doc["computed"]["known_traps"]
