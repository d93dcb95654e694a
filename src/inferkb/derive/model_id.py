"""Derivation ``model-id``: fill an empty benchmark ``model_id`` from the record's own ``model`` string.

The string goes through the one resolver (:func:`inferkb.resolve.resolve`,
type ``model``): an exact id, name or alias first, then the normalised form
(lower case, punctuation and spaces collapsed). Only a single candidate is
written. Nothing is read from sibling records or outside knowledge.

One more spelling is read, and only when the whole string fails: a GGUF file
name. llama.cpp names a file ``<model>[-.]<type>.gguf`` (the GGUF naming
convention: ``llama-2-7b.Q4_0.gguf``, ``gpt-oss-120b-F16.gguf``, with an
optional ``-00001-of-00003`` shard suffix), where ``<type>`` is a ggml tensor
type (``F16``, ``BF16``, ``Q4_0``, ``Q4_K_M``, ``IQ2_XXS``, ``MXFP4`` ...). The
part before the type names the model and is resolved the same way; the
provenance quotes that part.

Outcomes, per benchmark whose ``model_id`` is missing, null or empty:

- one candidate -> a proposal (evidence: ``model`` and the quoted string);
- several candidates -> KB1001 listing them (nothing picked);
- no ``model`` string -> KB1002 (nothing to resolve);
- a string no model record names -> KB1002 naming the string.

A ``model_id`` that is already set is never touched, whatever it says.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..resolve import Resolution, resolve
from . import base, derivation
from .base import DerivationOutput, Proposal

if TYPE_CHECKING:
    from ..kb import KB
    from ..store import Record

# The ggml tensor type at the end of a GGUF file name, after "-" or "." (llama.cpp's naming convention).
_GGUF = re.compile(
    r"^(?P<model>.+?)[.-](?P<type>(?:B?F(?:16|32)|MXFP4|T?Q[0-9](?:_[0-9A-Z]+)*|IQ[0-9](?:_[0-9A-Z]+)*))(?:-\d{5}-of-\d{5})?\.gguf$",
    re.I,
)


def gguf_model_part(text: str) -> str | None:
    """The model part of a GGUF file name (``"llama-2-7b.Q4_0.gguf"`` -> ``"llama-2-7b"``), ``None`` for any other text.

    Only a name ending in ``.gguf`` whose last dotted or dashed part is a ggml
    tensor type counts (see the module docstring); the returned part is a
    substring of ``text``.
    """
    m = _GGUF.match(text.strip())
    return m.group("model") if m else None


def _resolution(kb: KB, text: str) -> tuple[Resolution, str, bool]:
    """``(resolution, quoted text, via_gguf)``: the whole string first, then a GGUF file name's model part."""
    whole = resolve(kb, "model", text)
    if whole.ids:
        return whole, text, False
    part = gguf_model_part(text)
    if part:
        inner = resolve(kb, "model", part)
        if inner.ids:
            return inner, part, True
    return whole, text, False


def _one(kb: KB, rec: Record, out: DerivationOutput) -> None:
    where = dict(record=rec.key, path=rec.path, field="model_id")
    text = rec.data.get("model")
    if not isinstance(text, str) or not text.strip():
        out.findings.append(
            base.KB1002.finding(
                "model_id not filled: the record has no model string to resolve; recover the model from the run's source "
                "(a results-table row, the harness output)",
                **where,
            )
        )
        return
    res, quote, via_gguf = _resolution(kb, text)
    if res.resolved:
        how = f"{res.how} match" + (" of the GGUF file name's model part" if via_gguf else "")
        out.proposals.append(
            Proposal(
                rec.key,
                "model_id",
                res.id,
                method="inferkb.resolve over model ids, names and aliases (exact, then normalised)"
                + ("; GGUF file name read as <model>-<ggml type>.gguf" if via_gguf else ""),
                evidence={"field": "model", "quote": quote},
                basis=f"the record's model string {quote!r} names {res.id} ({how})",
            )
        )
        return
    if res.ambiguous:
        out.findings.append(
            base.KB1001.finding(
                f"model_id not filled: {res.reason()}",
                evidence={"field": "model", "quote": quote},
                extra={"candidates": list(res.ids)},
                **where,
            )
        )
        return
    out.findings.append(
        base.KB1002.finding(
            f"model_id not filled: {res.reason()}; add a model record or an alias naming it",
            evidence={"field": "model", "quote": text},
            **where,
        )
    )


@derivation("model-id", "fill an empty benchmark model_id by resolving the record's model string to a model record", ("model_id",))
def derive_model_id(kb: KB) -> DerivationOutput:
    """Proposals for benchmark records whose ``model_id`` is missing, null or empty (see the module docstring)."""
    out = DerivationOutput()
    if "benchmark" not in kb.profile.types or "model" not in kb.profile.types:
        return out
    for rec in kb.by_type("benchmark"):
        if base.current_value(kb, rec, "model_id"):
            continue
        _one(kb, rec, out)
    return out
