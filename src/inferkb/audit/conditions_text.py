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
``{"batch_size": int}`` and/or ``{"concurrency": int}``; ``input_length`` and
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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..hardware import normalise
from ..resolve import default_engine_names
from . import conditions_patterns as P

CONDITIONS = ("model", "hardware", "batch_or_concurrency", "input_length", "output_length", "engine_version", "warmup")
TEXT_FIELDS = ("name", "methodology", "unit", "notes")
# Fields that may yield a value, highest priority first: the name and unit
# describe this record's own point; methodology often lists sibling points too.
VALUE_FIELDS = ("name", "unit", "methodology")

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


_VALUE_PATTERNS = {
    "batch": P.BATCH,
    "concurrency": P.CONCURRENCY[:3],
    "input": P.INPUT,
    "output": P.OUTPUT,
    "warmup": P.WARMUP,
}
# (aspect, term, its pre-filter keys, the value patterns whose matches it ignores)
_ASPECTS = [(a, term, P.KEYS[id(term)], _VALUE_PATTERNS.get(a, ())) for a, term in P.TERMS.items()]
_NA = re.compile(r"^\s*N/?A\b")
_DEFAULT_ENGINES = default_engine_names()
_may = P.may_match


# The keys of the patterns one of which a clause needs before _Record._scan records anything for it.
_LOUD = tuple(
    dict.fromkeys(k for p in (P.AUDIT_HEADER, P.NEG_MARKER, P.NO_LEAD, P.NO_BEFORE_END, P.HARNESS_DEFAULT) for k in P.KEYS[id(p)])
)


def _quiet(low: str | None) -> bool:
    """True when no clause of a text whose folded form is ``low`` can negate or default anything.

    That needs a negation marker, a "no" or a harness-default statement in the
    clause (an earlier audit header is cut out first, so it must be absent too).
    """
    return low is not None and not any(map(low.__contains__, _LOUD))


@dataclass(slots=True)
class _Hit:
    value: object
    field: str
    quote: str


class _Record:
    """Text fields split into clauses, with negations and harness-default statements found once."""

    def __init__(self, record: dict, engines: dict[str, tuple[str, ...]] | None = None, accelerator_tokens=None) -> None:
        self.record = record
        self.engines = engines
        self.accelerator_tokens = frozenset(accelerator_tokens or ())
        self.texts = {f: record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str) and record[f]}
        split = {f: P.split_clauses(t) for f, t in self.texts.items()}
        self.clauses: dict[str, list[str]] = {f: [c for c, _ in parts] for f, parts in split.items()}
        self.negated: dict[str, tuple[str, str]] = {}
        self.defaulted: dict[str, tuple[str, str]] = {}
        lows = {f: P.folded(t) for f, t in self.texts.items()}
        for fld, parts in split.items():
            if _quiet(lows[fld]) and not any(inherited for _, inherited in parts):
                continue
            for clause, inherited in parts:
                self._scan(fld, clause, inherited)
        headline = self.texts.get("name", "") + " " + self.texts.get("unit", "")
        self.is_prefill = bool(_may(P.PREFILL_RECORD, P.folded(headline)) and P.PREFILL_RECORD.search(headline))
        # The value fields' folded text (None if any is not ASCII): a pattern
        # that cannot match it is skipped for every clause.
        vals = [lows[f] for f in VALUE_FIELDS if f in lows]
        self.vlow = None if None in vals else "\n".join(vals)
        # (field, clause, stripped, folded) for value search; clauses about other runs are dropped once.
        self._values = []
        for fld in VALUE_FIELDS:
            other = _may(P.NOT_THIS_RUN, lows.get(fld))
            for c in self.clauses.get(fld, ()):
                low = P.folded(c)
                if not (other and _may(P.NOT_THIS_RUN, low) and P.NOT_THIS_RUN.search(c)):
                    self._values.append((fld, c, c.strip(), low))

    def _scan(self, fld: str, clause: str, inherited: bool) -> None:
        body = P.AUDIT_HEADER.sub("", clause) if "(" in clause else clause
        low = P.folded(body)
        whole = inherited or bool(_may(P.NEG_MARKER, low) and P.NEG_MARKER.search(body)) or bool(P.NO_LEAD.match(body))
        default = bool(_may(P.HARNESS_DEFAULT, low) and P.HARNESS_DEFAULT.search(body))
        # Only a negation, a "no" before a term or a harness-default statement records anything.
        if not (whole or default or _may(P.NO_BEFORE_END, low)):
            return
        for aspect, term, keys, values in _ASPECTS:
            negate = aspect not in self.negated
            if not (negate or default and aspect not in self.defaulted):
                continue
            if low is not None and not any(map(low.__contains__, keys)):
                continue
            found = list(term.finditer(body))
            if not found:
                continue
            # A term that is part of a stated value ("ISL/OSL 1000/1000") is
            # not what a negation in the same long clause is about.
            stated = [m.span() for pat, _ in P.keyed(values, low) for m in pat.finditer(body)]
            hits = [h for h in found if not any(a <= h.start() < b or h.start() <= a < h.end() for a, b in stated)]
            if not hits:
                continue
            if negate and (whole or any(P.NO_BEFORE_END.search(body, 0, m.start()) for m in hits)):
                self.negated[aspect] = (fld, clause.strip())
            if default and aspect not in self.defaulted:
                self.defaulted[aspect] = (fld, clause.strip())

    def value_clauses(self, aspect: str | None = None):
        """Yield (field, clause, folded clause) for value search, skipping clauses about other runs or negating ``aspect``."""
        neg = self.negated[aspect][1] if aspect and aspect in self.negated else None
        for fld, clause, stripped, low in self._values:
            if stripped != neg:
                yield fld, clause, low

    def harness(self, clause: str) -> str | None:
        m = P.HARNESS_NAME.search(clause) or P.HARNESS_NAME.search(" ".join(self.texts.values()))
        return m.group(0).strip("`") if m else None

    def sources(self) -> list[str]:
        src = self.record.get("sources")
        return [s for s in src if isinstance(s, str)] if isinstance(src, list) else []


def _bounded(clause: str, low: str | None, m: re.Match, group_end: int) -> bool:
    """True when the number is a bound or the start of a range, not the run's value."""
    if low is None:
        before = bool(P.BOUND_BEFORE.search(clause[: m.start()]))
    else:
        # BOUND_BEFORE matches iff the text before, less trailing whitespace, ends with one of its words.
        before = low[: m.start()].rstrip().endswith(P.BOUND_WORDS)
    return before or bool(P.RANGE_AFTER.match(clause[group_end:]))


def _scan(rec: _Record, patterns, aspect: str, pick_last: bool = False, fields=VALUE_FIELDS) -> list[_Hit]:
    """Candidates from the highest-priority field that has any (patterns yield counts)."""
    by_field: dict[str, list[_Hit]] = {}
    active = P.keyed(patterns, rec.vlow)
    if not active:
        return []
    for fld, clause, low in rec.value_clauses(aspect):
        if fld not in fields:
            continue
        for pat, keys in active:
            if low is not None and not any(map(low.__contains__, keys)):
                continue
            for m in pat.finditer(clause):
                groups = [i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) is not None]
                if not groups:
                    continue
                gi = groups[-1] if pick_last else groups[0]
                if _bounded(clause, low, m, m.end(gi)):
                    continue
                raw = m.group(gi)
                value = 1 if raw.lower() in ("one", "single", "first") else P.parse_count(raw)
                by_field.setdefault(fld, []).append(_Hit(value, fld, m.group(0).strip()))
    for fld in VALUE_FIELDS:
        if fld in by_field:
            return by_field[fld]
    return []


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


def _negation_reason(rec: _Record, aspects: tuple[str, ...]) -> str | None:
    for a in aspects:
        if a in rec.negated:
            fld, clause = rec.negated[a]
            return f"the record's {fld} says it is not given: {clause[:160]!r}"
    return None


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


@dataclass(frozen=True, slots=True)
class DeviceCount:
    """How many devices a benchmark record says its value ran on: ``count`` (``None`` when unknown or
    ambiguous), the ``field`` and exact ``quote`` it was read from, and ``reason`` (the basis, or why none).

    The one reading of device counts: the load-conditions audit (the ``hardware``
    condition) and the physical-plausibility audit (the devices a rate is divided
    over) both use :func:`device_count`, so they cannot disagree.
    """

    count: int | None
    field: str | None
    quote: str | None
    reason: str


# Words that say nothing about which part a count is of ("8x GPUs", "single GPU").
_GENERIC_DEVICE_WORDS = frozenset(
    {"gpu", "gpus", "nvidia", "amd", "intel", "google", "instinct", "radeon", "single", "one", "chip", "chips", "card", "cards"}
    | {"accelerator", "accelerators", "device", "devices", "npu", "npus", "tpu", "tpus", "laptop", "instance", "a"}
)
_LEADING_COUNT = re.compile(r"^\s*\d{1,4}\s?[x\u00d7]\s?|^\s*(?:single|one)\b", re.I)


def _same_part_word(word: str, token: str) -> bool:
    """A quoted word names the accelerator's token: equal, or one a variant suffix of the other ("MI50" / "mi50x")."""
    if word == token:
        return True
    short, long_ = sorted((word, token), key=len)
    return len(short) >= 4 and any(c.isdigit() for c in short) and long_.startswith(short) and long_[len(short) :].isalpha()


def _names_other_part(quote: str, accelerator_tokens: frozenset[str]) -> bool:
    """True when a count's quote names an accelerator that is not the record's ("8xMI325X" in an MI355X record)."""
    if not accelerator_tokens:
        return False
    words = {t for t in normalise(_LEADING_COUNT.sub(" ", quote)).split() if t not in _GENERIC_DEVICE_WORDS and not t.isdigit()}
    return bool(words) and not any(_same_part_word(w, t) for w in words for t in accelerator_tokens)


def _named_counts(rec: _Record) -> list[_Hit]:
    """``N x <name>`` counts whose following words name the record's accelerator (any spelling of its name)."""
    tokens = rec.accelerator_tokens
    if not tokens or not _may(P.COUNT_NAMED, rec.vlow):
        return []
    out = []
    for fld, clause, low in rec.value_clauses("hardware"):
        if not _may(P.COUNT_NAMED, low):
            continue
        for m in P.COUNT_NAMED.finditer(clause):
            following = normalise(clause[m.end() : m.end() + 30]).split()[:4]
            if tokens.intersection(following) and not _bounded(clause, low, m, m.end(1)):
                out.append(_Hit(int(m.group(1)), fld, clause[m.start() : m.end() + 12].strip()))
    return out


def _highest_field(hits: list[_Hit]) -> list[_Hit]:
    """The hits of the highest-priority field that has any (as :func:`_scan` keeps them)."""
    for fld in VALUE_FIELDS:
        kept = [h for h in hits if h.field == fld]
        if kept:
            return kept
    return []


def _count_sweep(rec: _Record) -> DeviceCount | None:
    """A sweep over device counts ("from 2 to 4 to 6 to 8 cards") in the highest-priority field that states one: ambiguous."""
    if not _may(P.COUNT_SWEEP, rec.vlow):
        return None
    for fld in VALUE_FIELDS:
        for f, clause, low in rec.value_clauses("hardware"):
            if f != fld or not _may(P.COUNT_SWEEP, low):
                continue
            m = P.COUNT_SWEEP.search(clause)
            if m:
                counts = [m.group(1), m.group(2), *re.findall(r"\d+", m.group(3) or "")]
                quote = m.group(0).strip()
                return DeviceCount(
                    None, fld, quote, f"ambiguous count: a sweep over {', '.join(counts)} devices ({quote!r}), not one run's count"
                )
    return None


def _device_count(rec: _Record) -> DeviceCount:
    count = rec.record.get("accelerator_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return DeviceCount(count, "accelerator_count", str(count), "accelerator_count")
    if "hardware" in rec.negated:
        return DeviceCount(None, None, None, _negation_reason(rec, ("hardware",)) or "the record says the hardware is not given")
    sweep = _count_sweep(rec)
    if sweep is not None:
        return sweep
    hits = [h for h in _scan(rec, P.COUNT, "hardware") if not _names_other_part(h.quote, rec.accelerator_tokens)]
    hits = _highest_field(hits + _named_counts(rec))
    counts = {h.value for h in hits}
    if not hits:
        return DeviceCount(None, None, None, "no device count is stated in name, unit or methodology")
    if len(counts) > 1:
        return DeviceCount(None, hits[0].field, None, f"ambiguous count: {', '.join(sorted({h.quote for h in hits}))}")
    # The TP/DP/EP layout matters only for a single count read from the text.
    tp = _may(P.TP_SIZE, rec.vlow) and {
        int(next(g for g in m.groups() if g)) for _, c, low in rec.value_clauses() if _may(P.TP_SIZE, low) for m in P.TP_SIZE.finditer(c)
    }
    other = tp and any(_may(P.OTHER_PARALLEL, low) and P.OTHER_PARALLEL.search(c) for _, c, low in rec.value_clauses())
    h = hits[0]
    if tp and max(tp) < h.value and not other:
        return DeviceCount(None, h.field, h.quote, f"ambiguous count: {h.quote!r} but tensor-parallel size {max(tp)} with no DP/EP stated")
    return DeviceCount(h.value, h.field, h.quote, f"device count from {h.field}: {h.quote!r}")


def device_count(record: dict, *, accelerator_tokens=None) -> DeviceCount:
    """Read the device count of one benchmark record (see :class:`DeviceCount`).

    Order: ``accelerator_count``; else a count quoted from ``name``, ``unit``
    or ``methodology`` (the highest-priority field with one): ``8x H100``,
    ``8-GPU``, ``4 GPUs``, ``single GPU``, ``one L4``. ``accelerator_tokens``
    (distinctive tokens of the record's accelerator, e.g. ``{"mi355x"}``) drops
    counts of another part ("8xMI325X" quoted from a sibling submission).
    Several distinct counts, or a count larger than a stated TP size with no
    DP/EP, give ``None`` as ambiguous; a clause saying the hardware is not
    given gives ``None``. Never raises.
    """
    return _device_count(_Record(record if isinstance(record, dict) else {}, accelerator_tokens=accelerator_tokens))


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
