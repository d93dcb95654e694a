"""Where a harness output file of the team corpus lives upstream: repository, path and commit from ``harness/SOURCES.md``.

The corpus keeps harness outputs as ``harness/<tool>/<file>`` with one
``SOURCES.md`` at ``harness/`` holding, per ``## <tool>/`` section, a table
whose columns start ``| file | repo | path @ commit | how |``. :func:`pin_for`
finds the row of an input file there and :func:`pinned_source` turns it into a
source record that cites the file at its commit (not the local copy), so a
benchmark imported from the corpus traces to the public bytes.

What SOURCES.md writes, and how it is read:

- the repository cell may carry a note, ``frgossen/sglang (fork)``: the
  repository is its first word;
- the path cell is ``\\`path\\` @ <commit>`` optionally followed by
  ``(YYYY-MM-DD)``, the committer date; a row may abbreviate a commit that an
  earlier row of the same repository gave in full (``88642505…``): it is
  expanded from that row, and a row whose path or commit stays abbreviated
  gives no pin (evidence must determine the value uniquely);
- SOURCES.md states no checksum of the harness files, so the row is matched
  by folder and file name only; the source record says so.

A file outside such a layout (a user's own ``result.jsonl``) has no pin, and
the importers fall back to a local-file source record
(:func:`inferkb.intake.common.local_source`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import common as C
from .base import IntakeOptions, read_input, today

if TYPE_CHECKING:
    from ..kb import KB

_SECTION = re.compile(r"^##\s+(\S+?)/(?:\s.*)?$")
_PATH_AT = re.compile(r"^`(?P<path>[^`]+)`\s*@\s*(?P<commit>[0-9a-fA-F]{7,40})(?P<cut>…|\.\.\.)?\s*(?:\((?P<date>\d{4}-\d{2}-\d{2})\))?")
_FULL = re.compile(r"^[0-9a-f]{40}$")
HOW = {"git": "copied with git show <commit>:<path>, blob hash matched", "rf": "rebuilt from the repository's stored text"}


def read_harness_sources(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """``{(tool folder, file name): {"repo", "path", "commit", "date", "how"}}`` from a harness ``SOURCES.md``.

    Rows whose path or commit is abbreviated and cannot be expanded from a full
    commit of the same repository are left out. Raises :class:`InputError` when
    the file cannot be read or holds no ``| file | repo | path @ commit |`` table.
    """
    text = read_input(path).decode("utf-8", "replace")
    rows: list[tuple[str, dict[str, str]]] = []
    section = None
    header: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            m = _SECTION.match(line)
            section, header = (m.group(1) if m else None), None
            continue
        if section is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set("".join(cells)) <= set("-: ") or header[:3] != ["file", "repo", "path @ commit"] or len(cells) < 4:
            continue
        at = _PATH_AT.match(cells[2])
        if not at or "…" in at.group("path") or not cells[1]:
            continue
        rows.append(
            (
                section,
                {
                    "file": cells[0],
                    "repo": cells[1].split()[0],
                    "path": at.group("path"),
                    "commit": at.group("commit").lower(),
                    "abbreviated": "yes" if at.group("cut") or len(at.group("commit")) < 40 else "",
                    "date": at.group("date") or "",
                    "how": cells[3],
                },
            )
        )
    if not rows:
        raise InputError("no '| file | repo | path @ commit | how |' table rows", path=str(path))
    full = {(r["repo"], r["commit"]) for _, r in rows if _FULL.match(r["commit"])}
    out: dict[tuple[str, str], dict[str, str]] = {}
    for folder, row in rows:
        if row.pop("abbreviated"):
            matches = {c for repo, c in full if repo == row["repo"] and c.startswith(row["commit"])}
            if len(matches) != 1:
                continue
            row["commit"] = matches.pop()
        if _FULL.match(row["commit"]):
            out[(folder, row.pop("file"))] = row
    return out


def pin_for(path: Path) -> dict[str, str] | None:
    """The SOURCES.md row of ``path`` when it sits at ``<harness>/<tool>/<file>`` beside ``<harness>/SOURCES.md``, else ``None``.

    A SOURCES.md that cannot be read or parsed gives no pin (the import goes on
    with a local-file source); the returned dict has ``repo``, ``path``,
    ``commit`` (40 hex), ``date`` (may be empty) and ``how``.
    """
    sources = path.parent.parent / "SOURCES.md"
    if not sources.is_file():
        return None
    try:
        table = read_harness_sources(sources)
    except InputError:
        return None
    return table.get((path.parent.name, path.name))


def pinned_source(kb: KB, pin: dict[str, str], path: Path, raw: bytes, harness: str) -> tuple[str, dict[str, Any] | None]:
    """``(source id, record or None)``: a source citing ``pin``'s file at its commit; ``None`` when the id already exists.

    The id is ``gh-<repo>-<file stem>-<first 8 hex of the commit>``; the URL is
    the GitHub blob at that commit. The notes name the corpus copy's SHA-256 and
    how SOURCES.md says it was made (``git`` byte-exact, ``rf`` rebuilt).
    """
    commit = pin["commit"]
    sid = C.make_id("gh", pin["repo"], Path(pin["path"]).stem, commit[:8])
    if sid in kb.ids_of_type("source"):
        return sid, None
    digest = hashlib.sha256(raw).hexdigest()
    how = HOW.get(pin["how"], pin["how"])
    rec = {
        "id": sid,
        "type": "source",
        "name": f"{pin['repo']} {pin['path']} @ {commit[:12]} ({harness} output)",
        "url": f"https://github.com/{pin['repo']}/blob/{commit}/{pin['path']}",
        "publisher": pin["repo"].split("/")[0],
        "kind": "benchmark",
        "published": pin["date"] or None,
        "accessed": today(),
        "archived_url": None,
        "status": "draft",
        "confidence": 0.6,
        "updated": today(),
        "sources": [],
        "notes": f"{harness} output file committed to {pin['repo']} at {commit}. Read from the team corpus copy "
        f"{path.parent.name}/{path.name} (harness/SOURCES.md: '{pin['how']}', {how}; sha256 {digest}); SOURCES.md lists no "
        "checksum, so the copy was matched to this row by folder and file name.",
    }
    return sid, rec


def resolve_pinned_sources(
    kb: KB, options: IntakeOptions, path: Path, raw: bytes, fmt: str, harness: str, out_records: list[dict[str, Any]]
) -> tuple[list[str], dict[str, str] | None]:
    """``(source ids, pin or None)`` for ``path``: ``--source`` first, else the pinned upstream file, else a local-file source.

    New source records are appended to ``out_records`` (once per id). Raises
    :class:`~inferkb.errors.UsageError` for a ``--source`` that names no source record.
    """
    pin = pin_for(path)
    if options.source or pin is None:
        return C.resolve_sources(kb, options, path, raw, fmt, out_records), pin
    sid, rec = pinned_source(kb, pin, path, raw, harness)
    if rec is not None and all(r.get("id") != sid for r in out_records):
        out_records.append(rec)
    return [sid], pin
