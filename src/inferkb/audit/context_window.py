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


@audit("context-window", "Benchmark input + output lengths vs the model's context window (max_position_embeddings).")
def run(kb: KB) -> AuditResult:
    """Check every benchmark that states both lengths and names a model record.

    Figures: ``checked`` (benchmarks with both lengths and a model window), ``exceeded`` (KB512),
    ``extended`` (exceeding the model's window but within a stated ``max_model_len`` or a model ``context_scaling``),
    ``unchecked_no_window`` (the model record states no ``max_position_embeddings``) and ``by_model``
    ``{model id: KB512 count}``.
    """
    result = AuditResult("context-window")
    figures: dict[str, Any] = {"checked": 0, "exceeded": 0, "extended": 0, "unchecked_no_window": 0, "by_model": {}}
    if "benchmark" in kb.profile.types and "model" in kb.profile.types:
        for rec in kb.by_type("benchmark"):
            d = rec.data
            conds = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
            isl, osl = _int(conds.get("input_tokens")), _int(conds.get("output_tokens"))
            mid = d.get("model_id")
            if isl is None or osl is None or not isinstance(mid, str) or not mid:
                continue
            model = kb.resolve(mid, "model")
            if model is None:
                continue
            window = _int(model.data.get("max_position_embeddings"))
            if window is None:
                figures["unchecked_no_window"] += 1
                continue
            figures["checked"] += 1
            if isl + osl <= window:
                continue
            stated = _int(conds.get("max_model_len"))
            if (stated is not None and stated >= isl + osl) or model.data.get("context_scaling"):
                figures["extended"] += 1
                continue
            figures["exceeded"] += 1
            figures["by_model"][model.id] = figures["by_model"].get(model.id, 0) + 1
            result.findings.append(
                KB512.finding(
                    f"input_tokens {isl} + output_tokens {osl} = {isl + osl} tokens exceed {model.id}'s context window of "
                    f"{window} positions (max_position_embeddings in {model.key}); no longer max_model_len is stated, so "
                    "the run cannot have processed the stated lengths and its rate is not a measurement of them",
                    record=rec.key,
                    path=rec.path,
                    field="conditions.output_tokens",
                    extra={"input_tokens": isl, "output_tokens": osl, "window": window, "model": model.id},
                )
            )
    result.figures = figures
    return result
