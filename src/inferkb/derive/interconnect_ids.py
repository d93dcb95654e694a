"""Derivation ``interconnect-ids``: the fabric present in a run's hardware, and whether the run exercised it.

Two separate facts (DESIGN.md rule 5, "fabric present is not fabric exercised"):

``interconnect_ids`` (filled only when missing or ``[]``): the ordered union
of the ``interconnect`` lists of the accelerator records the benchmark names
in ``accelerator_ids``. Basis: "fabric present in the hardware
configuration". Nothing is filled when an accelerator does not resolve, has
no ``interconnect`` field (unknown is not "none"), lists an id that is not an
interconnect record of this KB (the union would dangle or be incomplete), or
when every list is empty (never invent a fabric).

``interconnect_exercised`` (filled only when absent or null), from
``accelerator_count`` and ``conditions.tensor_parallel`` / ``pipeline_parallel``
/ ``expert_parallel`` / ``data_parallel``:

- ``true`` only when the record states a multi-device split of one request:
  TP, PP or EP > 1 (and a stated device count, if any, is large enough to
  hold that split: count >= TP x PP and count >= EP);
- ``false`` only when the record states a single device (``accelerator_count
  == 1``) and no split > 1;
- otherwise nothing is written and a KB1002 finding gives the reason.
  Data-parallel replicas alone (DP > 1, no TP/PP/EP > 1) do not count as
  exercising the fabric: each request runs inside one replica, so the fabric
  carries no per-request traffic; but more than one device is present, so
  the value is not ``false`` either and stays unset.

A stated count that contradicts the split (count 1 with TP 4) is a KB1003
conflict; so is an existing value that disagrees with the derived one. Sizes
count runtime devices: an accelerator whose record states ``runtime_devices``
(an MI250 module: 2 GCDs) holds that many, and one such accelerator with no
split stated is not ``false`` (it may have split across its devices).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..audit.device_count import devices_per_accelerator, runtime_devices
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

FIELDS = ("interconnect_ids", "interconnect_exercised")
SPLITS = (("tensor_parallel", "TP"), ("pipeline_parallel", "PP"), ("expert_parallel", "EP"))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _fabric(kb: KB, rec: Record, out: DerivationOutput) -> None:
    current = rec.data.get("interconnect_ids")
    if current not in (None, []):
        return
    accs = rec.data.get("accelerator_ids")

    def none(reason: str) -> None:
        out.findings.append(
            base.KB1002.finding(f"interconnect_ids not filled: {reason}", record=rec.key, path=rec.path, field="interconnect_ids")
        )

    if not isinstance(accs, list) or not accs or not all(isinstance(a, str) for a in accs):
        none("the record names no accelerator (accelerator_ids is empty or absent); recover by naming the hardware")
        return
    known = kb.ids_of_type("interconnect") if "interconnect" in kb.profile.types else set()
    union: list[str] = []
    parts: list[str] = []
    for acc_id in accs:
        acc = kb.resolve(acc_id, "accelerator")
        if acc is None:
            none(f"accelerator {acc_id!r} is not an accelerator record of this KB")
            return
        listed = acc.data.get("interconnect")
        if not isinstance(listed, list):
            none(f"accelerator {acc_id} has no interconnect list (unknown is not 'none'); recover by adding it to {acc.path}")
            return
        dangling = [i for i in listed if i not in known]
        if dangling:
            none(
                f"accelerator {acc_id} lists {', '.join(map(repr, dangling))}, not interconnect records of this KB; "
                f"the union would dangle or be incomplete; recover by fixing {acc.path}"
            )
            return
        parts.append(f"{acc_id}: {', '.join(listed) or 'none'}")
        union.extend(i for i in listed if i not in union)
    if not union:
        none(f"the named accelerators list no interconnect ({'; '.join(parts)}); none is invented")
        return
    if len(accs) == 1:
        evidence = {"field": "accelerator_ids[0]", "quote": accs[0]}
    else:
        evidence = {"field": "accelerator_ids", "quote": json.dumps(accs, ensure_ascii=False)}
    out.proposals.append(
        Proposal(
            rec.key,
            "interconnect_ids",
            union,
            method="ordered union of the `interconnect` lists of the accelerator records named in accelerator_ids",
            evidence=evidence,
            basis=f"fabric present in the hardware configuration ({'; '.join(parts)}); not evidence that the run used it",
        )
    )


def exercised(data: dict[str, Any], per_accelerator: int = 1) -> tuple[bool | None, str, dict[str, str] | None, bool]:
    """Derive ``interconnect_exercised`` from one benchmark record's structured fields.

    ``per_accelerator``: runtime devices per counted accelerator (the accelerator record's ``runtime_devices``, see
    :func:`inferkb.audit.device_count.devices_per_accelerator`): TP/PP/EP sizes count runtime devices, so a split
    needs ``accelerator_count x per_accelerator`` of them. Returns ``(value, reason, evidence, conflict)``: ``value`` is ``True`` /
    ``False`` / ``None``; ``reason`` is the basis (or why ``None``);
    ``evidence`` is ``{"field", "quote"}`` for a value; ``conflict`` is True
    when the stated fields contradict each other. Semantics: module docstring.
    """
    count = _int(data.get("accelerator_count"))
    cond = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
    sizes = {key: _int(cond.get(key)) for key, _ in SPLITS}
    dp = _int(cond.get("data_parallel"))
    split = [(key, label, sizes[key]) for key, label in SPLITS if (sizes[key] or 1) > 1]
    if split:
        key, label, size = split[0]
        stated = ", ".join(f"{lab}={n}" for _, lab, n in split)
        needed = max((sizes["tensor_parallel"] or 1) * (sizes["pipeline_parallel"] or 1), sizes["expert_parallel"] or 1)
        runtime = count * per_accelerator if count is not None else None
        held = f"accelerator_count {count}" + (f" ({runtime} runtime devices)" if per_accelerator > 1 else "")
        if runtime is not None and runtime < needed:
            return None, f"{held} cannot hold the stated split {stated} (needs {needed} devices)", None, True
        devices = f"{runtime} devices" if runtime is not None else f"at least {needed} devices"
        if runtime is not None and per_accelerator > 1:
            # TP 4 on 2 MI250 modules: 4 GCDs, two per module, so the split crosses the module boundary as well as the in-package link.
            devices = f"{runtime} runtime devices ({count} accelerator(s) x {per_accelerator} runtime_devices"
            devices += f"; a split over more than {per_accelerator} of them spans accelerators)" if needed > per_accelerator else ")"
        return (
            True,
            f"the record states a multi-device split of each request ({stated}) across {devices}; "
            "tensors, pipeline stages or experts cross the inter-device fabric",
            {"field": f"conditions.{key}", "quote": str(size)},
            False,
        )
    if count == 1 and per_accelerator > 1:
        return (
            None,
            f"one accelerator of {per_accelerator} runtime devices (runtime_devices) and no TP/PP/EP size stated: the run may "
            "have used one device or split across them; recover from the engine command line",
            None,
            False,
        )
    if count == 1:
        return (
            False,
            "the record states a single device (accelerator_count 1) and no TP/PP/EP split; no inter-device fabric is crossed",
            {"field": "accelerator_count", "quote": "1"},
            False,
        )
    if count is not None and count > 1 and dp is not None and dp > 1:
        return (
            None,
            f"data-parallel replicas only (DP={dp}, {count} devices): each request stays inside one replica, "
            "so this is not counted as exercising the fabric, but more than one device is present so it is not false either; "
            "recover by stating TP/PP/EP sizes per replica",
            None,
            False,
        )
    if count is not None and count > 1:
        return (
            None,
            f"{count} devices but no TP/PP/EP size is stated; recover from the engine command line "
            "(--tensor-parallel-size, --pipeline-parallel-size, expert parallel flags)",
            None,
            False,
        )
    return (None, "neither accelerator_count nor TP/PP/EP sizes are stated; recover from the harness command line or log", None, False)


def _exercised(kb: KB, rec: Record, out: DerivationOutput, per_part: dict[str, int]) -> None:
    value, reason, evidence, conflict = exercised(rec.data, devices_per_accelerator(rec.data, per_part))
    # An explicit null says "not known"; evidence may settle it. A stated true/false is never overwritten.
    existing = base.current_value(kb, rec, "interconnect_exercised") if base.has_value(kb, rec, "interconnect_exercised") else None
    if existing is not None:
        if value is not None and existing != value:
            out.findings.append(
                base.KB1003.finding(
                    f"interconnect_exercised is {existing} but the record's fields give {value}: {reason}",
                    record=rec.key,
                    path=rec.path,
                    field="interconnect_exercised",
                    evidence=evidence,
                )
            )
        return
    if conflict:
        out.findings.append(
            base.KB1003.finding(
                f"interconnect_exercised not derived: {reason}", record=rec.key, path=rec.path, field="interconnect_exercised"
            )
        )
    elif value is None:
        out.findings.append(
            base.KB1002.finding(
                f"interconnect_exercised not derived: {reason}", record=rec.key, path=rec.path, field="interconnect_exercised"
            )
        )
    else:
        out.proposals.append(
            Proposal(
                rec.key,
                "interconnect_exercised",
                value,
                method="from accelerator_count and conditions.tensor_parallel/pipeline_parallel/expert_parallel "
                "(true only for a stated TP/PP/EP split > 1; false only for a stated single device)",
                evidence=evidence,
                basis=reason,
            )
        )


@derivation(
    "interconnect-ids", "fill empty benchmark interconnect_ids from the accelerators' fabric; derive interconnect_exercised", FIELDS
)
def derive_interconnect(kb: KB) -> DerivationOutput:
    """Proposals for every benchmark record (see the module docstring for the rules)."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    per_part = runtime_devices(kb)
    for rec in kb.by_type("benchmark"):
        _fabric(kb, rec, out)
        _exercised(kb, rec, out, per_part)
    return out
