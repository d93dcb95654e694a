"""Derivation ``llm-inference-bench-tp``: the tensor-parallel size of Argonne LLM-Inference-Bench vLLM rows, from their run script.

The dashboard CSVs give a device count ("Num of Hardware") but not how the
model was split, so the importer leaves ``conditions.tensor_parallel`` null
(with a ``condition_gaps.tensor_parallel`` reason on more than one device).
The vLLM run scripts of the group map ``inferkb/intake/llm_inference_bench_formats.toml``
pass ``--tensor-parallel-size=$tensor_parallel`` inside their loop over the
tensor-parallel sizes the map lists as ``device_counts``: a row inside the
loops (:func:`inferkb.intake.llm_inference_bench_formats.run_script`) ran at
TP = its device count.

Considered: benchmark records of origin ``llm-inference-bench`` whose
``conditions.tensor_parallel`` is null and whose group entry's quoted line
passes that flag.

Outcomes:

- the entry counts devices as the CSV does (``devices_per_count`` 1) ->
  ``conditions.tensor_parallel`` = ``accelerator_count``, and the
  ``tensor_parallel`` gap is removed;
- the entry counts several script devices per CSV count (the MI250: two GCDs per
  OAM module) and the row's accelerator record states the same
  ``runtime_devices`` -> ``conditions.tensor_parallel`` = ``accelerator_count x
  devices_per_count``, in runtime devices (TP 8 on 4 MI250 modules: 8 GCDs, which
  is what the device-count audit checks), and the ``tensor_parallel`` gap is removed;
- the same without a matching ``runtime_devices`` on the accelerator record -> no
  value: TP 8 on 4 accelerators of one device each would read as a conflict. The
  gap's reason says what the script ran (KB1002 too);
- the row is outside every script's loops, or its script is not vLLM's -> nothing.

The proof allows numbers to appear at ``conditions.tensor_parallel`` only;
every number that existed must be unchanged.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from ..audit.device_count import devices_per_accelerator, runtime_devices
from ..intake import llm_inference_bench_formats as F
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB

NAME = "llm-inference-bench-tp"
FLAG = "--tensor-parallel-size=$tensor_parallel"
METHOD = "group map inferkb/intake/llm_inference_bench_formats.toml: the vLLM run script whose loops hold the row"
CHECKED = "the run script's loops (llm_inference_bench_formats.toml)"


@derivation(
    NAME,
    "fill conditions.tensor_parallel of Argonne LLM-Inference-Bench vLLM rows from their run script's TP loop (map llm_inference_bench_formats.toml)",
    ("conditions", "condition_gaps"),
    computed=("conditions.tensor_parallel",),
)
def derive_llm_inference_bench_tp(kb: KB) -> DerivationOutput:
    """Proposals and findings for llm-inference-bench rows without a TP (see the module docstring).

    Raises :class:`inferkb.errors.InputError` when the group map is unusable (it names the file and entry).
    """
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types:
        return out
    entries = F.group_map()
    per_part = runtime_devices(kb)
    for rec in kb.by_type("benchmark"):
        data = rec.data
        cond, gaps = data.get("conditions"), data.get("condition_gaps")
        if data.get("origin") != F.ORIGIN or not isinstance(cond, dict) or cond.get("tensor_parallel") is not None:
            continue
        entry = F.run_script(data, entries)
        if entry is None or FLAG not in entry.quote:
            continue
        count = data["accelerator_count"]
        tp = count * entry.devices_per_count
        evidence = {"field": "accelerator_count", "quote": str(count)}
        loop = f"{entry.cite()} passes {FLAG} in its loop over tensor-parallel sizes {list(entry.device_counts)}"
        gaps = dict(gaps) if isinstance(gaps, dict) else {}
        per = devices_per_accelerator(data, per_part)
        if entry.devices_per_count == per:
            basis = f"{loop}, and this row lies inside the script's loops (model, device count, batch size, lengths), so it ran at TP {tp}"
            if per > 1:
                basis += (
                    f" runtime devices: {count} accelerators x {per} (devices_per_count in {F.MAP_PATH.name}; runtime_devices "
                    f"of {data['accelerator_ids'][0]})"
                )
            out.proposals.append(Proposal(rec.key, "conditions", {**copy.deepcopy(cond), "tensor_parallel": tp}, METHOD, evidence, basis))
            if "tensor_parallel" in gaps:
                rest = {k: v for k, v in gaps.items() if k != "tensor_parallel"}
                out.proposals.append(
                    Proposal(
                        rec.key, "condition_gaps", rest, METHOD, evidence, f"conditions.tensor_parallel is now filled from {entry.cite()}"
                    )
                )
            continue
        reason = (
            f"{entry.path} (at {entry.commit[:12]}) ran this row at --tensor-parallel-size {tp}, over {tp} GCDs of {count} MI250 "
            f"modules (the CSV and accelerator_count count modules of {entry.devices_per_count} GCDs each: devices_per_count in "
            f"{F.MAP_PATH.name}); left null because the accelerator record states runtime_devices {per} (absent means 1), "
            f"not {entry.devices_per_count}, and TP {tp} on {count} accelerators would read as a conflict"
        )
        old = gaps.get("tensor_parallel") if isinstance(gaps.get("tensor_parallel"), dict) else {}
        checked = [c for c in old.get("checked") or [] if c != CHECKED] + [CHECKED]
        new_gap = {
            "reason": reason,
            "checked": checked,
            "recover": f"runtime_devices {entry.devices_per_count} on the accelerator record, with its source (derive runtime-devices)",
        }
        if old != new_gap:
            out.proposals.append(
                Proposal(rec.key, "condition_gaps", {**gaps, "tensor_parallel": new_gap}, METHOD, evidence, f"{loop}; {reason}")
            )
        out.findings.append(
            base.KB1002.finding(f"conditions.tensor_parallel not filled: {reason}", record=rec.key, path=rec.path, field="conditions")
        )
    return out
