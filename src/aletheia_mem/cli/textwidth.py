"""How many terminal columns text takes: CJK and emoji take two, combining marks none."""

from __future__ import annotations

import unicodedata

ZERO_WIDTH_JOINER = "\u200d"
EMOJI_PRESENTATION = "\ufe0f"  # turns the symbol before it into a two-column emoji
SKIN_TONES = range(0x1F3FB, 0x1F400)


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or ord(char) in SKIN_TONES:
        return 0
    if unicodedata.category(char) in ("Mn", "Me", "Cf") or char == "\ufe0e":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _widths(text: str) -> list[int]:
    """Each character's columns; the parts of an emoji joined by ZWJ count as one emoji."""
    widths: list[int] = []
    joined = False
    for char in text:
        width = 0 if joined else _char_width(char)
        if char == EMOJI_PRESENTATION and widths and widths[-1] == 1:
            widths[-1] = 2
        joined = char == ZERO_WIDTH_JOINER
        widths.append(width)
    return widths


def display_width(text: str) -> int:
    return sum(_widths(text))


def pad(text: str, width: int) -> str:
    """``text`` with spaces after it up to ``width`` columns."""
    return text + " " * max(0, width - display_width(text))


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, ending in "…" when shortened."""
    widths = _widths(text)
    if sum(widths) <= width:
        return text
    room, used, end = width - 1, 0, 0
    for index, char_width in enumerate(widths):
        if used + char_width > room:
            break
        used += char_width
        end = index + 1
    while end < len(text) and widths[end] == 0:  # keep a mark with the character it belongs to
        end += 1
    return text[:end] + "…"
