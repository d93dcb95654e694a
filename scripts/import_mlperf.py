"""Import the MLPerf Inference LLM results (round-wide tables v4.1, v5.1, v6.0, v6.1) into a KB.

    .venv/bin/python scripts/import_mlperf.py [--kb PATH] [--corpus PATH] [--dry-run]

(``.venv`` is made by ``bash scripts/test.sh`` or ``bash scripts/check.sh``; a Python without inferkb's
dependencies cannot run it.)

Steps, all from the files in ``<corpus>/mlperf`` (their origins: its SOURCES.md):

1. every LLM row of each round-wide table -> one benchmark record, with the
   round's rules (``inferkb/kb/rules/mlperf-<round>.json``) filling
   ``constraints`` and the conditions the rules fix;
2. the v4.1 GigaComputing per-submitter ``summary.csv`` corroborates the
   round-wide v4.1 records it repeats (cited, not imported twice);
3. unit labels that other evidence settles are resolved (``mlperf_fixes``);
4. ``same_measurement_as`` and ``system_series`` links (``mlperf_links``);
5. the LoadGen summaries and system descriptions enrich their rows (``mlperf_enrich``);
6. only records whose content changed are written (through the store:
   validated, atomic); then the ``interconnect-ids`` and ``per-accelerator``
   derivations run again, so re-running the script changes nothing.

Each table cites its table source record (which must already exist in the KB)
and one source record per submission directory, pinned to the commit read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

try:
    import inferkb
except ImportError as exc:  # the documented way in is the venv's interpreter; say so instead of a traceback
    print(
        f"import_mlperf.py needs inferkb and its dependencies ({exc}); "
        "run it as .venv/bin/python scripts/import_mlperf.py (bash scripts/test.sh creates .venv)",
        file=sys.stderr,
    )
    sys.exit(2)
from inferkb.intake import mlperf_enrich, mlperf_fixes, mlperf_links
from inferkb.intake.base import IntakeOptions, commit, stable_view, without_backfills
from inferkb.intake.counts import count_by_type
from inferkb.intake.mlperf import import_table
from inferkb.intake.mlperf_json import import_round_json

REPO = Path(__file__).resolve().parents[1]
# (path under corpus/mlperf, table source id, commit the results folders are pinned to, results repository URL)
TABLES = (
    (
        "inference_results_v4.1/summary_results.json",
        "mlperf-inference-v4-1-summary-results",
        "a2f5d66d17e8f75c02fd74dfe810ecca6a046696",
        "https://github.com/mlcommons/inference_results_v4.1",
    ),
    (
        "inference_results_v5.1/summary_results.json",
        "mlperf-inference-v5-1-summary-results",
        "965182b03376a00fcae415c54e560e1c83937932",
        "https://github.com/mlcommons/inference_results_v5.1",
    ),
    (
        "inference_results_v6.0/summary_results.json",
        "mlperf-inference-v6-0-summary-results",
        "ab33b2144a9f822f69d24f78569f993d195ee7e5",
        "https://github.com/gbeezybez/inference_results_v6.0",
    ),
    (
        "inference_results_v6.1/summary.csv",
        "mlperf-inference-v6-1-summary",
        "7bf15fd8089655a71fb75c81a744d7ba5a632424",
        "https://github.com/mlcommons/inference_results_v6.1",
    ),
)
CORROBORATE = (
    "inference_results_v4.1/closed/GigaComputing/summary.csv",
    "mlperf-inference-v4-1-gigacomputing-summary",
    "a2f5d66d17e8f75c02fd74dfe810ecca6a046696",
    "the per-submitter v4.1 GigaComputing summary.csv (a2f5d66)",
)
# saved paths without the division/submitter folders -> (round, division, submitter, platform), per SOURCES.md
SYSTEM_PATHS = {
    "inference_results_v6.1/systems/VR-NVL72_VR-288GB_aarch64x72_TRT.json": ("v6.1", "closed", "NVIDIA", "VR-NVL72_VR-288GB_aarch64x72_TRT")
}


def build(kb, corpus: Path) -> tuple[list[dict], dict]:
    """Every record the MLPerf corpus yields (benchmarks then sources), and per-step statistics."""
    report: dict = {"tables": {}}
    benchmarks: dict[str, dict] = {}
    sources: dict[str, dict] = {}
    for rel, source_id, sha, repo_url in TABLES:
        path = corpus / rel
        if not path.exists():
            print(f"skip {path}: not found", file=sys.stderr)
            continue
        if source_id not in kb.ids_of_type("source"):
            raise SystemExit(f"error: table source {source_id!r} is not in the KB; add it first")
        options = IntakeOptions(source=source_id, extra={"mlperf_commit": sha, "mlperf_repo_url": repo_url})
        if path.suffix == ".json":
            res = import_round_json(kb, path, options, rel=rel)
        else:
            with open(path, encoding="utf-8", newline="") as fh:
                res = import_table(kb, fh, options, path=rel)
        for data in res.records:
            target = benchmarks if data["type"] == "benchmark" else sources
            if data["id"] in target:
                raise SystemExit(f"error: {rel} produced id {data['id']!r} twice across tables")
            target[data["id"]] = data
        s = res.stats
        report["tables"][rel] = {
            "llm_rows": s["imported"],
            "skipped": sum(s["skipped"].values()),
            "unresolved_hardware_rows": s["unresolved_hardware_rows"],
            "cpu_only_rows": s["cpu_only_rows"],
            "unit_contradictions": sum(f.code == "KB1111" for f in res.findings),
            "count_contradictions": sum(f.code == "KB1112" for f in res.findings),
        }
    rel, source_id, sha, desc = CORROBORATE
    if (corpus / rel).exists():
        with open(corpus / rel, encoding="utf-8", newline="") as fh:
            res = import_table(kb, fh, IntakeOptions(source=source_id, extra={"mlperf_commit": sha}), path=rel)
        csv_benchmarks = [r for r in res.records if r["type"] == "benchmark"]
        report["corroborated"] = {
            "rows": len(csv_benchmarks),
            "problems": mlperf_fixes.corroborate(benchmarks, csv_benchmarks, source_id, desc),
        }
    recs = list(benchmarks.values())
    report["unit_labels_resolved"] = mlperf_fixes.apply_unit_fixes(recs)
    report["same_measurement_groups"] = mlperf_links.link_same_measurement(recs)
    report["system_series_spanning_rounds"] = mlperf_links.set_system_series(recs)
    report["enrich"] = mlperf_enrich.enrich(benchmarks, corpus, SYSTEM_PATHS)
    return recs + list(sources.values()), report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", default=None, help="KB path (default: the bundled KB)")
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    corpus = Path(args.corpus) / "mlperf"
    if not any((corpus / rel).exists() for rel, *_ in TABLES):
        # Without this, a clone whose ../shared is absent "imported" 0 records and exited 0.
        print(f"error: {corpus}: none of the MLPerf tables ({', '.join(rel for rel, *_ in TABLES)}); pass --corpus", file=sys.stderr)
        return 2
    kb = inferkb.open(args.kb)
    records, report = build(kb, corpus)
    t_build = time.perf_counter()
    changed, unchanged = [], 0
    for data in records:
        old = kb.resolve(f"{kb.profile.types[data['type']].dir}/{data['id']}")
        if old is not None and stable_view(without_backfills(old.data, data)) == stable_view(data):
            unchanged += 1
        else:
            changed.append(data)
    if not args.dry_run and changed:
        commit(kb, changed, update=True)
    t_write = time.perf_counter()
    report.update(records=len(records), written=0 if args.dry_run else len(changed), to_write=len(changed), unchanged=unchanged)
    report.update(records_by_type=count_by_type(records), to_write_by_type=count_by_type(changed))
    report["paths_written" if not args.dry_run else "paths_to_write"] = [str(kb.record_path(d["type"], d["id"])) for d in changed]
    if not args.dry_run and changed:
        # Records written afresh lose backfilled fields; derive them again (same evidence, same values).
        from inferkb import derive

        for name in ("interconnect-ids", "per-accelerator"):
            result = derive.run(inferkb.open(args.kb), name, write=True)
            report[f"derive_{name}"] = len(result.changes)
    t_end = time.perf_counter()
    report["seconds"] = {
        "read_and_build": round(t_build - t0, 2),
        "write": round(t_write - t_build, 2),
        "derive": round(t_end - t_write, 2),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
