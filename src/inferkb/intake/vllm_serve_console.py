"""The console form of ``vllm bench serve``: each "Serving Benchmark Result" block of a log (tqdm ``\\r`` noise and
warnings allowed) read into a run dict in the ``--save-result`` key shape, with what the ``Namespace(...)`` line
printed before it states (model, backend, num_prompts, rate, dataset, random lengths).

Every line is read in time linear in its length (a quadratic regular expression once took seconds on one hostile
line). :mod:`inferkb.intake.vllm_serve` turns the runs into records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["parse_console"]

_BLOCK_START = "Serving Benchmark Result"
# A result line is "<label>: <one token>"; the label holds no ':' so it ends at the first one (see _result_line).
_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9 ()/.\-]*")
_CONSOLE_STAT = re.compile(r"^(Mean|Median|Std|P(\d+(?:\.\d+)?))\s+(TTFT|TPOT|ITL|E2EL)\s+\(ms\)$")
_CONSOLE_KEYS = {
    "successful requests": "completed",
    "failed requests": "failed",
    "benchmark duration (s)": "duration",
    "total input tokens": "total_input_tokens",
    "total generated tokens": "total_output_tokens",
    "request throughput (req/s)": "request_throughput",
    "request goodput (req/s)": "request_goodput",
    "output token throughput (tok/s)": "output_throughput",
    "input token throughput (tok/s)": "input_throughput",
    "total token throughput (tok/s)": "total_token_throughput",
    "peak output token throughput (tok/s)": "max_output_tokens_per_s",
    "peak concurrent requests": "max_concurrent_requests",
    "maximum request concurrency": "max_concurrency",
}
_NS_KEY = re.compile(r"\w+")


def _result_line(line: str) -> tuple[str, str] | None:
    """``(label, value)`` of a ``Label (unit):   value`` line, else ``None``; linear in the line's length.

    (A single regular expression with a lazy label beside ``\\s*`` took time
    quadratic in a line of spaces: 0.6 s for one 20 KB line.)
    """
    label, colon, value = line.partition(":")
    if not colon:
        return None
    label, value = label.strip(), value.strip()
    if not value or not _LABEL.fullmatch(label) or any(c.isspace() for c in value):
        return None
    return label, value


def _namespace_pairs(body: str) -> list[tuple[str, str]]:
    """``key=value`` pairs of a ``Namespace(...)`` repr body, in one left-to-right pass.

    A value is a quoted string (``'...'`` with backslash escapes, or
    ``"..."``) or the text up to the next ``,`` or parenthesis; anything else
    is skipped. Linear in ``len(body)`` (a regular expression scanned from
    every position took quadratic time: 3.2 s on a 20 KB word).
    """
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(body)
    while i < n:
        m = _NS_KEY.match(body, i)
        if m is None or m.end() >= n or body[m.end()] != "=":
            i = (m.end() if m else i) + 1
            continue
        key, j = m.group(), m.end() + 1
        if j < n and body[j] in "'\"":
            quote, k = body[j], j + 1
            while k < n and body[k] != quote:
                k += 2 if quote == "'" and body[k] == "\\" else 1
            if k < n:
                pairs.append((key, body[j : k + 1]))
                i = k + 1
                continue
        k = j
        while k < n and body[k] not in ",()":
            k += 1
        if k > j:
            pairs.append((key, body[j:k]))
        i = k + 1
    return pairs


def _scalar(text: str) -> Any:
    text = text.strip()
    if text[:1] in "'\"":
        return text[1:-1]
    if text in ("None",):
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_console(text: str, path: Path) -> list[dict[str, Any]]:
    """Run dicts in the ``--save-result`` key shape from console text; raises InputError when no block is found."""
    lines = re.split(r"\r\n|\r|\n", text)
    runs: list[dict[str, Any]] = []
    context: dict[str, Any] = {}
    current: dict[str, Any] | None = None
    for line in lines:
        if line.startswith("Namespace(") and line.rstrip().endswith(")"):
            ns = {k: _scalar(v) for k, v in _namespace_pairs(line.rstrip()[len("Namespace(") : -1])}
            context = {"_namespace": ns}
            continue
        if current is None:
            if _BLOCK_START in line:
                current = {"_context": dict(context)}
            elif line.startswith("Traffic request rate:"):
                context["request_rate"] = line.split(":", 1)[1].strip()
            continue
        if re.fullmatch(r"\s*=+\s*", line):
            runs.append(current)
            current = None
            continue
        parsed = _result_line(line)
        if parsed is None:
            continue
        label, raw_value = parsed
        stat = _CONSOLE_STAT.match(label)
        try:
            value: Any = float(raw_value)
        except ValueError:
            value = raw_value
        if stat:
            kind = stat.group(1).lower()
            key = f"{kind}_{stat.group(3).lower()}_ms"
            current[key] = value
        elif label.lower() in _CONSOLE_KEYS:
            current[_CONSOLE_KEYS[label.lower()]] = value
    if current is not None:
        raise InputError("a 'Serving Benchmark Result' block is not closed by its '=====' line (truncated log?)", path=str(path))
    if not runs:
        raise InputError(
            "not a vllm-serve file: no JSON and no 'Serving Benchmark Result' block in the text "
            "(expected lines such as 'Successful requests:', 'Mean TTFT (ms):')",
            path=str(path),
        )
    out = []
    for run in runs:
        ctx = run.pop("_context")
        ns = ctx.get("_namespace", {})
        doc: dict[str, Any] = {"model_id": ns.get("model"), "backend": ns.get("backend"), "num_prompts": ns.get("num_prompts")}
        if "max_concurrency" in ns:  # only what the log states: an older Namespace has no max_concurrency at all
            doc["max_concurrency"] = ns["max_concurrency"]
        rate = ctx.get("request_rate", ns.get("request_rate"))
        doc["request_rate"] = rate
        if isinstance(ns.get("dataset_name"), str):
            doc["_dataset"] = ns["dataset_name"]
            if ns["dataset_name"] == "random":
                doc["_input_len"] = ns.get("random_input_len")
                doc["_output_len"] = ns.get("random_output_len")
        doc.update(run)
        for key in ("completed", "total_input_tokens", "total_output_tokens", "max_concurrent_requests", "failed", "max_concurrency"):
            if isinstance(doc.get(key), float) and doc[key].is_integer():
                doc[key] = int(doc[key])
        out.append(doc)
    return out
