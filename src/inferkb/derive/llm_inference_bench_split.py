"""Derivation ``llm-inference-bench-split``: Argonne rows whose engine split each run over two or more devices.

``interconnect-ids`` derives ``interconnect_exercised`` from a stated TP/PP/EP
size, and before accelerator records stated ``runtime_devices`` it wrote
``false`` on every one-accelerator row. An MI250 module is two GCDs, two devices
to ROCm, and the llama.cpp MI250 scripts of LLM-Inference-Bench set
``CUDA_VISIBLE_DEVICES`` to ``"0,1"``, ``"0,1,2,3"`` or ``"0,1,2,3,4,5,6,7"``
(two script devices per CSV count, ``devices_per_count`` in the group map
``inferkb/intake/llm_inference_bench_formats.toml``) and run ``llama-bench``
with no offload or split flag, so its defaults hold: every layer offloaded and
the layers split over all visible devices (map
``derive/llm_inference_bench_split.toml``, the engine's source at a pinned
commit). Each request's activations then pass between devices: over the
in-package GCD-GCD link on one module, over the inter-module fabric beyond
that. ``interconnect_exercised`` counts both (schema description): it is about
runtime devices, not packages.

Considered: benchmark records of origin ``llm-inference-bench`` whose group
entry's loops hold the row (:func:`inferkb.intake.llm_inference_bench_formats.run_script`)
and whose framework has an entry in the split map.

Outcomes:

- the row ran on ``accelerator_count x devices_per_count >= 2`` script devices
  and the script's quoted line passes none of the entry's ``flags`` ->
  ``interconnect_exercised`` true: a ``backfill`` when absent or null, a
  ``correction`` (numbers unchanged) when it states ``false``;
- the quoted line passes one of the flags -> nothing, KB1002 naming the flag;
- a stated ``false`` that ``interconnect-ids`` wrote from ``accelerator_count``
  1 alone (its basis says "a single device") on an accelerator whose record
  states ``runtime_devices`` > 1, with no TP/PP/EP size stated and no split
  entry covering the row (the vLLM MI250 rows on one module: the script's TP
  loop is 4 and 8 GCDs, so another, unpublished run produced them, and one
  module is two GCDs, so nothing says whether it used one or both) ->
  ``interconnect_exercised`` null as a ``correction`` (numbers unchanged) and a
  ``condition_gaps.interconnect_exercised`` reason naming the script checked;
- otherwise one script device, no entry, or the row outside the script's loops
  -> nothing: the stated value stays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audit.device_count import devices_per_accelerator, runtime_devices
from ..intake import llm_inference_bench_formats as F
from ..intake.evidence_map import entries as map_entries
from ..intake.evidence_map import err, require_commit, require_strings
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB

NAME = "llm-inference-bench-split"
MAP_PATH = Path(__file__).with_name("llm_inference_bench_split.toml")
FIELD = "interconnect_exercised"
METHOD = (
    "split map inferkb/derive/llm_inference_bench_split.toml (the engine's defaults, from its source) over the run script "
    "of the row's group (llm_inference_bench_formats.toml): script devices = accelerator_count x devices_per_count"
)


@dataclass(frozen=True, slots=True)
class EngineEntry:
    """One ``[[engine]]`` of the split map (keys as in the TOML file's header)."""

    framework: str
    flags: tuple[str, ...]
    repo: str
    path: str
    commit: str
    quotes: tuple[str, ...]
    evidence: str

    def cite(self) -> str:
        return f"{self.repo}/{self.path}@{self.commit}"


def parse_map(text: str, *, path: str = str(MAP_PATH)) -> dict[str, EngineEntry]:
    """``{framework: entry}`` of a split map given as TOML text.

    Raises :class:`inferkb.errors.InputError` naming ``path`` and the entry's field when the TOML does not parse, a
    required string is missing or empty, ``commit`` is not 40 hex digits, ``flags`` or ``quotes`` is not a non-empty
    list of non-empty strings, or two entries name the same framework.
    """
    out: dict[str, EngineEntry] = {}
    for where, e in map_entries(text, "engine", path=path):
        require_strings(e, ("framework", "repo", "path", "evidence"), path, where)
        commit = require_commit(e, path, where)
        lists = {}
        for key in ("flags", "quotes"):
            v = e.get(key)
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
                raise err(f"expected {key!r} as a non-empty list of non-empty strings, got {v!r}", path, f"{where}.{key}")
            lists[key] = tuple(v)
        if e["framework"] in out:
            raise err(f"framework {e['framework']!r} has two entries; expected one per framework", path, f"{where}.framework")
        out[e["framework"]] = EngineEntry(e["framework"], lists["flags"], e["repo"], e["path"], commit, lists["quotes"], e["evidence"])
    return out


@cache
def split_map() -> dict[str, EngineEntry]:
    """The bundled map (:data:`MAP_PATH`), parsed once."""
    return parse_map(MAP_PATH.read_text(encoding="utf-8"))


def decide(
    data: dict[str, Any], engines: dict[str, EngineEntry], groups: tuple[F.GroupEntry, ...] | None = None
) -> tuple[Proposal | None, str | None]:
    """``(proposal, why_not)`` for one benchmark record: a proposal setting ``interconnect_exercised`` true (record key
    left empty for the caller), or ``None`` with the reason to report (``None`` too when the record is out of scope).
    """
    group = F.run_script(data, groups)
    if group is None or group.framework not in engines:
        return None, None
    engine = engines[group.framework]
    count = data["accelerator_count"]
    devices = count * group.devices_per_count
    if devices < 2:
        return None, None
    words = group.quote.split()
    passed = [f for f in engine.flags if f in words or any(w.startswith(f + "=") for w in words)]
    if passed:
        return None, (
            f"{group.cite()} passes {', '.join(passed)}, which sets the split itself; {engine.cite()}'s defaults do not settle it"
        )
    if data.get(FIELD) is True:
        return None, None
    per = f"{count} x {group.devices_per_count} = {devices}" if group.devices_per_count > 1 else str(devices)
    basis = (
        f"{group.cite()} runs {group.framework} on {per} script devices for this row (inside its loops; "
        f"{group.evidence}) and its line passes none of {', '.join(engine.flags)}; {engine.cite()} says "
        f"{' and '.join(repr(q) for q in engine.quotes)}: {engine.evidence}"
    )
    if group.devices_per_count > 1:
        basis += f"; devices per CSV count: {group.devices_per_count_evidence}"
    action = "correction" if data.get(FIELD) is False else "backfill"
    if action == "correction":
        basis += (
            f"; this replaces a stated false: {count} accelerator(s) here are {devices} script devices, and a split over "
            "two of them crosses the link between them (the in-package GCD-GCD link on one MI250 module)"
        )
    evidence = {"field": "accelerator_count", "quote": str(count)}
    return Proposal("", FIELD, True, METHOD, evidence, basis, action), None


SINGLE_DEVICE_BASIS = "the record states a single device (accelerator_count 1)"
CORRECTION_METHOD = (
    "the accelerator record's runtime_devices against a false that interconnect-ids derived from accelerator_count 1 "
    "read as a single device, and the run script of the row's group (llm_inference_bench_formats.toml)"
)
RECOVER = "the engine command line of this run (its --tensor-parallel-size, or the devices it left visible)"


def unsupported_false(data: dict[str, Any], per_accelerator: int, groups: tuple[F.GroupEntry, ...] | None = None) -> list[Proposal]:
    """Proposals replacing a ``false`` that rests on a single-device reading of ``accelerator_count`` 1 the
    accelerator's ``runtime_devices`` (``per_accelerator``) no longer supports: ``interconnect_exercised`` null
    (a ``correction``) and its ``condition_gaps`` entry; ``[]`` when the record is not such a case.
    """
    cond = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
    if data.get(FIELD) is not False or data.get("accelerator_count") != 1 or per_accelerator < 2:
        return []
    if any(cond.get(k) is not None for k in ("tensor_parallel", "pipeline_parallel", "expert_parallel")):
        return []
    prov = [e for e in data.get("provenance") or [] if isinstance(e, dict)]
    if not any(
        e.get("tag") == "derive:interconnect-ids" and e.get("field") == FIELD and str(e.get("basis", "")).startswith(SINGLE_DEVICE_BASIS)
        for e in prov
    ):
        return []
    sub, env = data.get("submission") or {}, data.get("environment") or {}
    key = (sub.get("table"), env.get("framework"), data.get("hardware_raw"))
    scripts = [g for g in (F.group_map() if groups is None else groups) if g.key == key and data.get("model") in g.models]
    acc = (data.get("accelerator_ids") or ["the accelerator"])[0]
    outside = "no run script of the group map runs this model in this group"
    if scripts:
        g = scripts[0]
        outside = (
            f"the row is outside the loops of {g.cite()} (device counts {list(g.device_counts)} in script devices, "
            f"{g.devices_per_count} per CSV count), so a run the repository does not publish produced it"
        )
    reason = (
        f"accelerator_count 1 is one {acc} of {per_accelerator} runtime devices (runtime_devices), no TP/PP/EP size is "
        f"stated and {outside}: nothing says whether the run used one device or split each request over {per_accelerator}"
    )
    basis = f"this replaces a false derived from accelerator_count 1 read as a single device: {reason}"
    evidence = {"field": "accelerator_count", "quote": "1"}
    gaps = dict(data.get("condition_gaps") or {})
    checked = ["accelerator_count", "conditions.tensor_parallel"] + [f"{g.path} (at {g.commit[:12]})" for g in scripts[:1]]
    gaps[FIELD] = {"reason": reason, "checked": checked, "recover": RECOVER}
    return [
        Proposal("", FIELD, None, CORRECTION_METHOD, evidence, basis, "correction"),
        Proposal("", "condition_gaps", gaps, CORRECTION_METHOD, evidence, f"interconnect_exercised is now null: {reason}", "correction"),
    ]


@derivation(
    NAME,
    "interconnect_exercised of Argonne LLM-Inference-Bench rows whose engine split each run over 2+ devices, or null "
    "where a false read one multi-device accelerator as one device "
    "(llama.cpp on MI250 GCDs; map llm_inference_bench_split.toml)",
    (FIELD, "condition_gaps"),
)
def derive_llm_inference_bench_split(kb: KB) -> DerivationOutput:
    """Proposals and findings (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the split map or the group map is unusable.
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    engines, groups = split_map(), F.group_map()
    per_part = runtime_devices(kb)
    for rec in kb.by_type("benchmark"):
        if rec.data.get("origin") != F.ORIGIN:
            continue
        proposal, why = decide(rec.data, engines, groups)
        if proposal is None and why is None:
            for p in unsupported_false(rec.data, devices_per_accelerator(rec.data, per_part), groups):
                p.record = rec.key
                out.proposals.append(p)
        if proposal is not None:
            proposal.record = rec.key
            out.proposals.append(proposal)
        elif why is not None:
            out.findings.append(base.KB1002.finding(f"{FIELD} not derived: {why}", record=rec.key, path=rec.path, field=FIELD))
    return out
