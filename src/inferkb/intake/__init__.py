"""Intake: importers that turn real harness outputs and result tables into benchmark records.

One module per format, each registering an :class:`Importer` subclass with
the :func:`register` class decorator; adding a built-in format is adding a
module here and naming it once in :data:`inferkb.plugins.BUILTINS`
``["importers"]`` (another package uses the ``inferkb.importers`` entry-point
group). Importers only parse and build records; writing goes through
:func:`inferkb.intake.base.commit`, i.e. through the store (validated, atomic,
never overwriting without ``update``).
"""

from __future__ import annotations

from .. import plugins
from .base import IMPORTERS, Importer, IntakeOptions, IntakeResult, importer, register

# The built-in importer modules (short names); declared in inferkb.plugins.BUILTINS, kept for older code.
INTAKE_MODULES = tuple(m.rsplit(".", 1)[1] for m in plugins.BUILTINS["importers"])

__all__ = ["IMPORTERS", "Importer", "IntakeOptions", "IntakeResult", "importer", "register", "load_all"]


def load_all() -> dict[str, Importer]:
    """Load every importer (built-in modules, then ``inferkb.importers`` entry points); returns ``{format name: importer}``."""
    return plugins.IMPORTERS.load()
