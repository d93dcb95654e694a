"""One resolver for "which record does this text name": accelerators, engines, models, quantization formats.

One policy for every kind (DESIGN.md rule 4):

1. **exact**: the text equals a record's id, name or alias;
2. **normalised**: equal after lower-casing and collapsing punctuation and
   spaces (``"nvidia-h100-80gb-hbm3"`` = ``"NVIDIA H100 80GB HBM3"``); for
   accelerators also a name without its vendor words (``"RTX 4090"``) or a
   bare model number (``"H100"``, which names every H100 part);
3. otherwise nothing is picked. Several candidates are listed, never chosen
   between, and a name that covers only part of the text is never a match:
   ``"RTX 5070 Ti"`` does not resolve to the RTX 5070 (the ``partial``
   names and the ``leftover`` words are reported instead).

Tables are built from the KB's records and kept through the store's write
counter (``kb.cached``), so a record just written is found at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import hardware

if TYPE_CHECKING:
    from .store import Record, Store

__all__ = ["Resolution", "resolve", "names_of", "name_table", "engine_names", "normalise"]

normalise = hardware.normalise

# The fields whose values name a record of each type (besides its id).
NAME_FIELDS: dict[str, tuple[str, ...]] = {
    "accelerator": ("name", "aliases"),
    "engine": ("name", "aliases"),
    "model": ("name", "aliases"),
    "quantization": ("name", "scheme", "aliases"),
}
# Words that may stand between or around names without changing what is named ("H200 and MI350X").
# Words a hardware string may carry beside the part's name without naming another part ("Nvidia A100 GPU").
_CONNECTIVES = frozenset({"and", "plus", "with", "gpu", "gpus", "accelerator", "card"})
_PAREN = re.compile(r"\([^)]*\)")


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a text names.

    ``ids``: the candidates for the whole text, in record order. ``how``:
    ``exact`` | ``normalised`` | ``name`` (vendor words dropped) | ``family``
    (a bare model number) | ``parts`` (several names that together cover the
    text, e.g. a mixed system ``"H100 + MI300X"``) | ``partial`` (names that
    cover only part of it) | ``none``. ``parts`` are ``(phrase, ids)`` per name
    found; ``leftover`` the words no name covers; ``count`` a leading device
    count (``"8x H100"`` -> 8) for accelerators.
    """

    text: str
    type: str
    ids: tuple[str, ...] = ()
    how: str = "none"
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    leftover: tuple[str, ...] = ()
    count: int | None = None

    @property
    def resolved(self) -> bool:
        """True when the whole text names exactly one record (exact, normalised or by name)."""
        return self.how in ("exact", "normalised", "name") and len(self.ids) == 1

    @property
    def id(self) -> str | None:
        """The one record id the text names, or ``None`` (unknown, ambiguous, partial or a mixed system)."""
        return self.ids[0] if self.resolved else None

    @property
    def ambiguous(self) -> bool:
        """True when the whole text fits several records of one name (``"H100"``), so none may be chosen."""
        return self.how in ("exact", "normalised", "name", "family") and len(self.ids) > 1

    def reason(self) -> str:
        """One sentence saying what was found, for notes and findings."""
        t = repr(self.text)
        if self.resolved:
            return f"{t} names {self.ids[0]} ({self.how} match)"
        if self.how == "family":
            return f"{t} is a bare model number: it can mean {', '.join(self.ids)}; none chosen"
        if self.ambiguous:
            return f"{t} matches several {self.type} records: {', '.join(self.ids)}; none chosen"
        if self.how == "parts":
            return f"{t} names several parts: " + "; ".join(f"{p!r} -> {', '.join(ids)}" for p, ids in self.parts)
        if self.how == "partial":
            named = "; ".join(f"{p!r} ({', '.join(ids)})" for p, ids in self.parts)
            article = "an" if self.type[:1] in "aeiou" else "a"
            return (
                f"{t} is not {article} {self.type} name of this KB: it contains {named} but also {' '.join(self.leftover)!r}; none chosen"
            )
        return f"{t} matches no {self.type} id, name or alias of this KB"


def names_of(rec: Record) -> list[str]:
    """The strings that name ``rec``: its id, then each name field (``NAME_FIELDS``), non-empty strings only."""
    out = [rec.id]
    for fld in NAME_FIELDS.get(rec.type, ("name", "aliases")):
        value = rec.data.get(fld)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v.strip() and v not in out:
                out.append(v)
    return out


def name_table(kb: Store, type_name: str, *, normalised: bool) -> dict[str, tuple[str, ...]]:
    """``{name: ids}`` of one type (exact strings, or normalised ones); rebuilt after any write."""

    def build() -> dict[str, tuple[str, ...]]:
        table: dict[str, list[str]] = {}
        if type_name in kb.profile.types:
            for rec in kb.by_type(type_name):
                for name in names_of(rec):
                    key = normalise(name) if normalised else name.strip()
                    ids = table.setdefault(key, [])
                    if key and rec.id not in ids:
                        ids.append(rec.id)
        return {k: tuple(v) for k, v in table.items() if k}

    return kb.cached(f"resolve.{type_name}.{'normalised' if normalised else 'exact'}", build)


def resolve(kb: Store, type_name: str, text: str) -> Resolution:
    """Which record(s) of ``type_name`` the whole of ``text`` names; see the module docstring for the policy.

    ``type_name`` is a record type (``accelerator``, ``engine``, ``model``,
    ``quantization``, or any other type by id and name). Never raises.
    """
    if not isinstance(text, str) or not text.strip():
        return Resolution(text or "", type_name)
    count = None
    body = text
    if type_name == "accelerator":
        count, body = hardware.split_count(text)
    ids = name_table(kb, type_name, normalised=False).get(body.strip())
    if ids:
        return Resolution(text, type_name, ids, "exact", count=count)
    ids = name_table(kb, type_name, normalised=True).get(normalise(body))
    if ids:
        return Resolution(text, type_name, ids, "normalised", count=count)
    if type_name != "accelerator":
        return Resolution(text, type_name, count=count)
    return _by_mentions(kb, text, body, count)


def _by_mentions(kb: Store, text: str, body: str, count: int | None) -> Resolution:
    """Accelerator names inside the text; a match only when they cover every word (vendor words, connectives and
    parenthesised remarks aside)."""
    plain = _PAREN.sub(" ", body)
    mentions = hardware.find_mentions(kb, plain)
    tokens = hardware.mention_tokens(plain)
    covered = [False] * len(tokens)
    for m in mentions:
        for i in range(m.start, m.start + len(m.phrase.split())):
            covered[i] = True
    leftover = tuple(t for t, c in zip(tokens, covered, strict=True) if not c and t not in hardware.BRAND_WORDS and t not in _CONNECTIVES)
    parts = tuple((m.phrase, m.ids) for m in mentions)
    if not mentions:
        return Resolution(text, "accelerator", count=count)
    if leftover:
        return Resolution(text, "accelerator", (), "partial", parts, leftover, count)
    if len(mentions) > 1:
        ids = tuple(dict.fromkeys(i for m in mentions for i in m.ids))
        return Resolution(text, "accelerator", ids, "parts", parts, (), count)
    m = mentions[0]
    how = {"alias": "normalised", "name": "name", "family": "family"}[m.strength]
    return Resolution(text, "accelerator", m.ids, how, parts, (), count)


def _coined(word: str) -> bool:
    """True for a word that reads as a coined name: an acronym, a digit, a joiner or inner capitals."""
    return bool(re.search(r"[-.\d_]", word) or re.search(r".[A-Z]", word) or word.isupper())


def prose_names(names: list[str]) -> tuple[str, ...]:
    """The ways prose writes a record's names: each name, without a parenthetical (``"PyTorch (eager)"`` ->
    ``"PyTorch"``), a one-word parenthetical (``"(TGI)"``), and a name's last word when it is a coined name
    the words before it qualify (``"EleutherAI lm-evaluation-harness"`` -> ``"lm-evaluation-harness"``,
    ``"NVIDIA TensorRT"`` -> ``"TensorRT"``); at least three characters each, longest first."""
    out: set[str] = set()
    for name in names:
        plain = " ".join(_PAREN.sub(" ", name).split())
        inner = [m.strip("() ") for m in _PAREN.findall(name)]
        words = plain.split()
        # A one-word parenthetical is a name only when coined ("(TGI)", "(vLLM-0.6)"), not a plain word
        # ("DeepSpeed (inference)" must not make every "MLPerf Inference" string name DeepSpeed).
        out.update([name, plain, *[w for w in inner if " " not in w and _coined(w)]])
        # The last word alone only when it is a coined name ("lm-evaluation-harness", "TensorRT"), not a
        # plain word ("Inference" of "Text Generation Inference" would name every MLPerf framework string).
        if len(words) > 1 and (re.search(r"[-.\d_]", words[-1]) or re.search(r".[A-Z]", words[-1])):
            out.add(words[-1])
    return tuple(sorted((n for n in out if len(n) >= 3), key=lambda n: (-len(n), n)))


def engine_names(kb: Store) -> dict[str, tuple[str, ...]]:
    """``{engine id: names prose uses for it}`` (:func:`prose_names`) from the id, name and aliases of each engine
    record of ``kb``, plus those of the bundled KB's record with the same id (inferkb's curated aliases, e.g.
    ``llama-bench`` for llama.cpp). Engine names are data: nothing here lists an engine."""

    def build() -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        if "engine" in kb.profile.types:
            for rec in kb.by_type("engine"):
                out[rec.id] = names_of(rec)
        for eid, names in bundled_engine_names().items():
            if eid in out:
                out[eid] += [n for n in names if n not in out[eid]]
        return {eid: prose_names(names) for eid, names in out.items()}

    return kb.cached("resolve.engine_names", build)


def default_engine_names() -> dict[str, tuple[str, ...]]:
    """:func:`engine_names` of the bundled KB alone: what a record checked without its KB is read with."""
    return {eid: prose_names(names) for eid, names in bundled_engine_names().items()}


_BUNDLED_ENGINES: dict[str, list[str]] | None = None


def bundled_engine_names() -> dict[str, list[str]]:
    """``{engine id: [id, name, aliases...]}`` of the bundled KB's engine records (read once per process)."""
    global _BUNDLED_ENGINES
    if _BUNDLED_ENGINES is None:
        from .jsonio import parse_bytes, read_regular
        from .store import Record, bundled_root

        out: dict[str, list[str]] = {}
        folder = bundled_root() / "data" / "engines"
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                data, problem = parse_bytes(read_regular(path))
            except OSError:
                continue
            if problem is None and isinstance(data, dict):
                out[path.stem] = names_of(Record(f"engines/{path.stem}", path.stem, "engine", "engines", "", data))
        _BUNDLED_ENGINES = out
    return _BUNDLED_ENGINES
