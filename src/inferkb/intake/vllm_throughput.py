"""Importer ``vllm-throughput``: ``vllm bench throughput --output-json`` (and ``benchmark_throughput.py``).

Input (FORMATS.md 1b): one JSON object with ``elapsed_time`` (s),
``num_requests``, ``total_num_tokens`` (prompt + output), ``requests_per_second``
and ``tokens_per_second``. Trap: upstream ``tokens_per_second`` counts prompt
AND output tokens, so it maps to ``total_tok_s``, never ``output_tok_s``. Fork
keys of the form ``"tokens_per_second (output)"`` / ``"tokens_per_second (total)"``
map to ``output_tok_s`` / ``total_tok_s``; when an output rate exists it is the
headline, else the total rate is.

Output: one benchmark record (scenario ``offline``, ``value_scope`` ``aggregate``)
with every rate in ``metrics``, ``num_prompts`` = ``num_requests``, run totals in
``submission``. Rates are cross-checked against ``total_num_tokens /
elapsed_time`` and ``num_requests / elapsed_time`` (KB1101). Model, lengths and
hardware come only from options (``hardware_raw`` falls back to ``gpu_raw`` of ``--env``:
the run is in-process). Sources: ``--source`` or a local-file source record.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import Importer, IntakeOptions, IntakeResult, build_conditions, read_input, register

if TYPE_CHECKING:
    from ..kb import KB

FMT = "vllm-throughput"
EXPECTED = ("elapsed_time", "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second")
_FORK_RATE = re.compile(r"^tokens_per_second\s*\((output|total|input)\)$")
RELEVANT = ("input_tokens", "output_tokens", "dataset", "engine_version", "tensor_parallel", "max_model_len")


def rates(doc: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    """``{metric: {value, unit, value_scope, basis}}`` from the upstream and fork rate keys."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in doc.items():
        m = _FORK_RATE.match(key)
        if key == "tokens_per_second":
            name, basis = "total_tok_s", "`tokens_per_second` = total_num_tokens (prompt + output) / elapsed_time"
        elif m and m.group(1) != "input":
            name, basis = f"{m.group(1)}_tok_s", f"`{key}` of the file"
        elif key == "requests_per_second":
            name, basis = "request_throughput_rps", "`requests_per_second` = num_requests / elapsed_time"
        else:
            continue
        out[name] = {
            "value": C.number(value, path, key, positive=True),
            "unit": "req/s" if name.endswith("rps") else "tok/s",
            "value_scope": "aggregate",
            "basis": basis,
        }
    return out


@register
class VllmThroughput(Importer):
    """``vllm bench throughput --output-json`` -> one offline-throughput record per file."""

    name = FMT
    description = "vLLM `bench throughput --output-json` / benchmark_throughput.py (tokens_per_second = prompt + output)"

    def parse(self, paths: list[Path], options: IntakeOptions, kb: KB) -> IntakeResult:
        """One record per file; raises InputError for another harness's file or unusable values."""
        result = IntakeResult(stats={"imported": 0, "skipped": {}})
        extra: list[dict[str, Any]] = []
        bench: list[dict[str, Any]] = []
        for path in paths:
            raw = read_input(path)
            doc = C.load_json(path, raw)
            C.require_keys(doc, ("elapsed_time", "num_requests"), path, FMT)
            if not any(k == "tokens_per_second" or _FORK_RATE.match(k) for k in doc):
                C.require_keys(doc, EXPECTED, path, FMT)
            elapsed = C.number(doc["elapsed_time"], path, "elapsed_time", positive=True)
            n_req = C.integer(doc["num_requests"])
            if n_req is None:
                raise InputError(f"expected a positive whole number, found {doc['num_requests']!r}", path=str(path), field="num_requests")
            metrics = rates(doc, path)
            checks = [("requests_per_second", "request_throughput_rps", n_req / elapsed)]
            if "total_num_tokens" in doc:
                total_tokens = C.number(doc["total_num_tokens"], path, "total_num_tokens", positive=True)
                checks.append(("tokens_per_second", "total_tok_s", total_tokens / elapsed))
            for key, name, expect in checks:
                if key in doc and name in metrics and not C.close(metrics[name]["value"], expect, rel=1e-6):
                    result.findings.append(
                        C.KB1101.finding(
                            f"{key} is {metrics[name]['value']:.6g} but the file's own totals give {expect:.6g}",
                            path=str(path),
                            field=key,
                            extra={"file": metrics[name]["value"], "recomputed": expect},
                        )
                    )
            metric = "output_tok_s" if "output_tok_s" in metrics else "total_tok_s"
            if metric not in metrics:
                raise InputError(
                    "no token rate (tokens_per_second or a 'tokens_per_second (...)' key)", path=str(path), field="tokens_per_second"
                )
            sources = C.resolve_sources(kb, options, path, raw, FMT, extra)
            rid = C.make_id(FMT, options.model, options.hardware_raw or options.accelerator, path.stem)
            rec = C.skeleton(
                rid=rid,
                name=f"vLLM bench throughput, {options.model or path.stem}",
                engine=C.engine_id(kb, options, "vllm"),
                metric=metric,
                value=metrics[metric]["value"],
                unit="tok/s",
                value_scope="aggregate",
                scenario="offline",
                sources=sources,
                options=options,
            )
            env_gpu = (options.env or {}).get("gpu_raw") if isinstance(options.env, dict) else None
            C.apply_hardware(rec, kb, options, env_gpu, result.findings, path=path)
            stated = C.option_conditions(options)
            stated.setdefault("num_prompts", n_req)
            if "engine_version" not in stated and C.env_package(options.env, "vllm"):
                stated["engine_version"] = C.env_package(options.env, "vllm")
            rec["conditions"], rec["condition_gaps"] = build_conditions(
                stated, FMT, ["the throughput JSON (elapsed_time, num_requests, totals, rates only)", "command-line options"], RELEVANT
            )
            rec["metrics"] = metrics
            sub: dict[str, Any] = {"harness": "vllm bench throughput --output-json", "elapsed_time_s": elapsed, "num_requests": n_req}
            for key, value in doc.items():
                if (
                    key not in ("elapsed_time", "num_requests")
                    and key not in ("tokens_per_second", "requests_per_second")
                    and not _FORK_RATE.match(key)
                    and not isinstance(value, (list, dict))
                ):
                    sub[key] = value
            rec["submission"] = sub
            rec["methodology"] = (
                f"vllm bench throughput (offline LLM engine, all prompts submitted at once): headline {metric}"
                + (
                    " = `tokens_per_second`, which counts prompt + output tokens / elapsed_time (not output throughput)"
                    if metric == "total_tok_s"
                    else " from the fork's `tokens_per_second (output)` key"
                )
                + "."
            )
            C.attach_env(rec, options.env, engine_package="vllm")
            bench.append(rec)
        C.unique_ids(bench)
        result.records = extra + bench
        result.stats["imported"] = len(bench)
        return result
