"""Audit ``load-conditions``: for every benchmark record, which of the seven load conditions are established.

DESIGN.md rule 6 ("comparable means same conditions") needs model, hardware
and count, batch or concurrency, input length, output length, engine version
and warmup for every number that is ranked against another. This audit runs
:func:`inferkb.audit.conditions_text.assess` on each benchmark record and
reports:

- KB301 ``load-condition-absent`` (warning): one finding per absent condition
  per record, on the structured field that would hold it, naming the reason,
  the sources the record cites and what would recover it;
- KB302 ``load-condition-harness-default`` (info): the text says the
  harness's defaults were used; the assumption is stated, no value is filled;
- KB303 ``load-condition-from-text`` (info): the condition is established only
  by prose (a backfill candidate for ``conditions.*``), with the quote.

Figures: ``{"records": n, "absent_by_condition": {cond: n},
"harness_default_by_condition": {cond: n}, "present_from_text_by_condition":
{cond: n}, "complete": [keys of records with all seven present],
"complete_or_reasoned": n, "complete_or_reasoned_share": n / records}``.

"Complete or reasoned" (:func:`reasoned`): each of the seven conditions is
either present, or absent with a ``condition_gaps`` entry for it whose
``reason`` is non-blank and whose ``checked`` list names at least one piece of
evidence that was examined (a field, a file, a rules file). A gap that only
says "unknown" without naming what was checked does not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hardware import record_accelerator_tokens
from ..resolve import engine_names
from ..rules import Rule, register
from . import AuditResult, audit
from .conditions_cache import cached_reading, conditions_cache, hit_share, keep_reading
from .conditions_patterns import GAP_KEYS
from .conditions_text import CONDITIONS, STRUCTURED_FIELD, TEXT_FIELDS, ConditionAssessment, assess_with_count, documented_gaps

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

LABEL = {
    "model": "model",
    "hardware": "hardware (accelerator and count)",
    "batch_or_concurrency": "batch size or concurrency",
    "input_length": "input length",
    "output_length": "output length",
    "engine_version": "engine version",
    "warmup": "warmup",
}

KB301 = register(
    Rule(
        "KB301",
        "load-condition-absent",
        "warning",
        "load-conditions",
        "A benchmark record does not establish one of its seven load conditions.",
        "A number is comparable with another only under the same model, hardware and count, batch or concurrency, "
        "input and output length, engine version and warmup (comparable means same conditions). A condition that is neither in a "
        "structured field nor quoted from the record's own text is absent; the finding says what was searched, "
        "which sources the record cites and what would recover it. A plausible guess is never filled in.",
        '{"model": "Llama 3.1 8B", "accelerator_ids": ["nvidia-h100-sxm"], "accelerator_count": 1, '
        '"conditions": {"batch_size": 1, "input_tokens": 512, "output_tokens": 128, '
        '"engine_version": "0.6.3", "warmup": 10}}',
        '{"model": "Llama 3.1 8B", "methodology": "Concurrency 16 on 1x H100, vLLM 0.6.3. Warmup not stated."}',
    )
)
KB302 = register(
    Rule(
        "KB302",
        "load-condition-harness-default",
        "info",
        "load-conditions",
        "A load condition is only known as 'the harness default'.",
        "When the text names the harness and says its defaults were used, the value is an assumption about that "
        "harness version's defaults, not a recorded measurement condition; it is reported so, never filled in.",
        '{"methodology": "vllm bench latency --input-len 512 --output-len 128 --batch-size 8"}',
        '{"methodology": "measured with `vllm bench latency`; no prompt length is given, so this is a '
        'latency-at-the-harness-default shape"}',
    )
)
KB303 = register(
    Rule(
        "KB303",
        "load-condition-from-text",
        "info",
        "load-conditions",
        "A load condition is established only by the record's prose, not by a structured field.",
        "Prose is read by people and by this audit's extractor, not by comparisons or exports. The quoted value is a "
        "backfill candidate for the structured field (with a provenance entry citing the quote).",
        '{"conditions": {"batch_size": 1}, "methodology": "batch size 1"}',
        '{"methodology": "llama.cpp CUDA backend, batch size 1, 512 token prompt"}',
    )
)


KB304 = register(
    Rule(
        "KB304",
        "load-condition-gap-documented",
        "info",
        "load-conditions",
        "A load condition is absent, and the record itself documents why in condition_gaps.",
        "A null with a stated reason is the honest state of a record whose evidence does not give a condition "
        "(a null with a reason beats a plausible value). It is still absent - the number is not comparable on that condition - but the record has "
        "done what it can, so this is reported as information rather than as a warning.",
        '{"conditions": {"warmup": null}, "condition_gaps": {"warmup": {"reason": "the log does not show a warmup phase", '
        '"recover": "the harness command line (--num-iters-warmup)"}}}',
        '{"conditions": {"warmup": null}}   (no condition_gaps entry: KB301 instead)',
    )
)


def reasoned(record: dict, cond: str) -> bool:
    """True when ``condition_gaps`` explains absent ``cond`` with a reason and a non-empty ``checked`` evidence list."""
    gaps = record.get("condition_gaps")
    if not isinstance(gaps, dict):
        return False
    for key in GAP_KEYS[cond]:
        gap = gaps.get(key)
        if (
            isinstance(gap, dict)
            and isinstance(gap.get("reason"), str)
            and gap["reason"].strip()
            and isinstance(gap.get("checked"), list)
            and any(isinstance(c, str) and c.strip() for c in gap["checked"])
        ):
            return True
    return False


def _documented_gap(record: dict, cond: str) -> bool:
    """True when the record's own ``condition_gaps`` gives a (non-blank) reason for ``cond``."""
    return any(isinstance(reason, str) and reason.strip() for _, reason in documented_gaps(record, cond))


def _field_for(cond: str, a: ConditionAssessment) -> str:
    # The hardware condition has two halves; point at the one that is missing.
    if cond == "hardware" and not (isinstance(a.value, dict) and a.value.get("accelerators")):
        return "accelerator_ids"
    return STRUCTURED_FIELD[cond]


_RULES = {r.code: r for r in (KB301, KB302, KB303, KB304)}


def record_row(rec: Record, result: dict[str, ConditionAssessment]) -> list:
    """What one record adds to the audit, as JSON-able data: ``[finding rows, figure keys, complete, complete or reasoned]``.

    A finding row is ``[code, message, field, evidence, extra]``; a figure key
    ``[condition, kind]`` with kind ``absent``, ``documented`` (absent, with the
    record's own reason), ``defaulted`` or ``text`` (present from prose only).
    The load-conditions cache (:mod:`inferkb.audit.conditions_cache`) keeps it.
    """
    rows: list[list] = []
    keys: list[list[str]] = []
    for cond, a in result.items():
        extra = {"condition": cond, "checked": a.checked, "recover": a.recover}
        if a.status == "absent":
            keys.append([cond, "absent"])
            known = f" (known: {a.value})" if a.value else ""
            code = "KB304" if _documented_gap(rec.data, cond) else "KB301"
            if code == "KB304":
                keys.append([cond, "documented"])
            message = f"{LABEL[cond]} absent{known}: {a.reason}. Would recover from {a.recover}."
            rows.append([code, message, _field_for(cond, a), None, {**extra, "known": a.value}])
        elif a.status == "harness-default":
            keys.append([cond, "defaulted"])
            rows.append(["KB302", f"{LABEL[cond]} is only the harness default: {a.reason}", STRUCTURED_FIELD[cond], a.evidence, extra])
        elif a.evidence and a.evidence.get("field") in TEXT_FIELDS:
            keys.append([cond, "text"])
            message = (
                f"{LABEL[cond]} = {a.value!r} is stated only in {a.evidence['field']}; backfill candidate for {STRUCTURED_FIELD[cond]}"
            )
            rows.append(["KB303", message, STRUCTURED_FIELD[cond], a.evidence, {**extra, "value": a.value}])
    complete = all(a.status == "present" for a in result.values())
    reasoned_all = all(a.status == "present" or (a.status == "absent" and reasoned(rec.data, c)) for c, a in result.items())
    return [rows, keys, complete, reasoned_all]


def _cost(kb: KB) -> float:
    """Seconds per 20,000 synthetic records (see :class:`inferkb.audit.AuditSpec`), less what the cache holds."""
    return 0.2 + 1.6 * (1.0 - hit_share(kb, engine_names(kb), list(kb.by_type("benchmark"))))


@audit(
    "load-conditions",
    "which of the seven load conditions each benchmark record establishes, and from where",
    cost=_cost,
    group="conditions",
)
def run(kb: KB) -> AuditResult:
    """Assess every benchmark record; return KB301-KB304 findings and per-condition figures.

    A record whose file is unchanged since the last run takes its result from
    the load cache (:mod:`inferkb.audit.conditions_cache`); the report is the same.
    """
    findings = []
    counts = {kind: dict.fromkeys(CONDITIONS, 0) for kind in ("absent", "documented", "defaulted", "text")}
    complete: list[str] = []
    complete_or_reasoned = 0
    n = 0
    engines = engine_names(kb)
    cache = conditions_cache(kb, engines)
    devices = kb.cached("conditions.device_counts", dict)  # shared with physical-plausibility (one reading per record)
    for rec in kb.by_type("benchmark"):
        n += 1
        tokens = record_accelerator_tokens(kb, rec.data)
        kept = cached_reading(cache, kb, rec, tokens)
        if kept is None:
            result, dev = assess_with_count(rec.data, engines=engines, accelerator_tokens=tokens)
            row = record_row(rec, result)
            keep_reading(cache, kb, rec, tokens, row, dev)
        else:
            row, dev = kept
        devices[rec.key] = dev
        rows, keys, is_complete, is_reasoned = row
        for code, message, field, evidence, extra in rows:
            findings.append(_RULES[code].finding(message, field=field, evidence=evidence, extra=extra, record=rec.key, path=rec.path))
        for cond, kind in keys:
            counts[kind][cond] += 1
        if is_complete:
            complete.append(rec.key)
        if is_reasoned:
            complete_or_reasoned += 1
    if cache is not None:
        cache.save()
    figures = {
        "records": n,
        "absent_by_condition": counts["absent"],
        "absent_documented_by_condition": counts["documented"],
        "harness_default_by_condition": counts["defaulted"],
        "present_from_text_by_condition": counts["text"],
        "complete": complete,
        "complete_or_reasoned": complete_or_reasoned,
        "complete_or_reasoned_share": round(complete_or_reasoned / n, 4) if n else None,
    }
    return AuditResult("load-conditions", findings, figures)
