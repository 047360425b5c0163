"""Stored text as the owner's pages show it: no character an agent saved can reorder, hide or
fake what the owner reads.

Control and format characters (bidi embeddings, overrides, isolates and marks, zero-width
characters, C0 and C1 controls) and line separators show as their escapes, as the CLI prints
them: a stored ``src/\\u202eyp.evil.txt`` would otherwise read as ``src/txt.live.py``. Newlines
and tabs stay (HTML shows them as spaces outside ``<pre>``).
"""

from __future__ import annotations

from aletheia_mem.domain.controls import escape_unprinted, json_escape_unprinted


def visible(value: object) -> str:
    """Stored text with every control and format character as its escape (``\\u202e``,
    ``\\x1b``); a Windows line end is a newline."""
    return escape_unprinted(str(value).replace("\r\n", "\n"))


def json_visible(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with each control and format
    character as its ``\\uXXXX`` escape: the same value, read back by ``json.loads``."""
    return json_escape_unprinted(dumped)
