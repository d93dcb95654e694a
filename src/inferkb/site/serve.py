"""``serve``: build a KB's site into a temporary directory and serve it on 127.0.0.1, rebuilding when records change.

The server binds the loopback address only, answers GET and HEAD, and maps a
request path onto a file strictly inside the built site: a path that leaves
it (``..``, an absolute or encoded escape, a symlink pointing out) gets the
404 page, and so does a directory without ``index.html`` (no listings).
Every response carries the site's Content-Security-Policy.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socketserver
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from .build import CSP, build_site

if TYPE_CHECKING:
    from ..kb import KB

HOST = "127.0.0.1"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


def resolve_path(root: Path, url_path: str) -> Path | None:
    """The file under ``root`` that ``url_path`` names, or ``None`` if it is outside ``root`` or is not a file.

    ``/`` and ``/dir/`` map to their ``index.html``. The path is decoded once,
    NUL and backslashes are refused, and the result is resolved (symlinks
    followed) and must still lie inside ``root``.
    """
    path = unquote(urlsplit(url_path).path)
    if "\x00" in path or "\\" in path:
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    candidate = root.joinpath(*parts) if parts else root
    if candidate.is_dir():
        candidate = candidate / "index.html"
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    root_real = root.resolve()
    if real != root_real and root_real not in real.parents:
        return None
    return real if real.is_file() else None


class SiteHandler(http.server.BaseHTTPRequestHandler):
    """Serves files of ``server.site_root`` (read on every request, so a rebuild swaps it atomically)."""

    server_version = "inferkb"
    sys_version = ""

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._serve(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(body=False)

    def _serve(self, body: bool) -> None:
        root: Path = self.server.site_root  # type: ignore[attr-defined]
        target = resolve_path(root, self.path)
        status = 200
        if target is None:
            status = 404
            target = root / "404.html"
        try:
            data = target.read_bytes()
        except OSError:
            status, data = 404, b"not found"
        self.send_response(status)
        self.send_header("Content-Type", TYPES.get(target.suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CSP + "; frame-ancestors 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature of the base class
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


class SiteServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """A threading HTTP server holding ``site_root``."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, site_root: Path, verbose: bool = False) -> None:
        super().__init__((HOST, port), SiteHandler)
        self.site_root = site_root
        self.verbose = verbose


def kb_signature(kb_root: Path) -> tuple:
    """A cheap fingerprint of the KB's records, docs and config: (path, size, mtime_ns) of every file that feeds the site."""
    sig = []
    for sub in ("data", "docs", "schemas", "provenance"):
        base = kb_root / sub
        if not base.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(base):
            for name in files:
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                sig.append((dirpath, name, st.st_size, st.st_mtime_ns))
    for name in ("kb.toml", "metrics.json"):
        p = kb_root / name
        if p.is_file():
            st = p.stat()
            sig.append((str(kb_root), name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(sig))


def serve(
    kb: KB,
    *,
    port: int = 8000,
    watch: bool = True,
    search: bool = True,
    interval: float = 1.0,
    reload: Callable[[], KB] | None = None,
    ready: Callable[[SiteServer], None] | None = None,
    log: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> None:
    """Build ``kb``'s site into a temporary directory and serve it on ``127.0.0.1:port`` until interrupted.

    With ``watch`` the KB's files are polled every ``interval`` seconds and
    the site is rebuilt (``reload()`` re-opens the KB) when one changes; the
    new build replaces the old one only when complete. ``ready(server)`` is
    called once serving starts; setting ``stop`` (or Ctrl-C) ends serving and
    removes the temporary directory. Raises ``OSError`` when the port is taken.
    """
    workdir = Path(tempfile.mkdtemp(prefix="inferkb-serve-"))
    try:
        generation = 0
        current = workdir / f"site-{generation}"
        result = build_site(kb, current, search=search)
        log(f"built {result.pages} pages in {result.seconds['total']:.1f} s")
        server = SiteServer(port, current)
        log(f"serving {kb.root} at http://{HOST}:{server.server_address[1]}/ (Ctrl-C to stop)")
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        if ready:
            ready(server)
        sig = kb_signature(kb.root)
        stop = stop or threading.Event()
        try:
            while thread.is_alive() and not stop.wait(interval):
                if not watch or reload is None:
                    continue
                now = kb_signature(kb.root)
                if now == sig:
                    continue
                sig = now
                generation += 1
                nxt = workdir / f"site-{generation}"
                try:
                    result = build_site(reload(), nxt, search=search)
                except Exception as exc:  # noqa: BLE001 - a bad edit must not stop the server; the old site stays up
                    log(f"rebuild failed, still serving the previous build: {exc}")
                    continue
                old, server.site_root = server.site_root, nxt
                shutil.rmtree(old, ignore_errors=True)
                log(f"records changed: rebuilt {result.pages} pages in {result.seconds['total']:.1f} s")
        finally:
            server.shutdown()
            server.server_close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
