"""``inferkb new`` and ``inferkb init``: a record skeleton that will validate once filled in, and a new KB.

The skeleton lists every property of the type's schema (so the author sees
what can be recorded), with ``null``/empty values, and fills only what is
known: id, type, name, status ``draft``, today's ``updated`` and the given
source. It is written atomically and never over an existing file.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RecordExists, UsageError
from .schemas import schema_doc
from .store import bundled_root, check_id

if TYPE_CHECKING:
    from .kb import KB


def slugify(name: str) -> str:
    """Kebab-case slug of a display name: ``"NVIDIA H100 SXM"`` -> ``"nvidia-h100-sxm"``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")


def _placeholder(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return None


def skeleton(kb: KB, type_name: str, name: str, *, record_id: str | None = None, source: str | None = None) -> dict[str, Any]:
    """Build the skeleton dict. Raises UsageError for an unknown type, an unsafe id or an unknown source id."""
    kb.type_spec(type_name)
    if not name.strip():
        raise UsageError("--name is empty")
    if record_id is None:
        record_id = slugify(name)
        if not record_id:
            raise UsageError(f"cannot make an id from --name {name!r} (no ASCII letters or digits); pass --id")
    rid = check_id(record_id)
    if source is not None and source not in kb.ids_of_type("source"):
        raise UsageError(f"--source {source!r} is not a source record in this KB (create it first: inferkb new source --name ...)")
    schema = schema_doc(kb, type_name)
    props: dict[str, Any] = (schema.get("properties") or {}) if schema else {}
    known = {
        "id": rid,
        "type": type_name,
        "name": name.strip(),
        "status": "draft",
        "updated": _dt.date.today().isoformat(),
        "sources": [source] if source else [],
    }
    if type_name == "source":
        known["accessed"] = known["updated"]
    record: dict[str, Any] = {k: known[k] for k in ("id", "type", "name")}
    for key, prop in props.items():
        if key in record or key in ("status", "confidence", "updated", "sources", "notes", "provenance"):
            continue
        record[key] = known.get(key, _placeholder(prop if isinstance(prop, dict) else {}))
    for key in ("status", "confidence", "updated", "sources", "notes"):
        if not props or key in props:
            record[key] = known.get(key)
    return record


def write_new(kb: KB, type_name: str, name: str, *, record_id: str | None = None, source: str | None = None) -> Path:
    """Write the skeleton to ``data/<dir>/<id>.json`` atomically; returns the path.

    Raises RecordExists if the file exists (it is never overwritten), UsageError as :func:`skeleton`.
    """
    kb.ensure_writable()
    record = skeleton(kb, type_name, name, record_id=record_id, source=source)
    path = kb.record_path(type_name, record["id"])
    refusal = f"{path} already exists; refusing to overwrite it"
    if path.exists():
        raise RecordExists(refusal)
    # A skeleton is not valid yet (nulls to fill in), so the store writes it without validating.
    try:
        kb.write_records([record], validate=False)
    except RecordExists:  # another writer created it after the check above; the store's hint (--update) is not ours
        raise RecordExists(refusal) from None
    return path


def init_kb(dest: Path, *, with_data: bool = False) -> Path:
    """Create a new KB at ``dest`` from the bundled one: kb.toml, schemas/, metric registry, empty type dirs.

    ``with_data`` also copies every bundled record. Refuses (UsageError) when
    ``dest`` exists and is not an empty directory; builds in a temp directory
    beside ``dest`` and renames it into place, so a failure leaves nothing.
    """
    import shutil
    import tempfile

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty directory")
    src = bundled_root()
    parent = dest.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    try:
        shutil.copy2(src / "kb.toml", tmp / "kb.toml")
        shutil.copytree(src / "schemas", tmp / "schemas")
        for extra in src.glob("*.json"):
            shutil.copy2(extra, tmp / extra.name)
        if with_data:
            shutil.copytree(src / "data", tmp / "data")
        else:
            for sub in (src / "data").iterdir():
                if sub.is_dir():
                    (tmp / "data" / sub.name).mkdir(parents=True)
        if dest.exists():
            dest.rmdir()
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
