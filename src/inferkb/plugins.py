"""Extension points, declared once: rules, audits, importers, derivations, exporters, reporters, CLI commands, site pages.

Each point is an :class:`ExtensionPoint`: a name, the built-in modules that
register into it (the default plugins, listed in :data:`BUILTINS`), and the
entry-point group through which an installed package adds its own
(``inferkb.<point>``, e.g. ``inferkb.importers``). A module registers with the
decorator of its stage (``@importer`` / ``@register`` for importers,
``@audit`` for audits, ``@derivation``, ``@exporter``, ``@reporter``,
``@command``, ``@inferkb.site.extra.page`` for site pages, and ``rules.register``
for rule codes); importing the module is
what registers it. Points load lazily, on first use, so a command pays only
for the points it touches.

Adding a built-in importer, audit, derivation, exporter, reporter or command
is one module plus one line in :data:`BUILTINS`. A third-party package adds
one without touching inferkb, in its ``pyproject.toml``::

    [project.entry-points."inferkb.importers"]
    my-format = "my_package.inferkb_importer"     # a module that uses @importer

An entry point may also name an object (``"my_package.mod:MyImporter"``); it
is then registered under the entry point's name. A plugin that fails to load
does not stop the others: the failure is kept in :attr:`ExtensionPoint.failed`
and listed by ``inferkb plugins``.

This module imports nothing from inferkb, so every layer may use it.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# The default plugins of each point, in the order they are listed and run.
BUILTINS: dict[str, tuple[str, ...]] = {
    # Modules that only declare rule codes; every other point's modules declare theirs too.
    "rules": (
        "inferkb.validate_rules",
        "inferkb.derive.base",
        "inferkb.intake.common",
        "inferkb.intake.table_rules",
        "inferkb.intake.dataset",
    ),
    "audits": (
        "inferkb.audit.load_conditions",
        "inferkb.audit.metric_consistency",
        "inferkb.audit.plausibility",
        "inferkb.audit.model_geometry",
        "inferkb.audit.context_window",
        "inferkb.audit.citations",
        "inferkb.audit.provenance_tiers",
        "inferkb.audit.identity",
        "inferkb.audit.staleness",
        "inferkb.audit.device_count",
        "inferkb.audit.datasheet",
        "inferkb.audit.names",
    ),
    "importers": (
        "inferkb.intake.vllm_latency",
        "inferkb.intake.vllm_serve",
        "inferkb.intake.vllm_throughput",
        "inferkb.intake.llama_bench",
        "inferkb.intake.mlperf",
        "inferkb.intake.llmd_report",
        "inferkb.intake.inferencex",
        "inferkb.intake.llm_inference_bench",
        "inferkb.intake.llmperf",
        "inferkb.intake.localscore",
        "inferkb.intake.inferencex_slo",
        "inferkb.intake.sglang_serving",
        "inferkb.intake.sglang_one_batch",
        "inferkb.intake.guidellm",
        "inferkb.intake.aiperf",
        "inferkb.intake.trtllm_bench",
    ),
    "derivations": (
        "inferkb.derive.interconnect_ids",
        "inferkb.derive.format_id",
        "inferkb.derive.accelerator_alternates",
        "inferkb.derive.accelerator_ids",
        "inferkb.derive.per_accelerator",
        "inferkb.derive.model_id",
        "inferkb.derive.base_model_id",
        "inferkb.derive.llm_inference_bench_format",
        "inferkb.derive.llm_inference_bench_tp",
        "inferkb.derive.llm_inference_bench_split",
        "inferkb.derive.llm_inference_bench_conditions",
        "inferkb.derive.mlperf_weight_format",
        "inferkb.derive.same_measurement",
        "inferkb.derive.distinct_names",
        "inferkb.derive.repeat_group",
        "inferkb.derive.runtime_devices",
    ),
    "exporters": ("inferkb.intake.llmd_report",),
    "reporters": ("inferkb.reporters",),
    "commands": (
        "inferkb.cli.checks",
        "inferkb.cli.query",
        "inferkb.cli.write",
        "inferkb.cli.intake",
        "inferkb.cli.derive",
        "inferkb.cli.export",
        "inferkb.cli.plugins",
        "inferkb.cli.community",
        "inferkb.cli.analysis",
        "inferkb.cli.analysis_bounds",
        "inferkb.cli.analysis_data",
        "inferkb.cli.site",
    ),
    # Pages of the static site built from analyses (``@inferkb.site.extra.page``); the builder renders them after the core pages.
    "site_pages": (
        "inferkb.site.compare_pages",
        "inferkb.site.pareto_pages",
        "inferkb.site.history_pages",
    ),
}


class PluginError(Exception):
    """A plugin registered something twice or under an empty name (a programming error in that plugin)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a registered item came from: ``module`` that registered it and, for an entry point, its distribution."""

    module: str
    distribution: str | None = None


class ExtensionPoint:
    """One extension point: ``items`` (``{name: item}`` in registration order), loaded on first use.

    ``name`` is the point (``importers``), ``group`` its entry-point group
    (``inferkb.importers``), ``builtins`` the default plugin modules.
    ``failed`` maps a plugin that could not be loaded to the reason.
    """

    def __init__(self, name: str, builtins: tuple[str, ...]) -> None:
        self.name = name
        self.group = f"inferkb.{name}"
        self.builtins = builtins
        self.items: dict[str, Any] = {}
        self.origins: dict[str, Origin] = {}
        self.failed: dict[str, str] = {}
        self._builtins_loaded = False
        self._loaded = False
        self._loading = False

    def register(self, name: str, item: Any, *, module: str | None = None) -> Any:
        """Add ``item`` under ``name``; returns ``item``.

        A module registering a name again replaces its own item (a re-import);
        a second module claiming a registered name is a :class:`PluginError`.
        """
        if not name:
            raise PluginError(f"{self.name}: a plugin item needs a non-empty name (got {item!r})")
        module = module or getattr(item, "__module__", None) or "?"
        old = self.origins.get(name)
        if old is not None and old.module != module:
            raise PluginError(f"{self.name}: {name!r} is registered by {old.module} and again by {module}")
        self.items[name] = item
        self.origins[name] = Origin(module, _current_dist)
        return item

    def load(self, *, entry_points: bool = True) -> dict[str, Any]:
        """Import the built-in modules, then (unless ``entry_points=False``) every installed entry point of
        :attr:`group`, once; returns :attr:`items`.

        Finding entry points costs an ``importlib.metadata`` scan (about 10 ms), so
        start-up paths that only need built-ins (``inferkb validate``) skip it.
        """
        if self._loaded or self._loading or (self._builtins_loaded and not entry_points):
            return self.items
        self._loading = True
        try:
            if not self._builtins_loaded:
                for module in self.builtins:
                    importlib.import_module(module)
                self._builtins_loaded = True
            if entry_points:
                for ep in _entry_points(self.group):
                    self._load_entry_point(ep)
                self._loaded = True
        finally:
            self._loading = False
        return self.items

    def _load_entry_point(self, ep: Any) -> None:
        global _current_dist
        dist = getattr(getattr(ep, "dist", None), "name", None)
        label = f"{ep.name} = {ep.value}" + (f" (from {dist})" if dist else "")
        _current_dist = dist
        try:
            obj = ep.load()
            if not isinstance(obj, types.ModuleType):
                self.register(ep.name, obj, module=ep.value)
        except Exception as exc:  # noqa: BLE001 - one broken third-party plugin must not break the others
            self.failed[label] = f"{type(exc).__name__}: {exc}"
        finally:
            _current_dist = None

    def get(self, name: str) -> Any | None:
        """The item registered as ``name`` (loading the point first), or ``None``."""
        return self.load().get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.load())

    def __contains__(self, name: object) -> bool:
        return name in self.load()

    def __len__(self) -> int:
        return len(self.load())


_current_dist: str | None = None


def _entry_points(group: str) -> list[Any]:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=group), key=lambda ep: ep.name)


RULES = ExtensionPoint("rules", BUILTINS["rules"])
AUDITS = ExtensionPoint("audits", BUILTINS["audits"])
IMPORTERS = ExtensionPoint("importers", BUILTINS["importers"])
DERIVATIONS = ExtensionPoint("derivations", BUILTINS["derivations"])
EXPORTERS = ExtensionPoint("exporters", BUILTINS["exporters"])
REPORTERS = ExtensionPoint("reporters", BUILTINS["reporters"])
COMMANDS = ExtensionPoint("commands", BUILTINS["commands"])
SITE_PAGES = ExtensionPoint("site_pages", BUILTINS["site_pages"])

POINTS: dict[str, ExtensionPoint] = {p.name: p for p in (RULES, AUDITS, IMPORTERS, DERIVATIONS, EXPORTERS, REPORTERS, COMMANDS, SITE_PAGES)}


def load_all(*, commands: bool = False) -> dict[str, ExtensionPoint]:
    """Load every point (``commands`` and ``site_pages`` only when asked: they import click, Jinja2 and Altair); returns :data:`POINTS`."""
    for point in POINTS.values():
        if commands or point not in (COMMANDS, SITE_PAGES):
            point.load()
    return POINTS


def decorator(point: ExtensionPoint, name: str, make: Callable[[Any], Any] | None = None) -> Callable[[Any], Any]:
    """A decorator registering the decorated object (or ``make(obj)``) into ``point`` as ``name``; returns the object unchanged."""

    def deco(obj: Any) -> Any:
        point.register(name, make(obj) if make else obj, module=getattr(obj, "__module__", None))
        return obj

    return deco
