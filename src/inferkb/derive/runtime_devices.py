"""Derivation ``runtime-devices``: how many devices the runtime exposes for one accelerator, from a cited map.

The map ``runtime_devices.toml`` beside this module names, per accelerator
record, the number (an MI250 OAM module is two GCDs, each one GPU device to
ROCm: 2) and the source sentence that states it. The derivation writes
``runtime_devices`` and ``runtime_devices_basis`` (``{"source_id", "quote"}``)
on the accelerator record, with the record's own text that agrees as the
provenance evidence. It writes nothing, with a finding, when the source is
not among the record's ``sources`` (KB1002) or the record already states
another value (KB1003). The audit device-count (KB1201) and the derivations
``interconnect-ids`` and ``llm-inference-bench-tp`` read the field (absent
means 1).

Only ``runtime_devices`` (a new number) and its basis appear; the proof
checks that no existing number changed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB

MAP_PATH = Path(__file__).with_name("runtime_devices.toml")
FIELD = "runtime_devices"
BASIS = "runtime_devices_basis"
METHOD = "map inferkb/derive/runtime_devices.toml: the source sentence that states the runtime devices per accelerator"
_STRINGS = ("id", "source_id", "quote", "evidence_field", "evidence_quote")


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``[[accelerator]]`` of the map (see the TOML file's header)."""

    id: str
    runtime_devices: int
    source_id: str
    quote: str
    evidence_field: str
    evidence_quote: str


def parse(text: str, path: str = str(MAP_PATH)) -> list[Entry]:
    """The entries of a map given as TOML text.

    Raises :class:`InputError` naming ``path`` and the field (``accelerator[0].runtime_devices``) when the TOML does not
    parse, a string is missing or empty, ``runtime_devices`` is not an integer >= 2, or an id appears twice.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=path) from None
    items = doc.get("accelerator", [])
    if not isinstance(items, list):
        raise InputError("expected an array of [[accelerator]] tables", path=path, field="accelerator")
    out: list[Entry] = []
    for i, item in enumerate(items):
        where = f"accelerator[{i}]"
        if not isinstance(item, dict):
            raise InputError("expected a table", path=path, field=where)
        for key in _STRINGS:
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise InputError("expected a non-empty string", path=path, field=f"{where}.{key}")
        n = item.get(FIELD)
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise InputError(
                f"expected an integer >= 2 (1 is the default and needs no entry), got {n!r}", path=path, field=f"{where}.{FIELD}"
            )
        if any(e.id == item["id"] for e in out):
            raise InputError(f"accelerator {item['id']!r} appears twice", path=path, field=f"{where}.id")
        out.append(Entry(item["id"], n, *(item[k] for k in _STRINGS[1:])))
    return out


@cache
def entries() -> tuple[Entry, ...]:
    """The bundled map (:data:`MAP_PATH`), parsed once. Raises :class:`InputError` if it is unusable."""
    return tuple(parse(MAP_PATH.read_text(encoding="utf-8")))


def propose(kb: KB, map_entries: list[Entry] | tuple[Entry, ...]) -> DerivationOutput:
    """Proposals and findings for ``map_entries`` against ``kb`` (see the module docstring)."""
    out = DerivationOutput()
    if "accelerator" not in kb.profile.types:
        return out
    for e in map_entries:
        rec = kb.resolve(e.id, "accelerator")
        if rec is None:
            continue  # another KB without this part
        data: dict[str, Any] = rec.data
        where = {"record": rec.key, "path": rec.path, "field": FIELD}
        if e.source_id not in (data.get("sources") or []):
            out.findings.append(
                base.KB1002.finding(
                    f"{FIELD} not derived: source {e.source_id!r} of {MAP_PATH.name} is not in the record's sources", **where
                )
            )
            continue
        stated = data.get(FIELD)
        if stated is not None and stated != e.runtime_devices:
            out.findings.append(base.KB1003.finding(f"{FIELD} is {stated!r} but {e.source_id} gives {e.runtime_devices}", **where))
            continue
        text = base.get_path(data, e.evidence_field)
        if not isinstance(text, str) or e.evidence_quote not in text:
            raise InputError(
                f"evidence_quote is not in the record's {e.evidence_field}", path=str(MAP_PATH), field=f"{e.id}.evidence_quote"
            )
        evidence = {"field": e.evidence_field, "quote": e.evidence_quote}
        basis_value = {"source_id": e.source_id, "quote": e.quote}
        basis = f"{e.source_id} states: {e.quote!r}"
        if stated is None:
            out.proposals.append(Proposal(rec.key, FIELD, e.runtime_devices, METHOD, evidence, basis))
        if data.get(BASIS) != basis_value:
            out.proposals.append(Proposal(rec.key, BASIS, basis_value, METHOD, evidence, basis))
    return out


@derivation(
    "runtime-devices",
    "fill accelerator runtime_devices (devices the runtime exposes per accelerator, e.g. 2 GCDs per MI250 module) from a cited map",
    (FIELD, BASIS),
    computed=(FIELD,),
)
def derive_runtime_devices(kb: KB) -> DerivationOutput:
    """Proposals for the accelerators of the bundled map :data:`MAP_PATH`."""
    return propose(kb, entries())
