"""MLPerf Inference rules as load conditions: the per-round rules files under ``kb/rules/``.

Each ``kb/rules/mlperf-<round>.json`` holds what that round's rules fix for a
run, every value with its source (``sources[src]`` = repo, path, commit, and
the source record id) and the quoted key it was read from::

    {"round": "v5.1", "note": "...", "sources": {"conf": {"repo", "path", "commit", "what", "source_id"}, ...},
     "scenarios": {"Server": {"latency_percentile": {"value": 99, "src": "conf", "key": "*.Server..."}, ...}, ...},
     "models": {"llama2-70b": {"performance_sample_count": {...}, "token_latencies": {...}, "dataset": {...},
                               "scenarios": {"Server": {"ttft_ms_max": {...}, "tpot_ms_max": {...}}, ...}}}}

Model keys are LoadGen's names (``llama3_1-8b``, ``gptj``); :func:`conf_model`
maps a results-table name (``llama3.1-8b``, ``gptj-99.9``) onto them. An
Interactive result is a LoadGen Server run under the ``<model>-interactive``
limits (corpus ``mlperf/SOURCES.md``; the v5.1 AMD Interactive summary says
``Scenario : Server``), so Interactive takes the Server scenario-wide values
and the model's own Interactive limits.

:func:`apply` turns one row's (round, model, scenario) into the ``constraints``
block, the conditions the rules fix (``dataset``; ``concurrency`` =
``"unbounded"`` for Offline, whose single query carries every sample, and 1
for SingleStream) and provenance entries with basis "benchmark rules".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import InputError

RULES_DIR = Path(__file__).resolve().parents[1] / "kb" / "rules"
# constraints fields in the order a record shows them; each is {"value", "src", "key"} in a rules file
CONSTRAINT_FIELDS = (
    "latency_percentile",
    "ttft_ms_max",
    "tpot_ms_max",
    "latency_ms_max",
    "min_duration_ms",
    "min_query_count",
    "performance_sample_count",
    "dataset_seqlen_limit",
    "token_latencies",
)
UNBOUNDED = "unbounded"


@dataclass(frozen=True)
class RoundRules:
    """One round's rules file: ``round`` ("v5.1"), ``file_id`` ("mlperf-v5.1"), ``note``, ``sources``, ``scenarios``, ``models``."""

    round: str
    file_id: str
    note: str
    sources: dict[str, dict[str, str]]
    scenarios: dict[str, dict[str, dict[str, Any]]]
    models: dict[str, dict[str, Any]]


@dataclass
class RulesOutcome:
    """What the rules fix for one result: ``conditions`` values, the ``constraints`` block, ``gaps`` and ``provenance``."""

    conditions: dict[str, Any] = field(default_factory=dict)
    constraints: dict[str, Any] = field(default_factory=dict)
    source_ids: list[str] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)


def available_rounds() -> list[str]:
    """Rounds that have a rules file, e.g. ``["v4.1", "v5.1", "v6.0", "v6.1"]``."""
    return sorted(p.stem.removeprefix("mlperf-") for p in RULES_DIR.glob("mlperf-v*.json"))


@cache
def load(round_: str) -> RoundRules | None:
    """The rules of round ``round_`` ("v5.1"), or ``None`` when there is no rules file for it.

    Raises :class:`InputError` naming the file and key when a value lacks its
    ``src``/``key`` or cites a source the file does not declare.
    """
    path = RULES_DIR / f"mlperf-{round_}.json"
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    sources = doc.get("sources") or {}

    def check(where: str, val: Any) -> None:
        if not (isinstance(val, dict) and "value" in val and val.get("src") in sources and isinstance(val.get("key"), str)):
            raise InputError(f"{where}: expected {{value, src (one of {', '.join(sources)}), key}}", path=str(path), field=where)

    for scen, vals in (doc.get("scenarios") or {}).items():
        for name, val in vals.items():
            check(f"scenarios.{scen}.{name}", val)
    for model, spec in (doc.get("models") or {}).items():
        for name, val in spec.items():
            if name == "scenarios":
                for scen, vals in val.items():
                    for n2, v2 in vals.items():
                        check(f"models.{model}.scenarios.{scen}.{n2}", v2)
            else:
                check(f"models.{model}.{name}", val)
    return RoundRules(doc["round"], path.stem, doc.get("note", ""), sources, doc.get("scenarios") or {}, doc.get("models") or {})


def conf_model(table_model: str) -> str:
    """LoadGen's model name for a results-table model: ``llama3.1-8b`` -> ``llama3_1-8b``, ``gptj-99.9`` -> ``gptj``.

    The ``-99`` / ``-99.9`` suffix is the accuracy target (99% or 99.9% of the
    reference score), not a different LoadGen configuration.
    """
    name = re.sub(r"-99(\.9)?$", "", table_model.strip().lower())
    return re.sub(r"llama3\.1", "llama3_1", name)


def _src_label(rules: RoundRules, src: str) -> str:
    s = rules.sources[src]
    return f"{s['repo']}/{s['path']}@{s['commit']}"


def _scenario_key(scenario_raw: str) -> str:
    key = "SingleStream" if scenario_raw.lower() == "singlestream" else scenario_raw.strip().capitalize()
    return {"Multistream": "MultiStream"}.get(key, key)


def _picked(rules: RoundRules, model: str, scen_key: str) -> dict[str, dict[str, Any]]:
    spec = rules.models.get(model, {})
    out: dict[str, dict[str, Any]] = dict(rules.scenarios.get(scen_key) or {})
    out.update((name, val) for name, val in spec.items() if name != "scenarios")
    out.update((spec.get("scenarios") or {}).get(scen_key) or {})
    return out


def picked(rules: RoundRules, table_model: str, scenario_raw: str) -> dict[str, dict[str, Any]]:
    """Every value the rules give one result of ``table_model`` in ``scenario_raw``: ``{name: {"value", "src", "key"}}``.

    Scenario-wide values first, then the model's, then the model's own values for that scenario (later ones win).
    """
    return _picked(rules, conf_model(table_model), _scenario_key(scenario_raw))


def apply(rules: RoundRules, table_model: str, scenario_raw: str) -> RulesOutcome:
    """Constraints, rule-fixed conditions and provenance for one result of ``table_model`` in ``scenario_raw``.

    ``constraints`` = ``{"rules": file id, "basis": "benchmark rules", <field>:
    value..., "evidence": {field: "<src>: <quoted key>"}, "sources": {src:
    "repo/path@commit"}}`` plus ``"concurrency_limit": "none"`` for Offline
    (stated as a value, not a gap). Values the file does not hold are simply
    absent; the file's ``note`` says what was searched.
    """
    out = RulesOutcome()
    model = conf_model(table_model)
    scen_key = _scenario_key(scenario_raw)
    picked = _picked(rules, model, scen_key)
    cons: dict[str, Any] = {"rules": rules.file_id, "basis": "benchmark rules"}
    evidence: dict[str, str] = {}
    used: dict[str, str] = {}
    for name in CONSTRAINT_FIELDS:
        if name in picked:
            if name == "token_latencies" and scen_key not in ("Server", "Interactive", "Offline"):
                continue
            cons[name] = picked[name]["value"]
            evidence[name] = f"{picked[name]['src']}: {picked[name]['key']}"
            used[picked[name]["src"]] = _src_label(rules, picked[name]["src"])
    conc = picked.get("concurrency")
    if conc is not None:
        if conc["value"] == UNBOUNDED:
            cons["concurrency_limit"] = "none"
            evidence["concurrency_limit"] = f"{conc['src']}: {conc['key']}"
        out.conditions["concurrency"] = conc["value"]
        used[conc["src"]] = _src_label(rules, conc["src"])
    ds = picked.get("dataset")
    if ds is not None:
        out.conditions["dataset"] = ds["value"]
        used[ds["src"]] = _src_label(rules, ds["src"])
    cons["evidence"] = evidence
    cons["sources"] = used
    out.constraints = cons
    out.source_ids = list(dict.fromkeys(rules.sources[s]["source_id"] for s in used))
    basis = "benchmark rules: " + "; ".join(f"{k} = {v}" for k, v in used.items())
    out.provenance.append(
        {
            "date": None,
            "tag": f"rules:{rules.file_id}",
            "field": "constraints",
            "action": "import",
            "method": f"looked up model {model!r}, scenario {scen_key!r} in inferkb/kb/rules/{rules.file_id}.json",
            "evidence": {"field": "submission.mlperf_model", "quote": table_model},
            "basis": basis,
            "numbers_changed": False,
        }
    )
    if out.conditions:
        out.provenance.append(
            {
                "date": None,
                "tag": f"rules:{rules.file_id}",
                "field": "conditions",
                "action": "import",
                "method": f"{', '.join(sorted(out.conditions))} fixed by the rules for {model} {scen_key}",
                "evidence": {"field": "submission.scenario_raw", "quote": scenario_raw},
                "basis": "benchmark rules: "
                + "; ".join(f"{k}: {picked[k]['src']}: {picked[k]['key']}" for k in ("concurrency", "dataset") if k in out.conditions),
                "numbers_changed": False,
            }
        )
    return out


def condition_gaps(
    rules: RoundRules | None, table_model: str, scenario_raw: str, outcome: RulesOutcome | None
) -> dict[str, dict[str, Any]]:
    """Short, structured ``condition_gaps`` for what the rules leave open (or, with no rules file, for everything).

    Reasons name the evidence: the rules file consulted (``checked``) and why
    the condition is not one number (dataset length distributions, Poisson
    arrivals in Server, batching left to the system under test).
    """
    rid = rules.file_id if rules else f"no rules file for this round (rules files: {', '.join(available_rounds())})"
    checked = [f"rules:{rules.file_id}"] if rules else ["inferkb/kb/rules"]
    conds = outcome.conditions if outcome else {}
    scen = scenario_raw.strip().lower()
    ds = conds.get("dataset")
    seqlen = (outcome.constraints.get("dataset_seqlen_limit") if outcome else None) or None
    gaps: dict[str, dict[str, Any]] = {}
    lengths = f"the {ds} prompts" if ds else "the benchmark dataset's prompts"
    gaps["input_tokens"] = {
        "reason": f"MLPerf issues {lengths}: input lengths are a distribution, not one ISL"
        + (f" (dataset built with --seqlen_limit={seqlen})" if seqlen else ""),
        "checked": checked,
    }
    gaps["output_tokens"] = {
        "reason": "output lengths are what the model generates per sample (a distribution); the rules fix none",
        "checked": checked,
    }
    if "concurrency" not in conds:
        why = (
            "Server/Interactive queries arrive as a Poisson process at the run's target QPS; the rules fix no in-flight limit"
            if scen in ("server", "interactive")
            else "the rules fix no in-flight limit for this scenario"
        )
        gaps["concurrency"] = {"reason": why, "checked": checked}
    gaps["batch_size"] = {
        "reason": "batching is the system under test's choice (the rules allow switching batch sizes dynamically)",
        "checked": checked,
    }
    gaps["warmup"] = {"reason": "the rules fix no warmup and the results table has no warmup field", "checked": [*checked, "table row"]}
    gaps["tensor_parallel"] = {
        "reason": "parallelism is the submitter's choice; the results table has no TP/PP/EP column",
        "checked": [*checked, "table row"],
    }
    if "dataset" not in conds:
        gaps["dataset"] = {"reason": f"the rules read name no dataset for {conf_model(table_model)} ({rid})", "checked": checked}
    return gaps


__all__ = [
    "RoundRules",
    "RulesOutcome",
    "load",
    "apply",
    "picked",
    "conf_model",
    "condition_gaps",
    "available_rounds",
    "UNBOUNDED",
    "RULES_DIR",
]
