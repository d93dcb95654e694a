"""Output safety and error reporting (issue 12): GitHub workflow-command escaping, no network for schemas,
JSON errors, internal errors with their own exit code."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import inferkb
from conftest import rec, write_kb
from inferkb.findings import Finding
from inferkb.report import Report
from test_plugins import install_distribution


def run(*args, env=None, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "inferkb", *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
    return proc


# ---- GitHub workflow commands cannot be injected -----------------------------------------------------


def github_lines(findings: list[Finding]) -> list[str]:
    import io
    from types import SimpleNamespace

    from inferkb.reporters import render_github

    buf = io.StringIO()
    render_github(Report("kb", 1, findings), SimpleNamespace(file=buf))
    return buf.getvalue().splitlines()


def test_a_file_name_cannot_start_a_workflow_command_of_its_own():
    evil = "data/engines/x\n::stop-commands::pwned\n.json"
    [line] = github_lines([Finding("KB011", "bad-file-name", "error", "bad name", path=evil)])
    assert line.startswith("::error file=") and "\n" not in line
    assert "::stop-commands::" not in line.split("::", 2)[1]  # nothing in the properties ends them early


def test_a_message_cannot_start_a_workflow_command_of_its_own():
    msg = "quote: fine\r\n::stop-commands::pwned\n::add-mask::x"
    [line] = github_lines([Finding("KB101", "schema-violation", "error", msg, path="data/a.json")])
    # (the file property is relative to the repository root, so only its end is fixed here)
    assert line.startswith("::error file=") and "\n" not in line
    assert line.endswith("data/a.json,title=KB101 schema-violation::quote: fine\\r%0A::stop-commands::pwned%0A::add-mask::x")


def test_property_values_escape_percent_colon_and_comma():
    [line] = github_lines([Finding("KB010", "unknown-path", "warning", "100% sure", path="data/a,b:c%.json")])
    assert line.startswith("::warning file=")
    assert line.endswith("data/a%2Cb%3Ac%25.json,title=KB010 unknown-path::100%25 sure")


def test_validate_format_github_escapes_a_hostile_file_name(tmp_path):
    kb = write_kb(tmp_path, {"data/engines/x,title=pwned::y.json": rec("engine", "x")})
    proc = run("validate", "--kb", kb, "--format", "github")
    lines = [ln for ln in proc.stdout.splitlines() if ln]
    assert lines and all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines)
    assert any("x%2Ctitle=pwned%3A%3Ay.json" in ln for ln in lines)


# ---- validate never touches the network for a schema's $ref -------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        _Recorder.hits.append(self.path)
        body = b'{"type": "object"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def schema_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_remote_ref_in_a_kb_schema_is_a_finding_and_never_fetched(tmp_path, schema_server):
    kb = write_kb(tmp_path, {"data/engines/x.json": rec("engine", "x")})
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": f"{schema_server}/engine.schema.json"}
    (kb / "schemas" / "engine.schema.json").write_text(json.dumps(schema))
    report = inferkb.open(kb).validate()
    assert _Recorder.hits == [], "validate fetched a remote $ref"
    [f] = [f for f in report.findings if f.code == "KB113"]
    assert f.path == "schemas/engine.schema.json" and schema_server in f.message


def test_a_file_url_ref_is_not_read_either(tmp_path):
    secret = tmp_path / "outside.json"
    secret.write_text('{"type": "object", "required": ["never"]}')
    kb = write_kb(tmp_path / "kb", {"data/engines/x.json": rec("engine", "x")})
    (kb / "schemas" / "engine.schema.json").write_text(json.dumps({"$ref": secret.as_uri()}))
    report = inferkb.open(kb).validate()
    assert [f.code for f in report.findings if f.code in ("KB113", "KB101")] == ["KB113"]


# ---- --format json prints JSON on error too -----------------------------------------------------------


@pytest.mark.parametrize(
    "args, kind",
    [
        (("validate", "--kb", "/nonexistent/kb"), "kb-not-found"),
        (("show", "no-such-record"), "usage"),
        (("intake", "vllm-serve", "/nonexistent/result.json", "--dry-run"), "input"),
        (("where", "name", "??"), "usage"),
        (("list", "--bogus-option"), "usage"),
    ],
)
def test_an_error_with_format_json_is_one_json_object(args, kind):
    proc = run(*args, "--format", "json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["error"] == kind and doc["message"] and doc["exit_code"] == 2
    assert proc.stderr.strip().count("\n") == 0  # and one line for a human


# ---- internal errors: exit 3, one line naming the file, --debug for the traceback ---------------------

BOOM = """
from inferkb.audit import AuditResult, audit


@audit("boom", "fails on the record named bad (test plugin)")
def run(kb):
    for rec in kb.by_type("engine"):
        if rec.id == "bad":
            raise KeyError("speed")
    return AuditResult([], {})
"""


@pytest.fixture()
def boom(tmp_path):
    site = install_distribution(tmp_path / "site", "boom-inferkb-plugin", {"boom_audit": BOOM}, {"inferkb.audits": {"boom": "boom_audit"}})
    kb = write_kb(tmp_path / "kb", {"data/engines/good.json": rec("engine", "good"), "data/engines/bad.json": rec("engine", "bad")})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)}
    env.pop("INFERKB_DEBUG", None)
    return kb, env


def test_an_internal_error_exits_3_with_one_line_naming_the_file(boom):
    kb, env = boom
    proc = run("audit", "boom", "--kb", kb, env=env)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert "internal error while processing data/engines/bad.json" in proc.stderr
    assert "KeyError" in proc.stderr and "report" in proc.stderr and "--debug" in proc.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(boom, where):
    kb, env = boom
    args = ["--debug", "audit", "boom", "--kb", kb] if where == "before" else ["audit", "boom", "--kb", kb, "--debug"]
    proc = run(*args, env=env)
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "KeyError" in proc.stderr


def test_an_internal_error_with_format_json_is_a_json_object_naming_the_file(boom):
    kb, env = boom
    proc = run("audit", "boom", "--kb", kb, "--format", "json", env=env)
    assert proc.returncode == 3
    doc = json.loads(proc.stdout)
    assert doc["error"] == "internal" and doc["file"] == "data/engines/bad.json" and doc["exit_code"] == 3


def test_help_documents_exit_code_3_and_debug():
    proc = run("--help")
    assert "3 internal error" in " ".join(proc.stdout.split()) and "--debug" in proc.stdout


def test_the_failing_record_is_found_from_an_argument_not_a_stale_loop_variable(tmp_path):
    """After a loop, its variable still holds the last record: that record is not what failed."""
    code = textwrap.dedent(
        """
        import sys
        from inferkb.cli import _failing_file
        from inferkb.store import Record
        def stale():
            for rec in [Record("engines/last", "last", "engine", "engines", "data/engines/last.json", {})]:
                pass
            raise ValueError("after the loop")
        def given(rec):
            raise ValueError("on this record")
        for fn, arg in ((stale, ()), (given, (Record("engines/x", "x", "engine", "engines", "data/engines/x.json", {}),))):
            try:
                fn(*arg)
            except ValueError as exc:
                print(_failing_file(exc))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["None", "data/engines/x.json"], proc.stderr


def test_a_full_disk_is_an_input_error_not_an_internal_one(tmp_path):
    """Writing into a read-only type directory: the store's WriteFailed, exit 2, naming the file."""
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions; the full-disk case is covered in test_hostile_writes")
    kb = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (kb / "data" / "engines").mkdir()
    os.chmod(kb / "data" / "engines", 0o555)
    try:
        proc = run("new", "engine", "--name", "Blocked", "--kb", kb)
    finally:
        os.chmod(kb / "data" / "engines", 0o755)
    assert proc.returncode == 2 and "nothing of the batch was written" in proc.stderr


def test_the_github_reporter_escapes_the_same_as_the_workflow_runner_unescapes():
    """actions/runner ActionCommand unescapes %0D %0A %3A %2C %25 in properties; round-trip a hostile path."""
    hostile = "a%b,c:d\re\nf"
    [line] = github_lines([Finding("KB010", "unknown-path", "warning", "m", path=hostile)])
    prop = line.split(" ", 1)[1].split(",title=", 1)[0][len("file=") :]
    unescaped = prop.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    assert unescaped.endswith("/a%b,c:d\\re\\nf")  # control characters were already made visible before escaping
