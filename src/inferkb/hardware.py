"""Resolve raw hardware strings (what nvidia-smi, MLPerf or a reporter printed) to accelerator ids.

Matching is against each accelerator record's ``aliases``, ``name`` and
``id``, after normalising case, whitespace and punctuation. Rule 4 of
DESIGN.md applies: when a string matches several parts, every candidate is
returned and the caller must not pick one.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import KB

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """Lower-case, collapse every run of non-alphanumerics to one space, strip."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def alias_index(kb: "KB") -> dict[str, list[str]]:
    """``{normalised alias: [accelerator ids]}`` for the KB (cached on the KB object)."""
    cached = kb.__dict__.get("_alias_index")
    if cached is not None:
        return cached
    index: dict[str, list[str]] = {}
    if "accelerator" in kb.profile.types:
        for rec in kb.by_type("accelerator"):
            names = [rec.id, rec.data.get("name")] + list(rec.data.get("aliases") or [])
            for name in names:
                if isinstance(name, str) and name.strip():
                    ids = index.setdefault(normalise(name), [])
                    if rec.id not in ids:
                        ids.append(rec.id)
    kb.__dict__["_alias_index"] = index
    return index


def candidates(kb: "KB", raw: str) -> list[str]:
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
