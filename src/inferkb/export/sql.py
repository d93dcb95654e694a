"""``inferkb sql``: read-only DuckDB SQL over the KB's tables, with a timeout.

The tables (:mod:`inferkb.export.tables`) are loaded into a DuckDB file in a
private temporary directory; queries then run on a **read-only** connection
with external access disabled and the configuration locked, so a query cannot
write, ``ATTACH``, ``COPY ... TO``, read other files or install extensions.
A query that runs longer than ``timeout`` seconds is interrupted.

Python API::

    from inferkb.export.sql import Database
    with Database.build(kb) as db:          # load once
        res = db.query("SELECT metric, count(*) FROM benchmarks GROUP BY 1", timeout=10)
        res.columns, res.rows
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import KBError, UsageError

if TYPE_CHECKING:
    from ..kb import KB

DEFAULT_TIMEOUT = 30.0


class QueryError(KBError):
    """The SQL failed: a syntax or binder error, a refused write or file access, or the timeout."""


@dataclass
class QueryResult:
    """``columns`` (names), ``rows`` (tuples), ``elapsed_s`` (query time only)."""

    columns: list[str]
    rows: list[tuple]
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        """``{"columns": [...], "rows": [[...], ...], "elapsed_s": ...}`` (values JSON-able: dates/decimals as text)."""
        return {"columns": self.columns, "rows": [[_jsonable(v) for v in r] for r in self.rows], "elapsed_s": self.elapsed_s}


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


class Database:
    """A read-only DuckDB connection over one KB's tables (or an exported DuckDB file). Use as a context manager."""

    def __init__(self, path: Path, *, tmpdir: Path | None = None) -> None:
        import duckdb

        self.path = path
        self._tmpdir = tmpdir
        try:
            self.con = duckdb.connect(str(path), read_only=True, config={"enable_external_access": False, "lock_configuration": True})
        except duckdb.Error as exc:
            self.close()
            raise UsageError(f"{path}: cannot open as a DuckDB database: {exc}") from None

    @classmethod
    def build(cls, kb: KB, *, findings: str = "validate") -> Database:
        """Load ``kb``'s tables into a temporary DuckDB file and open it read-only."""
        import duckdb

        from .tables import build_tables
        from .writers import load_duckdb

        tables = build_tables(kb, findings=findings)
        tmpdir = Path(tempfile.mkdtemp(prefix="inferkb-sql-"))
        path = tmpdir / "kb.duckdb"
        try:
            # A throwaway file: skipping compression makes the load about twice as fast (measured at 100,000 records).
            con = duckdb.connect(str(path), config={"force_compression": "uncompressed"})
            try:
                load_duckdb(con, tables, tmpdir)
            finally:
                con.close()
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        return cls(path, tmpdir=tmpdir)

    @classmethod
    def open(cls, path: str | Path) -> Database:
        """Open an existing DuckDB file (e.g. from ``inferkb export --to duckdb``) read-only; UsageError if absent."""
        p = Path(path)
        if not p.is_file():
            raise UsageError(f"--db {p}: no such file")
        return cls(p)

    def tables(self) -> list[str]:
        """Names of the tables, sorted."""
        return [r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]

    def query(self, sql: str, *, timeout: float | None = DEFAULT_TIMEOUT, limit: int | None = None) -> QueryResult:
        """Run one SQL statement; returns at most ``limit`` rows (all when ``None``).

        Raises :class:`QueryError` when DuckDB rejects it (the message says
        why: read-only, file access disabled, syntax) or it runs past ``timeout`` seconds.
        """
        import time

        import duckdb

        if timeout is not None and timeout <= 0:
            raise UsageError(f"timeout must be positive, got {timeout!r}")
        timer = threading.Timer(timeout, self.con.interrupt) if timeout else None
        start = time.perf_counter()
        try:
            if timer:
                timer.start()
            cur = self.con.execute(sql)
            columns = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchmany(limit) if limit else cur.fetchall()
        except duckdb.InterruptException:
            raise QueryError(f"query interrupted after the {timeout:g} s timeout (--timeout)") from None
        except duckdb.Error as exc:
            raise QueryError(f"query failed: {_one_line(exc)}") from None
        finally:
            if timer:
                timer.cancel()
        return QueryResult(columns, [tuple(r) for r in rows], time.perf_counter() - start)

    def close(self) -> None:
        """Close the connection and remove the temporary database, if any."""
        con = getattr(self, "con", None)
        if con is not None:
            con.close()
            self.con = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def query(kb: KB, sql: str, *, timeout: float | None = DEFAULT_TIMEOUT, limit: int | None = None) -> QueryResult:
    """Build the tables of ``kb``, run ``sql`` read-only, clean up. See :class:`Database`."""
    with Database.build(kb) as db:
        return db.query(sql, timeout=timeout, limit=limit)


def _one_line(exc: Exception) -> str:
    """DuckDB's multi-line error text as one line: its lines joined by " / ", the caret-only marker lines dropped.

    ``'Parser Error: syntax error at or near "SELEC"\\n\\nLINE 1: SELEC x\\n ^^^^^'`` ->
    ``'Parser Error: syntax error at or near "SELEC" / LINE 1: SELEC x'``: the error line stays readable
    where the CLI shows control characters as escapes.
    """
    parts = [line.strip() for line in str(exc).splitlines()]
    return " / ".join(p for p in parts if p and set(p) != {"^"})
