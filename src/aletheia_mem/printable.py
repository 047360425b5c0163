"""A caller's name as it is stored: imports nothing, for the start path of ``server.handshake``."""

from __future__ import annotations

MAX_CALLER = 100  # characters of a caller's name


def printable_line(text: str, limit: int = MAX_CALLER) -> str | None:
    """``text`` as one line of at most ``limit`` characters: whitespace runs made one space,
    other characters that do not print (controls, bidi and zero-width marks) dropped; None
    when nothing is left. A control or format character in a stored name would make the
    store's export unreadable to import and sync, which refuse them."""
    printable = "".join(char for char in text if char.isprintable() or char.isspace())
    return " ".join(printable.split())[:limit] or None
