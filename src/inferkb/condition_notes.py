"""What a benchmark's null run condition with no ``condition_gaps`` reason means, for readers (``show``, the site).

DESIGN.md asks a gap reason "for each null condition that matters". A null without one is therefore one of:

- ``unexplained``: a condition ``compare`` keys on (input/output tokens, warmup, engine version, or the load when
  none of concurrency, batch size and request rate is given): a real hole, shown loudly.
- ``load-given``: one of concurrency / batch_size / request_rate when another of them is given; the comparability
  key takes the first of them that is present (:func:`inferkb.analysis.comparability.CONDITIONS`, ``load``).
- ``load-gap``: one of those three when none is given and another of them carries the gap reason for the load.
- ``not-applicable``: the record's own facts rule the condition out: a parallel size on a run of one runtime
  device (one accelerator, and every part it may be lists one runtime device), or expert parallelism on a dense model (the
  model record's ``architecture`` is ``dense``; without an architecture, it sets no ``num_experts`` and its
  ``active_params_b`` equals ``params_b``).
- ``optional``: anything else (num_prompts, dataset, max_model_len, a parallel size on several devices): not a
  comparability condition, and nobody recorded why it is absent.

Nothing here writes a record or claims a value; the notes describe the absence only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .analysis.common import devices_of, is_number
from .analysis.comparability import LOAD_FIELDS
from .analysis.fit import runtime_devices

if TYPE_CHECKING:
    from .kb import KB

__all__ = ["AbsentNote", "absent_note", "KEYED_FIELDS", "PARALLEL_FIELDS"]

KEYED_FIELDS = frozenset({"input_tokens", "output_tokens", "warmup", "engine_version", *LOAD_FIELDS})
"""``conditions`` fields that :mod:`inferkb.analysis.comparability` keys on."""
PARALLEL_FIELDS = ("tensor_parallel", "pipeline_parallel", "expert_parallel", "data_parallel")


@dataclass(frozen=True)
class AbsentNote:
    """Why a null condition carries no gap reason: ``kind`` (unexplained | load-given | load-gap | not-applicable |
    optional)
    and a short ``text`` for a reader."""

    kind: str
    text: str


def _one_runtime_device(kb: KB, data: dict[str, Any]) -> bool:
    """One device in all: one accelerator, and every part it may be (``accelerator_ids``, else the
    ``accelerator_alternates`` candidates) lists one runtime device."""
    n, _ = devices_of(data)
    if n != 1:
        return False
    ids = {i for i in data.get("accelerator_ids") or data.get("accelerator_alternates") or [] if isinstance(i, str)}
    if not ids:
        return False
    for i in ids:
        acc = kb.resolve(i, "accelerator")
        if acc is None or runtime_devices(acc) != 1:
            return False
    return True


def _dense(kb: KB, data: dict[str, Any]) -> bool:
    mid = data.get("model_id")
    model = kb.resolve(mid, "model") if isinstance(mid, str) and mid else None
    if model is None:
        return False
    m = model.data
    arch = m.get("architecture")
    if arch is not None:
        return arch == "dense"
    params, active = m.get("params_b"), m.get("active_params_b")
    return m.get("num_experts") is None and is_number(params) and is_number(active) and active == params


def absent_note(kb: KB, data: dict[str, Any], name: str) -> AbsentNote:
    """The note for condition ``name`` of benchmark ``data`` (a dict), which is null and has no gap reason.

    ``kb`` resolves the record's accelerator and model. Raises nothing: a record whose references do not resolve
    gets the cautious answer (``unexplained`` for a keyed condition, else ``optional``).
    """
    conds = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
    gaps = data.get("condition_gaps") if isinstance(data.get("condition_gaps"), dict) else {}
    if name in LOAD_FIELDS:
        others = [f for f in LOAD_FIELDS if f != name]
        given = [f"{f}={conds[f]}" for f in others if conds.get(f) is not None]
        if given:
            return AbsentNote("load-given", f"not needed: the load is given as {given[0]}")
        explained = [f for f in others if isinstance(gaps.get(f), dict) and str(gaps[f].get("reason") or "").strip()]
        if explained:
            return AbsentNote("load-gap", f"not stated: the load is absent, see the {explained[0]} gap")
    if name in KEYED_FIELDS:
        return AbsentNote("unexplained", "NOT STATED, no reason recorded")
    if name in PARALLEL_FIELDS and _one_runtime_device(kb, data):
        return AbsentNote("not-applicable", "n/a: one device (no parallelism to state)")
    if name == "expert_parallel" and _dense(kb, data):
        return AbsentNote("not-applicable", "n/a: dense model (no experts)")
    return AbsentNote("optional", "not stated; optional (compare does not key on it), no reason recorded")
