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


class UnsafePath(UsageError):
    """A write was refused because a directory on the way to its target is a symlink (or not a directory):
    inferkb writes only through real directories inside the KB, wherever a symlink points. Nothing was written."""


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


class WriteConflict(KBError):
    """A write was refused because the KB changed under it: a file edited or created since it was read,
    or another writer holding the KB's lock for too long. Nothing was written."""


class JournalRefused(KBError):
    """The KB root holds a batch journal (``.inferkb-journal.json``) that inferkb did not write as it stands: a path
    in it is absolute, leaves the KB, goes through a symlink or is not a temp/backup name of its target. Recovery
    is refused and every file is left in place; nothing is written until a person removes the journal."""


class RecordInvalid(KBError):
    """A record failed validation and was not written. ``findings`` lists why."""

    def __init__(self, message: str, findings: list | None = None) -> None:
        self.findings = findings or []
        super().__init__(message)


class WriteFailed(KBError, OSError):
    """The file system refused a write (a full disk, a read-only folder); nothing of the batch was written.

    Also an ``OSError`` (``errno``/``strerror``/``filename`` of the failure), so
    callers catching ``OSError`` keep working.
    """

    def __str__(self) -> str:
        return self.strerror or super().__str__()


class InternalError(KBError):
    """A bug: an error inferkb did not expect. The CLI exits 3 and names what was being processed."""

    exit_code = 3


class Processing:
    """What the process is working on now (a file, a record path, an audit): named by the CLI when a bug surfaces.

    Hot loops assign :attr:`what` directly (one attribute store per item) and
    reset it to ``None`` when done; :meth:`on` is the block form.
    :attr:`record` is ``(record path, id of the frame iterating)`` while a
    loop over :meth:`inferkb.Store.by_type` runs: the CLI names that record
    only when the failure passed through that frame.
    """

    __slots__ = ("what", "record")

    def __init__(self) -> None:
        self.what: str | None = None
        self.record: tuple[str, int] | None = None

    def on(self, what: str):
        """Context manager: ``what`` for the duration of the block, then the previous value."""
        return _ProcessingBlock(self, what)


class _ProcessingBlock:
    __slots__ = ("state", "what", "saved")

    def __init__(self, state: Processing, what: str) -> None:
        self.state, self.what, self.saved = state, what, None

    def __enter__(self) -> None:
        self.saved, self.state.what = self.state.what, self.what

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:  # on an error keep naming what failed, for the CLI's message
            self.state.what = self.saved


PROCESSING = Processing()
