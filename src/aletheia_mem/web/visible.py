"""Stored text as the owner's pages show it: no character an agent saved can reorder, hide or
fake what the owner reads.

Control and format characters (bidi embeddings, overrides, isolates and marks, zero-width
characters, C0 and C1 controls) and line separators show as their escapes, as the CLI prints
them: a stored ``src/\\u202eyp.evil.txt`` would otherwise read as ``src/txt.live.py``. Newlines
and tabs stay (HTML shows them as spaces outside ``<pre>``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_UNPRINTED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")


def _unprinted(char: str) -> bool:
    return unicodedata.category(char) in _UNPRINTED


@lru_cache(maxsize=4096)
def _escape_of(char: str) -> str:
    if not _unprinted(char):
        return char
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def visible(value: object) -> str:
    """Stored text with every control and format character as its escape (``\\u202e``,
    ``\\x1b``); a Windows line end is a newline."""
    text = str(value).replace("\r\n", "\n")
    return _CANDIDATE.sub(lambda found: _escape_of(found.group()), text)


def _json_escape(found: re.Match[str]) -> str:
    char = found.group()
    if not _unprinted(char):
        return char
    data = char.encode("utf-16-be", "surrogatepass")
    units = (int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    return "".join(f"\\u{unit:04x}" for unit in units)


def json_visible(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with each control and format
    character as its ``\\uXXXX`` escape: the same value, read back by ``json.loads``."""
    return _CANDIDATE.sub(_json_escape, dumped)
