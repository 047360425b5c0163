"""Numbers given as text (ids, limits, offsets), read from ASCII digits only.

Python's ``int`` and ``float`` also read other scripts' digits (a full-width "\uff11", an
Arabic-Indic "\u0663"), "_" between digits ("1_0" is 10) and blanks around them: an id sent so
would act on an item nobody named. Every place that reads a number from text reads it here: the
tools' and the JSON API's arguments, the web UI's addresses and forms, the CLI's ids. Imports
only ``re``, for the start path of the CLI.
"""

from __future__ import annotations

import re

# Read exactly, not through a float that rounds past 2**53.
_WHOLE = re.compile(r"[+-]?[0-9]{1,40}")
_DECIMAL = re.compile(
    r"[+-]?(?:[0-9]{1,40}(?:\.[0-9]{0,40})?|\.[0-9]{1,40})(?:[eE][+-]?[0-9]{1,4})?"
)
# The blanks a model's argument may carry around a number: ASCII ones only
BLANKS = " \t\r\n\f\v"


def ascii_whole(text: str, max_digits: int = 40) -> int | None:
    """``text`` as a number when it is 1 to ``max_digits`` ASCII digits and nothing else (no
    sign, blank, "_" or other script's digit), else None."""
    if 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def not_whole(text: str) -> str:
    """What a command says of a whole number not written in the digits 0-9 (the ``aletheia``
    CLI's counts, ``aletheia-sync``'s options)."""
    return f"{text!r} is not a whole number in the digits 0-9."


def ascii_number(text: str) -> int | float | None:
    """The number ``text`` writes with ASCII characters only: a whole number, read exactly
    (``"-12"``), or a decimal (``"1.5"``, ``"2e3"``); None for anything else (other scripts'
    digits, "_", blanks, ``"inf"``, ``"nan"``)."""
    if _WHOLE.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text):
        return float(text)
    return None
