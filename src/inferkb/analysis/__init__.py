"""Analyses over a loaded KB: every answer shows its inputs, its formula and its sources.

Modules (each a documented Python API; the CLI in :mod:`inferkb.cli.analysis` wraps them):

- :mod:`~inferkb.analysis.comparability` — class keys, what splits two records;
- :mod:`~inferkb.analysis.compare` — select, group into classes, rank within each;
- :mod:`~inferkb.analysis.compare_hint` — the `--vary` hint when most of a selection is not comparable;
- :mod:`~inferkb.analysis.pareto` — frontier of per-accelerator throughput vs a per-user figure, per class;
- :mod:`~inferkb.analysis.history` — one system series across MLPerf rounds;
- :mod:`~inferkb.analysis.cost` — cost per 1M tokens at a price with a stated basis;
- :mod:`~inferkb.analysis.fit` — memory envelope (weights + KV cache under TP; GQA, MLA, hybrid, sliding window);
- :mod:`~inferkb.analysis.roofline` — decode/prefill ceilings on top of :mod:`inferkb.roofline`;
- :mod:`~inferkb.analysis.plot` — Vega-Lite specs and HTML/SVG/PNG output;
- :mod:`~inferkb.analysis.common` — lookups with near-match hints, token-basis and per-accelerator labels.

Results are plain dataclasses with ``to_dict()`` (JSON-able). Errors are
:class:`~inferkb.analysis.common.AnalysisError` (a :class:`~inferkb.UsageError`, exit code 2).
"""
