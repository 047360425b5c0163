"""Stored text made harmless to print: no escape sequence from a memory reaches the terminal.

Memories, facts, rules, lists and audit rows come from agents, synced peers and imports, so
they may hold ESC sequences (colours, cursor moves, OSC 8 links, OSC 52 clipboard writes, title
changes), carriage returns that overwrite a line, other C0 and C1 controls, and bidi overrides
that reorder what is shown. Each such character is printed as a visible escape (``\\x1b``,
``\\u202e``) instead. Multi-line text keeps its newlines and tabs; a one-line field (a table
cell, a title) shows them as ``\\n`` and ``\\t`` too, so it cannot fake another row.
"""

from __future__ import annotations

from aletheia_mem.domain.controls import escape_unprinted, json_escape_unprinted


def terminal_safe(text: str) -> str:
    """Multi-line stored text with every control character but newline and tab made visible
    (Windows line ends become plain newlines)."""
    return escape_unprinted(text.replace("\r\n", "\n"))


def one_line_safe(text: str) -> str:
    """A one-line field with every control character, newlines and tabs too, made visible."""
    return escape_unprinted(text, multiline=False)


MAX_ERROR_CHARS = 1000  # an error line quoting a huge argument shows its start and its end


def bounded(message: str) -> str:
    """An error line cut in the middle (with "…") when it quotes a huge argument: the start
    names the option and the value, the end what was wrong with it."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    head = MAX_ERROR_CHARS * 2 // 3
    return message[:head] + "…" + message[-(MAX_ERROR_CHARS - head - 1) :]


def json_safe(dumped: str) -> str:
    """JSON text with C1 controls and format characters as ``\\uXXXX`` escapes (same value)."""
    return json_escape_unprinted(dumped)
