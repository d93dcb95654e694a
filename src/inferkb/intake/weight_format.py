"""The weight format a harness file states plainly (``Quantization: NVFP4``, ``dtype: bfloat16``) -> ``format_id``.

One rule for every importer: the text the file gives is resolved through the
one resolver (:func:`inferkb.resolve.resolve`, quantization records: exact id,
name, scheme or alias, then normalised); exactly one record gives
``format_id`` with an ``import`` provenance entry quoting the file; anything
else leaves ``format_id`` null with a ``condition_gaps.format_id`` reason. A
text the resolver cannot place but the format vocabulary of the ``format-id``
derivation knows (``FP8``: E4M3, E5M2 or block-scaled) lists its candidates in
the reason and picks none (DESIGN.md rule 4). A KV-cache dtype is never the
weight format; importers do not pass it here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import today

if TYPE_CHECKING:
    from ..kb import KB


def _candidates(kb: KB, text: str) -> list[str]:
    """Quantization ids of this KB that the derivation's vocabulary gives for exactly ``text`` (``"FP8"``), else ``[]``."""
    from ..derive.format_id import vocabulary
    from ..resolve import normalise

    known = kb.ids_of_type("quantization")
    want = normalise(text)
    for token in vocabulary():
        if any(normalise(p) == want for p in token.patterns):
            return [c for c in token.candidates if c in known]
    return []


def weight_format(
    kb: KB,
    stated: tuple[str, str] | None,
    checked: list[str],
    tag: str,
    *,
    absent: str,
    recover: str = "the checkpoint's quantization_config or the engine's --dtype / --quantization arguments",
) -> tuple[str | None, dict[str, Any] | None, dict[str, Any] | None]:
    """``(format_id, provenance entry, gap)`` for the weight format a file states as ``(field, text)``.

    ``stated`` is ``None`` when the file states none; ``absent`` is then the
    gap's reason and ``recover`` what would establish it. Exactly one of the provenance entry (an id was resolved) and
    the gap (none was) is returned. Never raises for any text.
    """
    from ..resolve import resolve

    if stated is None:
        return None, None, {"reason": absent, "checked": checked, "recover": recover}
    field, text = stated
    res = resolve(kb, "quantization", text)
    if res.resolved:
        entry = {
            "date": today(),
            "tag": tag,
            "field": "format_id",
            "action": "import",
            "method": f"resolved through inferkb.resolve ({res.how} match of a quantization record's id, name, scheme or alias)",
            "evidence": {"field": field, "quote": text},
            "basis": f"the file states the weight format as {text!r}; it names exactly one format of this KB, {res.id}",
            "numbers_changed": False,
        }
        return res.id, entry, None
    candidates = list(res.ids) if res.ambiguous else _candidates(kb, text)
    reason = f"{field} is {text!r}, which names no single quantization format of this KB" + (
        f": it fits {', '.join(candidates)} alike and none is picked" if len(candidates) > 1 else ""
    )
    return None, None, {"reason": reason, "checked": checked, "recover": recover}
