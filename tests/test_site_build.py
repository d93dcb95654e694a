"""The static site as files: every page there, every internal link resolving, escaping, CSP, docs, atomic output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import inferkb
from conftest import BUNDLED, hostile_kb, write_kb
from inferkb.errors import UsageError
from inferkb.site import CSP, MARKER, build_site
from inferkb.site.data import CONDITION_LABELS
from inferkb.site.serve import resolve_path


class _Page(HTMLParser):
    """Collects links, ids, script tags and the CSP meta of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []
        self.csp: str | None = None
        self.anchors: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(("a", a["href"]))
            self.anchors.append(a["href"])
        if tag == "link" and "href" in a:
            self.links.append(("link", a["href"]))
        if tag in ("script", "img") and "src" in a:
            self.links.append((tag, a["src"]))
        if tag == "script":
            self.scripts.append(a)
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = a.get("content")


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def parse_site(site: Path) -> dict[Path, _Page]:
    """Every HTML page of a built site (Pagefind's own files aside), parsed."""
    return {p: parse(p) for p in site.rglob("*.html") if "pagefind" not in p.parts}


def check_links(site: Path, pages: dict[Path, _Page] | None = None) -> tuple[int, list[str]]:
    """Every internal href/src of every page resolves to a file of the site (and a #fragment to an id there)."""
    pages = pages if pages is not None else parse_site(site)
    broken, checked = [], 0
    for path, page in pages.items():
        for _tag, href in page.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc:
                continue  # external links are not ours to check offline
            checked += 1
            if parts.path.startswith("/"):
                target = site / unquote(parts.path.lstrip("/"))
            elif parts.path:
                target = (path.parent / unquote(parts.path)).resolve()
            else:
                target = path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or site.resolve() not in target.resolve().parents:
                broken.append(f"{path.relative_to(site)}: {href}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = (pages.get(target) or parse(target)).ids
                if parts.fragment not in ids:
                    broken.append(f"{path.relative_to(site)}: {href} (no id {parts.fragment!r})")
    return checked, broken


def test_every_record_has_a_page(bundled_site):
    out, result = bundled_site
    kb = inferkb.open()
    for rec in kb.records.values():
        assert (out / rec.dir / f"{rec.id}.html").is_file(), rec.key
    assert result.records == len(kb.records)
    for page in ("index.html", "gaps.html", "roofline.html", "search.html", "404.html", "docs/index.html"):
        assert (out / page).is_file(), page
    assert (out / MARKER).is_file()


@pytest.fixture(scope="module")
def bundled_pages(bundled_site):
    return parse_site(bundled_site[0])


def test_every_internal_link_resolves(bundled_site, bundled_pages):
    out, _ = bundled_site
    checked, broken = check_links(out, bundled_pages)
    assert checked > 10_000
    assert broken == []


def test_no_inline_script_and_csp_on_every_page(bundled_pages):
    for path, page in bundled_pages.items():
        assert page.csp == CSP, path
        for script in page.scripts:
            assert script.get("src") or script.get("type") == "application/json", f"{path}: inline script {script}"
    assert "'unsafe-inline'" not in CSP and "'unsafe-eval'" not in CSP
    assert "script-src 'self'" in CSP


def test_assets_are_served_from_the_site(bundled_site):
    out, _ = bundled_site
    bundle = (out / "assets" / "vega-embed.js").read_text(encoding="utf-8")
    assert "vegaEmbed" in bundle and len(bundle) > 100_000
    assert (out / "pagefind" / "pagefind-ui.js").is_file()
    for path in (out / "index.html", out / "roofline.html"):
        text = path.read_text(encoding="utf-8")
        assert "cdn" not in text.lower() and "//unpkg" not in text


def test_record_page_weight_under_100_kb(bundled_site):
    out, _ = bundled_site
    sizes = {p: p.stat().st_size for rec in inferkb.open().records.values() if (p := out / rec.dir / f"{rec.id}.html")}
    assert sizes
    worst = max(sizes, key=sizes.get)
    assert sizes[worst] <= 100 * 1024, f"{worst} is {sizes[worst]} bytes"


def test_benchmark_page_shows_arms_deltas_and_absent_conditions(bundled_site):
    out, _ = bundled_site
    key = "benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b"
    html = (out / f"{key}.html").read_text(encoding="utf-8")
    # mtp-2 mean 1578 ms vs baseline 894 ms: (1578 - 894) / 894 = +76.5 %; p99 1670 vs 907: +84.1 %.
    assert "+76.5%" in html and "+84.1%" in html
    # The record states no concurrency (null, with a condition_gaps reason): shown as absent, with that reason.
    data = json.loads((BUNDLED / "data" / f"{key}.json").read_text(encoding="utf-8"))
    assert data["conditions"]["concurrency"] is None
    row = re.search(r'<tr class="absent"><th scope="row">concurrency</th>(.*?)</tr>', html, re.S)
    assert row and "absent" in row.group(1)
    reason = data["condition_gaps"]["concurrency"]["reason"]
    assert reason.replace("'", "&#39;").replace('"', "&#34;") in row.group(1)
    assert 'data-pagefind-filter="accelerator">nvidia-h100-sxm<' in html
    # Nulls without a reason that need none are quiet rows with the note saying why (inferkb.condition_notes).
    row = re.search(r'<tr class="quiet"><th scope="row">request rate[^<]*</th>(.*?)</tr>', html, re.S | re.I)
    assert row and "the load is given as batch_size=8" in row.group(1) and "absent-mark" not in row.group(1)


def test_documented_load_condition_gap_is_marked_absent(bundled_site):
    out, _ = bundled_site
    finding = next(f for f in inferkb.open().audit("load-conditions").findings if f.code == "KB304")
    html = (out / f"{finding.record}.html").read_text(encoding="utf-8")
    label = CONDITION_LABELS[finding.extra["condition"]]
    assert re.search(rf'<th scope="row">{re.escape(label)}</th><td><strong class="absent-mark">✗ absent \(documented gap\)', html)


def test_record_pages_list_back_references(bundled_site):
    out, _ = bundled_site
    html = (out / "models" / "qwen3-next-80b-a3b.html").read_text(encoding="utf-8")
    assert 'href="../benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.html"' in html and "via model_id" in html
    # An accelerator cited by more benchmarks than a page should list: counted, with a link to the filtered table.
    kb = inferkb.open()
    citing = sum(1 for r in kb.by_type("benchmark") if "nvidia-h100-sxm" in (r.data.get("accelerator_ids") or []))
    acc = (out / "accelerators" / "nvidia-h100-sxm.html").read_text(encoding="utf-8")
    assert f"{citing} benchmark records via <code>accelerator_ids</code>" in acc
    assert 'href="../benchmarks/index.html?accelerator=nvidia-h100-sxm"' in acc
    assert "tier-A" in acc  # the NVIDIA datasheet is a primary vendor document


def test_home_reports_the_load_condition_headline(bundled_site):
    out, _ = bundled_site
    kb = inferkb.open()
    figures = kb.audit("load-conditions").figures["load-conditions"]
    html = (out / "index.html").read_text(encoding="utf-8")
    n_bench = sum(1 for _ in kb.by_type("benchmark"))
    assert f"<strong>{len(figures['complete'])} of {n_bench}</strong> benchmark records establish all seven" in html


def test_type_index_offers_only_narrowing_facets(bundled_site):
    out, _ = bundled_site
    html = (out / "benchmarks" / "index.html").read_text(encoding="utf-8")
    body = html.split('<table id="records"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    total = body.count("<tr")
    assert total == sum(1 for _ in inferkb.open().by_type("benchmark"))
    for select in re.findall(r'<select id="flt-([a-z]+)"[^>]*>(.*?)</select>', html, re.S):
        counts = [int(n) for n in re.findall(r"\((\d+)\)</option>", select[1])]
        assert counts and min(counts) < total, f"facet {select[0]} cannot narrow the table"


def test_hostile_record_text_is_escaped_and_its_urls_not_linked(tmp_path):
    kb = inferkb.open(hostile_kb(tmp_path / "kb"))
    build_site(kb, tmp_path / "out", search=False)
    page_path = tmp_path / "out" / "sources" / "evil-source.html"
    html = page_path.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror" in html
    page = parse(page_path)
    assert not [h for h in page.anchors if "script" in h.lower().replace("\t", "")]
    assert "javascript:window.__pwned=2" in html  # shown as text
    eng = (tmp_path / "out" / "engines" / "vllm.html").read_text(encoding="utf-8")
    assert "</script><script>window.__pwned=5" not in eng
    assert parse(tmp_path / "out" / "engines" / "vllm.html").anchors.count("https://docs.vllm.ai/") == 1
    assert 'href="../sources/evil-source.html"' in eng


def test_validate_reports_javascript_urls(tmp_path):
    kb = inferkb.open(hostile_kb(tmp_path / "kb"))
    found = {(f.record, f.field) for f in kb.validate().findings if f.code == "KB112"}
    assert found == {
        ("sources/evil-source", "url"),
        ("sources/evil-source", "archived_url"),
    }
    # The notes mention "javascript:" inside prose, which no browser would follow: not reported.


def test_docs_render_markdown_without_raw_html(tmp_path):
    kb = inferkb.open(hostile_kb(tmp_path / "kb"))
    result = build_site(kb, tmp_path / "out", search=False)
    html = (tmp_path / "out" / "docs" / "hostile.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned=6" not in html and "&lt;script&gt;window.__pwned=6" in html
    assert 'href="javascript' not in html and "[click](javascript:window.__pwned=7)" in html
    assert '<a href="https://example.org/">ok</a>' in html
    assert '<a class="cite" href="../engines/vllm.html">engines/vllm</a>' in html
    assert "benchmarks/no-such-record (unresolved)" in html
    assert result.unresolved_citations == ["docs/hostile: benchmarks/no-such-record"]


def test_unknown_fields_and_types_render_generically(tmp_path):
    rec = {
        "id": "b1",
        "type": "benchmark",
        "name": "b1",
        "status": "draft",
        "origin": "harness-intake",
        "experimental": True,
        "per_accelerator": {"value": 12.5, "unit": "tok/s", "divisor": 8, "divisor_basis": "accelerator_count"},
        "brand_new_field_gb": 3,
        "sources": [],
    }
    kb_root = write_kb(tmp_path / "kb", {"data/benchmarks/b1.json": rec, "data/papers/p1.json": {"id": "p1", "type": "paper", "name": "P"}})
    build_site(inferkb.open(kb_root), tmp_path / "out", search=False)
    html = (tmp_path / "out" / "benchmarks" / "b1.html").read_text(encoding="utf-8")
    assert 'brand new field <span class="unit">(GB)</span>' in html
    assert "divisor basis" in html and "accelerator_count" in html
    assert 'data-pagefind-filter="experimental">yes<' in html
    assert 'data-pagefind-filter="origin">harness-intake<' in html
    assert (tmp_path / "out" / "papers" / "p1.html").is_file()


def test_out_dir_that_is_not_a_site_is_refused(tmp_path):
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an inferkb site"):
        build_site(inferkb.open(), tmp_path / "precious", search=False)
    assert (tmp_path / "precious" / "keep.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["precious"]  # no temp directory left behind


def test_rebuild_replaces_an_earlier_build(tmp_path):
    kb_root = write_kb(tmp_path / "kb", {"data/engines/e1.json": {"id": "e1", "type": "engine", "name": "One", "status": "draft"}})
    out = tmp_path / "out"
    build_site(inferkb.open(kb_root), out, search=False)
    (kb_root / "data" / "engines" / "e1.json").unlink()
    write_kb(kb_root, {"data/engines/e2.json": {"id": "e2", "type": "engine", "name": "Two", "status": "draft"}}, schemas=False)
    build_site(inferkb.open(kb_root), out, search=False)
    assert (out / "engines" / "e2.html").is_file() and not (out / "engines" / "e1.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb", "out"]


def test_corpus_site_builds_and_links_resolve(research_kb, tmp_path):
    result = build_site(inferkb.open(research_kb), tmp_path / "out", search=False)
    n = len(inferkb.open(research_kb).records)
    assert result.records == n
    _, broken = check_links(tmp_path / "out")
    assert broken == []


def test_cli_site_build_json(tmp_path):
    kb = write_kb(tmp_path / "kb", {"data/engines/e1.json": {"id": "e1", "type": "engine", "name": "One", "status": "draft"}})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inferkb",
            "site",
            "build",
            "--kb",
            str(kb),
            "--out",
            str(tmp_path / "s"),
            "--no-search",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["records"] == 1 and doc["pages"] >= 5 and doc["search"] is False
    assert (tmp_path / "s" / "engines" / "e1.html").is_file()


def test_cli_site_build_bad_kb_exits_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "site", "build", "--kb", str(tmp_path / "nope"), "--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


def test_serve_never_maps_a_path_outside_the_site(tmp_path):
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "index.html").write_text("home")
    (site / "a" / "p.html").write_text("p")
    (tmp_path / "secret.txt").write_text("secret")
    (site / "leak.txt").symlink_to(tmp_path / "secret.txt")
    assert resolve_path(site, "/") == (site / "index.html").resolve()
    assert resolve_path(site, "/a/p.html?x=1#f") == (site / "a" / "p.html").resolve()
    for bad in (
        "/../secret.txt",
        "/a/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/a/%2E%2E/%2e%2e/secret.txt",
        "/leak.txt",
        "/a",
        "/..%5csecret.txt",
        "/%00",
    ):
        assert resolve_path(site, bad) is None, bad


def test_bundled_kb_docs_cite_existing_records():
    kb = inferkb.open()
    text = (BUNDLED / "docs" / "reading-a-benchmark-record.md").read_text(encoding="utf-8")
    refs = re.findall(r"\[\[([^\]]+)\]\]", text)
    assert refs and all(kb.resolve(r) is not None for r in refs)


def test_registered_extra_page_is_built_linked_and_escaped(tmp_path, monkeypatch):
    from inferkb import plugins
    from inferkb.site import extra

    # A registry holding only this test's page (the built-in analysis pages are tested on their own).
    monkeypatch.setattr(plugins, "SITE_PAGES", plugins.ExtensionPoint("site_pages", ()))

    @extra.page("compare", "compare")
    def build(ctx):
        spec = {
            "mark": "point",
            "data": {"values": [{"x": 1, "y": 2}, {"x": 2, "y": 3}]},
            "encoding": {"x": {"field": "x"}, "y": {"field": "y"}},
        }
        ctx.section(
            "Class <b>A</b>",
            "why these compare",
            spec=spec,
            points=2,
            columns=["record", "value"],
            rows=[[{"text": "One", "href": "engines/e1.html"}, 3]],
        )

    kb_root = write_kb(tmp_path / "kb", {"data/engines/e1.json": {"id": "e1", "type": "engine", "name": "One", "status": "draft"}})
    result = build_site(inferkb.open(kb_root), tmp_path / "out", search=False)
    html = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert "Class &lt;b&gt;A&lt;/b&gt;" in html and 'href="engines/e1.html">One</a>' in html
    assert 'src="assets/vega-embed.js"' in html and result.charts == {"compare-1": 2}
    assert 'href="compare.html"' in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    _, broken = check_links(tmp_path / "out")
    assert broken == []


def test_model_page_lists_base_model_use_apart_from_benchmarks_of_the_model(bundled_site):
    out, _ = bundled_site
    kb = inferkb.open()
    derived = [r for r in kb.by_type("benchmark") if r.data.get("base_model_id") == "llama-3-1-70b"]
    html = (out / "models" / "llama-3-1-70b.html").read_text(encoding="utf-8")
    assert (
        f"{len(derived)} benchmark records via <code>base_model_id</code>: results of models derived from this one "
        "(base-model use; not benchmarks of this model)"
    ) in html
    assert f'href="../benchmarks/{derived[0].id}.html"' in html and "via base_model_id: base-model use" in html
    page = (out / "benchmarks" / f"{derived[0].id}.html").read_text(encoding="utf-8")
    assert "base model (derived from; not model identity)" in page and 'href="../models/llama-3-1-70b.html"' in page


def test_switch_picker_starts_on_the_choice_the_page_draws(bundled_site):
    """The class picker's selected option is the choice the static figure draws, and metrics keep the build's order.

    Jinja's ``groupby`` sorted the optgroups by metric name, so on GPT-J the script opened the e2e-latency class
    while the caption (drawn without script) named the first output-tokens class.
    """
    out, _ = bundled_site
    checked = 0
    for page in sorted((out / "compare").glob("*.html")):
        html = page.read_text(encoding="utf-8")
        for sid, drawn in re.findall(
            r'id="([\w-]+)-fig" data-switch-figure="[\w-]+"[^>]*>\s*<figcaption[^>]*>.*?</figcaption>\s*<div class="vega" data-spec="([\w-]+)-spec"',
            html,
            re.S,
        ):
            picker = re.search(rf'<select id="{sid}-pick"[^>]*>(.*?)</select>', html, re.S).group(1)
            assert re.findall(r'<option value="([\w-]+)" selected>', picker) == [drawn], page.name
            metrics = re.search(rf'<select id="{sid}-group"[^>]*>(.*?)</select>', html, re.S)
            if metrics:
                order = re.findall(r'<option value="([^"]*)">', metrics.group(1))
                assert re.findall(r'<optgroup label="([^"]*)">', picker) == order, page.name
            checked += 1
    assert checked > 5
