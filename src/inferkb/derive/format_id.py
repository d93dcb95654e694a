"""Derivation ``format-id``: fill an empty benchmark ``format_id`` from the record's own text only.

Searched fields, in order: ``name``, ``model``, ``methodology``, ``unit``,
``notes``. The vocabulary (``format_tokens.toml``) maps each token to candidate
quantization ids; only ids that exist in this KB count. Never from a sibling
record or outside knowledge.

Each token occurrence ("mention") is classified:

- *skipped*: it describes something other than the run's weight format — a
  KV-cache dtype (``kv_cache_dtype fp8_e4m3``, ``FP8 KV cache``), a peak-compute
  figure (``197 BF16 TFLOPS``), or it sits inside the id of another record of
  this KB (``trtllm-llama31-8b-fp8-h100``: a sibling, not this run);
- *negated*: ``not FP8``, ``no FP8 quantization``, ``without AWQ`` — ignored;
- *partial*: it names the format of part of the model only ("NVFP4 experts",
  "moe_runner_backend flashinfer_mxfp4")
  -> KB1001, the rest of the weights is not stated;
- *hedged*: its sentence says the fact is implied, assumed or not stated
  ("implied by Ollama's default Q4_K_M ... but never stated");
- *positive*: everything else.

The positive mentions' candidate sets are intersected. Exactly one existing
id -> a value, quoted from the mention with the most specific token. More
than one -> KB1001 (ambiguous: "FP8" alone). An empty intersection (two
different formats named, e.g. a target model and its draft model) -> KB1001.
A hedged mention that does not agree with the result also makes it
ambiguous. Formats named but absent from this KB, or no mention at all -> KB1002.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from ..store import KEBAB
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

TEXT_FIELDS = ("name", "model", "methodology", "unit", "notes")
QUOTE_RADIUS = 60

_NEGATION = re.compile(r"\b(?:not|no|without|non|neither|nor)\b[\s\w/-]{0,20}$", re.I)
# A negation governs a whole list of formats ("does not say E4M3, E5M2 or block-scaled"), as a negated
# condition's clause does in load-conditions: after the cue and up to three words, only formats and list
# separators may come before the mention; "but", "instead", ... end the negation's scope.
_NEG_CUE = re.compile(r"\b(?:not|no|without|non|never|neither|nor)\b", re.I)
_LIST_FILLER = re.compile(r"[\s,/&]+|\b(?:or|and|nor|either)\b", re.I)
_SCOPE_END = re.compile(r"\b(?:but|however|instead|rather|except|though|although|whereas)\b", re.I)
_KV_BEFORE = re.compile(r"kv[-_ ]?cache(?:[-_ ]?dtype)?[\s=:'\"]*$", re.I)
_KV_AFTER = re.compile(r"^[\s_-]*(?:kv\b|kv[-_ ]?cache)", re.I)
_FLOPS_BEFORE = re.compile(r"\b(?:[tpg]?flops|tops)\s*$", re.I)
_FLOPS_AFTER = re.compile(r"^\s*(?:[tpg]?flops|tops|peak)\b", re.I)
_PARTIAL_AFTER = re.compile(r"^[\s)]*(?:moe\s+)?(?:experts?|expert weights|moe layers|moe)\b", re.I)
_PARTIAL_BEFORE = re.compile(r"\bmoe[\w-]*[\s=:'\"]*$", re.I)
_HEDGE = re.compile(
    r"\b(?:never stated|not stated|unstated|not given|not documented|not specified|unspecified|implied|presumably|"
    r"probably|likely|assumed|assume|unknown|unclear|unconfirmed|possibly|may be|might be)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_ID_CHARS = re.compile(r"[A-Za-z0-9_.-]")


@dataclass(frozen=True)
class Token:
    """One vocabulary entry: display ``name``, lower-case ``patterns``, ``candidates`` (quantization ids, any KB)."""

    name: str
    patterns: tuple[str, ...]
    candidates: tuple[str, ...]


@dataclass
class Mention:
    """One token occurrence: ``token``, ``field``, ``start``/``end`` offsets in that field, ``kind``, ``quote``."""

    token: Token
    field: str
    start: int
    end: int
    kind: str
    quote: str


@cache
def vocabulary() -> tuple[Token, ...]:
    """The tokens of ``format_tokens.toml`` (read once)."""
    text = (resources.files("inferkb.derive") / "format_tokens.toml").read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    return tuple(Token(name, tuple(p.lower() for p in spec["patterns"]), tuple(spec["candidates"])) for name, spec in doc["tokens"].items())


@cache
def _pattern() -> tuple[re.Pattern[str], dict[str, Token]]:
    by_text = {p: tok for tok in vocabulary() for p in tok.patterns}
    alternation = "|".join(re.escape(p) for p in sorted(by_text, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternation})(?![A-Za-z0-9])", re.I), by_text


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        left = m.end()
    m = _SENTENCE_END.search(text, end)
    return left, (m.start() if m else len(text))


def _quote(text: str, start: int, end: int, lo: int, hi: int) -> str:
    a, b = max(lo, start - QUOTE_RADIUS), min(hi, end + QUOTE_RADIUS)
    return text[a:b].strip()


def _enclosing_id(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The run of id-like characters around a match, with its offsets (leading/trailing punctuation trimmed)."""
    a, b = start, end
    while a > 0 and _ID_CHARS.match(text[a - 1]):
        a -= 1
    while b < len(text) and _ID_CHARS.match(text[b]):
        b += 1
    while b > end and text[b - 1] in ".-_":
        b -= 1
    while a < start and text[a] in ".-_":
        a += 1
    return text[a:b], a, b


def _negated(before: str) -> bool:
    """A negation right before the mention ("not FP8", "without AWQ"), unless "but"/"instead"... ends its scope first."""
    m = _NEGATION.search(before)
    return bool(m) and not _SCOPE_END.search(m.group(0))


def _in_negated_list(text: str, lo: int, start: int, pattern: re.Pattern[str]) -> bool:
    """True when the mention at ``start`` is a later item of a list that a negation opens (see ``_NEG_CUE``).

    ``lo`` is the start of the mention's sentence. The first item after the
    cue is judged by ``_NEGATION``; here the text from the cue to the mention
    must be at most three plain words, then a format token, then only format
    tokens and separators (commas, "or", "and", "nor", "/").
    """
    before = text[lo:start]
    cues = list(_NEG_CUE.finditer(before))
    if not cues:
        return False
    gap = before[cues[-1].end() :]
    first = pattern.search(gap)
    if first is None:
        return False
    lead = gap[: first.start()]
    if re.search(r"[^\w\s/-]", lead) or len(lead.split()) > 3 or _SCOPE_END.search(lead):
        return False
    rest = pattern.sub(" ", gap[first.start() :])
    return not _LIST_FILLER.sub("", rest).strip()


def mentions(kb: KB, data: dict) -> list[Mention]:
    """Every vocabulary token in the record's text fields, classified (see the module docstring)."""
    pattern, by_text = _pattern()
    out: list[Mention] = []
    for fld in TEXT_FIELDS:
        text = data.get(fld)
        if not isinstance(text, str):
            continue
        for m in pattern.finditer(text):
            token = by_text[m.group(0).lower()]
            lo, hi = _sentence_bounds(text, m.start(), m.end())
            before, after = text[max(lo, m.start() - 25) : m.start()], text[m.end() : min(hi, m.end() + 15)]
            word, w_start, w_end = _enclosing_id(text, m.start(), m.end())
            # "kv_cache_dtype fp8_e4m3": judge the whole word, so its second token is a KV-cache dtype too
            kv_before, kv_after = text[max(lo, w_start - 25) : w_start], text[w_end : min(hi, w_end + 15)]
            if _KV_BEFORE.search(before) or _KV_BEFORE.search(kv_before) or _KV_AFTER.search(after) or _KV_AFTER.search(kv_after):
                kind = "kv-cache"
            elif _FLOPS_BEFORE.search(before) or _FLOPS_AFTER.search(after):
                kind = "peak-compute"
            elif word == word.lower() and KEBAB.match(word) and "-" in word and word in kb.by_id:
                kind = "other-record-id"
            elif _PARTIAL_AFTER.search(after) or _PARTIAL_BEFORE.search(kv_before):
                kind = "partial"
            elif _negated(before) or _in_negated_list(text, lo, m.start(), pattern):
                kind = "negated"
            elif _HEDGE.search(text[lo:hi]):
                kind = "hedged"
            else:
                kind = "positive"
            out.append(Mention(token, fld, m.start(), m.end(), kind, _quote(text, m.start(), m.end(), lo, hi)))
    return out


def _evidence_list(ms: list[Mention]) -> list[dict[str, str]]:
    return [{"token": m.token.name, "field": m.field, "kind": m.kind, "quote": m.quote} for m in ms]


def _one(kb: KB, rec: Record, existing: set[str], out: DerivationOutput) -> None:
    found = mentions(kb, rec.data)
    partial = [m for m in found if m.kind == "partial"]
    if partial:
        out.findings.append(
            base.KB1001.finding(
                f"format_id not filled: {partial[0].token.name} is stated for part of the model only ({partial[0].quote!r}); "
                "the format of the other weights is not stated",
                record=rec.key,
                path=rec.path,
                field="format_id",
                evidence={"field": partial[0].field, "quote": partial[0].quote},
                extra={"candidates": sorted(set(partial[0].token.candidates) & existing), "mentions": _evidence_list(found)},
            )
        )
        return
    positive = [m for m in found if m.kind == "positive"]
    hedged = [m for m in found if m.kind == "hedged"]
    where = dict(record=rec.key, path=rec.path, field="format_id")
    if not positive:
        why = "no format token" if not found else f"only {', '.join(sorted({m.kind for m in found}))} mentions of a format"
        out.findings.append(
            base.KB1002.finding(
                f"format_id not filled: {why} in {', '.join(TEXT_FIELDS)}; recover from the model card or the engine's quantization flag",
                extra={"mentions": _evidence_list(found)} if found else None,
                **where,
            )
        )
        return
    sets = [set(m.token.candidates) & existing for m in positive]
    named = sorted({m.token.name for m in positive})
    unknown = [m.token.name for m, s in zip(positive, sets, strict=True) if not s]
    if unknown and len(set(unknown)) == len(named):
        out.findings.append(
            base.KB1002.finding(
                f"format_id not filled: the text names {', '.join(named)} but this KB has no quantization record for it "
                f"(looked for: {', '.join(sorted({c for m in positive for c in m.token.candidates}))})",
                evidence={"field": positive[0].field, "quote": positive[0].quote},
                extra={"mentions": _evidence_list(positive)},
                **where,
            )
        )
        return
    result = set.intersection(*sets)
    bad_hedge = [m for m in hedged if not result or not set(m.token.candidates) & result]
    if len(result) == 1 and not bad_hedge:
        (value,) = result
        best = min(positive, key=lambda m: (len(set(m.token.candidates) & existing), TEXT_FIELDS.index(m.field)))
        seen: dict[str, list[str]] = {}
        for m in positive:
            if m.field not in seen.setdefault(m.token.name, []):
                seen[m.token.name].append(m.field)
        used = ", ".join(f"{tok} ({', '.join(fields)})" for tok, fields in seen.items())
        out.proposals.append(
            Proposal(
                rec.key,
                "format_id",
                value,
                method="format tokens in the record's own name/model/methodology/unit/notes (format_tokens.toml), "
                "candidate sets intersected over every positive mention",
                evidence={"field": best.field, "quote": best.quote},
                basis=f"the record's own text names {used}; the only quantization record of this KB all of them fit is {value}",
            )
        )
        return
    candidates = sorted(set().union(*sets, *(set(m.token.candidates) & existing for m in bad_hedge)))
    if len(result) > 1:
        why = f"{', '.join(named)} does not determine one format"
    elif result:
        why = f"a hedged mention ({', '.join(sorted({m.token.name for m in bad_hedge}))}) names another format"
    else:
        why = f"the text names different formats ({', '.join(named)})"
    out.findings.append(
        base.KB1001.finding(
            f"format_id not filled: {why}; candidates: {', '.join(candidates)}",
            evidence={"field": positive[0].field, "quote": positive[0].quote},
            extra={"candidates": candidates, "mentions": _evidence_list(positive + hedged)},
            **where,
        )
    )


@derivation("format-id", "fill an empty benchmark format_id from format tokens in the record's own text", ("format_id",))
def derive_format_id(kb: KB) -> DerivationOutput:
    """Proposals for benchmark records whose ``format_id`` is missing, null or empty."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types or "quantization" not in kb.profile.types:
        return out
    existing = kb.ids_of_type("quantization")
    for rec in kb.by_type("benchmark"):
        if rec.data.get("format_id"):
            continue
        _one(kb, rec, existing, out)
    return out
