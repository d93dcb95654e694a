"""Copy a KB and plant findings in it, to compare validate's output between two trees on a KB with many findings.

    python benchmarks/mutate_kb.py SRC DEST [--every 7] [--seed 0]

Every ``--every``-th benchmark record (in sorted file order) gets one mutation, chosen by a seeded random draw:
percentiles out of order or a zero count in its ``stats`` (KB12x), an impossible or future ``updated`` date
(KB105/KB106), an unknown source (KB201), a dangling engine reference (KB202/KB203), an unknown ``baseline_arm``
(KB109), a confidence above 1 (schema, KB107). A few files become broken JSON (KB001) or a duplicate-key object
(KB002), and one source is copied into the engines directory (KB205). Prints the number of records changed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path


def _stats_blocks(doc: dict) -> list[dict]:
    blocks = [arm["stats"] for arm in doc.get("arms") or [] if isinstance(arm.get("stats"), dict)]
    if isinstance(doc.get("stats"), dict):
        blocks.append(doc["stats"])
    return blocks


def mutate(doc: dict, rng: random.Random, k: int) -> None:
    """Apply one mutation to the benchmark record ``doc`` (in place)."""
    kind = rng.randrange(8)
    blocks = _stats_blocks(doc)
    if kind == 0 and blocks:
        block = rng.choice(blocks)
        if "p90" in block and "p99" in block:
            block["p90"], block["p99"] = block["p99"] * 1.5, block["p90"]
        else:
            block["n"] = 0
    elif kind == 1 and blocks:
        rng.choice(blocks)["n"] = 0
    elif kind == 2:
        doc["updated"] = "2026-02-31"
    elif kind == 3:
        doc["updated"] = "2999-01-01"
    elif kind == 4:
        doc["sources"] = [*doc.get("sources", []), f"no-such-source-{k}"]
    elif kind == 5:
        doc["engine_id"] = f"no-such-engine-{k}"
    elif kind == 6 and doc.get("arms"):
        doc["baseline_arm"] = "no-such-arm"
    else:
        doc["confidence"] = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--every", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.dest.exists():
        parser.error(f"{args.dest} exists")
    shutil.copytree(args.src, args.dest, symlinks=True)
    rng = random.Random(args.seed)
    data = args.dest / "data"
    changed = 0
    for k, path in enumerate(sorted((data / "benchmarks").glob("*.json"))):
        if k % args.every:
            continue
        if k % (args.every * 500) == 0:
            path.write_text('{"id": ' if k % 2 else '{"id": "x", "id": "y"}\n')
        else:
            doc = json.loads(path.read_text())
            mutate(doc, rng, k)
            path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        changed += 1
    sources = sorted((data / "sources").glob("*.json"))
    if sources and (data / "engines").is_dir():
        shutil.copy(sources[len(sources) // 2], data / "engines" / sources[len(sources) // 2].name)
        changed += 1
    print(changed)


if __name__ == "__main__":
    main()
