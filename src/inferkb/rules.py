"""Registry of rules: every check has a stable code, a slug and its own explanation.

Modules declare their rules at import time with :func:`register`. ``inferkb
rules`` lists them and ``inferkb rules CODE`` explains one, with a passing and a
failing example (STYLE.md: "Rules have stable codes and their own docs").
Codes are stable once released; ranges by family:

- KB0xx files (parse, encoding, size, layout)
- KB1xx record structure (schema, ids, dates, confidence)
- KB2xx references and ids across the KB
- KB3xx audit load-conditions
- KB4xx audit metric-consistency
- KB5xx audit physical-plausibility
- KB6xx audit citations
- KB7xx audit provenance-tiers
- KB8xx audit identity
- KB9xx audit staleness
- KB10xx derivations
- KB11xx intake
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from . import plugins
from .findings import Finding


@dataclass(frozen=True, slots=True)
class Rule:
    """A check with a stable identity.

    ``family`` is the pipeline stage or audit name it belongs to (``validate``,
    ``load-conditions``, ...). ``passing``/``failing`` are short example
    snippets (JSON text or prose) shown by ``inferkb rules CODE``.
    """

    code: str
    slug: str
    severity: str
    family: str
    summary: str
    rationale: str
    passing: str = ""
    failing: str = ""

    def finding(self, message: str, **kw) -> Finding:
        """Build a :class:`Finding` for this rule; ``severity`` may be overridden in ``kw``."""
        sev = kw.pop("severity", self.severity)
        return Finding(code=self.code, rule=self.slug, severity=sev, message=message, **kw)


# The rules extension point's items: ``{code: Rule}``, filled as rule-declaring modules are imported.
RULES: dict[str, Rule] = plugins.RULES.items


def register(rule: Rule) -> Rule:
    """Add ``rule`` to the registry; a code used twice for different rules is a programming error (``ValueError``)."""
    if rule.code in RULES and RULES[rule.code] != rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    RULES[rule.code] = rule
    caller = sys._getframe(1).f_globals.get("__name__", "?")
    plugins.RULES.origins.setdefault(rule.code, plugins.Origin(caller))
    return rule


def all_rules() -> dict[str, Rule]:
    """Every rule: loads each extension point whose modules declare rules (validate, audits, derivations, importers)."""
    plugins.load_all()
    return RULES


def get(code_or_slug: str) -> Rule | None:
    """Look a rule up by code (case-insensitive) or by slug; every rule-declaring plugin is loaded first."""
    all_rules()
    key = code_or_slug.strip()
    rule = RULES.get(key.upper())
    if rule:
        return rule
    for r in RULES.values():
        if r.slug == key.lower():
            return r
    return None


def matches(code: str, patterns: list[str] | None) -> bool:
    """True when ``code`` matches any pattern; a pattern is a code or a prefix (``KB3`` selects KB3xx)."""
    if not patterns:
        return False
    code = code.upper()
    return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())
