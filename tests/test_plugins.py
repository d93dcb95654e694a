"""Extension points declared once: built-ins registered as default plugins, third-party plugins by entry point."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, rec, write_kb

TOY_MODULE = '''
"""A third-party importer: one JSON object {"model": ..., "tok_s": ...} -> one benchmark record."""
import json

from inferkb.intake import Importer, IntakeResult, register


@register
class ToyImporter(Importer):
    name = "toy-format"
    description = "toy: a one-line JSON result (test plugin)"

    def parse(self, paths, options, kb):
        out = IntakeResult()
        for path in paths:
            doc = json.loads(path.read_text())
            out.records.append(
                {"id": f"toy-{path.stem}", "type": "benchmark", "name": f"toy run {doc['model']}", "value": doc["tok_s"]}
            )
        out.stats = {"imported": len(out.records)}
        return out
'''


def install_distribution(site: Path, name: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]) -> Path:
    """Write a minimal installed distribution (modules + ``<name>-0.1.dist-info``) under ``site``, as pip would lay it out."""
    site.mkdir(parents=True, exist_ok=True)
    for mod, text in modules.items():
        (site / f"{mod}.py").write_text(textwrap.dedent(text))
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = []
    for group, eps in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return site


def run_py(code: str, site: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env_path = str(site) if site else ""
    import os

    env = {**os.environ, "PYTHONPATH": env_path + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def run_cli(*args, site: Path | None = None) -> subprocess.CompletedProcess:
    code = "import sys; sys.argv = ['inferkb', *sys.argv[1:]]; from inferkb.cli import main; main()"
    import os

    env = {**os.environ, "PYTHONPATH": str(site) if site else ""}
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env, timeout=120)


def test_rule_registry_is_complete_right_after_open():
    # A fresh process: nothing but inferkb.open() has been imported.
    proc = run_py("import inferkb; kb = inferkb.open(); from inferkb import rules; r = rules.get('KB301'); print(r.slug if r else None)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "load-condition-absent"


def test_every_family_of_rules_is_registered_in_a_fresh_process():
    proc = run_py("from inferkb import rules; print(sorted({r.family for r in rules.all_rules().values()}))")
    families = set(json.loads(proc.stdout.replace("'", '"')))
    assert {"validate", "load-conditions", "metric-consistency", "physical-plausibility", "citations"} <= families
    assert {"provenance-tiers", "identity", "staleness", "derive", "intake"} <= families


def test_importing_the_cli_package_gives_every_command():
    proc = run_py("import inferkb.cli as c; print(' '.join(sorted(c.cli.commands)))")
    commands = set(proc.stdout.split())
    assert {"validate", "check", "audit", "rules", "list", "show", "search", "where", "refs", "stats", "gaps"} <= commands
    assert {"init", "new", "intake", "env", "derive", "export-report", "plugins"} <= commands


def test_an_installed_package_adds_an_importer_by_entry_point(tmp_path):
    site = install_distribution(
        tmp_path / "site", "toy-inferkb-plugin", {"toy_inferkb": TOY_MODULE}, {"inferkb.importers": {"toy": "toy_inferkb"}}
    )
    proc = run_cli("intake", "list", "--format", "json", site=site)
    assert proc.returncode == 0, proc.stderr
    assert "toy-format" in [i["name"] for i in json.loads(proc.stdout)]
    kb = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    (tmp_path / "run.json").write_text('{"model": "tiny", "tok_s": 12.5}')
    proc = run_cli("intake", "toy-format", tmp_path / "run.json", "--kb", kb, "--format", "json", site=site)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["written"] == ["benchmarks/toy-run"]
    assert json.loads((kb / "data/benchmarks/toy-run.json").read_text())["value"] == 12.5


def test_plugins_lists_where_a_third_party_item_came_from(tmp_path):
    site = install_distribution(
        tmp_path / "site", "toy-inferkb-plugin", {"toy_inferkb": TOY_MODULE}, {"inferkb.importers": {"toy": "toy_inferkb"}}
    )
    proc = run_cli("plugins", "--format", "json", site=site)
    doc = json.loads(proc.stdout)
    assert doc["importers"]["items"]["toy-format"] == {"module": "toy_inferkb", "distribution": "toy-inferkb-plugin"}
    assert doc["importers"]["items"]["vllm-serve"] == {"module": "inferkb.intake.vllm_serve", "distribution": None}


def test_a_broken_plugin_is_reported_and_does_not_stop_the_others(tmp_path):
    site = install_distribution(
        tmp_path / "site",
        "broken-inferkb-plugin",
        {"broken_inferkb": "raise RuntimeError('plugin bug')\n"},
        {"inferkb.importers": {"broken": "broken_inferkb"}},
    )
    proc = run_cli("intake", "list", site=site)
    assert proc.returncode == 0 and "vllm-serve" in proc.stdout
    proc = run_cli("plugins", "--format", "json", site=site)
    failed = json.loads(proc.stdout)["importers"]["failed"]
    assert failed == {"broken = broken_inferkb (from broken-inferkb-plugin)": "RuntimeError: plugin bug"}


def test_an_entry_point_naming_an_object_registers_it_under_the_entry_point_name(tmp_path):
    module = "from inferkb.audit import AuditResult, AuditSpec\nSPEC = AuditSpec('toy-audit', 'counts records', lambda kb: AuditResult('toy-audit', figures={'n': len(kb.records)}))\n"
    site = install_distribution(
        tmp_path / "site", "toy-audit-plugin", {"toy_audit": module}, {"inferkb.audits": {"toy-audit": "toy_audit:SPEC"}}
    )
    kb = write_kb(tmp_path / "kb", {"data/sources/s.json": rec("source", "s")})
    proc = run_cli("audit", "toy-audit", "--kb", kb, "--format", "json", site=site)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["figures"]["toy-audit"] == {"n": 1}


def test_a_second_module_claiming_a_registered_name_is_refused():
    from inferkb.plugins import ExtensionPoint, PluginError

    point = ExtensionPoint("things", ())
    point.register("a", 1, module="pkg.one")
    point.register("a", 2, module="pkg.one")  # the same module again: a re-import replaces its own item
    assert point.items == {"a": 2}
    with pytest.raises(PluginError, match="pkg.one and again by pkg.two"):
        point.register("a", 3, module="pkg.two")


# ---- layering -------------------------------------------------------------------------------------
def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> inferkb modules it imports (top level and inside functions; not under TYPE_CHECKING)."""
    import ast

    mods: dict[str, tuple[Path, bool]] = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    graph: dict[str, set[str]] = {}
    for mod, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        out: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    out.add(sub if sub in mods else target)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        graph[mod] = {t for t in out if t in mods and t != mod and not mod.startswith(t + ".")}
    return graph


def test_there_is_no_import_cycle_in_the_package():
    graph = _import_graph(REPO / "src" / "inferkb")
    assert len(graph) > 50
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_store_imports_nothing_above_it():
    graph = _import_graph(REPO / "src" / "inferkb")
    allowed = {
        "inferkb.errors",
        "inferkb.findings",
        "inferkb.jsonio",
        "inferkb.profile",
        "inferkb.rules",
        "inferkb.validate_rules",
        "inferkb.plugins",
        "inferkb.urls",  # the loader's KB112 byte pre-filter; a leaf, checked below
    }
    store = {m for m in graph if m == "inferkb.store" or m.startswith("inferkb.store.")}
    above = {t for m in store for t in graph[m] if t not in store and t not in allowed}
    assert above == set()
    assert graph["inferkb.urls"] == set()  # urls imports no inferkb module, so it is not above the store


def test_a_command_module_written_against_the_old_cli_module_still_registers():
    code = (
        "import click, sys\n"
        "from inferkb.cli import cli, main, _emit_json, kb_option\n"
        "@cli.command('legacy-cmd')\n"
        "@kb_option\n"
        "def legacy(kb_path): _emit_json({'ok': True})\n"
        "sys.argv = ['inferkb', 'legacy-cmd']\n"
        "main()\n"
    )
    proc = run_py(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"ok": True}
