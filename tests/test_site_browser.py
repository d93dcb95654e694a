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


def _search_with_filter_group(pg, site_url, term: str, group: str):
    """Search for `term` on search.html and return the Pagefind filter group named `group` (a Locator).

    Pagefind's UI fills its filter panel from two promises (the whole-index filters and the
    result's own filters) that race; under a loaded CI machine the panel was once never drawn
    within 30 s (CI, 2026-12-01). The page is loaded afresh once before giving up, and the
    failure names what the panel did show, so a real regression still fails here.
    """
    seen = None
    for _attempt in range(2):
        pg.goto(site_url + "search.html")
        pg.wait_for_selector(".pagefind-ui__search-input")
        pg.fill(".pagefind-ui__search-input", term)
        pg.locator(".pagefind-ui__message").filter(has_text=re.compile(r"[1-9][\d,]* results?")).wait_for(timeout=20_000)
        named = pg.locator("summary").filter(has_text=re.compile(rf"^\s*{group}\s*$", re.I))
        details = pg.locator(".pagefind-ui__filter-panel details").filter(has=named)
        try:
            details.first.wait_for(timeout=15_000)
        except Exception:  # playwright's TimeoutError: try a fresh page once
            seen = pg.evaluate(
                "() => [document.querySelector('.pagefind-ui__message')?.textContent,"
                " Array.from(document.querySelectorAll('.pagefind-ui__filter-panel details summary')).map(s => s.textContent)]"
            )
            continue
        return details.first
    pytest.fail(f"the Pagefind filter panel has no {group!r} group after two page loads; it showed {seen!r}")


def test_search_filter_narrows_by_facet(page, site_url):
    pg = page.page
    group = _search_with_filter_group(pg, site_url, "MLPerf", "scenario")
    before = int(re.search(r"([\d,]+) result", pg.locator(".pagefind-ui__message").inner_text()).group(1).replace(",", ""))
    group.locator("summary").click()
    group.locator("label").filter(has_text="single-stream").first.click()
    pg.wait_for_function(
        "n => { const m = document.querySelector('.pagefind-ui__message'); const x = m && m.textContent.match(/([\\d,]+) result/); return x && +x[1].replace(/,/g, '') < n; }",
        arg=before,
        timeout=15_000,
    )
    assert page.errors == []


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


# Bars and points drawn as data marks (not legend symbols, not lines): one per data row of the chart.
MARKS = "svg .mark-symbol.role-mark path, svg .mark-rect.role-mark path"


def _marks_of_every_chart(page, url: str, out: Path) -> dict[str, int]:
    """Chart id -> data marks drawn, over every page of the site with a chart; a switchable chart is drawn once per choice."""
    pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html") if 'class="chart"' in p.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    for path in pages:
        pg = page.goto(url + path)
        charts = pg.locator("figure.chart")
        n = charts.count()
        pg.wait_for_function(f"() => document.querySelectorAll('.vega[data-rendered]').length === {n}", timeout=30_000)
        for i in range(n):
            fig = charts.nth(i)
            if fig.get_attribute("data-switch-figure") is None:
                seen[fig.get_attribute("id")] = fig.locator(MARKS).count()
                continue
            select = pg.locator(f"select[data-switch-select='{fig.get_attribute('data-switch-figure')}']")
            for value in select.evaluate("s => Array.from(s.options).map(o => o.value)"):
                select.select_option(value)
                pg.wait_for_function(
                    "([f, v]) => { const el = document.getElementById(f); return el.getAttribute('data-shown') === v"
                    " && el.querySelector('.vega[data-rendered]'); }",
                    arg=[fig.get_attribute("id"), value],
                    timeout=30_000,
                )
                seen[fig.get_attribute("data-chart")] = fig.locator(MARKS).count()
                # The picked choice's table is the one shown; every other one is hidden.
                shown = pg.evaluate(
                    "f => Array.from(document.getElementById(f).parentElement.querySelectorAll('.choice')).filter(c => !c.hidden).map(c => c.id)",
                    fig.get_attribute("id"),
                )
                assert shown == [value], f"{path}: {value} shows {shown}"
    return seen


def test_every_chart_renders_data_points(page, site_url, bundled_site):
    out, result = bundled_site
    seen = _marks_of_every_chart(page, site_url, out)
    assert {"benchmarks-by-origin", "absent-conditions", "compare-standing"} <= set(seen)
    assert any(k.startswith("roofline-") for k in seen) and any(k.startswith("utilisation-") for k in seen)
    assert any(k.startswith("cmp-") for k in seen) and any(k.startswith("history-") for k in seen)
    assert all(n >= 1 for n in seen.values()), [k for k, n in seen.items() if n < 1]
    assert seen == result.charts
    assert page.errors == []


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    """The hand-written analysis fixture's site (tests/data/site_analysis), served: ``(out, SiteBuild, url)``."""
    from conftest import analysis_kb

    root = tmp_path_factory.mktemp("analysis-site")
    result = build_site(inferkb.open(analysis_kb(root / "kb")), root / "out", search=False)
    server, url = _serve(root / "out")
    yield root / "out", result, url
    server.shutdown()
    server.server_close()


def test_every_chart_of_the_analysis_fixture_renders_its_marks(page, fixture_site):
    out, result, url = fixture_site
    seen = _marks_of_every_chart(page, url, out)
    # The fixture's Pareto class has 4 points; its history line 2 rounds; its strict class 3 rows (hand-derived in test_site_analysis).
    assert any(k.startswith("pareto-") and n == 4 for k, n in seen.items())
    assert seen == result.charts
    assert page.errors == []


def _bars(pg) -> int:
    return pg.locator("#groups-fig " + MARKS.replace(", ", ", #groups-fig ")).count()


def _shown_rows(pg) -> list[str]:
    return pg.evaluate(
        "() => Array.from(document.querySelectorAll('#groups .choice')).filter(c => !c.hidden)"
        ".flatMap(c => Array.from(c.querySelectorAll('tbody tr')).map(r => r.cells[1].textContent.trim()))"
    )


def _class_size(pg) -> int:
    """Rows of the class the figure shows, as the build counted them (its spec holder's data-points)."""
    shown = pg.locator("#groups-fig").get_attribute("data-shown")
    return int(pg.locator(f"#{shown}-spec").get_attribute("data-points"))


def test_compare_chart_draws_the_picked_class(page, site_url):
    # GPT-J: four classes of two rows (llama-2-70b has none since derive mlperf-weight-format)
    pg = page.goto(site_url + "compare/gpt-j-6b.html")
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    first = pg.locator("#groups-fig").get_attribute("data-chart")
    assert _bars(pg) == _class_size(pg) == len(_shown_rows(pg)) > 1
    before = _shown_rows(pg)
    pick = pg.locator("#groups-pick")
    pick.focus()
    pg.keyboard.press("ArrowDown")  # keyboard: the next class
    pg.wait_for_function(f"() => document.getElementById('groups-fig').getAttribute('data-chart') !== '{first}'")
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    assert _bars(pg) == _class_size(pg) == len(_shown_rows(pg))
    assert _shown_rows(pg) != before
    assert page.errors == []


def test_a_class_link_opens_that_class(page, site_url, bundled_site):
    out, _ = bundled_site
    # NVIDIA's Jetson AGX Orin gptj-99 Offline row shares its class with ConnectTechInc's (fp16: Orin has no FP8
    # datapath); the v4.1 H100 llama2-70b rows whose harness config was read are FP8 and in no two-row class.
    page_path = out / "benchmarks" / "mlperf-v4-1-closed-nvidia-orin-trt-gptj-99-offline.html"
    html = page_path.read_text(encoding="utf-8")
    href = re.search(r'href="\.\./(compare/gpt-j-6b\.html#class-[0-9a-f]+)"', html).group(1)
    pg = page.goto(site_url + href)
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    assert pg.locator("#groups-fig").get_attribute("data-shown") == href.split("#")[1]
    assert any("ConnectTechInc NVIDIA Jetson AGX Orin" in r for r in _shown_rows(pg))


def test_picking_another_model_changes_the_chart_and_the_table(page, site_url):
    pg = page.goto(site_url + "compare/mixtral-8x7b.html")
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    chart, rows = pg.locator("#groups-fig").get_attribute("data-chart"), _shown_rows(pg)
    model = pg.locator("form.picker select").first
    names = model.evaluate("s => Array.from(s.options).map(o => o.textContent)")
    model.select_option(index=next(i for i, t in enumerate(names) if t.startswith("GPT-J")))
    assert pg.url.endswith("compare/mixtral-8x7b.html")  # choosing alone does not navigate
    pg.locator("form.picker button").first.click()
    pg.wait_for_url(re.compile(r"compare/gpt-j-6b\.html$"))
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    assert pg.locator("#groups-fig").get_attribute("data-chart") != chart
    assert _bars(pg) == _class_size(pg) == len(_shown_rows(pg)) > 1
    assert _shown_rows(pg) != rows and all("gptj" in r for r in _shown_rows(pg))
    assert page.errors == []


def test_metric_picker_narrows_the_classes(page, site_url):
    pg = page.goto(site_url + "compare/gpt-j-6b.html")
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    groups = pg.locator("#groups-group").evaluate("s => Array.from(s.options).map(o => o.value)")
    assert len(groups) >= 2
    pg.locator("#groups-group").select_option(groups[1])
    pg.wait_for_function(
        "g => { const s = document.getElementById('groups-pick'); return s.selectedOptions[0].parentElement.label === g; }", arg=groups[1]
    )
    visible = pg.evaluate("() => Array.from(document.querySelectorAll('#groups-pick optgroup')).filter(o => !o.hidden).map(o => o.label)")
    assert visible == [groups[1]]
    pg.wait_for_selector("#groups-fig .vega[data-rendered]")
    assert _bars(pg) == _class_size(pg) == len(_shown_rows(pg))


def test_not_comparable_rows_are_listed_and_filter(page, site_url, bundled_site):
    out, _ = bundled_site
    pg = page.goto(site_url + "compare/llama-2-70b.html")
    table = pg.locator("#not-comparable-table")
    total = table.locator("tbody tr").count()
    assert total > 100 and int(table.get_attribute("data-matches")) == total
    sel = pg.locator("#not-comparable-table-missing")
    texts = sel.evaluate("s => Array.from(s.options).slice(1).map(o => o.textContent)")
    counts = [int(re.search(r"\((\d+)\)$", t).group(1)) for t in texts]
    j = min(range(len(counts)), key=counts.__getitem__)
    sel.select_option(index=j + 1)
    assert int(table.get_attribute("data-matches")) == counts[j] < total
    missing = texts[j].rsplit(" (", 1)[0]
    shown = pg.evaluate(
        "() => Array.from(document.querySelectorAll('#not-comparable-table tbody tr')).filter(r => !r.hidden).map(r => r.cells[2].textContent)"
    )
    assert shown and all(missing in s for s in shown)
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


def test_without_javascript_every_row_of_a_long_table_shows(browser, site_url):
    # The page arrives with the rows after the first page hidden for site.js to page through; with no script, CSS shows them all.
    ctx = browser.new_context(java_script_enabled=False)
    try:
        pg = ctx.new_page()
        # The bundled benchmark table is one ~8 MB page drawn whole without script: allow it more than the default 30 s
        # on a slow shared machine (CI, 2026-12-02: the load event came after 30 s). This is not a speed test.
        pg.goto(site_url + "benchmarks/index.html", wait_until="load", timeout=180_000)
        total = pg.locator("#records tbody tr").count()
        assert total > PAGE_ROWS and pg.locator("#records tbody tr[hidden]").count() == total - PAGE_ROWS
        shown = pg.evaluate("() => Array.from(document.querySelectorAll('#records tbody tr')).filter(r => r.offsetParent !== null).length")
        assert shown == total
    finally:
        ctx.close()
