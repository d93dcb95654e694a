"""Resolve raw hardware strings (what nvidia-smi, MLPerf or a reporter printed) to accelerator ids.

Matching is against each accelerator record's ``aliases``, ``name`` and
``id``, after normalising case, whitespace and punctuation. Rule 4 of
DESIGN.md applies: when a string matches several parts, every candidate is
returned and the caller must not pick one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kb import KB
    from .store import Record

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """Lower-case, collapse every run of non-alphanumerics to one space, strip."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def alias_index(kb: KB) -> dict[str, list[str]]:
    """``{normalised alias: [accelerator ids]}`` for the KB (cached on the KB object)."""
    return kb.cached("hardware.alias_index", lambda: _alias_index(kb))


def _alias_index(kb: KB) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    if "accelerator" in kb.profile.types:
        for rec in kb.by_type("accelerator"):
            names = [rec.id, rec.data.get("name")] + list(rec.data.get("aliases") or [])
            for name in names:
                if isinstance(name, str) and name.strip():
                    ids = index.setdefault(normalise(name), [])
                    if rec.id not in ids:
                        ids.append(rec.id)
    return index


def candidates(kb: KB, raw: str) -> list[str]:
    """Accelerator ids whose alias/name/id equals ``raw`` after normalisation (``[]`` when none).

    More than one id means the string cannot tell those parts apart.
    """
    if not raw or not raw.strip():
        return []
    return list(alias_index(kb).get(normalise(raw), []))


@cache
def _strip_count(raw: str) -> tuple[int | None, str]:
    m = re.match(r"^\s*(\d+)\s*[x×]\s*(.+)$", raw, re.I)
    if m:
        return int(m.group(1)), m.group(2)
    return None, raw


def split_count(raw: str) -> tuple[int | None, str]:
    """Split a leading device count: ``"8x NVIDIA H100"`` -> ``(8, "NVIDIA H100")``; else ``(None, raw)``."""
    return _strip_count(raw)


# ---- finding hardware named inside longer text ---------------------------------------------

# Leading words that name a vendor or brand line rather than the part; a name with them removed
# ("NVIDIA GeForce RTX 4090" -> "RTX 4090", "AMD Instinct MI300X" -> "MI300X") is how prose writes it.
BRAND_WORDS = frozenset(
    {
        "nvidia",
        "amd",
        "intel",
        "apple",
        "google",
        "cloud",
        "aws",
        "amazon",
        "cerebras",
        "groq",
        "qualcomm",
        "geforce",
        "radeon",
        "instinct",
        "tesla",
    }
)
# Single words too generic to name a part on their own.
_GENERIC = frozenset({"gpu", "gpus", "cpu", "npu", "tpu", "max", "pro", "ultra", "server", "edition", "system", "chip"})
_MEMORY_SIZE = re.compile(r"^\d+(gb|g|tb)$")
_COUNT_PREFIX = re.compile(r"\b\d+\s*[x×]\s*(?=[A-Za-z])")
_PAREN = re.compile(r"\([^)]*\)")


@dataclass(frozen=True, slots=True)
class Mention:
    """A hardware phrase found in text: the ``phrase`` as normalised tokens, the accelerator ``ids`` it
    can mean, its ``strength`` (``alias`` = an alias/name/id; ``name`` = a name with brand words or a
    parenthetical removed; ``family`` = the part's model-number token alone, e.g. ``h100``) and the
    token offset ``start``."""

    phrase: str
    ids: tuple[str, ...]
    strength: str
    start: int


def _family_token(tokens: list[str]) -> str | None:
    for tok in tokens:
        if len(tok) >= 3 and re.search(r"[a-z]", tok) and re.search(r"\d", tok) and not _MEMORY_SIZE.match(tok):
            return tok
    return None


def _derived_phrases(name: str) -> tuple[list[str], str | None]:
    """Names with brand words and parentheticals stripped, and the model-number (family) token."""
    out = []
    for variant in (name, _PAREN.sub(" ", name)):
        tokens = normalise(variant).split()
        while tokens:
            out.append(" ".join(tokens))
            if tokens[0] not in BRAND_WORDS:
                break
            tokens = tokens[1:]
    core = normalise(_PAREN.sub(" ", name)).split()
    core = [t for t in core if t not in BRAND_WORDS]
    return out, _family_token(core)


def mention_index(kb: KB) -> dict[str, tuple[tuple[str, ...], str]]:
    """``{normalised phrase: (accelerator ids, strength)}`` for text scanning (cached on the KB object).

    A phrase that is an alias/name/id of some part keeps ``alias`` strength for exactly those parts;
    derived phrases and family tokens only add parts where no stronger phrase claims the same words.
    """
    return kb.cached("hardware.mention_index", lambda: _mention_index(kb))


def _mention_index(kb: KB) -> dict[str, tuple[tuple[str, ...], str]]:
    strong = alias_index(kb)
    derived: dict[str, list[str]] = {}
    family: dict[str, list[str]] = {}
    if "accelerator" in kb.profile.types:
        for rec in kb.by_type("accelerator"):
            names = [rec.data.get("name"), rec.id.replace("-", " ")] + list(rec.data.get("aliases") or [])
            for name in names:
                if not isinstance(name, str):
                    continue
                phrases, fam = _derived_phrases(name)
                for phrase in phrases:
                    if " " in phrase or (len(phrase) >= 3 and phrase not in _GENERIC):
                        ids = derived.setdefault(phrase, [])
                        if rec.id not in ids:
                            ids.append(rec.id)
                if fam:
                    ids = family.setdefault(fam, [])
                    if rec.id not in ids:
                        ids.append(rec.id)
    index: dict[str, tuple[tuple[str, ...], str]] = {}
    for phrase, ids in derived.items():
        index[phrase] = (tuple(ids), "name")
    # A bare model number names every part that carries it ("H200" is the SXM and the NVL part),
    # even when one part's alias, stripped of its brand, happens to be that word.
    for phrase, ids in family.items():
        merged = list(ids) + [i for i in derived.get(phrase, []) if i not in ids]
        index[phrase] = (tuple(merged), "family")
    for phrase, ids in strong.items():
        index[phrase] = (tuple(ids), "alias")
    return index


def _first_tokens(kb: KB) -> dict[str, list[int]]:
    def build() -> dict[str, list[int]]:
        first: dict[str, set[int]] = {}
        for phrase in mention_index(kb):
            toks = phrase.split()
            first.setdefault(toks[0], set()).add(len(toks))
        return {tok: sorted(lengths, reverse=True) for tok, lengths in first.items()}

    return kb.cached("hardware.mention_first", build)


def find_mentions(kb: KB, text: str) -> list[Mention]:
    """Hardware phrases in ``text``, longest first at each position, on whole-token boundaries.

    A leading device count is ignored (``"8xH200"`` reads as ``"H200"``). Matches do not overlap:
    ``"NVIDIA H100 80GB HBM3"`` is one alias mention, not also ``"H100"``.
    """
    if not text:
        return []
    index, first = mention_index(kb), _first_tokens(kb)
    tokens = mention_tokens(text)
    out: list[Mention] = []
    i = 0
    while i < len(tokens):
        for length in first.get(tokens[i], ()):
            phrase = " ".join(tokens[i : i + length])
            hit = index.get(phrase)
            if hit is not None and i + length <= len(tokens):
                out.append(Mention(phrase, hit[0], hit[1], i))
                i += length
                break
        else:
            i += 1
    return out


def mention_tokens(text: str) -> list[str]:
    """The normalised tokens :func:`find_mentions` scans (device counts removed); ``Mention.start`` indexes them."""
    return normalise(_COUNT_PREFIX.sub(" ", text)).split()


def quote_of(text: str, mention: Mention) -> str:
    """The exact substring of ``text`` that ``mention`` was found from (evidence must quote, not normalise).

    The mention's normalised tokens are matched back case-insensitively, with
    any run of punctuation or spaces between them; falls back to the
    normalised phrase if the text cannot be matched (it always can for text
    that :func:`find_mentions` scanned).
    """
    tokens = mention.phrase.split()
    pattern = r"(?<![A-Za-z0-9])" + r"[^A-Za-z0-9]+".join(map(re.escape, tokens)) + r"(?![A-Za-z0-9])"
    m = re.search(pattern, text, re.IGNORECASE)
    return m.group(0) if m else mention.phrase


# Words of accelerator names that do not tell one part from another ("NVIDIA", "PCIe", "GB").
_VENDOR_WORDS = {
    "nvidia",
    "amd",
    "intel",
    "apple",
    "google",
    "geforce",
    "radeon",
    "instinct",
    "sxm",
    "pcie",
    "nvl",
    "the",
    "and",
    "gb",
    "per",
    "accelerator",
    "edition",
    "workstation",
    "cloud",
    "local",
    "system",
    "integrated",
    "gpu",
    "max",
    "pro",
}


def accelerator_tokens(acc: Record | None) -> set[str]:
    """Distinctive lower-case tokens of an accelerator's id, name and aliases ("h100", "mi355x", "gaudi"), vendor words removed."""
    if acc is None:
        return set()
    labels = [acc.id, acc.data.get("name") or ""] + list(acc.data.get("aliases") or [])
    return {t for label in labels if isinstance(label, str) for t in normalise(label).split() if len(t) >= 2 and t not in _VENDOR_WORDS}


def record_accelerator_tokens(kb: KB, data: dict) -> frozenset[str]:
    """:func:`accelerator_tokens` of every accelerator a benchmark record names in ``accelerator_ids`` (union).

    Tokens are kept per accelerator id on the KB (``kb.cached``), so a KB of many benchmarks computes each once.
    """
    ids = data.get("accelerator_ids")
    if not isinstance(ids, list) or not ids:
        return frozenset()
    memo = kb.cached("hardware.tokens", dict)
    out: set[str] = set()
    for aid in ids:
        if isinstance(aid, str):
            tokens = memo.get(aid)
            if tokens is None:
                tokens = memo[aid] = frozenset(accelerator_tokens(kb.resolve(aid, "accelerator")))
            out |= tokens
    return frozenset(out)
