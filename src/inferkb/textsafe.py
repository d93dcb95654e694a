"""Record text is data: make it safe to print on a terminal, in rich output and in JSON.

A record (or a file name) may hold anything: terminal escape sequences
(``\\x1b[2J`` clears the screen, OSC 52 writes the clipboard), text that
looks like rich markup (``[/INST]``, ``[bold]``), or unpaired surrogates
(file names that are not UTF-8). Every text renderer passes such text
through :func:`clean` (plain output) or :func:`rich_text` (rich tables and
consoles); JSON output uses :func:`json_safe_bytes`.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls except TAB, DEL, and the C1 controls (0x80-0x9f: CSI 0x9b and OSC 0x9d act like ESC [ and ESC ]).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code > 0xFF:
        return f"\\u{code:04x}"
    return {"\n": "\\n", "\r": "\\r"}.get(ch, f"\\x{code:02x}")


def clean(text: Any, *, keep_newlines: bool = False) -> str:
    """``str(text)`` with terminal control characters and lone surrogates shown as visible escapes.

    ``"a\\x1b[2Jb"`` -> ``"a\\\\x1b[2Jb"``; a newline becomes ``\\n`` unless
    ``keep_newlines`` (multi-line output such as ``show``). TAB is kept.
    Printable text, including every non-ASCII letter, is unchanged.
    """
    s = text if isinstance(text, str) else str(text)
    if keep_newlines:
        return "\n".join(_CONTROL.sub(_escape, part) for part in s.split("\n"))
    return _CONTROL.sub(_escape, s)


def rich_text(text: Any, style: str | None = None):
    """A ``rich.text.Text`` of :func:`clean` ``(text)``: shown literally, never parsed as markup."""
    from rich.text import Text

    return Text(clean(text), style=style or "")


def markup_escape(text: Any) -> str:
    """:func:`clean` ``(text)`` with rich markup escaped, for interpolating record text into a markup string."""
    from rich.markup import escape

    return escape(clean(text))


def json_safe_bytes(text: str) -> bytes:
    """UTF-8 bytes of a JSON document; a lone surrogate becomes its ``\\udXXX`` JSON escape instead of an encoding error."""
    return text.encode("utf-8", "backslashreplace")
