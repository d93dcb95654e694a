"""Running one built-in command imports only its module; listing or help still gives every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner

from inferkb.plugins import BUILTINS


def _py(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_command_table_names_what_each_module_registers():
    """Each built-in command module, imported alone in a fresh process, registers exactly the commands that
    BUILTIN_COMMANDS assigns to it (and the table names no other module)."""
    code = (
        "import importlib, json, sys\n"
        "from inferkb.plugins import COMMANDS\n"
        "out = {}\n"
        f"for module in {list(BUILTINS['commands'])!r}:\n"
        "    before = set(COMMANDS.items)\n"
        "    importlib.import_module(module)\n"
        "    out[module] = sorted(set(COMMANDS.items) - before)\n"
        "from inferkb.cli import BUILTIN_COMMANDS\n"
        "print(json.dumps({'registered': out, 'table': BUILTIN_COMMANDS}))\n"
    )
    doc = json.loads(_py(code))
    table: dict[str, str] = doc["table"]
    registered = {name: module for module, names in doc["registered"].items() for name in names}
    assert registered == table
    assert set(table.values()) == set(BUILTINS["commands"])


def _modules_after_validate(prefix: str = "", env: dict[str, str] | None = None) -> set[str]:
    """The modules (names starting with ``prefix``) a fresh process holds after ``inferkb validate --format json``."""
    code = (
        "import sys\n"
        "from inferkb.cli import main\n"
        "try:\n"
        "    main(['validate', '--format', 'json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(' '.join(sorted(m for m in sys.modules if m.startswith({prefix!r}))), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    return set(proc.stderr.split())


def test_running_validate_imports_no_other_command_module():
    loaded = _modules_after_validate("inferkb.cli.")
    assert "inferkb.cli.checks" in loaded
    assert not loaded & (set(BUILTINS["commands"]) - {"inferkb.cli.checks"})


def test_validate_does_not_import_the_write_path_ctypes_or_pickle_py():
    """A cold validate (split or not) reads only: the writer, its lock, ctypes (renameat2) and the pure-Python
    pickle module are start-up time it never uses."""
    for jobs in ("1", "2"):
        loaded = _modules_after_validate(env={**os.environ, "INFERKB_JOBS": jobs, "INFERKB_NO_CACHE": "1"})
        assert "inferkb.validate_split" in loaded and "inferkb.store.loader" in loaded
        assert not loaded & {"inferkb.store.writer", "inferkb.store.lock", "ctypes", "pickle"}, jobs
        # Nor the batch writer and its descriptor layer (the leftover-file scan is apart), nor secrets (temp names).
        assert not loaded & {"inferkb.store.batch", "inferkb.store.dirfd", "secrets"}, jobs


def test_importing_urls_compiles_no_prefilter_regex_yet():
    """The KB112 prefilter's large regex (about 3 ms to compile) is built on first need, not at import."""
    out = _py(
        "import re; re.purge(); from inferkb import urls; "
        "print(urls._maybe_dangerous.cache_info().currsize); "
        'urls.may_hold_unsafe_url(b\'{"a": "\\\\u0001javascript:x"}\'); print(urls._maybe_dangerous.cache_info().currsize)'
    )
    assert out.split() == ["0", "1"]


def test_help_lists_every_built_in_command_in_a_fresh_process():
    from inferkb.cli import BUILTIN_COMMANDS

    out = _py("from inferkb.cli import main; main(['--help'])")
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(BUILTIN_COMMANDS)


def test_a_command_of_a_module_not_yet_imported_runs_through_the_group():
    from inferkb.cli import cli

    result = CliRunner().invoke(cli, ["rules", "KB001"])
    assert result.exit_code == 0, result.output
    assert "KB001" in result.output
