"""Typed exceptions. Library code raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations


class KBError(Exception):
    """Base class of every error inferkb raises on purpose.

    ``exit_code`` is what the CLI exits with: 2 for unusable input or usage.
    """

    exit_code = 2


class KBNotFound(KBError):
    """The KB path does not exist or has no ``data/`` directory."""


class UsageError(KBError):
    """A command was asked for something it cannot do (bad id, unknown type, ...)."""


class InputError(KBError):
    """An input file is unusable (does not parse, wrong format, missing keys).

    ``path`` names the file and ``field`` the offending key when known.
    """

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None) -> None:
        self.path = path
        self.field = field
        where = path or ""
        if field:
            where = f"{where}: {field}" if where else field
        super().__init__(f"{where}: {message}" if where else message)


class RecordExists(KBError):
    """Writing would overwrite an existing record and overwriting was not asked for."""


class RecordInvalid(KBError):
    """A record failed validation and was not written. ``findings`` lists why."""

    def __init__(self, message: str, findings: list | None = None) -> None:
        self.findings = findings or []
        super().__init__(message)
