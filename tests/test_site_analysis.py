"""The site's analysis pages as files: compare, Pareto, MLPerf history, measured roofline, comparable benchmarks.

Most expectations come from the hand-written records of
``tests/data/site_analysis/benchmarks.json`` (worked out in the comments);
a few read the bundled KB's MLPerf records, whose numbers are quoted from the
record files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

import inferkb
from conftest import analysis_kb
from inferkb import plugins
from inferkb.site import build_site


class _Tables(HTMLParser):
    """Rows (lists of cell texts) of every table inside the element with id ``within``; also every id and href."""

    def __init__(self, within: str) -> None:
        super().__init__(convert_charrefs=True)
        self.within = within
        self.depth = 0  # open elements since the container opened (0: outside it)
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None
        self.hrefs: list[str] = []
        self.thead = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth:
            self.depth += tag not in ("br", "input", "meta", "link", "img")
        elif a.get("id") == self.within:
            self.depth = 1
            return
        if not self.depth:
            return
        if tag == "thead":
            self.thead = True
        elif tag == "tr" and not self.thead:
            self.rows.append([])
        elif tag in ("td", "th") and not self.thead:
            self.cell = []
        elif tag == "a" and "href" in a:
            self.hrefs.append(a["href"])

    def handle_endtag(self, tag):
        if not self.depth:
            return
        if tag == "thead":
            self.thead = False
        if tag in ("td", "th") and self.cell is not None and self.rows and not self.thead:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.cell is not None:
            self.cell.append(data)


def rows_in(path: Path, within: str) -> list[list[str]]:
    """Body rows (``thead`` rows dropped) of the tables inside element ``within`` of the page at ``path``."""
    p = _Tables(within)
    p.feed(path.read_text(encoding="utf-8"))
    return [r for r in p.rows if r]


def hrefs_in(path: Path, within: str) -> list[str]:
    p = _Tables(within)
    p.feed(path.read_text(encoding="utf-8"))
    return p.hrefs


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("analysis")
    kb = inferkb.open(analysis_kb(root / "kb"))
    return root / "out", build_site(kb, root / "out", search=False)


def test_analysis_pages_come_from_the_plugin_registry():
    assert plugins.BUILTINS["site_pages"] == ("inferkb.site.compare_pages", "inferkb.site.pareto_pages", "inferkb.site.history_pages")
    assert plugins.SITE_PAGES.group == "inferkb.site_pages"
    assert {"compare", "pareto", "history"} <= set(plugins.SITE_PAGES.load())


def test_a_plain_build_includes_the_analysis_pages(fixture_site):
    out, result = fixture_site
    for page in ("compare.html", "pareto.html", "history.html", "compare/llama-2-70b.html", "compare/llama-2-70b--across-hardware.html"):
        assert (out / page).is_file(), page
    nav = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="compare.html"' in nav and 'href="pareto.html"' in nav and 'href="history.html"' in nav


def test_an_installed_package_adds_a_site_page_by_entry_point(tmp_path):
    from test_plugins import install_distribution

    module = """
        from inferkb.site.extra import page

        @page("toy-page", "toy")
        def build(ctx):
            ctx.section("Toy section", "from an entry point", columns=["n"], rows=[[len(ctx.site.kb.records)]])
    """
    site = install_distribution(
        tmp_path / "site", "toy-site-page", {"toy_page": textwrap.dedent(module)}, {"inferkb.site_pages": {"toy": "toy_page"}}
    )
    kb = tmp_path / "kb"
    (kb / "data" / "engines").mkdir(parents=True)
    (kb / "data" / "engines" / "e1.json").write_text(json.dumps({"id": "e1", "type": "engine", "name": "One", "status": "draft"}))
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "site", "build", "--kb", str(kb), "--out", str(tmp_path / "out"), "--no-search"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "out" / "toy-page.html").read_text(encoding="utf-8")
    assert "Toy section" in html and "from an entry point" in html


def test_compare_class_is_ranked_and_counts_a_same_measurement_group_once(fixture_site):
    out, result = fixture_site
    # fx-a..fx-d share every condition; fx-b and fx-c are one measurement (same_measurement_as), so the class has
    # three rows: fx-b 1,200, fx-a 1,000, fx-d 900 (experimental, labelled); output_tok_s is higher-is-better.
    page = out / "compare" / "llama-2-70b.html"
    rows = rows_in(page, "groups")
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert rows[0][1].startswith("Fixture B") and "counted once with 1 same-measurement record(s): fx-c" in rows[0][1]
    assert rows[1][1] == "Fixture A, conc 16" and rows[2][1] == "Fixture D, conc 16, experimental experimental"
    assert [r[2] for r in rows] == ["1,200 tok/s", "1,000 tok/s", "900 tok/s"]
    # Per accelerator beside each value: 1,200 / 8 devices = 150.
    assert rows[0][3] == "150 (÷8)"
    charts = {k: v for k, v in result.charts.items() if k.startswith("cmp-llama-2-70b-") and "--" not in k}
    assert list(charts.values()) == [3]
    html = page.read_text(encoding="utf-8")
    assert "output tokens/s, aggregate (tok/s)" in html  # token basis and value scope label the axis


def test_not_comparable_rows_are_listed_apart_with_the_missing_condition_and_its_reason(fixture_site):
    out, _ = fixture_site
    page = out / "compare" / "llama-2-70b.html"
    rows = rows_in(page, "not-comparable")
    assert rows == [["Fixture E, no weight format", "1,100 tok/s output tokens/s, aggregate", "weight format"]]
    why = rows_in(page, "why")
    assert why == [["weight format", "1", "the fixture's result file states no weight precision (1)"]]


def test_a_class_of_one_names_what_splits_it_from_the_nearest_class(fixture_site):
    out, _ = fixture_site
    rows = {r[0]: r for r in rows_in(out / "compare" / "llama-2-70b.html", "alone")}
    # fx-f differs from the fx-a..fx-d class in the engine version only.
    assert rows["Fixture F, newer vLLM"][3] == "engine version: 0.12.0 vs 0.11.0"
    # MLPerf closed and open v5.1 share everything but the division: never one class.
    assert "MLPerf division: closed vs open" in rows["Fixture MLPerf v5.1 closed"][3]


def test_across_hardware_lens_ranks_per_accelerator_with_the_varied_conditions_as_columns(fixture_site):
    out, _ = fixture_site
    rows = rows_in(out / "compare" / "llama-2-70b--across-hardware.html", "groups")
    # Varying format and engine version lets fx-e and fx-f in; per accelerator (÷8): F 162.5, B 150, E 137.5, A 125, D 112.5.
    assert [r[1].split(" counted")[0] for r in rows] == [
        "Fixture F, newer vLLM",
        "Fixture B, conc 16",
        "Fixture E, no weight format",
        "Fixture A, conc 16",
        "Fixture D, conc 16, experimental experimental",
    ]
    assert [r[2] for r in rows] == ["162.5 tok/s", "150 tok/s", "137.5 tok/s", "125 tok/s", "112.5 tok/s"]
    assert rows[0][3] == "ranked: 1,300 ÷ 8"
    assert rows[2][6] == "not stated"  # the weight format column of fx-e


def test_benchmark_page_lists_its_comparable_benchmarks(fixture_site):
    out, _ = fixture_site
    html = (out / "benchmarks" / "fx-a.html").read_text(encoding="utf-8")
    section = html[html.index('id="comparable"') : html.index('id="fields-h"')]
    assert "3 other benchmark records of Llama 2 70B share every load condition" in section
    for other in ("fx-b", "fx-c", "fx-d"):
        assert f'href="../benchmarks/{other}.html"' in section
    assert 'href="../compare/llama-2-70b.html#class-' in section


def test_benchmark_page_says_why_no_benchmark_is_comparable(fixture_site):
    out, _ = fixture_site
    html = (out / "benchmarks" / "fx-e.html").read_text(encoding="utf-8")
    section = html[html.index('id="comparable"') : html.index('id="fields-h"')]
    assert "None: this record cannot be ranked against another" in section
    assert rows_in(out / "benchmarks" / "fx-e.html", "comparable") == [
        ["weight format", "the fixture's result file states no weight precision"]
    ]
    html = (out / "benchmarks" / "fx-f.html").read_text(encoding="utf-8")
    section = html[html.index('id="comparable"') : html.index('id="fields-h"')]
    assert "no other benchmark record of Llama 2 70B shares all of them" in section
    # Nearest: fx-a, fx-b, fx-c, fx-d differ from fx-f in the engine version only (first three listed).
    assert "engine version: 4 records" in section and 'href="../benchmarks/fx-a.html"' in section
    html = (out / "benchmarks" / "fx-c.html").read_text(encoding="utf-8")
    assert 'Counted once with (same measurement, <code>same_measurement_as</code>): <a href="../benchmarks/fx-b.html">' in html


def test_pareto_frontier_within_a_class(fixture_site):
    out, result = fixture_site
    # gpt-oss-120b sweep on 8x H200, differing only in concurrency; y = output tok/s / 8, x = TTFT p99 (lower is better):
    # c4 (100 ms, 100), c8 (150 ms, 200), c16 (400 ms, 300), c32 (900 ms, 250): c32 is dominated by c16.
    page = out / "pareto.html"
    charts = [k for k in result.charts if k.startswith("pareto-gpt-oss-120b-ttft_ms-p99-")]
    assert len(charts) == 1 and result.charts[charts[0]] == 4
    rows = rows_in(page, charts[0])
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("Fixture sweep conc 4", "concurrency=4", "100", "100", "yes"),
        ("Fixture sweep conc 8", "concurrency=8", "150", "200", "yes"),
        ("Fixture sweep conc 16", "concurrency=16", "400", "300", "yes"),
        ("Fixture sweep conc 32", "concurrency=32", "900", "250", "no"),
    ]
    outside = dict((r[0], r[1]) for r in rows_in(page, "outside-ttft_ms-p99"))
    assert outside["no ttft_ms in the record"] == "9"  # the nine llama-2-70b fixture records carry no TTFT


def test_history_follows_a_system_series_across_rounds(fixture_site):
    out, result = fixture_site
    # fixture-series, closed: v5.0 20,000 -> v5.1 24,000 tok/s (+20.0 %; per accelerator 2,500 -> 3,000), TensorRT 10.8.0 -> 10.11.0.
    # The open v5.1 record is a line of one round: left out (and never on the closed chart).
    page = out / "history" / "llama-2-70b.html"
    rows = rows_in(page, "h-1")
    assert [r[:7] for r in rows] == [
        ["fixture-series", "v5.0", "Fixture MLPerf v5.0 closed", "20,000 tok/s", "—", "2,500", "—"],
        ["fixture-series", "v5.1", "Fixture MLPerf v5.1 closed", "24,000 tok/s", "+20.0%", "3,000", "+20.0%"],
    ]
    assert rows[1][7] == "engine_version: 10.8.0 -> 10.11.0"
    assert "Fixture MLPerf v5.1 open" not in page.read_text(encoding="utf-8")
    assert result.charts["history-llama-2-70b-1"] == 2


def test_roofline_page_places_measured_benchmarks_with_the_analysis_roofline(fixture_site):
    out, result = fixture_site
    page = out / "roofline" / "nvidia-h100-sxm.html"
    ceilings = rows_in(page, "utilisation")
    # Llama 2 70B (70e9 active) in fp8-e4m3 (1 B/weight) on one H100 SXM: decode 3,350 GB/s / 70 GB = 47.9 tok/s;
    # prefill 1,979 TFLOPS / (2 x 70e9) = 14,136 tok/s.
    assert ["Llama 2 70B", "fp8-e4m3", "1.0", "47.9", "14136", "8"] in ceilings
    # fx-a: MFU = 1,000 tok/s x 2 x 70e9 / (8 x 1,979e12) = 0.88 %.
    fx_a = next(r for r in ceilings if r[0] == "Fixture A, conc 16")
    assert fx_a[4:7] == ["8", "MFU", "0.88"]
    # fx-e states no weight format: not placed, and counted by that reason.
    assert "1 × weight format not stated (bytes per weight set the bound)" in page.read_text(encoding="utf-8")
    assert result.charts["utilisation-nvidia-h100-sxm"] == 8


def test_bundled_compare_page_ranks_the_mlperf_v4_1_jetson_orin_class(bundled_site):
    # The v4.1 closed gptj-99 Offline rows on one Jetson AGX Orin 64GB, TensorRT, fp16 (Orin has no FP8 datapath and
    # its gptj class sets no use_fp8): NVIDIA 64.4734 and ConnectTechInc 64.0078 tok/s (the records' values). No
    # llama-2-70b Offline class has two rows since derive mlperf-weight-format: the v4.1 8x H100 TensorRT rows whose
    # harness config was read build FP8 (format_id null), and Google's, whose Offline config is not stored, is alone.
    from inferkb.analysis.compare import compare

    kb = inferkb.open()
    assert not [c for c in compare(kb, model="llama-2-70b", scenario="offline").classes if c.size > 1]
    res = compare(kb, model="gpt-j-6b", scenario="offline")
    cls = next(c for c in res.classes if c.key["hardware"] == "nvidia-jetson-agx-orin-64gb" and "gptj-99 " in c.key["benchmark_definition"])
    out, _ = bundled_site
    rows = rows_in(out / "compare" / "gpt-j-6b.html", f"class-{cls.id}")
    assert len(rows) == 2
    assert rows[0][:4] == [
        "1",
        "MLPerf Inference v4.1 closed: NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT), gptj-99 Offline",
        "64.47 tok/s",
        "64.47 (÷1)",
    ]
    assert rows[1][1].startswith("MLPerf Inference v4.1 closed: ConnectTechInc ") and rows[1][2] == "64.01 tok/s"
    # What the browser tests open: the record page's class link, and a class picker on the GPT-J and Mixtral pages only.
    record_page = out / "benchmarks" / "mlperf-v4-1-closed-nvidia-orin-trt-gptj-99-offline.html"
    assert f'href="../compare/gpt-j-6b.html#class-{cls.id}"' in record_page.read_text(encoding="utf-8")
    for slug, picker in (("gpt-j-6b", True), ("mixtral-8x7b", True), ("llama-2-70b", False)):
        assert ('id="groups-pick"' in (out / "compare" / f"{slug}.html").read_text(encoding="utf-8")) is picker, slug


def test_bundled_compare_index_lists_every_model_with_both_lenses(bundled_site):
    out, _ = bundled_site
    kb = inferkb.open()
    hrefs = set(hrefs_in(out / "compare.html", "models"))
    from inferkb.site.comparable import comparisons

    groups = comparisons(kb).groups
    assert len(groups) > 20
    for g in groups:
        assert f"compare/{g.slug}.html" in hrefs and f"compare/{g.slug}--across-hardware.html" in hrefs
    assert sum(len(g.records) for g in groups) == sum(1 for _ in kb.by_type("benchmark"))


def test_bundled_b200_roofline_page_gives_one_mfu_per_benchmark(bundled_site):
    # MLPerf v4.1 B200 Llama-2-70B Offline (FP16 weights, 11,264.4 tok/s on one device): MFU against the B200's
    # 2,250 TFLOPS bf16/fp16 dense peak = 11,264.4 x 2 x 70e9 / 2,250e12 = 70.09 % in both tables of the page
    # (the analysis placement once used the 9,000 TFLOPS FP4 peak: 17.5 %).
    out, _ = bundled_site
    page = out / "roofline" / "nvidia-b200.html"
    placed = [r for r in rows_in(page, "utilisation") if len(r) == 8 and r[2] == "fp16" and r[5] == "MFU"]
    assert placed and all(r[6] == "70.09" for r in placed if r[3].startswith("11,264.4")), placed
    assert any(r[3].startswith("11,264.4") for r in placed)
    assert '70.1 <span class="sub">vs bf16 peak</span>' in page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def repeat_site(tmp_path_factory):
    from analysis_helpers import bench, make_kb

    # rp and rp-2 measured one configuration twice (repeat_group "rp": 100 and 300 tok/s, median 200); other is a
    # second configuration of the same class at 150. Every condition is stated, so all three share the strict class.
    root = tmp_path_factory.mktemp("repeats")
    records = [bench("rp", 100.0, repeat_group="rp"), bench("rp-2", 300.0, repeat_group="rp"), bench("other", 150.0)]
    kb = inferkb.open(make_kb(root / "kb", records))
    return root / "out", build_site(kb, root / "out", search=False)


def test_compare_page_shows_a_repeat_pair_as_one_row_at_its_median(repeat_site):
    out, result = repeat_site
    page = out / "compare" / "m70.html"
    rows = rows_in(page, "groups")
    assert [(r[0], r[2]) for r in rows] == [("1", "200 tok/s"), ("2", "150 tok/s")]  # not 300, 150, 100
    assert "median of 2 repeats of one configuration (min 100, max 300); the others: rp-2" in rows[0][1]
    assert 'href="../benchmarks/rp-2.html"' in page.read_text(encoding="utf-8")
    charts = {k: v for k, v in result.charts.items() if k.startswith("cmp-m70-") and "--" not in k}
    assert list(charts.values()) == [2]  # the chart draws two bars, not three


def test_across_hardware_lens_divides_the_repeat_median_once(repeat_site):
    out, _ = repeat_site
    rows = rows_in(out / "compare" / "m70--across-hardware.html", "groups")
    # Ranked on the per-accelerator median (200 / 8), and the headline shown beside it is the median, not 100 or 300.
    assert [(r[2], r[3]) for r in rows] == [("25 tok/s", "ranked: 200 ÷ 8"), ("18.75 tok/s", "ranked: 150 ÷ 8")]


def test_compare_overview_counts_every_repeat_in_its_class(repeat_site):
    out, _ = repeat_site
    rows = rows_in(out / "compare.html", "models")
    # M70: 3 benchmarks, 1 class with others, 3 benchmarks in it (the pair counted as measurements, ranked once).
    assert rows and rows[0][:4] == ["M70", "3", "1", "3"], rows
