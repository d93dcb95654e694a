"""The site in a real browser: Debian's Chromium driven by Playwright (never a downloaded browser).

Skipped with a message when /usr/bin/chromium or Playwright is missing,
unless INFERKB_REQUIRE_BROWSER=1 (set by .ci/run), where a missing browser
fails the run instead: CI must run these, not skip them.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

import inferkb
from conftest import hostile_kb
from inferkb.site import build_site
from inferkb.site.serve import SiteServer

CHROMIUM = Path(os.environ.get("INFERKB_CHROMIUM", "/usr/bin/chromium"))
# Flags from the machine notes: headless as root, and no background connections (the network is closed).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _need_browser():
    problem = None
    if not CHROMIUM.is_file():
        problem = f"{CHROMIUM} not found (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "playwright is not installed (pip install playwright; no browser download is needed)"
    if problem:
        if os.environ.get("INFERKB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here but cannot run: {problem}")
        pytest.skip(f"browser tests skipped: {problem}")


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _serve(root: Path):
    server = SiteServer(0, root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def site_url(bundled_site):
    server, url = _serve(bundled_site[0])
    yield url
    server.shutdown()
    server.server_close()


class Page:
    """A browser page that records console errors, page errors, CSP violations and dialogs."""

    def __init__(self, browser, **kw):
        self.page = browser.new_page(**kw)
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

        def on_dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()

        self.page.on("dialog", on_dialog)

    def goto(self, url: str):
        self.page.goto(url, wait_until="load")
        return self.page


@pytest.fixture
def page(browser):
    p = Page(browser, viewport={"width": 1200, "height": 900})
    yield p
    p.page.close()


def test_home_loads_without_console_errors(page, site_url, record_property):
    pg = page.goto(site_url + "index.html")
    pg.wait_for_selector("figure.chart .vega[data-rendered]")
    assert pg.locator("h1").inner_text()
    assert page.errors == []
    # First contentful paint, reported (not asserted: speed is measured in benchmarks/bench_site.py).
    fcp = pg.evaluate("() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null")
    assert fcp is not None
    record_property("home_first_contentful_paint_ms", fcp)


def test_search_finds_a_known_record(page, site_url):
    pg = page.goto(site_url + "search.html")
    pg.wait_for_selector(".pagefind-ui__search-input")
    pg.fill(".pagefind-ui__search-input", "Qwen3-Next MTP")
    hit = pg.locator('.pagefind-ui__result-link[href*="vllm-mtp-regression-qwen3-next-80b-a3b"]')
    hit.first.wait_for(timeout=15_000)
    assert "MTP" in hit.first.inner_text()
    assert page.errors == []


def test_search_filter_narrows_by_facet(page, site_url):
    pg = page.goto(site_url + "search.html")
    pg.wait_for_selector(".pagefind-ui__search-input")
    pg.fill(".pagefind-ui__search-input", "MLPerf")
    pg.locator(".pagefind-ui__message").filter(has_text=re.compile(r"\d+ results?")).wait_for(timeout=15_000)
    before = int(re.search(r"(\d+) result", pg.locator(".pagefind-ui__message").inner_text()).group(1))
    group = pg.locator(".pagefind-ui__filter-panel details").filter(has_text="scenario")
    group.locator("summary").click()
    group.locator("label").filter(has_text="single-stream").first.click()
    pg.wait_for_function(
        "n => { const m = document.querySelector('.pagefind-ui__message'); const x = m && m.textContent.match(/(\\d+) result/); return x && +x[1] < n; }",
        arg=before,
        timeout=15_000,
    )


PAGE_ROWS = 500  # rows site.js draws at once (the rest behind "show all")


def _visible_rows(pg) -> int:
    return pg.evaluate("() => Array.from(document.querySelectorAll('#records tbody tr')).filter(r => !r.hidden).length")


def _matches(pg) -> int:
    return int(pg.locator("#records").get_attribute("data-matches"))


def _applied(pg) -> int:
    return int(pg.locator("form.filters").get_attribute("data-applied"))


def test_every_facet_filter_changes_the_visible_rows(page, site_url):
    for type_dir in ("benchmarks", "accelerators", "sources"):
        pg = page.goto(site_url + f"{type_dir}/index.html")
        total = pg.locator("#records tbody tr").count()
        assert _matches(pg) == total and _visible_rows(pg) == min(total, PAGE_ROWS)
        selects = pg.locator("form.filters select[data-facet]")
        assert selects.count() >= 1, type_dir
        for i in range(selects.count()):
            sel = selects.nth(i)
            # The option with the fewest rows: its count (printed by the build) must be what the browser finds.
            texts = sel.evaluate("s => Array.from(s.options).slice(1).map(o => o.textContent)")
            counts = [int(re.search(r"\((\d+)\)$", t).group(1)) for t in texts]
            j = min(range(len(counts)), key=counts.__getitem__)
            sel.select_option(index=j + 1)
            assert _matches(pg) == counts[j] < total, f"{type_dir} {sel.get_attribute('data-facet')}: {texts[j]}"
            assert _visible_rows(pg) == min(counts[j], PAGE_ROWS)
            assert pg.locator(".count").inner_text().startswith(f"{counts[j]} of {total} match")
            sel.select_option(index=0)
            assert _matches(pg) == total
    assert page.errors == []


def test_filters_are_keyboard_usable_and_combine(page, site_url):
    pg = page.goto(site_url + "benchmarks/index.html")
    total = _matches(pg)
    pg.focus("#flt-scenario")
    pg.keyboard.press("ArrowDown")  # the first value: the most common scenario
    one = _matches(pg)
    assert 0 < one < total
    before = _applied(pg)
    pg.focus("#flt-text")
    pg.keyboard.type("llama")
    pg.wait_for_function("n => +document.querySelector('form.filters').getAttribute('data-applied') > n", arg=before)
    both = _matches(pg)
    assert both <= one
    rows = pg.evaluate(
        "() => Array.from(document.querySelectorAll('#records tbody tr')).filter(r => !r.hidden).map(r => r.textContent.toLowerCase())"
    )
    assert rows and all("llama" in r for r in rows)
    pg.click("button[type=reset]")
    pg.wait_for_function("n => +document.querySelector('#records').getAttribute('data-matches') === n", arg=total)


def test_show_all_draws_every_matching_row(page, site_url):
    pg = page.goto(site_url + "benchmarks/index.html")
    total = _matches(pg)
    if total <= PAGE_ROWS:
        pytest.skip(f"the bundled KB has {total} benchmarks, not more than {PAGE_ROWS}")
    more = pg.locator("[data-more-for=records]")
    assert more.is_visible() and _visible_rows(pg) == PAGE_ROWS
    more.click()
    assert _visible_rows(pg) == total and not more.is_visible()


def test_query_string_preselects_a_filter(page, site_url):
    pg = page.goto(site_url + "benchmarks/index.html?lacks=engine%20version")
    assert pg.locator("#flt-lacks").input_value() == "engine version"
    label = pg.locator("#flt-lacks option:checked").inner_text()
    expected = int(re.search(r"\((\d+)\)$", label).group(1))
    assert _matches(pg) == expected < pg.locator("#records tbody tr").count()


def test_sorting_a_numeric_column(page, site_url):
    pg = page.goto(site_url + "accelerators/index.html")
    btn = pg.locator("th button", has_text="memory bandwidth")
    btn.click()
    assert btn.locator("xpath=..").get_attribute("aria-sort") == "ascending"
    idx = int(btn.get_attribute("data-sort-col"))
    values = pg.evaluate(
        "i => Array.from(document.querySelectorAll('#records tbody tr')).map(r => r.cells[i].getAttribute('data-sort')).filter(v => v !== null).map(Number)",
        idx,
    )
    assert len(values) > 5 and values == sorted(values)
    btn.click()
    values = pg.evaluate(
        "i => Array.from(document.querySelectorAll('#records tbody tr')).map(r => r.cells[i].getAttribute('data-sort')).filter(v => v !== null).map(Number)",
        idx,
    )
    assert values == sorted(values, reverse=True)


def test_record_page_shows_sources_and_back_references(page, site_url):
    pg = page.goto(site_url + "models/qwen3-next-80b-a3b.html")
    assert pg.locator("#sources table tbody tr").count() >= 1
    assert pg.locator("#sources .tier").first.inner_text() in ("A", "B", "C", "D", "E", "unclassified")
    back = pg.locator("ul.backrefs a", has_text="vLLM MTP")
    assert back.count() == 1
    back.click()
    pg.wait_for_url(re.compile(r"benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b\.html$"))
    assert pg.locator("table.arms tbody tr").count() == 3
    assert page.errors == []


def test_every_chart_renders_data_points(page, site_url, bundled_site):
    out, result = bundled_site
    pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html") if 'class="chart"' in p.read_text(encoding="utf-8"))
    assert {"index.html", "benchmarks/index.html", "gaps.html"} <= set(pages) and any(p.startswith("roofline/") for p in pages)
    seen = {}
    for path in pages:
        pg = page.goto(site_url + path)
        charts = pg.locator("figure.chart")
        n = charts.count()
        pg.wait_for_function(f"() => document.querySelectorAll('.vega[data-rendered]').length === {n}", timeout=30_000)
        for i in range(n):
            fig = charts.nth(i)
            # Bars and points drawn as data marks (not legend symbols): one per data row of the chart's table.
            drawn = fig.locator("svg .mark-symbol.role-mark path, svg .mark-rect.role-mark path").count()
            seen[fig.get_attribute("id")] = drawn
            assert drawn >= 1, f"{path}: {fig.get_attribute('id')}"
    assert seen == result.charts
    assert page.errors == []


def test_hostile_record_renders_inert(browser, tmp_path):
    kb = inferkb.open(hostile_kb(tmp_path / "kb"))
    build_site(kb, tmp_path / "out", search=False)
    server, url = _serve(tmp_path / "out")
    try:
        p = Page(browser)
        for path in ("sources/evil-source.html", "engines/vllm.html", "docs/hostile.html", "sources/index.html"):
            pg = p.goto(url + path)
            assert pg.evaluate("() => window.__pwned === undefined")
        pg = p.goto(url + "sources/evil-source.html")
        assert "<script>" in pg.locator("h1").inner_text()  # shown as text
        assert pg.locator("a[href^='javascript' i]").count() == 0
        shown = pg.locator("code.refused", has_text="javascript:window.__pwned=2")
        assert shown.count() >= 1
        shown.first.click()
        assert pg.evaluate("() => window.__pwned === undefined")
        assert p.dialogs == []
        assert p.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_readable_on_a_phone(browser, site_url):
    p = Page(browser, viewport={"width": 375, "height": 740}, device_scale_factor=2, is_mobile=True)
    pg = p.goto(site_url + "benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.html")
    # No horizontal scrolling of the page itself: wide tables scroll inside their own box.
    assert pg.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert p.errors == []
