"""Audit ``context-window``: do a benchmark's stated input and output lengths fit its model's context window?

A request of ``input_tokens + output_tokens`` tokens needs a window at least that long. The window is the model
record's ``max_position_embeddings`` (the positions the model was built for, from its ``config.json``), unless the
run states a longer ``conditions.max_model_len`` or the model record states a ``context_scaling`` (RoPE scaling and
the like stretch the window). A run whose lengths do not fit is a warning (KB512): an engine refuses such a
request or stops it at the window (vLLM, for one, caps a sequence at its ``max_model_len``, which defaults to the
model's window), so a rate computed as ``batch x (input + output) / time`` counts tokens that were never
processed. Its number is kept as published; the finding says why it should not be read as the stated workload.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..rules import Rule, register
from . import AuditResult, audit

if TYPE_CHECKING:
    from ..kb import KB

KB512 = register(
    Rule(
        "KB512",
        "run-exceeds-context-window",
        "warning",
        "context-window",
        "A benchmark's input_tokens + output_tokens exceed its model's context window (max_position_embeddings), "
        "and the run states no longer max_model_len.",
        "A request longer than the window is refused or cut short by the engine; a rate that counts the stated lengths "
        "then counts tokens that were never processed (such rows can read several times above the roofline).",
        'Llama-2-7B (4096 positions), "input_tokens": 2048, "output_tokens": 2048',
        'GPT-J-6B (2048 positions), "input_tokens": 2048, "output_tokens": 2048, "max_model_len": null',
    )
)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


@dataclass(frozen=True)
class WindowExcess:
    """A run longer than its model's window: ``input_tokens``, ``output_tokens``, the model's ``window``
    (``max_position_embeddings``, positions) and ``model`` (record id)."""

    input_tokens: int
    output_tokens: int
    window: int
    model: str

    def note(self) -> str:
        """One line for a reader (compare's notes column)."""
        return f"KB512: {self.input_tokens} + {self.output_tokens} tokens exceed {self.model}'s {self.window}-position window"


def window_check(kb: KB, data: dict[str, Any]) -> tuple[str, WindowExcess | None]:
    """Classify benchmark ``data`` (a dict): ``("unchecked", None)`` when a length or the model is missing,
    ``("no-window", None)`` when the model record states no ``max_position_embeddings``, ``("fits", None)``,
    ``("extended", None)`` when a stated ``max_model_len`` or the model's ``context_scaling`` covers the run, or
    ``("exceeded", WindowExcess)``. Raises nothing."""
    conds = data.get("conditions") if isinstance(data.get("conditions"), dict) else {}
    isl, osl = _int(conds.get("input_tokens")), _int(conds.get("output_tokens"))
    mid = data.get("model_id")
    if isl is None or osl is None or not isinstance(mid, str) or not mid or "model" not in kb.profile.types:
        return "unchecked", None
    model = kb.resolve(mid, "model")
    if model is None:
        return "unchecked", None
    window = _int(model.data.get("max_position_embeddings"))
    if window is None:
        return "no-window", None
    if isl + osl <= window:
        return "fits", None
    stated = _int(conds.get("max_model_len"))
    if (stated is not None and stated >= isl + osl) or model.data.get("context_scaling"):
        return "extended", None
    return "exceeded", WindowExcess(isl, osl, window, model.id)


@audit("context-window", "Benchmark input + output lengths vs the model's context window (max_position_embeddings).", cost=0.04)
def run(kb: KB) -> AuditResult:
    """Check every benchmark that states both lengths and names a model record.

    Figures: ``checked`` (benchmarks with both lengths and a model window), ``exceeded`` (KB512),
    ``extended`` (exceeding the model's window but within a stated ``max_model_len`` or a model ``context_scaling``),
    ``unchecked_no_window`` (the model record states no ``max_position_embeddings``) and ``by_model``
    ``{model id: KB512 count}``.
    """
    result = AuditResult("context-window")
    figures: dict[str, Any] = {"checked": 0, "exceeded": 0, "extended": 0, "unchecked_no_window": 0, "by_model": {}}
    if "benchmark" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            verdict, excess = window_check(kb, rec.data)
            if verdict == "unchecked":
                continue
            if verdict == "no-window":
                figures["unchecked_no_window"] += 1
                continue
            figures["checked"] += 1
            if verdict == "extended":
                figures["extended"] += 1
            if excess is None:
                continue
            figures["exceeded"] += 1
            figures["by_model"][excess.model] = figures["by_model"].get(excess.model, 0) + 1
            total = excess.input_tokens + excess.output_tokens
            result.findings.append(
                KB512.finding(
                    f"input_tokens {excess.input_tokens} + output_tokens {excess.output_tokens} = {total} tokens exceed "
                    f"{excess.model}'s context window of {excess.window} positions (the model record's "
                    "max_position_embeddings); no longer max_model_len is stated, so the run cannot have processed the "
                    "stated lengths and its rate is not a measurement of them",
                    record=rec.key,
                    path=rec.path,
                    field="conditions.output_tokens",
                    extra={
                        "input_tokens": excess.input_tokens,
                        "output_tokens": excess.output_tokens,
                        "window": excess.window,
                        "model": excess.model,
                    },
                )
            )
    result.figures = figures
    return result
