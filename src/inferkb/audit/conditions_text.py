"""Extract the seven load conditions of a benchmark record, with evidence.

:func:`assess` takes one benchmark record (a parsed JSON dict) and returns, for
each of :data:`CONDITIONS`, a :class:`ConditionAssessment` whose ``status`` is

- ``"present"``: established from a structured field or quoted from the
  record's own text; ``value`` holds it and ``evidence`` is
  ``{"field": <field>, "quote": <exact substring of that field>}``;
- ``"harness-default"``: the text names the harness and says its defaults
  were used; stated as an assumption in ``reason``, never filled in as a value;
- ``"absent"``: ``reason`` says why (not found / the record says it is not
  given / several values), ``checked`` lists the fields searched and
  ``recover`` says what would establish it.

Values: ``model`` str; ``hardware`` ``{"accelerators": [ids], "count": int}``
(when absent, ``value`` keeps whichever half is known); ``batch_or_concurrency``
``{"batch_size": int}`` and/or ``{"concurrency": int}`` or
``{"concurrency": "unbounded"}`` (every request issued at once); ``input_length`` and
``output_length`` int tokens (``"128K"`` read as 128000), or
``{"min": int, "max": int}`` for a stated range; ``engine_version`` str
(release or commit); ``warmup`` int (iterations/requests) or ``False``
(explicitly none).

Rules that keep it honest (DESIGN.md, "A null with a reason beats a plausible
value"): a clause that says a condition is not given blocks every positive for
that condition; positives come from ``name``, ``unit`` and ``methodology`` only
(``notes`` carry cross-record commentary and earlier audit prose, so they are
searched for negations and harness-default statements only); the highest-
priority field with a candidate decides, and several distinct values there make
the condition absent as ambiguous. The function is pure and never raises on
missing or null fields.

The text is read once by :mod:`inferkb.audit.conditions_reading` (clauses, negations, candidate values) and the
device count by :mod:`inferkb.audit.conditions_devices`; this module decides each condition's status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..resolve import default_engine_names
from . import conditions_patterns as P
from .conditions_devices import DeviceCount, _device_count, device_count
from .conditions_reading import TEXT_FIELDS, VALUE_FIELDS, _Hit, _may, _negation_reason, _Record, _scan

__all__ = [
    "CONDITIONS",
    "STRUCTURED_FIELD",
    "TEXT_FIELDS",
    "VALUE_FIELDS",
    "ConditionAssessment",
    "DeviceCount",
    "assess",
    "assess_with_count",
    "device_count",
    "documented_gaps",
]

CONDITIONS = ("model", "hardware", "batch_or_concurrency", "input_length", "output_length", "engine_version", "warmup")

STRUCTURED_FIELD = {
    "model": "model",
    "hardware": "accelerator_count",
    "batch_or_concurrency": "conditions.batch_size",
    "input_length": "conditions.input_tokens",
    "output_length": "conditions.output_tokens",
    "engine_version": "conditions.engine_version",
    "warmup": "conditions.warmup",
}


@dataclass(slots=True)
class ConditionAssessment:
    """One condition's status for one record (see the module docstring for value shapes)."""

    condition: str
    status: str
    value: object | None = None
    evidence: dict | None = None
    reason: str | None = None
    checked: list[str] = field(default_factory=list)
    recover: str | None = None


_NA = re.compile(r"^\s*N/?A\b")
_DEFAULT_ENGINES = default_engine_names()


def documented_gaps(record: dict, cond: str) -> list[tuple[str, object]]:
    """``[(key, reason)]`` for the record's own ``condition_gaps`` entries that explain condition ``cond``."""
    gaps = record.get("condition_gaps")
    if not isinstance(gaps, dict):
        return []
    out = []
    for key in P.GAP_KEYS[cond]:
        gap = gaps.get(key)
        if isinstance(gap, dict) and gap.get("reason"):
            out.append((key, gap["reason"]))
    return out


def _absent(cond: str, rec: _Record, reason: str, value: object | None = None) -> ConditionAssessment:
    for key, gap_reason in documented_gaps(rec.record, cond):
        reason = f"{reason}; condition_gaps.{key}: {gap_reason}"
    srcs = rec.sources()
    reason = f"{reason}; sources cited: {', '.join(srcs) if srcs else 'none'}"
    checked = [STRUCTURED_FIELD[cond], *[f for f in TEXT_FIELDS if f in rec.texts]]
    return ConditionAssessment(cond, "absent", value, None, reason, checked, P.RECOVER[cond])


def _decide(cond: str, rec: _Record, hits: list[_Hit], negs: tuple[str, ...], what: str) -> ConditionAssessment:
    """Turn candidates into a status: one value -> present, several -> ambiguous, none -> default/absent."""
    if hits:
        values = {repr(h.value) for h in hits}
        if len(values) == 1:
            h = hits[0]
            return ConditionAssessment(cond, "present", h.value, {"field": h.field, "quote": h.quote}, None, [h.field])
        listed = ", ".join(sorted({h.quote for h in hits}))
        return _absent(cond, rec, f"ambiguous: {hits[0].field} gives several {what} values ({listed})")
    for a in negs:
        if a in rec.defaulted:
            fld, clause = rec.defaulted[a]
            tool = rec.harness(clause) or "the harness"
            return ConditionAssessment(
                cond,
                "harness-default",
                None,
                {"field": fld, "quote": clause},
                f"assumption: {what} is {tool}'s default (the record says defaults were used); not a recorded value",
                [*VALUE_FIELDS, "notes"],
                P.RECOVER[cond],
            )
    return _absent(
        cond, rec, _negation_reason(rec, negs) or f"no {what} found in name, unit or methodology (notes searched for negations only)"
    )


def _structured(record: dict, path: str) -> object | None:
    node: object = record
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _from_structured(cond: str, path: str, value: object) -> ConditionAssessment:
    return ConditionAssessment(cond, "present", value, {"field": path, "quote": str(value)}, None, [path])


def _model(rec: _Record) -> ConditionAssessment:
    for path in ("model", "model_id"):
        v = rec.record.get(path)
        if isinstance(v, str) and v.strip():
            if _NA.match(v):
                return _absent("model", rec, f"the model field is a placeholder: {v!r}")
            return _from_structured("model", path, v)
    m = P.MODEL_IN_NAME.search(rec.texts.get("name", ""))
    if m:
        return ConditionAssessment("model", "present", m.group(0), {"field": "name", "quote": m.group(0)}, None, ["model", "name"])
    return _absent("model", rec, "no model field and no model named in the record name")


def _hardware(rec: _Record, dev: DeviceCount) -> ConditionAssessment:
    ids = [a for a in rec.record.get("accelerator_ids") or [] if isinstance(a, str)]
    if dev.count is None and dev.reason.startswith("ambiguous"):
        return _absent("hardware", rec, dev.reason, {"accelerators": ids} if ids else None)
    if ids and dev.count is not None:
        return ConditionAssessment(
            "hardware",
            "present",
            {"accelerators": ids, "count": dev.count},
            {"field": dev.field, "quote": dev.quote},
            None,
            ["accelerator_ids", dev.field],
        )
    neg = _negation_reason(rec, ("hardware",))
    if not ids and dev.count is not None:
        return _absent(
            "hardware",
            rec,
            f"accelerator half missing: accelerator_ids is empty (count {dev.count} from {dev.quote!r})",
            {"count": dev.count},
        )
    if ids:
        return _absent(
            "hardware",
            rec,
            neg or "count half missing: accelerator_ids names the part but no device count is stated in name, unit or methodology",
            {"accelerators": ids},
        )
    return _absent("hardware", rec, neg or "both halves missing: accelerator_ids is empty and no device count is stated")


def _batch_or_concurrency(rec: _Record) -> ConditionAssessment:
    cond = rec.record.get("conditions") if isinstance(rec.record.get("conditions"), dict) else {}
    # "unbounded" concurrency is a stated value: every request issued at once (MLPerf Offline), not an unknown.
    value = {
        k: cond[k]
        for k in ("batch_size", "concurrency")
        if (isinstance(cond.get(k), int) and not isinstance(cond.get(k), bool)) or (k == "concurrency" and cond.get(k) == "unbounded")
    }
    if value:
        key = next(iter(value))
        return (
            _from_structured("batch_or_concurrency", f"conditions.{key}", value)
            if len(value) == 1
            else ConditionAssessment(
                "batch_or_concurrency", "present", value, {"field": f"conditions.{key}", "quote": str(value[key])}, None, ["conditions"]
            )
        )
    batch = [] if "batch" in rec.negated else _scan(rec, P.BATCH, "batch")
    conc = [] if "concurrency" in rec.negated else _scan(rec, P.CONCURRENCY, "concurrency")
    for name, hits in (("batch size", batch), ("concurrency", conc)):
        if len({h.value for h in hits}) > 1:
            return _decide("batch_or_concurrency", rec, hits, ("batch", "concurrency"), name)
    if not batch and not conc:
        return _decide("batch_or_concurrency", rec, [], ("batch", "concurrency"), "batch size or concurrency")
    value = {}
    if batch:
        value["batch_size"] = batch[0].value
    if conc:
        value["concurrency"] = conc[0].value
    first = (batch or conc)[0]
    return ConditionAssessment("batch_or_concurrency", "present", value, {"field": first.field, "quote": first.quote}, None, [first.field])


def _length(rec: _Record, cond: str) -> ConditionAssessment:
    key = "input_tokens" if cond == "input_length" else "output_tokens"
    v = _structured(rec.record, f"conditions.{key}")
    if isinstance(v, int):
        return _from_structured(cond, f"conditions.{key}", v)
    aspect = "input" if cond == "input_length" else "output"
    if aspect in rec.negated:
        return _decide(cond, rec, [], (aspect,), f"{aspect} length")
    if cond == "input_length":
        hits = _scan(rec, P.INPUT, aspect) or _scan(rec, P.INPUT_HEADLINE, aspect, fields=("name", "unit"))
        if not hits and _may(P.INPUT_NO_PROMPT, rec.vlow):
            for fld, clause, low in rec.value_clauses(aspect):
                m = _may(P.INPUT_NO_PROMPT, low) and P.INPUT_NO_PROMPT.search(clause)
                if m:
                    hits = [_Hit(0, fld, m.group(0).strip())]
                    break
        # llama-bench's -p/ppN set the prompt only for prefill tests; a tg
        # (decode) figure does not run with that prompt.
        if not hits and rec.is_prefill:
            hits = _scan(rec, P.INPUT_PREFILL, aspect)
    else:
        hits = []
        for fld, clause, low in rec.value_clauses(aspect) if _may(P.OUTPUT_RANGE, rec.vlow) else ():
            m = _may(P.OUTPUT_RANGE, low) and P.OUTPUT_RANGE.search(clause)
            if m:
                hits = [_Hit({"min": int(m.group(1)), "max": int(m.group(2))}, fld, m.group(0))]
                break
        patterns = list(P.OUTPUT)
        text = " ".join(rec.texts.values())
        if "mlx_lm" in text:
            patterns.append(P.OUTPUT_MLX)
        if "llama-bench" in text:
            patterns.append(P.OUTPUT_LLAMA_BENCH)
        hits = hits or _scan(rec, patterns, aspect, pick_last=True)
    return _decide(cond, rec, hits, (aspect,), f"{aspect} length")


def _engine_version(rec: _Record) -> ConditionAssessment:
    for path in ("conditions.engine_version", "environment.engine_version", "environment.engine_commit"):
        v = _structured(rec.record, path)
        if isinstance(v, str) and v.strip():
            return _from_structured("engine_version", path, v)
    engine = rec.record.get("engine_id")
    if not isinstance(engine, str) or not engine:
        return _absent("engine_version", rec, "no engine_id, so there is no engine whose version could be stated")
    if "engine_release" in rec.negated:
        return _decide("engine_version", rec, [], ("engine_release",), "engine version")
    names = (rec.engines or _DEFAULT_ENGINES).get(engine) or (engine,)
    patterns = list(P.engine_patterns(names))
    if engine == "llama-cpp":
        patterns.append(("commit", P.LLAMACPP_BUILD))
    if "engine_commit" in rec.negated:
        patterns = [(kind, pat) for kind, pat in patterns if kind != "commit"]
    kinds = {id(pat): kind for kind, pat in patterns}
    active = P.keyed([pat for _, pat in patterns], rec.vlow)
    for fld, clause, low in rec.value_clauses("engine_release") if active else ():
        found = []
        for pat, keys in active:
            if low is not None and not any(map(low.__contains__, keys)):
                continue
            for m in pat.finditer(clause):
                val = m.group(2) if m.re.groups >= 2 and m.group(2) else next(g for g in m.groups() if g)
                if kinds.get(id(pat)) == "branch":
                    # a branch ranks after a release or commit named in the same clause ("vLLM v0.6.3 from the main branch")
                    found.append((len(clause) + m.start(), f"branch {val}", m.group(0).strip()))
                    continue
                found.append((m.start(), val, m.group(0).strip()))
        if found:
            _, val, quote = min(found)
            return ConditionAssessment("engine_version", "present", val, {"field": fld, "quote": quote}, None, [fld])
    neg = _negation_reason(rec, ("engine_release", "engine_commit"))
    return _absent(
        "engine_version", rec, neg or f"engine_id {engine!r} is named but no release or commit of it appears in name, unit or methodology"
    )


def _warmup(rec: _Record) -> ConditionAssessment:
    v = _structured(rec.record, "conditions.warmup")
    if v is not None:
        return _from_structured("warmup", "conditions.warmup", v)
    if "warmup" in rec.negated:
        return _decide("warmup", rec, [], ("warmup",), "warmup")
    hits = []
    active = P.keyed(P.WARMUP, rec.vlow)
    for fld, clause, low in rec.value_clauses("warmup") if active else ():
        for pat, keys in active:
            if low is not None and not any(map(low.__contains__, keys)):
                continue
            for m in pat.finditer(clause):
                hits.append(_Hit(False if m.group(1).lower() == "no" else int(m.group(1)), fld, m.group(0)))
        if hits:
            break
    return _decide("warmup", rec, hits, ("warmup",), "warmup")


def assess(record: dict, *, engines: dict[str, tuple[str, ...]] | None = None, accelerator_tokens=None) -> dict[str, ConditionAssessment]:
    """Assess all seven load conditions of one benchmark record.

    ``record`` is the parsed JSON dict (bundled or sample-corpus schema);
    missing or null fields are treated as not stated. ``engines`` maps engine
    ids to the names prose uses for them (:func:`inferkb.resolve.engine_names`
    of the record's KB; default: the bundled KB's engine records);
    ``accelerator_tokens`` are passed to :func:`device_count`. Returns a dict keyed by
    every name in :data:`CONDITIONS`, in that order. Every ``evidence.quote``
    is an exact substring of ``record[evidence.field]`` (or the ``str()`` of a
    structured value).
    """
    return assess_with_count(record, engines=engines, accelerator_tokens=accelerator_tokens)[0]


def assess_with_count(
    record: dict, *, engines: dict[str, tuple[str, ...]] | None = None, accelerator_tokens=None
) -> tuple[dict[str, ConditionAssessment], DeviceCount]:
    """:func:`assess` and the record's :class:`DeviceCount` from the same reading."""
    rec = _Record(record if isinstance(record, dict) else {}, engines, accelerator_tokens)
    dev = _device_count(rec)
    out = {
        "model": _model(rec),
        "hardware": _hardware(rec, dev),
        "batch_or_concurrency": _batch_or_concurrency(rec),
        "input_length": _length(rec, "input_length"),
        "output_length": _length(rec, "output_length"),
        "engine_version": _engine_version(rec),
        "warmup": _warmup(rec),
    }
    return {c: out[c] for c in CONDITIONS}, dev
