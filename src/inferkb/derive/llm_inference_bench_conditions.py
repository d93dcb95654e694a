"""Derivation ``llm-inference-bench-conditions``: warmup, dataset and engine version of Argonne rows, from their scripts.

The dashboard CSVs state none of the three, so the importer leaves
``conditions.warmup``, ``conditions.dataset`` and ``conditions.engine_version``
null with a ``condition_gaps`` reason pointing at the repository. The group map
``inferkb/intake/llm_inference_bench_formats.toml`` ties each (table,
framework, hardware) group to the run script that produced it and the script's
loops; the conditions map ``derive/llm_inference_bench_conditions.toml`` says,
per condition and group, what the benchmark program that script runs (the
repository's own copy at its commit, or llama-bench's source) and the setup
files beside it establish, with the quoted lines, or why they do not.

Considered: benchmark records of origin ``llm-inference-bench`` whose group
entry's loops hold the row (:func:`inferkb.intake.llm_inference_bench_formats.run_script`)
and whose group has an entry in the conditions map for the condition.

Outcomes, per condition:

- the condition is already stated -> nothing (a stated value is never overwritten);
- the map gives a value and the script's line passes none of the entry's
  ``absent_flags`` -> the value in ``conditions`` (one provenance entry per
  condition, quoting the program) and that condition's gap removed;
- the line passes one of them -> nothing, KB1002 naming the flag;
- the map gives a reason -> the condition stays null and its gap's ``reason``,
  ``checked`` (the files read, added to what the importer listed) and
  ``recover`` are the map's;
- the row is outside its script's loops, or its group has no entry -> nothing.

The proof allows numbers to appear at ``conditions.warmup`` only (a count of
warmup runs); every number that existed must be unchanged.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..intake import llm_inference_bench_formats as F
from ..intake.evidence_map import entries as map_entries
from ..intake.evidence_map import err, require_commit, require_strings
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB

NAME = "llm-inference-bench-conditions"
MAP_PATH = Path(__file__).with_name("llm_inference_bench_conditions.toml")
CONDITIONS = ("warmup", "dataset", "engine_version")
METHOD = (
    "conditions map inferkb/derive/llm_inference_bench_conditions.toml: the benchmark program and setup files of the run "
    "script of the row's group (llm_inference_bench_formats.toml)"
)
Key = tuple[str, str, str, str]  # (condition, table, framework, hardware)


@dataclass(frozen=True, slots=True)
class ConditionEntry:
    """What the map says of one condition of one group: a ``value`` with its cited lines, or a ``reason`` it stays null."""

    condition: str
    table: str
    framework: str
    hardware: str
    value: str | int | bool | None
    repo: str = ""
    path: str = ""
    commit: str = ""
    quotes: tuple[str, ...] = ()
    absent_flags: tuple[str, ...] = ()
    call: str | None = None
    evidence: str = ""
    reason: str | None = None
    checked: tuple[str, ...] = ()
    recover: str = ""

    @property
    def settled(self) -> bool:
        """True when the entry gives a value (not a reason)."""
        return self.reason is None

    def cite(self) -> str:
        """``repo/path@commit`` of the file the value is read from."""
        return f"{self.repo}/{self.path}@{self.commit}"


def _strings(e: dict[str, Any], key: str, path: str, where: str, *, required: bool) -> tuple[str, ...]:
    v = e.get(key)
    if v is None and not required:
        return ()
    if not isinstance(v, list) or (required and not v) or not all(isinstance(x, str) and x.strip() for x in v):
        raise err(f"expected {key!r} as a non-empty list of non-empty strings, got {v!r}", path, f"{where}.{key}")
    return tuple(v)


def _check_value(condition: str, value: Any, path: str, where: str) -> None:
    if condition == "warmup":
        ok = (
            value is False
            or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)
            or (isinstance(value, str) and value.strip())
        )
        want = "a whole number of runs >= 0, false (explicitly none) or a non-empty statement"
    else:
        ok = isinstance(value, str) and bool(value.strip())
        want = "a non-empty string"
    if not ok:
        raise err(f"expected 'value' of {condition} as {want}, got {value!r}", path, f"{where}.value")


def _check_group(table: str, framework: str, hardware: str, groups: tuple[F.GroupEntry, ...], path: str, where: str) -> None:
    if not any(g.framework == framework for g in groups):
        known = sorted({g.framework for g in groups})
        raise err(f"unknown framework {framework!r}: the group map has entries for {known}", path, f"{where}.framework")
    if not any(g.key == (table, framework, hardware) for g in groups):
        raise err(
            f"no group ({table!r}, {framework!r}, {hardware!r}) in the group map {F.MAP_PATH.name}; expected one of its groups",
            path,
            f"{where}.hardware",
        )


def parse_map(text: str, *, path: str = str(MAP_PATH), groups: tuple[F.GroupEntry, ...] | None = None) -> dict[Key, ConditionEntry]:
    """``{(condition, table, framework, hardware): entry}`` of a conditions map given as TOML text (keys: the file's header).

    ``groups``: the group map's entries (default: the bundled map), which every
    entry's (table, framework, hardware) must name.

    Raises :class:`inferkb.errors.InputError` naming ``path`` and the entry's
    field when the TOML does not parse; ``condition`` is not one of
    :data:`CONDITIONS`; ``table`` or ``framework`` is missing, the framework has
    no group in the group map, or a ``hardware`` value names no group; an entry
    gives both ``value`` and ``reason`` or neither; the value does not fit the
    condition; a valued entry lacks ``repo``/``path``/``evidence``, a 40-hex
    ``commit`` or ``quotes`` (a non-empty list of one-line strings), or has a bad
    ``absent_flags`` or ``call``; a null entry lacks ``reason``, ``recover`` or
    ``checked``; or two entries cover the same key.
    """
    groups = F.group_map() if groups is None else groups
    out: dict[Key, ConditionEntry] = {}
    for where, e in map_entries(text, "condition", path=path):
        require_strings(e, ("condition", "table", "framework"), path, where)
        cond = e["condition"]
        if cond not in CONDITIONS:
            raise err(f"unknown condition {cond!r}; expected one of {list(CONDITIONS)}", path, f"{where}.condition")
        hardware = _strings(e, "hardware", path, where, required=True)
        for hw in hardware:
            _check_group(e["table"], e["framework"], hw, groups, path, where)
        has_value, has_reason = "value" in e, "reason" in e
        if has_value == has_reason:
            raise err("expected exactly one of 'value' (with its evidence) and 'reason' (why it stays null)", path, where)
        if has_value:
            _check_value(cond, e["value"], path, where)
            require_strings(e, ("repo", "path", "evidence"), path, where)
            commit = require_commit(e, path, where)
            quotes = _strings(e, "quotes", path, where, required=True)
            if any("\n" in q for q in quotes):
                raise err("expected each quote as one line of the file read, exactly", path, f"{where}.quotes")
            flags = _strings(e, "absent_flags", path, where, required=False)
            if any(not f.startswith("-") or " " in f for f in flags):
                raise err(f"expected 'absent_flags' as command-line flags (-x, --name), got {list(flags)!r}", path, f"{where}.absent_flags")
            call = e.get("call")
            if call is not None and (not isinstance(call, str) or not call.strip()):
                raise err(f"expected 'call' as the run script's line that calls the program, got {call!r}", path, f"{where}.call")
            kwargs: dict[str, Any] = dict(
                value=e["value"], repo=e["repo"], path=e["path"], commit=commit, quotes=quotes, absent_flags=flags, call=call,
                evidence=e["evidence"],
            )  # fmt: skip
        else:
            require_strings(e, ("reason", "recover"), path, where)
            kwargs = dict(value=None, reason=e["reason"], checked=_strings(e, "checked", path, where, required=True), recover=e["recover"])
        for hw in hardware:
            key = (cond, e["table"], e["framework"], hw)
            if key in out:
                raise err(f"{cond} of group {key[1:]} has two entries; expected one", path, f"{where}.hardware")
            out[key] = ConditionEntry(cond, e["table"], e["framework"], hw, **kwargs)
    return out


@cache
def conditions_map() -> dict[Key, ConditionEntry]:
    """The bundled map (:data:`MAP_PATH`), parsed once against the bundled group map."""
    return parse_map(MAP_PATH.read_text(encoding="utf-8"))


def _passed(line: str, flags: tuple[str, ...]) -> list[str]:
    words = line.split()
    return [f for f in flags if f in words or any(w.startswith(f + "=") for w in words)]


def decide(
    data: dict[str, Any], cmap: dict[Key, ConditionEntry], groups: tuple[F.GroupEntry, ...] | None = None
) -> tuple[list[Proposal], list[str]]:
    """``(proposals, why_nots)`` for one benchmark record (record keys left empty for the caller; see the module docstring).

    ``proposals``: one ``conditions`` proposal per condition filled (each value
    builds on the one before, so applying them in order gives all fills) and at
    most one ``condition_gaps`` proposal; ``why_nots``: a sentence per
    condition the map would fill but the script's line overrides.
    """
    group = F.run_script(data, groups)
    cond, gaps = data.get("conditions"), data.get("condition_gaps")
    if group is None or not isinstance(cond, dict):
        return [], []
    old_gaps = gaps if isinstance(gaps, dict) else {}
    new_cond, new_gaps = copy.deepcopy(cond), copy.deepcopy(old_gaps)
    evidence = {"field": "hardware_raw", "quote": group.hardware}
    where = f"{group.framework} on {group.hardware}, {group.table} table, inside the loops of {group.cite()}"
    proposals: list[Proposal] = []
    why: list[str] = []
    filled: list[str] = []
    rewritten: list[str] = []
    for name in CONDITIONS:
        e = cmap.get((name, *group.key))
        if e is None or cond.get(name) is not None:
            continue
        if not e.settled:
            old = new_gaps.get(name) if isinstance(new_gaps.get(name), dict) else {}
            checked = [c for c in old.get("checked") or [] if c not in e.checked] + list(e.checked)
            gap = {"reason": e.reason, "checked": checked, "recover": e.recover}
            if gap != old:
                new_gaps[name] = gap
                rewritten.append(name)
            continue
        line = e.call or group.quote
        passed = _passed(line, e.absent_flags)
        if passed:
            why.append(f"{group.cite()} passes {', '.join(passed)}, which sets {name} itself; {e.cite()} does not settle it")
            continue
        new_cond[name] = e.value
        basis = f"conditions.{name} = {e.value!r}: {where}, which runs {e.path}; {e.cite()} says {' / '.join(repr(q) for q in e.quotes)}: {e.evidence}"
        if e.absent_flags:
            basis += f"; the script's line passes none of {', '.join(e.absent_flags)}"
        proposals.append(Proposal("", "conditions", copy.deepcopy(new_cond), METHOD, evidence, basis))
        if name in new_gaps:
            del new_gaps[name]
            filled.append(name)
    if new_gaps != old_gaps:
        parts = []
        if filled:
            parts.append(f"the {', '.join(filled)} gap(s) removed: now filled ({where})")
        if rewritten:
            parts.append(f"the {', '.join(rewritten)} gap(s) name the files read for this group ({where}) and why they do not settle it")
        proposals.append(Proposal("", "condition_gaps", new_gaps, METHOD, evidence, "; ".join(parts)))
    return proposals, why


@derivation(
    NAME,
    "warmup, dataset and engine_version of Argonne LLM-Inference-Bench rows from the benchmark program their run script calls "
    "(map llm_inference_bench_conditions.toml), or a gap reason naming the files read",
    ("conditions", "condition_gaps"),
    computed=("conditions.warmup",),
)
def derive_llm_inference_bench_conditions(kb: KB) -> DerivationOutput:
    """Proposals and findings (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the conditions map or the group map is unusable.
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    cmap, groups = conditions_map(), F.group_map()
    for rec in kb.by_type("benchmark"):
        if rec.data.get("origin") != F.ORIGIN:
            continue
        proposals, why = decide(rec.data, cmap, groups)
        for p in proposals:
            p.record = rec.key
            out.proposals.append(p)
        for w in why:
            out.findings.append(base.KB1002.finding(f"condition not derived: {w}", record=rec.key, path=rec.path, field="conditions"))
    return out
