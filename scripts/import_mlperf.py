"""Import the MLPerf Inference LLM results (v6.1 round table, v4.1 GigaComputing table) into a KB.

    PYTHONPATH=src python3 scripts/import_mlperf.py [--kb PATH] [--corpus PATH] [--dry-run]

Re-runnable: records whose content is unchanged (ignoring the import date) are
left alone; changed ones are replaced through the store (validated, atomic).
Each table cites its table source record (which must already exist in the KB)
and one source record per submission directory, pinned to the commit the
table was read at (corpus ``mlperf/SOURCES.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import inferkb
from inferkb.intake.base import IntakeOptions, commit, stable_view
from inferkb.intake.mlperf import import_table

REPO = Path(__file__).resolve().parents[1]
TABLES = (
    # (path under corpus/mlperf, table source id, results-repo commit the table was copied at)
    ("inference_results_v6.1/summary.csv", "mlperf-inference-v6-1-summary", "7bf15fd8089655a71fb75c81a744d7ba5a632424"),
    (
        "inference_results_v4.1/closed/GigaComputing/summary.csv",
        "mlperf-inference-v4-1-gigacomputing-summary",
        "a2f5d66d17e8f75c02fd74dfe810ecca6a046696",
    ),
)


def without_backfills(old: dict, new: dict) -> dict:
    """``old`` with derived (backfilled) fields and their provenance entries set back to what ``new`` has.

    So a record whose only difference from a fresh import is a derivation's
    backfill counts as unchanged, and re-running this script does not churn it.
    """
    out = dict(old)
    kept = []
    for entry in old.get("provenance") or []:
        if isinstance(entry, dict) and entry.get("action") == "backfill":
            field = entry.get("field")
            if field in new:
                out[field] = new[field]
            else:
                out.pop(field, None)
        else:
            kept.append(entry)
    if kept or "provenance" in new:
        out["provenance"] = kept
    else:
        out.pop("provenance", None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", default=None, help="KB path (default: the bundled KB)")
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    kb = inferkb.open(args.kb)
    total = {"rows_imported": 0, "written": 0, "unchanged": 0}
    for rel, source_id, sha in TABLES:
        path = Path(args.corpus) / "mlperf" / rel
        if not path.exists():
            print(f"skip {path}: not found", file=sys.stderr)
            continue
        if source_id not in kb.ids_of_type("source"):
            print(f"error: table source {source_id!r} is not in the KB; add it first", file=sys.stderr)
            return 2
        with open(path, encoding="utf-8", newline="") as fh:
            res = import_table(kb, fh, IntakeOptions(source=source_id, extra={"mlperf_commit": sha}), path=rel)
        changed = []
        for data in res.records:
            old = kb.resolve(f"{kb.profile.types[data['type']].dir}/{data['id']}")
            if old is not None and stable_view(without_backfills(old.data, data)) == stable_view(data):
                total["unchanged"] += 1
            else:
                changed.append(data)
        if not args.dry_run and changed:
            commit(kb, changed, update=True)
        total["written"] += len(changed)
        total["rows_imported"] += res.stats["imported"]
        s = res.stats
        print(
            f"{rel}: {s['imported']} LLM rows imported, skipped {sum(s['skipped'].values())} {s['skipped']}, "
            f"{s['unresolved_hardware_rows']} rows with unresolved hardware {s['unresolved_hardware']}, "
            f"{s['cpu_only_rows']} CPU-only rows, {s['engine_unresolved_rows']} rows without a single engine; "
            f"{len(changed)} records {'to write' if args.dry_run else 'written'}"
        )
        for f in res.findings:
            if f.code in ("KB1111", "KB1112"):
                print(f"  {f.code} {f.message}")
    if not args.dry_run and total["written"]:
        # Records written afresh lose backfilled fields; derive them again (same evidence, same values).
        from inferkb import derive

        result = derive.run(inferkb.open(args.kb), "interconnect-ids", write=True)
        total["interconnect_backfills"] = len(result.changes)
    print(json.dumps(total))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
