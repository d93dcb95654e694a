"""Why a record cites each of its sources, derived from data already in the KB (no stored field).

An MLPerf record's ``sources`` list mixes its own submission's results
directory with sources cited only because they are the evidence for the
round's rules file (``inferkb/kb/rules/mlperf-<round>.json``): the checker,
the rules document, and another submitter's LoadGen log whose printed test
parameters fix round-wide limits. :func:`source_roles` tells them apart:

- ``result``: the source whose URL is the directory holding the record's own
  result (``submission.results_url`` lies under the source's ``url``);
- ``results-table``: a source of ``kind`` ``results-table`` that the record's
  ``import`` provenance entry names as the file it read (the entry's ``method``
  names the file at the end of the source's URL, e.g. ``summary_results.json,
  row 94``, or is the summary.csv importer's ``<layout> table layout, line N``
  for a ``summary.csv``): where the record's numbers were copied from;
- ``rules-evidence``: a source the record's rules file declares
  (``sources.<key>.source_id``), with the rules-file keys it appears under and
  the fields of this record it backs: ``constraints.<field>`` whose
  ``constraints.evidence`` quotes that key, and ``conditions.concurrency`` /
  ``conditions.dataset`` where the record holds the value the rules file gives
  for its model and scenario from that key.

A source that is the record's own result stays ``result`` even when it also
backs the rules (``also_backs`` lists those fields). Sources with no derivable
role are absent from the mapping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["SourceRole", "source_roles"]

RESULT = "result"
RESULTS_TABLE = "results-table"
RULES_EVIDENCE = "rules-evidence"
# The MLPerf summary.csv importer's method names the table's layout, not the file: "inferkb.intake.mlperf, v6.1 table
# layout, line 493" (inferkb.intake.mlperf); the file it reads is always a round's summary.csv.
CSV_LAYOUT = " table layout"


@dataclass(frozen=True)
class SourceRole:
    """One source's role in one record: ``role`` (``result`` | ``results-table`` | ``rules-evidence``), the rules file
    and keys, what it backs; ``read_by`` the import entry's ``method`` for a ``results-table``."""

    source_id: str
    role: str
    rules_file: str | None = None
    rules_keys: tuple[str, ...] = ()
    backs: tuple[str, ...] = field(default=())
    read_by: str | None = None

    def describe(self) -> str:
        """One line for a reader, e.g. ``cited as evidence of the round's rules (inferkb/kb/rules/mlperf-v4.1.json,
        log-gptj-offline), backing constraints.performance_sample_count; not this record's own result``."""
        if self.role == RESULTS_TABLE:
            return f"the results table this record's numbers were copied from ({self.read_by})"
        backs = ", ".join(self.backs) if self.backs else "no field of this record"
        where = f"{self.rules_file}, {', '.join(self.rules_keys)}"
        if self.role == RESULT:
            also = f"; also evidence of the round's rules ({where}), backing {backs}" if self.rules_keys else ""
            return f"this record's own result (its submission's results directory){also}"
        return f"cited as evidence of the round's rules ({where}), backing {backs}; not this record's own result"

    def to_dict(self) -> dict[str, Any]:
        """``{"role", "rules_file", "rules_keys", "backs" | "also_backs", "note"}``, plus ``read_by`` for a
        ``results-table`` (JSON for ``show``, exports, site)."""
        out: dict[str, Any] = {"role": self.role, "rules_file": self.rules_file, "rules_keys": list(self.rules_keys)}
        if self.role == RESULTS_TABLE:
            out["read_by"] = self.read_by
        out["also_backs" if self.role == RESULT else "backs"] = list(self.backs)
        out["note"] = self.describe()
        return out


def _under(url: Any, base: Any) -> bool:
    if not (isinstance(url, str) and isinstance(base, str) and base):
        return False
    return (url.rstrip("/") + "/").startswith(base.rstrip("/") + "/")


def _rules_backing(data: dict[str, Any]) -> tuple[str | None, dict[str, tuple[list[str], list[str]]]]:
    """``(rules file path, {source_id: (rules keys, backed fields)})`` for a record whose ``constraints.rules`` names a file."""
    cons = data.get("constraints")
    if not isinstance(cons, dict) or not isinstance(cons.get("rules"), str) or not cons["rules"].startswith("mlperf-"):
        return None, {}
    from .intake import mlperf_rules  # only for a record that names a rules file

    rules = mlperf_rules.load(cons["rules"].removeprefix("mlperf-"))
    if rules is None:
        return None, {}
    backed: dict[str, list[str]] = {}
    evidence = cons.get("evidence") if isinstance(cons.get("evidence"), dict) else {}
    for name, quote in evidence.items():
        if isinstance(quote, str) and ": " in quote:
            backed.setdefault(quote.split(": ", 1)[0], []).append(f"constraints.{name}")
    sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
    conds = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
    if isinstance(sub.get("mlperf_model"), str) and isinstance(sub.get("scenario_raw"), str):
        picked = mlperf_rules.picked(rules, sub["mlperf_model"], sub["scenario_raw"])
        for name in ("concurrency", "dataset"):
            val = picked.get(name)
            if val is not None and name in conds and conds[name] == val["value"]:
                backed.setdefault(val["src"], []).append(f"conditions.{name}")
    by_source: dict[str, tuple[list[str], list[str]]] = {}
    for key, spec in rules.sources.items():
        sid = spec.get("source_id")
        if key in backed and isinstance(sid, str):
            keys, fields = by_source.setdefault(sid, ([], []))
            keys.append(key)
            fields.extend(backed[key])
    return f"inferkb/kb/rules/{rules.file_id}.json", by_source


def _read_by(src: Any, imports: list[str]) -> str | None:
    """The import ``method`` that names results-table source ``src``'s file (the last part of its URL), else ``None``."""
    if src is None or src.data.get("kind") != "results-table" or not isinstance(src.data.get("url"), str):
        return None
    name = src.data["url"].rstrip("/").rsplit("/", 1)[-1]
    if not name:
        return None
    for method in imports:
        parts = [part.strip() for part in method.split(",")]
        if name in parts or (name == "summary.csv" and any(p.endswith(CSV_LAYOUT) for p in parts)):
            return method
    return None


def source_roles(kb: Any, data: dict[str, Any]) -> dict[str, SourceRole]:
    """``{source_id: SourceRole}`` for the sources of record ``data`` whose role can be derived (see the module docstring).

    ``kb`` resolves source ids to source records (for their ``url``); a source id not in the KB gets no ``result`` role.
    """
    ids = [s for s in data.get("sources") or [] if isinstance(s, str)]
    if not ids:
        return {}
    sub = data.get("submission") if isinstance(data.get("submission"), dict) else {}
    results_url = sub.get("results_url")
    rules_file, backing = _rules_backing(data)
    imports = [
        e["method"]
        for e in data.get("provenance") or []
        if isinstance(e, dict) and e.get("action") == "import" and isinstance(e.get("method"), str)
    ]
    out: dict[str, SourceRole] = {}
    for sid in ids:
        keys, fields = backing.get(sid, ([], []))
        src = kb.resolve(sid, "source") if results_url or imports else None
        read_by = _read_by(src, imports)
        if read_by is not None:
            out[sid] = SourceRole(sid, RESULTS_TABLE, read_by=read_by)
        elif src is not None and results_url and _under(results_url, src.data.get("url")):
            out[sid] = SourceRole(sid, RESULT, rules_file if keys else None, tuple(keys), tuple(fields))
        elif keys:
            out[sid] = SourceRole(sid, RULES_EVIDENCE, rules_file, tuple(keys), tuple(fields))
    return out
