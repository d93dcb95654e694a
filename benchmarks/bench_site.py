"""Benchmark ``inferkb site build``: build time, page weight, and the home page's first render in Chromium.

Usage::

    python benchmarks/bench_site.py [--sizes 4000] [--runs 3] [--no-search] [--cache DIR] [--no-browser]

For each size a synthetic KB (``synth_kb.generate``, cached) is built
``--runs`` times in a fresh process (``python -m inferkb site build --kb KB
--out DIR``, into a new directory each time) after one untimed warm-up; the
median wall time and CPU time are reported, with the build's own split
(check, render, search index) from ``--format json``. Page weight: the
largest record page (HTML only, shared assets excluded) and the median.
With Chromium (``/usr/bin/chromium``) and Playwright, the home page is
served on 127.0.0.1 and loaded ``--runs`` times in a fresh page; the median
first-contentful-paint is reported. Targets (issue #10): build of 4,000
records <= 20 s, record page <= 100 KB, home first render < 1 s.
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
    """(largest, median) record-page size in KB, and the largest page's path; type index pages are not record pages."""
    sizes = {}
    for d in site.iterdir():
        if d.is_dir() and d.name not in ("assets", "pagefind", "docs", "roofline"):
            for p in d.glob("*.html"):
                if p.name != "index.html":
                    sizes[p] = p.stat().st_size / 1024
    worst = max(sizes, key=sizes.get)
    return sizes[worst], statistics.median(sizes.values()), str(worst.relative_to(site))


def home_fcp(site: Path, runs: int) -> list[float] | None:
    """First-contentful-paint of index.html in ms, one per fresh page; ``None`` without Chromium/Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not CHROMIUM.is_file():
        return None
    from inferkb.site.serve import SiteServer

    server = SiteServer(0, site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    out = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for _ in range(runs + 1):
                page = browser.new_page()
                page.goto(url, wait_until="load")
                fcp = page.evaluate("() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
                out.append(float(fcp))
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return out[1:]  # the first load warms the HTTP server and the browser's caches


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    rows = []
    for n in parse_sizes(args.sizes):
        kb = ensure_kb(n, args.cache)
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
            fcp = None if args.no_browser else home_fcp(work / "warm", args.runs)
            med = statistics.median(secs)
            fcp_med = statistics.median(fcp) if fcp else None
            rows.append(
                [
                    f"{n:,}",
                    str(split["pages"]),
                    f"{med:.2f}",
                    f"{min(secs):.2f}",
                    f"{statistics.median(cpu):.2f}",
                    " / ".join(f"{split['seconds'].get(k, 0):.1f}" for k in ("check", "render", "search_index")),
                    f"{biggest:.1f}",
                    f"{median_kb:.1f}",
                    f"{fcp_med:.0f}" if fcp_med is not None else "n/a",
                    "yes" if med <= BUILD_TARGET_S and biggest <= PAGE_TARGET_KB and (fcp_med is None or fcp_med < FCP_TARGET_MS) else "NO",
                ]
            )
            print(f"  {n}: largest record page {worst}", file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    header = ["N", "pages", "median s", "min s", "cpu s", "check/render/search s", "max page KB", "median page KB", "home FCP ms", "meets"]
    print(table(rows, header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
