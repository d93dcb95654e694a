"""Known traps of a record: the gotcha records whose ``affects`` names it (the reverse of ``gotcha.affects``).

``affects`` holds bare ids of any type (or ``dir/id``); a value resolves the way
every other reference of type "any" does (:meth:`inferkb.store.Store.resolve`
with no type), so an id that several types share names none of them here,
as on the site and in validate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kb import KB
    from .store import Record

__all__ = ["known_traps", "SEVERITY_ORDER"]

# Worst first; a gotcha without a severity sorts after the stated ones.
SEVERITY_ORDER = {"blocker": 0, "major": 1, "minor": 2}


def known_traps(kb: KB, rec: Record) -> list[Record]:
    """Gotcha records whose ``affects`` resolves to ``rec``, worst severity first, then by name.

    Returns ``[]`` when the KB's profile has no gotcha type or no gotcha names
    ``rec``; a gotcha never lists itself. Cost: one pass over the gotcha
    records (tens), not over the KB.
    """
    if "gotcha" not in kb.profile.types:
        return []
    hits = []
    for g in kb.by_type("gotcha"):
        if g.key == rec.key:
            continue
        affects = g.data.get("affects")
        for ref in affects if isinstance(affects, list) else [affects]:
            if isinstance(ref, str) and (ref == rec.key or (ref == rec.id and kb.resolve(ref) is rec)):
                hits.append(g)
                break
    return sorted(hits, key=lambda g: (SEVERITY_ORDER.get(str(g.data.get("severity")), 3), str(g.data.get("name") or g.id).casefold()))
