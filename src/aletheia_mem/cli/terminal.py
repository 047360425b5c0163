"""Stored text made harmless to print: no escape sequence from a memory reaches the terminal.

Memories, facts, rules, lists and audit rows come from agents, synced peers and imports, so
they may hold ESC sequences (colours, cursor moves, OSC 8 links, OSC 52 clipboard writes, title
changes), carriage returns that overwrite a line, other C0 and C1 controls, and bidi overrides
that reorder what is shown. Each such character is printed as a visible escape (``\\x1b``,
``\\u202e``) instead. Multi-line text keeps its newlines and tabs; a one-line field (a table
cell, a title) shows them as ``\\n`` and ``\\t`` too, so it cannot fake another row.
"""

from __future__ import annotations

import re
import unicodedata

# Control, format (bidi overrides, zero-width), surrogate and line/paragraph separators.
_UNPRINTED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# What may need an escape: everything outside printable ASCII (checked by category), with
# newline and tab kept in multi-line text.
_MULTILINE_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")
_ONE_LINE_CANDIDATE = re.compile(r"[^\x20-\x7e]")
# In JSON (scripts, but often read on a terminal): C1 and format characters as \u escapes;
# json.dumps already escapes C0.
_JSON_CANDIDATE = re.compile("[\x7f-\x9f\u00ad\u0600-\U000e007f]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in _UNPRINTED:
        return char
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def terminal_safe(text: str) -> str:
    """Multi-line stored text with every control character but newline and tab made visible
    (Windows line ends become plain newlines)."""
    return _MULTILINE_CANDIDATE.sub(_visible, text.replace("\r\n", "\n"))


def one_line_safe(text: str) -> str:
    """A one-line field with every control character, newlines and tabs too, made visible."""
    return _ONE_LINE_CANDIDATE.sub(_visible, text)


MAX_ERROR_CHARS = 1000  # an error line quoting a huge argument shows its start and its end


def bounded(message: str) -> str:
    """An error line cut in the middle (with "…") when it quotes a huge argument: the start
    names the option and the value, the end what was wrong with it."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    head = MAX_ERROR_CHARS * 2 // 3
    return message[:head] + "…" + message[-(MAX_ERROR_CHARS - head - 1) :]


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in _UNPRINTED:
        return char
    return "".join(f"\\u{unit:04x}" for unit in _utf16_units(char))


def _utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def json_safe(dumped: str) -> str:
    """JSON text with C1 controls and format characters as ``\\uXXXX`` escapes (same value)."""
    return _JSON_CANDIDATE.sub(_json_escape, dumped)
