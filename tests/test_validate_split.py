"""Cold validate in two processes (inferkb.validate_split) gives the one-process report: every finding, in order.

The split hands every other record file to a forked child, so problem files placed side by side land in both
processes' shares. Each test forces the split on a small KB (``SPLIT_MIN_FILES`` patched to 0) and compares it
with ``inferkb.open(...).validate()`` in this process.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

import inferkb
from conftest import BUNDLED, rec
from inferkb import validate_split
from inferkb.cli import cli

REPO = Path(__file__).resolve().parents[1]
KB_TOML_LIMIT = "\nmax_record_bytes = 65536\n"  # appended to the [kb] table (the file's first table)


def _synth():
    spec = importlib.util.spec_from_file_location("synth_kb", REPO / "benchmarks" / "synth_kb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def troubled_kb(tmp_path_factory) -> Path:
    """A 300-record synthetic KB with KB0xx problems, record-rule errors and broken references in several places."""
    root = tmp_path_factory.mktemp("split") / "kb"
    _synth().generate(root, 300, seed=3)
    toml = (root / "kb.toml").read_text()
    (root / "kb.toml").write_text(toml.replace("[kb]\n", "[kb]" + KB_TOML_LIMIT, 1))
    data = root / "data"
    outside = tmp_path_factory.mktemp("outside")
    (outside / "elsewhere.json").write_text(json.dumps(rec("engine", "elsewhere")))
    bench = sorted((data / "benchmarks").glob("bench*.json"))
    for i, path in enumerate(bench[:6]):  # record rules and references in consecutive files: both shares
        doc = json.loads(path.read_text())
        doc["updated"] = "2026-02-31" if i % 2 else "2999-01-01"  # KB105 / KB106
        doc["sources"] = [*doc.get("sources", []), f"no-such-source-{i}"]  # KB201
        doc["confidence"] = 3  # KB107 (and a schema error)
        path.write_text(json.dumps(doc, indent=2) + "\n")
    source = sorted((data / "sources").glob("*.json"))[-1]
    shutil.copy(source, data / "engines" / source.name)  # KB205: one id in two types (and KB104)
    for d in ("accelerators", "benchmarks", "sources"):  # in three type directories, each time two files side by side
        folder = data / d
        first = sorted(folder.iterdir())[0].name[:-5]
        (folder / f"{first}-a-broken.json").write_text('{"id": ')  # KB001
        (folder / f"{first}-b-duplicate.json").write_text('{"id": "x", "id": "y"}\n')  # KB002
        (folder / "Bad_Name.json").write_text(json.dumps(rec("x", "Bad_Name"), indent=2) + "\n")  # KB011 and loaded
        (folder / f".{first}.json.inferkb-123-0123abcd.tmp").write_text("{}")  # KB012
        (folder / f"{first}-c-big.json").write_text(json.dumps({"notes": "x" * 70000}))  # KB008
        (folder / f"{first}-d-out.json").symlink_to(outside / "elsewhere.json")  # KB009
        (folder / "nested").mkdir()  # KB010
        (folder / "readme.txt").write_text("not a record")  # KB010
        os.mkfifo(folder / f"{first}-e-fifo.json")  # KB014
    (data / "stray.json").write_text("{}")  # KB010, directly under data/
    (data / "notes").mkdir()  # KB010, an unknown type directory
    (root / ".orphan.json.inferkb-9-0123abcd.tmp").write_text("{}")  # KB012 in the root, after the walk
    return root


def _serial(path: Path, **options) -> dict:
    return inferkb.open(path, cache=False).validate(**options).to_dict()


def _split(path: Path, monkeypatch, **options):
    """The report of a forced split, and whether the child's result was used."""
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    used = []
    receive = validate_split._receive

    def spy(child):
        got = receive(child)
        used.append(got is not None)
        return got

    monkeypatch.setattr(validate_split, "_receive", spy)
    report = validate_split.validate_path(path, 2, **options)
    assert report is not None
    return report.to_dict(), used


def test_split_report_equals_the_serial_one_with_problem_files_in_both_shares(troubled_kb, monkeypatch):
    split, used = _split(troubled_kb, monkeypatch)
    serial = _serial(troubled_kb)
    assert used == [True]
    assert split == serial
    codes = {f["code"] for f in serial["findings"]}
    assert {"KB001", "KB002", "KB008", "KB009", "KB010", "KB011", "KB012", "KB014", "KB101", "KB105", "KB106"} <= codes
    assert {"KB107", "KB201", "KB205"} <= codes


def test_findings_come_out_in_the_serial_order(troubled_kb, monkeypatch):
    split, _ = _split(troubled_kb, monkeypatch)
    order = [(f["code"], f["path"], f["field"], f["message"]) for f in split["findings"]]
    assert order == [(f["code"], f["path"], f["field"], f["message"]) for f in _serial(troubled_kb)["findings"]]
    paths = [f["path"] for f in split["findings"] if f["code"].startswith("KB0") and f["path"].startswith("data/")]
    assert len(paths) > 20


def test_the_json_document_is_byte_identical(troubled_kb, monkeypatch):
    split, _ = _split(troubled_kb, monkeypatch)
    assert render_json_bytes(split) == render_json_bytes(_serial(troubled_kb))


def render_json_bytes(doc: dict) -> bytes:
    import orjson

    return orjson.dumps(doc, option=orjson.OPT_INDENT_2)


def test_options_types_select_ignore_and_budget_pass_through(troubled_kb, monkeypatch):
    options = {"types": ["benchmark"], "ignore": ["KB101"], "max_dangling_refs": 2}
    split, used = _split(troubled_kb, monkeypatch, **options)
    assert used == [True]
    assert split == _serial(troubled_kb, **options)
    split, _ = _split(troubled_kb, monkeypatch, select=["KB2"])
    assert split == _serial(troubled_kb, select=["KB2"])


def test_the_research_corpus_split_equals_serial(research_kb, monkeypatch):
    split, used = _split(research_kb, monkeypatch)
    assert used == [True]
    assert split == _serial(research_kb)
    assert split["summary"]["by_severity"]["error"] > 100


def test_the_bundled_kb_split_equals_serial(monkeypatch):
    split, used = _split(BUNDLED, monkeypatch)
    assert used == [True]
    assert split == _serial(BUNDLED)


def _dies(*args):
    os.kill(os.getpid(), signal.SIGKILL)


def _raises(*args):
    raise RuntimeError("child bug")


def _unpicklable(*args):
    return (lambda: 0,) * 4


@pytest.mark.parametrize("child_work", [_dies, _raises, _unpicklable], ids=["killed", "raises", "unpicklable"])
def test_a_failed_child_costs_no_finding(troubled_kb, monkeypatch, child_work):
    monkeypatch.setattr(validate_split, "_child_work", child_work)  # takes effect in the forked child
    split, used = _split(troubled_kb, monkeypatch)
    assert used == [False]
    assert split == _serial(troubled_kb)


_CHILD_WORK = validate_split._child_work


def _checks_fail(kb, items, indices, wanted, today, send_head, parent_records):
    """The child loads its share and sends its head, then dies before sending its findings."""
    _CHILD_WORK(kb, items, indices, wanted, today, send_head, parent_records)
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_child_that_fails_after_sending_its_head_costs_no_finding(troubled_kb, monkeypatch):
    monkeypatch.setattr(validate_split, "_child_work", _checks_fail)
    split, used = _split(troubled_kb, monkeypatch)
    assert used == [True]  # the head came, the findings did not: the parent loaded and checked that share itself
    assert split == _serial(troubled_kb)


def test_the_cross_record_rules_run_while_the_child_still_checks(troubled_kb, monkeypatch):
    """The parent resolves its records' references and KB205 once the child's head arrives, before the child's findings do."""
    import time

    def slow_checks(kb, items, indices, wanted, today, send_head, parent_records):
        def send_then_wait(head):
            send_head(head)
            time.sleep(1.0)

        return _CHILD_WORK(kb, items, indices, wanted, today, send_then_wait, parent_records)

    monkeypatch.setattr(validate_split, "_child_work", slow_checks)
    children = []
    receive = validate_split._receive
    monkeypatch.setattr(validate_split, "_receive", lambda child: children.append(child) or receive(child))
    alive = []
    shared = validate_split.shared_id_findings

    def spy(kb, types):
        alive.append(os.waitpid(children[0].pid, os.WNOHANG) == (0, 0))
        return shared(kb, types)

    monkeypatch.setattr(validate_split, "shared_id_findings", spy)
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    split = validate_split.validate_path(troubled_kb, 2).to_dict()
    assert alive == [True]
    assert split == _serial(troubled_kb)


def test_one_job_keeps_the_one_process_path(troubled_kb, monkeypatch):
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    assert validate_split.validate_path(troubled_kb, 1) is None


def _shards(folder: Path, kind: str = "findings") -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob(f"{kind}-*.json"))}


def test_with_the_load_cache_on_the_split_fills_the_findings_cache_as_one_process_would(troubled_kb, caching, monkeypatch):
    """An empty findings cache (a first run, another day): both processes stamp their files and the parent writes
    the shards the one-process validate writes, byte for byte; the next run is the warm validate's."""
    from inferkb import validate_warm

    split, used = _split(troubled_kb, monkeypatch)
    assert used == [True]
    assert split == _serial(troubled_kb)
    filled = _shards(caching)
    assert len(filled) == 16
    assert _shards(caching, "load") == {}  # validate needs only the findings cache; the loader's is not written here
    serial_dir = caching.parent / "serial-cache"
    monkeypatch.setenv("INFERKB_CACHE_DIR", str(serial_dir))
    assert inferkb.open(troubled_kb).validate().to_dict() == split
    assert _shards(serial_dir) == filled
    monkeypatch.setenv("INFERKB_CACHE_DIR", str(caching))
    assert validate_split.validate_path(troubled_kb, 2) is None  # entries for this day: the warm path applies
    checks = []
    record_checks = validate_warm.validate.__globals__["record_checks"]
    monkeypatch.setitem(
        validate_warm.validate.__globals__, "record_checks", lambda kb, rec, *a: checks.append(rec.path) or record_checks(kb, rec, *a)
    )
    assert validate_warm.validate_path(troubled_kb).to_dict() == split
    # only the files no cache keeps are checked again (a name that is not kebab-case is loaded but never stamped)
    assert sorted(checks) == [f"data/{d}/Bad_Name.json" for d in ("accelerators", "benchmarks", "sources")]


def test_with_the_load_cache_on_a_type_filter_or_a_small_kb_takes_the_one_process_path(troubled_kb, caching, monkeypatch):
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    assert validate_split.validate_path(troubled_kb, 2, types=["benchmark"]) is None
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 10**6)
    assert validate_split.validate_path(troubled_kb, 2) is None  # one process, whose validate fills the cache
    assert _shards(caching) == {}


def test_with_the_load_cache_on_a_failed_child_costs_no_finding_and_writes_no_entry(troubled_kb, caching, monkeypatch):
    monkeypatch.setattr(validate_split, "_child_work", _raises)
    split, used = _split(troubled_kb, monkeypatch)
    assert used == [False]
    assert split == _serial(troubled_kb)
    assert _shards(caching) == {}  # the next run fills it


def test_cli_validate_with_the_cache_forks_on_the_first_run_only(troubled_kb, caching, monkeypatch):
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    monkeypatch.setenv("INFERKB_JOBS", "2")
    fork = validate_split._fork
    forks = []
    monkeypatch.setattr(validate_split, "_fork", lambda *a: forks.append(1) or fork(*a))
    outputs = []
    for _ in range(2):
        result = CliRunner().invoke(cli, ["validate", "--kb", str(troubled_kb), "--format", "json"])
        assert result.exit_code == 1, result.output
        outputs.append((result.stdout_bytes, len(forks)))
    monkeypatch.setenv("INFERKB_NO_CACHE", "1")
    cold = CliRunner().invoke(cli, ["validate", "--kb", str(troubled_kb), "--format", "json"]).stdout_bytes
    assert outputs[0] == (cold, 1)
    assert outputs[1] == (cold, 1)  # warm: no second fork


def test_a_small_kb_is_validated_in_one_process(troubled_kb, monkeypatch):
    forks = []
    monkeypatch.setattr(validate_split, "_fork", lambda *a: forks.append(a))
    report = validate_split.validate_path(troubled_kb, 2)  # 300 files < SPLIT_MIN_FILES
    assert forks == []
    assert report.to_dict() == _serial(troubled_kb)


def test_cli_validate_json_is_the_same_with_one_job_and_two(troubled_kb, monkeypatch):
    """``INFERKB_JOBS=1`` keeps the CLI in one process; ``2`` forks; the JSON document is byte for byte the same."""
    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    fork = validate_split._fork
    forks = []
    monkeypatch.setattr(validate_split, "_fork", lambda *a: forks.append(1) or fork(*a))
    outputs = {}
    for jobs in ("1", "2"):
        monkeypatch.setenv("INFERKB_JOBS", jobs)
        result = CliRunner().invoke(cli, ["validate", "--kb", str(troubled_kb), "--format", "json"])
        assert result.exit_code == 1, result.output
        outputs[jobs] = (result.stdout_bytes, len(forks))
    assert outputs["1"][1] == 0 and outputs["2"][1] == 1
    assert outputs["1"][0] == outputs["2"][0]
    assert b'"KB014"' in outputs["2"][0]


def _cli_forks(kb: Path, monkeypatch, load: float) -> tuple[int, bytes]:
    """Forks made by ``inferkb validate`` with ``INFERKB_JOBS`` unset on a 2-CPU machine at 1-minute load ``load``."""
    from inferkb import parallel

    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    monkeypatch.delenv("INFERKB_JOBS", raising=False)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (load, load, load))
    fork = validate_split._fork
    forks = []
    monkeypatch.setattr(validate_split, "_fork", lambda *a: forks.append(1) or fork(*a))
    result = CliRunner().invoke(cli, ["validate", "--kb", str(kb), "--format", "json"])
    assert result.exit_code == 1, result.output
    return len(forks), result.stdout_bytes


def test_cli_validate_splits_by_default_on_an_idle_two_cpu_machine(troubled_kb, monkeypatch):
    forks, out = _cli_forks(troubled_kb, monkeypatch, 0.1)
    assert forks == 1
    monkeypatch.setenv("INFERKB_JOBS", "1")
    assert CliRunner().invoke(cli, ["validate", "--kb", str(troubled_kb), "--format", "json"]).stdout_bytes == out


def test_cli_validate_stays_in_one_process_on_a_busy_machine(troubled_kb, monkeypatch):
    forks, _ = _cli_forks(troubled_kb, monkeypatch, 1.5)  # 2 CPUs - 1.5 busy: less than one idle CPU to spare
    assert forks == 0


def test_the_cli_keeps_the_validated_kb_to_the_process_end(troubled_kb, monkeypatch):
    """Run as the process's entry point, ``validate`` hands its KB to ``keep_to_exit`` (exit without freeing it);
    the split hands over its working tables too."""
    from inferkb.cli import common

    monkeypatch.setattr(validate_split, "SPLIT_MIN_FILES", 0)
    monkeypatch.setattr(common.process, "owned", True)
    monkeypatch.setattr(common, "_KEPT", [])
    try:
        for jobs in ("1", "2"):
            monkeypatch.setenv("INFERKB_JOBS", jobs)
            assert CliRunner().invoke(cli, ["validate", "--kb", str(troubled_kb), "--format", "json"]).exit_code == 1
    finally:
        gc.unfreeze()  # the owned CLI froze this test process's objects
    kept = [type(obj).__name__ for obj in common._KEPT]
    assert kept == ["KB", "KB", "list"]  # one process: the KB; the split: the KB and its working tables
    assert all(len(kb.records) > 300 for kb in common._KEPT[:2])
    assert any(type(t) is dict and len(t) > 300 for t in common._KEPT[2])  # the findings by record, among others


def test_repeat_groups_across_both_shares_give_the_serial_findings(tmp_path, monkeypatch):
    # Members of one group in consecutive files land in both processes' shares; the parent compares their
    # conditions, so the child's members must reach it whole, not as reference-only stubs.
    from analysis_helpers import bench, make_kb

    other = bench("g1-2", 300.0, repeat_group="g1")
    other["conditions"]["concurrency"] = 32  # KB127
    records = [
        bench("g0", 100.0, repeat_group="g0"),
        bench("g0-2", 110.0, repeat_group="g0"),
        bench("g0-3", 120.0, repeat_group="g0"),
        bench("g1", 100.0, repeat_group="g1"),
        other,
        bench("g2", 1.0),
        bench("g2-2", 2.0, repeat_group="g2"),  # KB126: g2 is in no group
        bench("g3", 5.0, repeat_group="nope"),  # KB126: no such record
    ]
    root = make_kb(tmp_path, records)
    split, used = _split(root, monkeypatch)
    assert used == [True]
    serial = _serial(root)
    assert split == serial
    codes = sorted((f["code"], f["record"]) for f in serial["findings"] if f["code"] in ("KB126", "KB127"))
    assert codes == [("KB126", "benchmarks/g2-2"), ("KB126", "benchmarks/g3"), ("KB127", "benchmarks/g1-2")]


def test_load_indexed_gives_load_items_results_and_where_each_came_from(troubled_kb):
    from inferkb.profile import load_profile
    from inferkb.store.loader import Loaded, load_indexed, load_items, walk

    profile = load_profile(troubled_kb)
    items = walk(troubled_kb, profile)
    whole = Loaded()
    load_items(whole, items, troubled_kb, profile)
    out = Loaded()
    record_items, finding_items = load_indexed(out, items, range(len(items)), troubled_kb, profile)
    assert list(out.records) == list(whole.records) and out.findings == whole.findings
    assert [f"data/{items[i][1].dir}/{items[i][0].name}" for i in record_items] == [r.path for r in out.records.values()]
    assert [f for _, found in finding_items for f in found] == whole.findings
    odd = [i for i in range(len(items)) if i % 2]  # a share: the items not listed are skipped
    share = Loaded()
    record_items, _ = load_indexed(share, items, odd, troubled_kb, profile)
    assert set(record_items) <= set(odd) and len(record_items) == len(share.records)


def test_a_reference_to_a_file_that_did_not_load_in_the_other_share_stays_unresolved(tmp_path, monkeypatch):
    """Each process resolves its own records' references against the records the other one loaded, not against
    the files it listed: a source whose file is broken (KB001) or a duplicate-key object (KB002) is no source."""
    root = tmp_path / "kb"
    _synth().generate(root, 300, seed=5)
    data = root / "data"
    (data / "sources" / "zz-broken-1.json").write_text('{"id": ')  # KB001
    (data / "sources" / "zz-broken-2.json").write_text('{"id": "a", "id": "b"}\n')  # KB002: the other share
    bench = sorted((data / "benchmarks").glob("*.json"))
    for path in bench[:4]:  # consecutive files: both shares cite both broken sources
        doc = json.loads(path.read_text())
        doc["sources"] = [*doc.get("sources", []), "zz-broken-1", "zz-broken-2"]
        path.write_text(json.dumps(doc, indent=2) + "\n")
    split, used = _split(root, monkeypatch)
    assert used == [True]
    serial = _serial(root)
    assert split == serial
    unresolved = [f for f in serial["findings"] if f["code"] == "KB201" and f["extra"]["id"].startswith("zz-broken")]
    assert len(unresolved) == 8


def test_the_parent_resolves_only_its_own_records_references(troubled_kb, monkeypatch):
    """The child resolves its share's references itself and sends the findings; the parent's pass covers its own."""
    seen = []
    references = validate_split._references

    def spy(kb, recs, wanted):
        recs = list(recs)
        seen.append(len(recs))
        return references(kb, recs, wanted)

    monkeypatch.setattr(validate_split, "_references", spy)  # the child's calls land in its own copy of seen
    split, used = _split(troubled_kb, monkeypatch)
    assert used == [True]
    assert len(seen) == 1 and 0 < seen[0] < split["records"] * 0.6
    assert split == _serial(troubled_kb)


def test_a_child_that_gets_no_record_list_costs_no_finding(troubled_kb, monkeypatch):
    """Without the parent's record list the child cannot resolve references: it fails, the parent does its share."""

    def no_list(kb, items, indices, wanted, today, send_head, parent_records):
        return _CHILD_WORK(kb, items, indices, wanted, today, send_head, lambda: None)

    monkeypatch.setattr(validate_split, "_child_work", no_list)
    split, used = _split(troubled_kb, monkeypatch)
    assert used == [True]
    assert split == _serial(troubled_kb)


@pytest.mark.parametrize("share", [0.5, 0.25, 0.53, 0.55, 0.56, 0.6, 0.45, 1 / 3])
@pytest.mark.parametrize("n", [0, 1, 7, 2000, 4581, 20000])
def test_the_child_share_is_the_files_where_the_share_floor_steps(share, n):
    files = list(range(100, 100 + n))
    expected = [f for k, f in enumerate(files) if int((k + 1) * share) > int(k * share)]
    assert validate_split._child_share(files, share) == expected
