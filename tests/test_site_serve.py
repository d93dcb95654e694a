"""``inferkb serve``: loopback only, nothing outside the built site, CSP header, rebuild when a record changes."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import time

import inferkb
from conftest import rec, write_kb
from inferkb.site import CSP
from inferkb.site.serve import serve


def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)  # sent as written: http.client does not normalise '..'
    resp = conn.getresponse()
    out = resp.status, dict(resp.getheaders()), resp.read()
    conn.close()
    return out


def listening_addresses(port: int) -> list[str]:
    """IPv4/IPv6 addresses with a socket listening on ``port``, read from /proc/net/tcp{,6} (Linux)."""
    out = []
    for name in ("tcp", "tcp6"):
        try:
            lines = open(f"/proc/net/{name}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:
                if name == "tcp":
                    out.append(".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)))
                else:
                    out.append(addr)
    return out


def test_cli_serve_binds_loopback_and_refuses_traversal(tmp_path):
    kb = write_kb(tmp_path / "kb", {"data/engines/e1.json": rec("engine", "e1", name="Engine One")})
    (tmp_path / "secret.txt").write_text("secret")
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferkb", "serve", "--kb", str(kb), "--port", "0", "--no-search", "--no-watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = None
        for _ in range(50):
            line = proc.stdout.readline()
            m = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        assert port, proc.stderr.read() if proc.poll() is not None else "no 'serving' line"
        status, headers, body = _get(port, "/engines/e1.html")
        assert status == 200 and b"Engine One" in body
        assert headers["Content-Security-Policy"].startswith(CSP)
        for bad in ("/../secret.txt", "/engines/../../secret.txt", "/%2e%2e/%2e%2e/secret.txt", "/assets/"):
            status, _, body = _get(port, bad)
            assert status == 404 and b"secret" not in body, bad
            assert b"Not found" in body
        # Loopback only: the server's socket is bound to 127.0.0.1, not to all interfaces.
        assert listening_addresses(port) == ["127.0.0.1"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_rebuilds_when_a_record_changes(tmp_path):
    root = write_kb(tmp_path / "kb", {"data/engines/e1.json": rec("engine", "e1", name="Before Edit")})
    started = threading.Event()
    stop = threading.Event()
    box: dict = {}

    def ready(server):
        box["port"] = server.server_address[1]
        started.set()

    t = threading.Thread(
        target=serve,
        args=(inferkb.open(root),),
        kwargs={
            "port": 0,
            "search": False,
            "interval": 0.2,
            "reload": lambda: inferkb.open(root),
            "ready": ready,
            "stop": stop,
            "log": lambda m: None,
        },
        daemon=True,
    )
    t.start()
    try:
        assert started.wait(60)
        assert b"Before Edit" in _get(box["port"], "/engines/e1.html")[2]
        path = root / "data" / "engines" / "e1.json"
        path.write_text(json.dumps(rec("engine", "e1", name="After Edit")))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if b"After Edit" in _get(box["port"], "/engines/e1.html")[2]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the site was not rebuilt after the record changed")
    finally:
        stop.set()
        t.join(30)
    assert not t.is_alive()
