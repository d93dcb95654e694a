"""Take the README's screenshots of the bundled KB's site with Debian's Chromium (Playwright, no browser download).

Usage::

    .venv/bin/python scripts/screenshots.py [--out screenshots]

Builds the site into a temporary directory, serves it on 127.0.0.1 and saves
small PNGs (desktop and phone widths) to ``--out``. Needs /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

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
# (file name, page, viewport width, height, action before the shot)
SHOTS = [
    ("home.png", "index.html", 960, 600, None),
    ("benchmarks-filtered.png", "benchmarks/index.html?lacks=engine%20version", 960, 600, "scroll-table"),
    ("benchmark-record.png", "benchmarks/vllm-mtp-regression-qwen3-next-80b-a3b.html", 960, 640, "arms"),
    ("roofline.png", "roofline/nvidia-b300.html", 960, 600, "chart"),
    ("search.png", "search.html", 960, 600, "search"),
    ("record-phone.png", "accelerators/nvidia-h100-sxm.html", 360, 640, None),
    ("compare.png", "compare/llama-2-70b.html", 960, 640, "at:groups"),
    ("history.png", "history/llama-2-70b.html", 960, 600, "at:h-1"),
    (
        "comparable.png",
        "benchmarks/mlperf-v4-1-closed-hpe-hpe-cray-xd670-h100-sxm-80gbx8-trt-llama2-70b-99-offline.html",
        960,
        520,
        "at:comparable",
    ),
    ("utilisation.png", "roofline/nvidia-h100-sxm.html", 960, 600, "at:utilisation-nvidia-h100-sxm"),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "screenshots")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    import inferkb
    from inferkb.site import build_site
    from inferkb.site.serve import SiteServer

    work = Path(tempfile.mkdtemp(prefix="inferkb-shots-"))
    try:
        build_site(inferkb.open(), work / "site")
        server = SiteServer(0, work / "site")
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        args.out.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for name, path, width, height, action in SHOTS:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(base + path, wait_until="load")
                if action == "scroll-table":
                    page.locator("form.filters").scroll_into_view_if_needed()
                elif action == "arms":
                    page.locator("#arms-h").scroll_into_view_if_needed()
                elif action == "chart":
                    page.wait_for_selector(".vega[data-rendered]")
                    page.locator("figure.chart").scroll_into_view_if_needed()
                elif action and action.startswith("at:"):
                    # Every chart of the page drawn, then the named part scrolled to the top.
                    n = page.locator("figure.chart").count()
                    page.wait_for_function(f"() => document.querySelectorAll('.vega[data-rendered]').length >= {n}", timeout=30_000)
                    page.evaluate("id => document.getElementById(id).scrollIntoView()", action[3:])
                elif action == "search":
                    page.fill(".pagefind-ui__search-input", "speculative decoding")
                    page.wait_for_selector(".pagefind-ui__result", timeout=15_000)
                    page.wait_for_timeout(500)
                page.screenshot(path=str(args.out / name))
                page.close()
                print(f"wrote {args.out / name}")
            browser.close()
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
