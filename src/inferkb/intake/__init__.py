"""Intake: importers that turn real harness outputs and result tables into benchmark records.

One module per format, each registering an :class:`Importer` with
:func:`register`; adding a format is adding a module and naming it in
:data:`INTAKE_MODULES`. Importers only parse and build records; writing goes
through :func:`inferkb.intake.base.commit`, i.e. through the store (validated,
atomic, never overwriting without ``update``).
"""

from __future__ import annotations

import importlib

from .base import IMPORTERS, Importer, IntakeOptions, IntakeResult, register

INTAKE_MODULES = (
    "vllm_latency",
    "vllm_serve",
    "vllm_throughput",
    "llama_bench",
    "mlperf",
    "llmd_report",
    "inferencex",
    "llm_inference_bench",
    "llmperf",
    "localscore",
    "inferencex_slo",
)

__all__ = ["IMPORTERS", "Importer", "IntakeOptions", "IntakeResult", "register", "load_all"]


def load_all() -> dict[str, Importer]:
    """Import every importer module (registering them) and return ``{format name: importer}``."""
    for mod in INTAKE_MODULES:
        importlib.import_module(f"{__name__}.{mod}")
    return IMPORTERS
