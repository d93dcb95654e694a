"""One benchmark record's text, read once for the load-conditions extractor: the text fields split into clauses,
the clauses that say a condition is not given (negations) or that harness defaults were used, and the candidate
values the value patterns find in ``name``, ``unit`` and ``methodology`` (highest-priority field first).

:mod:`inferkb.audit.conditions_text` turns these readings into statuses; :mod:`inferkb.audit.conditions_devices`
reads the device count from them. The patterns are :mod:`inferkb.audit.conditions_patterns`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import conditions_patterns as P

TEXT_FIELDS = ("name", "methodology", "unit", "notes")
# Fields that may yield a value, highest priority first: the name and unit
# describe this record's own point; methodology often lists sibling points too.
VALUE_FIELDS = ("name", "unit", "methodology")

_VALUE_PATTERNS = {
    "batch": P.BATCH,
    "concurrency": P.CONCURRENCY[:3],
    "input": P.INPUT,
    "output": P.OUTPUT,
    "warmup": P.WARMUP,
}
# (aspect, term, its pre-filter keys, the value patterns whose matches it ignores)
_ASPECTS = [(a, term, P.KEYS[id(term)], _VALUE_PATTERNS.get(a, ())) for a, term in P.TERMS.items()]
_may = P.may_match


# The keys of the patterns one of which a clause needs before _Record._scan records anything for it.
_LOUD = P.minimal_keys(k for p in (P.AUDIT_HEADER, P.NEG_MARKER, P.NO_LEAD, P.NO_BEFORE_END, P.HARNESS_DEFAULT) for k in P.KEYS[id(p)])


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


def _negation_reason(rec: _Record, aspects: tuple[str, ...]) -> str | None:
    for a in aspects:
        if a in rec.negated:
            fld, clause = rec.negated[a]
            return f"the record's {fld} says it is not given: {clause[:160]!r}"
    return None
