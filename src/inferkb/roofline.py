"""Roofline bounds for LLM inference: pure calculators, no KB access.

Two ceilings bound what a measured token rate can be:

- **Memory bandwidth (decode).** Each decode step of one request reads at
  least every *active* weight once, plus the request's KV cache. So a
  per-request decode rate is at most
  ``aggregate bandwidth / bytes read per token``. The achieved fraction of that
  ceiling is the model bandwidth utilisation, MBU = achieved bytes/s ÷ peak
  bytes/s, as defined in Databricks/MosaicML, "LLM Inference Performance
  Engineering: Best Practices" (blog, October 2023): achieved bandwidth =
  (model parameter bytes + KV cache bytes) / time per output token.
- **Compute (prefill and batched throughput).** A forward pass costs about
  ``2 × N`` FLOPs per token for ``N`` (active) non-embedding parameters
  (Kaplan et al., "Scaling Laws for Neural Language Models", 2020,
  arXiv:2001.08361, section 2.1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn; the
  attention term is dropped here, which only lowers the FLOP count and so keeps
  the bound conservative). The achieved fraction of peak FLOPs is the model
  FLOPs utilisation, MFU.

Units: bandwidth in GB/s (1e9 bytes/s, as vendor spec sheets quote it), peak
compute in TFLOPS (1e12 FLOP/s), parameters as plain counts (70e9, not 70),
rates in tokens/s. Every function raises :class:`ValueError` for a
non-positive input that would make the bound meaningless.
"""

from __future__ import annotations

import re

# Bytes per stored weight by format token (upper case). 4-bit formats count
# 0.5 bytes: the scales they carry are ignored, which lowers the bytes read and
# so can only under-state MBU (the conservative direction for a bound).
_FORMAT_BYTES: dict[str, float] = {
    "FP32": 4.0,
    "F32": 4.0,
    "FP16": 2.0,
    "F16": 2.0,
    "BF16": 2.0,
    "FLOAT16": 2.0,
    "BFLOAT16": 2.0,
    "FP8": 1.0,
    "INT8": 1.0,
    "E4M3": 1.0,
    "E5M2": 1.0,
    "W8A8": 1.0,
    "W8A16": 1.0,
    "Q8_0": 1.0,
    "8BIT": 1.0,
    "INT4": 0.5,
    "FP4": 0.5,
    "NVFP4": 0.5,
    "MXFP4": 0.5,
    "AWQ": 0.5,
    "GPTQ": 0.5,
    "W4A16": 0.5,
    "W4A8": 0.5,
    "W4A4": 0.5,
    "WMXFP4": 0.5,
    "Q4_K_M": 0.5,
    "Q4_K_S": 0.5,
    "Q4_K_XL": 0.5,
    "Q4_0": 0.5,
    "Q4_1": 0.5,
    "4BIT": 0.5,
}
# Longest first so that "Q4_K_M" is tried before a shorter token inside it.
_FORMAT_RE = re.compile(r"(?<![A-Z0-9])(" + "|".join(re.escape(k) for k in sorted(_FORMAT_BYTES, key=len, reverse=True)) + r")(?![A-Z0-9])")

_NOT_WEIGHTS_AFTER = re.compile(r"[\s_-]*(?:[A-Z0-9]+[\s_-]+)?(?:KV|ACTIVATION|CACHE|SCALE)")
_NOT_WEIGHTS_BEFORE = re.compile(r"(?:KV[\s_-]*CACHE[\s_-]*(?:DTYPE)?|ACTIVATIONS?)[\s:=_-]*(?:[A-Z0-9]+[_-])?$")


def format_mentions(text: str) -> dict[str, float]:
    """Format tokens named in ``text`` -> bytes per weight (``{"FP8": 1.0, "MXFP4": 0.5}``); ``{}`` when none.

    Matching is case-insensitive on whole tokens (``-`` counts as a
    separator, so ``gguf-q4-k-m`` is read as ``Q4_K_M`` and ``4-bit`` as ``4BIT``).
    A token that names the KV cache, activations or scales ("FP8 KV cache",
    "kv_cache_dtype fp8", "FP8-e4m3 activations") is not a weight format and is skipped.
    """
    if not isinstance(text, str) or not text:
        return {}
    norm = re.sub(r"(\d)[\s-]?BIT", r"\1BIT", text.upper())
    norm = re.sub(r"Q(\d)-(K|0|1)(?:-(M|S|XL))?", lambda m: "_".join(p for p in ("Q" + m.group(1), m.group(2), m.group(3)) if p), norm)
    out: dict[str, float] = {}
    for m in _FORMAT_RE.finditer(norm):
        # "FP8 KV cache", "kv_cache_dtype fp8", "FP8 activations" name another tensor, not the weights.
        if _NOT_WEIGHTS_AFTER.match(norm, m.end()) or _NOT_WEIGHTS_BEFORE.search(norm[max(0, m.start() - 24) : m.start()]):
            continue
        out[m.group(1)] = _FORMAT_BYTES[m.group(1)]
    return out


def bytes_per_weight(fmt: str) -> float | None:
    """Bytes per stored weight for a format name such as ``"BF16"``, ``"fp8-e4m3"``, ``"Q4_K_M"``, ``"4-bit"``.

    FP32 4, FP16/BF16 2, FP8/INT8 1, 4-bit formats (INT4, FP4, NVFP4, MXFP4,
    AWQ, GPTQ, W4A16, Q4_*) 0.5. Returns ``None`` when the string names no
    known format or names formats of different widths — never a guess.
    """
    widths = set(format_mentions(fmt).values())
    return widths.pop() if len(widths) == 1 else None


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")


def bytes_per_decode_token(
    active_params: float, bytes_per_wt: float, *, kv_bytes_per_token: float = 0.0, context_tokens: int = 0, batch: int = 1
) -> float:
    """Bytes read from device memory to produce one decode step (one token for each of ``batch`` requests).

    ``active_params × bytes_per_wt + batch × kv_bytes_per_token × context_tokens``:
    the weights are read once per step, and each request's KV cache
    (``kv_bytes_per_token`` bytes per cached token, ``context_tokens`` tokens)
    is read once. Raises ``ValueError`` for non-positive params/bytes or negative KV inputs.
    """
    _positive(active_params=active_params, bytes_per_wt=bytes_per_wt, batch=batch)
    if kv_bytes_per_token < 0 or context_tokens < 0:
        raise ValueError("kv_bytes_per_token and context_tokens must be >= 0")
    return active_params * bytes_per_wt + batch * kv_bytes_per_token * context_tokens


def decode_bound_tok_s(bandwidth_gbps: float, devices: int, bytes_per_token: float) -> float:
    """Memory-bandwidth ceiling on one request's decode rate, tokens/s.

    ``devices × bandwidth_gbps × 1e9 / bytes_per_token`` (roofline, memory-bound
    side; see the module docstring). Raises ``ValueError`` for non-positive inputs.
    """
    _positive(bandwidth_gbps=bandwidth_gbps, devices=devices, bytes_per_token=bytes_per_token)
    return devices * bandwidth_gbps * 1e9 / bytes_per_token


def mbu(tok_s: float, bytes_per_token: float, bandwidth_gbps: float, devices: int = 1) -> float:
    """Model bandwidth utilisation as a fraction (1.0 = 100%): achieved bytes/s ÷ peak bytes/s.

    Achieved = ``tok_s × bytes_per_token``; peak = ``devices × bandwidth_gbps × 1e9``
    (Databricks/MosaicML 2023, see module docstring). Above 1.0 the rate is
    impossible without reading fewer bytes than assumed (e.g. speculative
    decoding emitting several tokens per weight read). Raises ``ValueError``.
    """
    _positive(tok_s=tok_s, bytes_per_token=bytes_per_token, bandwidth_gbps=bandwidth_gbps, devices=devices)
    return tok_s * bytes_per_token / (devices * bandwidth_gbps * 1e9)


def flops_per_token(active_params: float) -> float:
    """Forward-pass FLOPs per token, ``2 × active_params`` (Kaplan et al. 2020, attention term dropped)."""
    _positive(active_params=active_params)
    return 2.0 * active_params


def flops_bound_tok_s(peak_tflops: float, devices: int, active_params: float) -> float:
    """Compute ceiling on token throughput, tokens/s: ``devices × peak_tflops × 1e12 / (2 × active_params)``.

    Raises ``ValueError`` for non-positive inputs.
    """
    _positive(peak_tflops=peak_tflops, devices=devices)
    return devices * peak_tflops * 1e12 / flops_per_token(active_params)


def mfu(tok_s: float, active_params: float, peak_tflops: float, devices: int = 1) -> float:
    """Model FLOPs utilisation as a fraction: ``tok_s × 2 × active_params / (devices × peak_tflops × 1e12)``.

    Above 1.0 the throughput is impossible at that peak. Raises ``ValueError``.
    """
    _positive(tok_s=tok_s, peak_tflops=peak_tflops, devices=devices)
    return tok_s * flops_per_token(active_params) / (devices * peak_tflops * 1e12)


# Bit width of each accelerator `flops[].precision` value (schema enum).
PRECISION_BITS: dict[str, int] = {
    "fp64": 64,
    "fp32": 32,
    "tf32": 19,
    "bf16": 16,
    "fp16": 16,
    "int16": 16,
    "fp8": 8,
    "int8": 8,
    "fp6": 6,
    "fp4": 4,
    "int4": 4,
    "fp4_block_scaled": 4,
}


def peak_dense_tflops(flops_rows: list[dict], weight_bits: float) -> tuple[float, str] | None:
    """Fastest dense peak (TFLOPS, precision) among rows at the weight format's bit width or wider.

    ``flops_rows`` is an accelerator record's ``flops`` list. A matmul on
    ``weight_bits``-wide weights cannot run on a narrower datapath than the
    weights themselves, but may run on any wider one, so the fastest such row
    is the highest ceiling the run could have had — an "impossible" verdict
    against it cannot come from picking too low a peak. Sparse rows
    (``dense: false``) and ``other`` precisions are ignored. ``None`` when no row fits.
    """
    best: tuple[float, str] | None = None
    for row in flops_rows or []:
        if not isinstance(row, dict) or row.get("dense", True) is False:
            continue
        bits = PRECISION_BITS.get(str(row.get("precision")))
        tflops = row.get("tflops")
        if bits is None or not isinstance(tflops, (int, float)) or tflops <= 0:
            continue
        if bits + 1e-9 >= int(weight_bits) and (best is None or tflops > best[0]):
            best = (float(tflops), str(row["precision"]))
    return best
