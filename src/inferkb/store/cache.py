"""The load cache: what parsing and per-record validation found for each unchanged record file, kept between runs.

Two kinds of file per KB in the user's cache directory (:func:`cache_dir`,
shared with the query catalogue), each split in :data:`SHARDS` shards by path:
``load-<hash>-NN.json`` holds each record file's parsed object and its KB112
pre-filter verdict, ``findings-<hash>-NN.json`` its schema and per-record rule
findings and what the cross-record rules read of it (validate; a warm validate
reads only these: :mod:`inferkb.validate_warm`). An entry is used only when the file's
stamp (:func:`file_stamp`: size, inode, mtime and ctime in nanoseconds, one
``lstat`` and no read) equals the one stored, and a shard only when its
fingerprint matches: format, resolved KB root, inferkb's code
(:func:`code_version`), ``kb.toml``, and for findings also the schemas, the
metric registry and today's date (rule KB106 compares dates with today). So
an edited or replaced file (new size, new mtime, or at least a new ctime,
which no user can set) is read and checked again, and a change of code,
schemas or rules drops the whole file. Cross-record rules and audits always run;
four audits keep per-record results in files of their own kind through the same
class (:mod:`inferkb.audit.record_cache`).

A shard is never trusted blindly: it is one header line (format, KB root,
fingerprint, byte count and CRC-32 of the body) and an orjson body; a file
whose header, length, checksum or shape does not match is ignored (and
rewritten); a shard whose entries did not change is not rewritten. Files are written to a temp name and renamed, so a reader never
sees half of one. Only regular files that are not symlinks, whose name is a
kebab-case id and that parsed without a finding are cached; a file modified
within :data:`RACY_NS` of being read is not (a second write inside the file
system's timestamp granularity could otherwise go unseen: git's "racy clean" rule).

Caching is off when ``INFERKB_NO_CACHE`` is set to anything but ``""`` or
``0`` (the CLI's ``--no-cache`` sets it) or when ``INFERKB_CACHE_DIR`` is set
empty.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import zlib
from pathlib import Path

import orjson

from ..jsonio import temp_path

FORMAT = "inferkb-load-cache-1"
RACY_NS = 2_000_000_000


def cache_dir() -> Path | None:
    """Where on-disk caches live (``$INFERKB_CACHE_DIR``, else ``$XDG_CACHE_HOME/inferkb``, else
    ``~/.cache/inferkb``); ``None`` when ``INFERKB_CACHE_DIR`` is set empty (in memory only)."""
    env = os.environ.get("INFERKB_CACHE_DIR")
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inferkb"


def enabled() -> bool:
    """True unless ``INFERKB_NO_CACHE`` is set (to anything but ``""``/``"0"``) or there is no cache directory."""
    return os.environ.get("INFERKB_NO_CACHE", "").strip() in ("", "0") and cache_dir() is not None


def file_stamp(st: os.stat_result, now_ns: int) -> str | None:
    """``"size:inode:mtime_ns:ctime_ns"`` of a stat result, or ``None`` for a file changed within :data:`RACY_NS` of
    ``now_ns`` (not to be cached: a write in the same timestamp tick would leave the stamp unchanged)."""
    if max(st.st_mtime_ns, st.st_ctime_ns) >= now_ns - RACY_NS:
        return None
    return f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"


_CODE_VERSION: str | None = None


def code_version() -> str:
    """A digest of inferkb's own code and data files (path, size, mtime of each ``.py``/``.toml``/``.json`` outside the
    bundled KB's records), the Python version and orjson's version; computed once per process (about 1 ms)."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        package = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256(f"{sys.version}|{orjson.__version__}".encode())
        skip = {os.path.join(str(package), "kb", "data"), os.path.join(str(package), "kb", "provenance")}
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and os.path.join(folder, d) not in skip)
            for name in sorted(files):
                if name.endswith((".py", ".toml", ".json")):
                    st = os.stat(os.path.join(folder, name))
                    digest.update(f"{os.path.relpath(os.path.join(folder, name), package)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        _CODE_VERSION = digest.hexdigest()
    return _CODE_VERSION


def digest_file(path: Path) -> str:
    """SHA-256 of a small file's bytes (``"-"`` when absent or unreadable): for the fingerprints of kb.toml and schemas."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "-"


SHARDS = 16  # files per cache kind and KB: an edit rewrites the one shard of its file, not the whole cache


def shard_of(rel: str) -> int:
    """Which of the :data:`SHARDS` files keeps the entry of ``rel`` (CRC-32 of the path: stable across runs)."""
    return zlib.crc32(rel.encode("utf-8", "surrogateescape")) % SHARDS


class CacheFile:
    """One kind of cache of one KB: ``entries`` (``{relative path: [stamp, ...]}``) read from the shard files whose
    header matches.

    ``kind`` names the files (``"load"``, ``"findings"``: ``<kind>-<hash of root>-<shard>.json``);
    ``fingerprint`` is everything besides the file stamps the entries depend on. :meth:`get`
    returns an entry whose stamp matches, :meth:`put` records a fresh one, and
    :meth:`save` rewrites the shards whose entries changed. Never raises for a
    missing, corrupt or foreign shard (it is treated as empty) nor for a
    cache directory that cannot be written (the cache is then not kept).
    """

    def __init__(self, root: Path, kind: str, fingerprint: str) -> None:
        self.root = str(root)
        self.fingerprint = fingerprint
        folder = cache_dir()
        stem = f"{kind}-{hashlib.sha256(self.root.encode('utf-8', 'surrogateescape')).hexdigest()[:24]}"
        self.files = [folder / f"{stem}-{i:02d}.json" for i in range(SHARDS)] if folder is not None else []
        self.entries: dict[str, list] = {}
        self.fresh: dict[str, list] = {}
        self.used: set[str] = set()
        self.hits = 0
        self._stored: list[int] = [0] * SHARDS  # entries each shard file held (0 for one ignored)
        for i, file in enumerate(self.files):
            part = self._read(file)
            self._stored[i] = len(part)
            self.entries.update(part)

    def _read(self, file: Path) -> dict[str, list]:
        try:
            with open(file, "rb") as fh:
                header = orjson.loads(fh.readline(4096))
                # another KB's, another day's or older code's shard: its body is not even read
                if not (
                    isinstance(header, dict)
                    and header.get("format") == FORMAT
                    and header.get("root") == self.root
                    and header.get("fingerprint") == self.fingerprint
                ):
                    return {}
                body = fh.read()
            if not (header.get("length") == len(body) and header.get("crc32") == zlib.crc32(body)):
                return {}
            entries = orjson.loads(body)
        except (OSError, orjson.JSONDecodeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, rel: str, stamp: str | None) -> list | None:
        """The entry of ``rel`` when its stored stamp equals ``stamp`` (and is a list), else ``None``."""
        if stamp is None:
            return None
        entry = self.entries.get(rel)
        if type(entry) is list and entry and entry[0] == stamp:
            self.used.add(rel)
            self.hits += 1
            return entry
        return None

    def put(self, rel: str, entry: list) -> None:
        """Record ``entry`` (``[stamp, ...]``) for ``rel``, to be written by :meth:`save`."""
        self.fresh[rel] = entry

    def keep(self, rel: str) -> None:
        """Carry the stored entry of ``rel`` over to the next :meth:`save` although it was not looked up this run."""
        if rel in self.entries:
            self.used.add(rel)

    def save(self) -> None:
        """Rewrite each shard whose entries (those used or put this run; the rest are dropped) differ from its file's.
        Atomic per shard (temp file + rename), best effort."""
        if not self.files or (not self.fresh and len(self.used) == len(self.entries) == sum(self._stored)):
            return
        shards: list[dict[str, list]] = [{} for _ in range(SHARDS)]
        dirty = [False] * SHARDS
        for rel in self.used:
            if rel not in self.fresh:
                shards[shard_of(rel)][rel] = self.entries[rel]
        for rel, entry in self.fresh.items():
            i = shard_of(rel)
            shards[i][rel] = entry
            dirty[i] = True
        for i, part in enumerate(shards):
            if dirty[i] or len(part) != self._stored[i]:  # a fresh entry, or one dropped (or a shard ignored)
                self._write(self.files[i], part)

    def _write(self, file: Path, entries: dict[str, list]) -> None:
        try:
            body = orjson.dumps(entries)
            header = {"format": FORMAT, "root": self.root, "fingerprint": self.fingerprint, "length": len(body), "crc32": zlib.crc32(body)}
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = temp_path(file)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(orjson.dumps(header) + b"\n")
                    fh.write(body)
                os.replace(tmp, file)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except (OSError, TypeError, orjson.JSONEncodeError):
            return  # a cache that cannot be written is only a slower next run


class StampsOnly:
    """Given to the loader in place of a :class:`CacheFile`: it stamps each file a cache may keep
    (``Loaded.stamps``) as for a cache, but keeps nothing (the load cache's shards are neither read nor written)."""

    def put(self, rel: str, entry: list) -> None:
        """Keep nothing."""


def now_ns() -> int:
    """The wall clock in nanoseconds (what file stamps are compared with for the racy rule)."""
    return time.time_ns()
