"""The submission behind one MLPerf results-table row: its results-directory source record and the ``submission`` block.

The context half of :func:`inferkb.intake.mlperf.build_record`: what the table says about who submitted what, where
the LoadGen logs are (``results_url``, pinned to the commit read), and what the table's ``inferred`` flag and
LoadGen's inferred token counts mean for the record (a note each, and a confidence cap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import today
from .mlperf_table import bounded_id

if TYPE_CHECKING:
    from .mlperf import TableContext
    from .mlperf_hardware import RowHardware
    from .mlperf_rules import RulesOutcome

REPO_URL = "https://github.com/mlcommons/inference_results_{round}"


def submission_source(ctx: TableContext, rnd: str, division: str, org: str, platform: str) -> str:
    """The id of the source record for one submission's results directory (``<division>/<org>/results/<platform>``);
    a new one is collected in ``ctx.sources`` (pinned to ``ctx.commit``), a known one only noted as cited."""
    sid = bounded_id("mlperf", rnd, division, org, platform)
    if sid in ctx.sources or sid in ctx.kb.ids_of_type("source"):
        ctx.sources.setdefault(sid, {})
        return sid
    rel = f"{division}/{org}/results/{platform}"
    base = REPO_URL.format(round=rnd)
    ctx.sources[sid] = {
        "id": sid,
        "type": "source",
        "name": f"MLPerf Inference {rnd} {division} submission: {org} {platform}",
        "url": f"{base}/tree/{ctx.commit or 'main'}/{rel}",
        "publisher": f"MLCommons / {org}",
        "kind": "benchmark",
        "published": None,
        "accessed": today(),
        "archived_url": None,
        "status": "verified",
        "confidence": 0.9,
        "updated": today(),
        "sources": [],
        "notes": f"Results directory of one MLPerf Inference {rnd} submission (system {platform}); "
        f"one subdirectory per model and scenario with the LoadGen logs behind each summary.csv row.",
    }
    return sid


def submission_block(
    ctx: TableContext, line: int, row: dict[str, str], hw: RowHardware, wdt: str, outcome: RulesOutcome | None, notes: list[str]
) -> tuple[dict[str, Any], float]:
    """``(submission, confidence cap)`` for ``row`` at table ``line``; appends the notes on inferred results to ``notes``.

    The cap is 0.8 when the result was computed from a LoadGen run of another scenario (the table's ``inferred`` flag,
    outside Interactive) or LoadGen inferred the token counts, else 1.0.
    """
    rnd = (row.get("version") or "").strip() or "unknown"
    division, org, platform = row["Division"].strip(), row["Organization"].strip(), row["Platform"].strip()
    units = row["Units"].strip()
    cap = 1.0
    location = row["Location"].strip().lstrip("./")
    base = ctx.repo_url or REPO_URL.format(round=rnd)
    scenario_inferred = row["inferred"].strip() in ("1", "True", "true")
    tokens_inferred = bool(outcome and outcome.constraints.get("token_latencies") == "inferred")
    submission = {
        "suite": "MLPerf Inference",
        "round": rnd,
        "division": division,
        "availability": row["Availability"].strip(),
        "system_type": row["SystemType"].strip(),
        "submitter": org,
        "system_name": row["SystemName"].strip(),
        "platform": platform,
        "mlperf_model": row["MlperfModel"].strip(),
        "scenario_raw": row["Scenario"].strip(),
        "result_raw": row["Result"].strip(),
        "units_raw": units,
        "scenario_inferred": scenario_inferred,
        "tokens_inferred": tokens_inferred,
        "results_path": location,
        "results_url": f"{base}/tree/{ctx.commit or 'main'}/{location}",
        "number_of_nodes": hw.nodes,
        "accelerators_per_node": hw.per_node,
        "total_accelerators": hw.total,
        "weight_data_types": wdt or None,
        "table_line": line,
        "table_layout": ctx.layout,
    }
    used_model = (row.get("UsedModel") or "").strip()
    if used_model and used_model != row["MlperfModel"].strip():
        submission["used_model"] = used_model
    if scenario_inferred:
        # submission_checker.py @0009b1e3: 'inferred' is True when the result is computed from a LoadGen run of another
        # scenario (Offline from SingleStream/MultiStream, MultiStream from SingleStream), never about token counts.
        if row["Scenario"].strip().lower() == "interactive":
            notes.append(
                "The table's 'inferred' flag is 1, as on every Interactive row: the results folder's scenario (Interactive) "
                "differs from the one LoadGen ran (a Server run under the Interactive limits); the value is that run's own "
                "rate. The checker version that sets the flag for this pair was not read."
            )
        else:
            notes.append(
                "The table's 'inferred' flag is 1: in the submission checker this means the result was computed from a "
                "LoadGen run of another scenario (which one is in the run's mlperf_log_detail.txt), not that tokens were inferred."
            )
            cap = 0.8
    if tokens_inferred:
        notes.append(
            "LoadGen infers this benchmark's token counts (infer_token_latencies) instead of counting the tokens the system returned."
        )
        cap = 0.8
    return submission, cap


__all__ = ["REPO_URL", "submission_source", "submission_block"]
