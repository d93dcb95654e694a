"""Benchmark ``inferkb site build``: build time, page weight, and the home page's first render in Chromium.

Usage::

    python benchmarks/bench_site.py [--sizes 4000] [--runs 3] [--no-search] [--cache DIR] [--no-browser] [--bundled]

For each size a synthetic KB (``synth_kb.generate``, cached) is built
``--runs`` times in a fresh process (``python -m inferkb site build --kb KB
--out DIR``, into a new directory each time) after one untimed warm-up; the
median wall time and CPU time are reported, with the build's own split
(check, render, search index) from ``--format json``. Page weight: the
largest record page (HTML only, shared assets excluded) and the median.
With Chromium (``/usr/bin/chromium``) and Playwright, the home page is
served on 127.0.0.1 and loaded ``--runs`` times in a fresh page; the median
first-contentful-paint is reported, and the largest type table (by bytes) is
loaded ``--runs`` times: its median load event (ms after navigation start).
Analysis pages (compare, Pareto, history): their count and the largest one's
weight. ``--bundled`` adds a row for the bundled KB (built the same way).
Targets (issue #10): build of 4,000 records <= 20 s, record page <= 100 KB,
home first render < 1 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from bench_validate import DEFAULT_CACHE, child_env, ensure_kb, parse_sizes, run_once, table  # noqa: E402

BUILD_TARGET_S = 20.0
PAGE_TARGET_KB = 100.0
FCP_TARGET_MS = 1000.0
CHROMIUM = Path("/usr/bin/chromium")
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


def build_cmd(kb: Path, out: Path, search: bool, json_out: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "inferkb", "site", "build", "--kb", str(kb), "--out", str(out)]
    if not search:
        cmd.append("--no-search")
    if json_out:
        cmd += ["--format", "json"]
    return cmd


def page_weights(site: Path) -> tuple[float, float, str]:
    """(largest, median) record-page size in KB, and the largest page's path; type index pages and the analysis pages
    (``compare/``, ``history/``, see :func:`analysis_weights`) are not record pages."""
    sizes = {}
    for d in site.iterdir():
        if d.is_dir() and d.name not in ("assets", "pagefind", "docs", "roofline", "compare", "history"):
            for p in d.glob("*.html"):
                if p.name != "index.html":
                    sizes[p] = p.stat().st_size / 1024
    worst = max(sizes, key=sizes.get)
    return sizes[worst], statistics.median(sizes.values()), str(worst.relative_to(site))


def analysis_weights(site: Path) -> tuple[int, float, str]:
    """(analysis pages, largest in KB, its path): compare/Pareto/history pages, HTML only."""
    pages = [p for p in (site / "compare.html", site / "pareto.html", site / "history.html") if p.is_file()]
    for d in ("compare", "history"):
        if (site / d).is_dir():
            pages += list((site / d).glob("*.html"))
    if not pages:
        return 0, 0.0, "-"
    worst = max(pages, key=lambda p: p.stat().st_size)
    return len(pages), worst.stat().st_size / 1024, str(worst.relative_to(site))


def biggest_table(site: Path) -> str:
    """Site-relative path of the largest type index page."""
    tables = [p for p in site.glob("*/index.html") if p.parent.name not in ("docs", "pagefind", "assets")]
    return str(max(tables, key=lambda p: p.stat().st_size).relative_to(site))


def page_times(site: Path, paths: list[str], runs: int) -> dict[str, list[float]] | None:
    """Per path: first-contentful-paint (index.html) or load event (others) in ms, one per fresh page after a warm-up;
    ``None`` without Chromium/Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not CHROMIUM.is_file():
        return None
    from inferkb.site.serve import SiteServer

    server = SiteServer(0, site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out: dict[str, list[float]] = {}
    fcp_js = "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
    load_js = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for path in paths:
                times = []
                for _ in range(runs + 1):
                    page = browser.new_page()
                    page.goto(base + path, wait_until="load")
                    times.append(float(page.evaluate(fcp_js if path == "index.html" else load_js)))
                    page.close()
                out[path] = times[1:]  # the first load warms the HTTP server and the browser's caches
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--bundled", action="store_true", help="also build the bundled KB")
    args = ap.parse_args(argv)
    rows = []
    targets: list[tuple[str, Path]] = [(f"{n:,}", ensure_kb(n, args.cache)) for n in parse_sizes(args.sizes)]
    if args.bundled:
        targets.append(("bundled", HERE.parent / "src" / "inferkb" / "kb"))
    for label, kb in targets:
        work = Path(tempfile.mkdtemp(prefix="inferkb-bench-site-"))
        try:
            proc = subprocess.run(
                build_cmd(kb, work / "warm", not args.no_search, True), capture_output=True, text=True, env=child_env(), check=True
            )
            split = json.loads(proc.stdout)
            secs, cpu = [], []
            for i in range(args.runs):
                took, used, _mb, _rc = run_once(build_cmd(kb, work / f"run{i}", not args.no_search))
                secs.append(took)
                cpu.append(used)
                shutil.rmtree(work / f"run{i}")
            biggest, median_kb, worst = page_weights(work / "warm")
            n_analysis, analysis_kb, analysis_worst = analysis_weights(work / "warm")
            big = biggest_table(work / "warm")
            times = None if args.no_browser else page_times(work / "warm", ["index.html", big], args.runs)
            med = statistics.median(secs)
            fcp_med = statistics.median(times["index.html"]) if times else None
            table_ms = statistics.median(times[big]) if times else None
            table_kb = (work / "warm" / big).stat().st_size / 1024
            rows.append(
                [
                    label,
                    str(split["pages"]),
                    f"{med:.2f}",
                    f"{min(secs):.2f}",
                    f"{statistics.median(cpu):.2f}",
                    " / ".join(f"{split['seconds'].get(k, 0):.1f}" for k in ("check", "render", "search_index")),
                    f"{biggest:.1f}",
                    f"{median_kb:.1f}",
                    f"{fcp_med:.0f}" if fcp_med is not None else "n/a",
                    f"{table_kb:,.0f} / {table_ms:.0f}" if table_ms is not None else f"{table_kb:,.0f} / n/a",
                    f"{n_analysis} / {analysis_kb:.0f}",
                    "yes" if med <= BUILD_TARGET_S and biggest <= PAGE_TARGET_KB and (fcp_med is None or fcp_med < FCP_TARGET_MS) else "NO",
                ]
            )
            print(f"  {label}: largest record page {worst}; largest table {big}; largest analysis page {analysis_worst}", file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    header = [
        "N",
        "pages",
        "median s",
        "min s",
        "cpu s",
        "check/render/search s",
        "max page KB",
        "median page KB",
        "home FCP ms",
        "table KB / load ms",
        "analysis pages / max KB",
        "meets",
    ]
    print(table(rows, header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
