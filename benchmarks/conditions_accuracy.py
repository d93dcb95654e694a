"""Precision and recall of the load-conditions extractor against the hand-labelled gold set.

Usage::

    PYTHONPATH=src python3 benchmarks/conditions_accuracy.py [--corpus DIR] [--gold PATH] [--json]

Reads ``tests/data/conditions_gold.json`` (or the labels file given by
``--gold``, e.g. the held-out ``tests/data/conditions_heldout.json``) and the sample corpus's benchmark
records (default ``../shared/corpus/inference-research`` next to the repo),
runs :func:`inferkb.audit.conditions_text.assess` on each gold record and
prints, per condition, precision and recall of status ``present`` (a present
with the wrong value counts as a false positive *and* a false negative), plus
every record where the text says a condition is not given but the extractor
says present (must be none). Exit code 2 when the corpus is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "tests" / "data" / "conditions_gold.json"
HELDOUT = REPO / "tests" / "data" / "conditions_heldout.json"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "inference-research"


def value_matches(condition: str, got: object, want: object) -> bool:
    """Compare an extracted value with a gold value (lengths within 3%: prose writes 128K for 128,000 or 131,072)."""
    if want is None or condition == "model":
        return True
    if condition == "hardware":
        return isinstance(got, dict) and got.get("count") == want.get("count")
    if condition == "batch_or_concurrency":
        return isinstance(got, dict) and bool(got) and set(got.values()) <= set(want.values())
    if condition in ("input_length", "output_length"):
        if isinstance(want, dict) or isinstance(got, dict):
            return got == want
        return isinstance(got, int) and (got == want or (want > 0 and abs(got - want) / want <= 0.03))
    if condition == "engine_version":
        g, w = str(got).lstrip("v"), str(want).lstrip("v")
        return g.startswith(w) or w.startswith(g)
    return got == want


def score(records: dict[str, dict], gold: dict) -> dict:
    """Score ``assess`` on every gold record found in ``records`` (id -> record dict).

    Returns ``{"records": n, "missing": [ids], "per_condition": {cond: {"tp", "fp", "fn",
    "precision", "recall"}}, "overall": {...}, "negation_violations": [(id, cond)],
    "disagreements": [(id, cond, gold_status, got_status, got_value)]}``.
    """
    from inferkb.audit.conditions_text import CONDITIONS, assess

    counts = {c: {"tp": 0, "fp": 0, "fn": 0} for c in CONDITIONS}
    violations, disagreements, missing = [], [], []
    for rid, labels in gold["records"].items():
        rec = records.get(rid)
        if rec is None:
            missing.append(rid)
            continue
        result = assess(rec)
        for c in CONDITIONS:
            want, got = labels[c], result[c]
            gold_present = want["status"] == "present"
            got_present = got.status == "present"
            ok = gold_present and got_present and value_matches(c, got.value, want.get("value"))
            if ok:
                counts[c]["tp"] += 1
            else:
                counts[c]["fp"] += got_present
                counts[c]["fn"] += gold_present
            if got_present and c in labels.get("negated", []):
                violations.append((rid, c))
            if not ok and (got.status != want["status"] or gold_present):
                disagreements.append((rid, c, want["status"], got.status, got.value))

    def pr(d: dict) -> dict:
        p = d["tp"] / (d["tp"] + d["fp"]) if d["tp"] + d["fp"] else 1.0
        r = d["tp"] / (d["tp"] + d["fn"]) if d["tp"] + d["fn"] else 1.0
        return {**d, "precision": round(p, 4), "recall": round(r, 4)}

    total = {k: sum(counts[c][k] for c in CONDITIONS) for k in ("tp", "fp", "fn")}
    return {
        "records": len(gold["records"]) - len(missing),
        "missing": missing,
        "per_condition": {c: pr(counts[c]) for c in CONDITIONS},
        "overall": pr(total),
        "negation_violations": violations,
        "disagreements": disagreements,
    }


def load_corpus(corpus: Path) -> dict[str, dict]:
    """Read ``<corpus>/data/benchmarks/*.json`` into ``{id: record}``."""
    out = {}
    for path in sorted((corpus / "data" / "benchmarks").glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        out[rec.get("id", path.stem)] = rec
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument(
        "--gold",
        type=Path,
        default=GOLD,
        help=f"labels file to score against (default {GOLD.relative_to(REPO)}; held-out set: {HELDOUT.relative_to(REPO)})",
    )
    ap.add_argument("--json", action="store_true", help="print the full score as JSON")
    args = ap.parse_args(argv)
    if not (args.corpus / "data" / "benchmarks").is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    if not args.gold.is_file():
        print(f"labels file not found: {args.gold}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO / "src"))
    result = score(load_corpus(args.corpus), json.loads(args.gold.read_text(encoding="utf-8")))
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(f"labels: {args.gold}")
    print(f"gold records scored: {result['records']}  (missing from corpus: {len(result['missing'])})")
    print(f"{'condition':22s} {'tp':>4s} {'fp':>4s} {'fn':>4s} {'precision':>10s} {'recall':>7s}")
    for c, d in [*result["per_condition"].items(), ("OVERALL", result["overall"])]:
        print(f"{c:22s} {d['tp']:4d} {d['fp']:4d} {d['fn']:4d} {d['precision']:10.3f} {d['recall']:7.3f}")
    print(f"negation violations (text says not given, extractor says present): {len(result['negation_violations'])}")
    for v in result["negation_violations"]:
        print("  ", *v)
    if result["disagreements"]:
        print("disagreements (record, condition, gold, got, value):")
        for d in result["disagreements"]:
            print("  ", *d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
