"""The Vega + Vega-Lite + vega-embed JavaScript bundle, taken from vl-convert-python at build time (no CDN, not committed)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

VEGA_LITE_VERSION = "6.4"


def vega_bundle() -> str:
    """The Vega + Vega-Lite + vega-embed JavaScript bundle shipped by vl-convert-python (one file, no network).

    Cached per vl-convert version in the user cache directory (``$XDG_CACHE_HOME``
    or ``~/.cache``), since bundling takes a couple of seconds.
    """
    import vl_convert as vlc

    cache_dir = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "inferkb"
    cached = cache_dir / f"vega-embed-{vlc.__version__}-vl{VEGA_LITE_VERSION}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle = vlc.javascript_bundle(vl_version=VEGA_LITE_VERSION)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".vega-", suffix=".js")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(bundle)
        os.replace(tmp, cached)
    except OSError:
        pass  # an unwritable cache only costs time
    return bundle
