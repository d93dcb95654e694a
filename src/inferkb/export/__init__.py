"""Exports: the exporters extension point, and the KB's tables as SQL and open-data files.

**Exporters** (an extension point): a KB's records written in another
ecosystem's format. An exporter is a function ``func(kb, **options) ->
document`` registered with :func:`exporter`; ``omissions(kb, **options) ->
[sentences]`` optionally says what the document leaves out. Built-in exporters
are named once in :data:`inferkb.plugins.BUILTINS` ``["exporters"]``; another
package uses the ``inferkb.exporters`` entry-point group. Example::

    import inferkb
    from inferkb import export
    doc = export.load_all()["llmd-report"].func(inferkb.open(), record_id="vllm-mtp-regression-qwen3-next-80b-a3b")

**Tables** (``inferkb sql`` and ``inferkb export --to ...``), in submodules:

- :mod:`~inferkb.export.tables` — the tables (columns from the KB's schemas, keys from kb.toml);
- :mod:`~inferkb.export.sql` — read-only DuckDB with a timeout;
- :mod:`~inferkb.export.writers` — DuckDB, Parquet, SQLite (Datasette), CSV, Frictionless data package + Croissant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import plugins

__all__ = ["ExporterSpec", "exporter", "load_all", "EXPORTERS"]


@dataclass(frozen=True)
class ExporterSpec:
    """A registered exporter: ``name``, one-line ``description``, ``func(kb, **options)`` and optional ``omissions``."""

    name: str
    description: str
    func: Callable[..., Any]
    omissions: Callable[..., list[str]] | None = None


# The exporters extension point's items: ``{name: ExporterSpec}``.
EXPORTERS: dict[str, ExporterSpec] = plugins.EXPORTERS.items


def exporter(name: str, description: str, *, omissions: Callable[..., list[str]] | None = None) -> Callable:
    """Decorator registering ``func(kb, **options) -> document`` as exporter ``name``."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        plugins.EXPORTERS.register(name, ExporterSpec(name, description, func, omissions), module=func.__module__)
        return func

    return deco


def load_all() -> dict[str, ExporterSpec]:
    """Load every exporter (built-in modules, then ``inferkb.exporters`` entry points); returns ``{name: ExporterSpec}``."""
    return plugins.EXPORTERS.load()
