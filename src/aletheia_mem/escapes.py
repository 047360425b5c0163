"""What the caller cannot see, as escapes: the one rule for text a person or a log reads.

A control, format, surrogate or line/paragraph separator character (Unicode categories Cc, Cf,
Cs, Zl, Zp) is shown as its escape (``\\x1b``, ``\\u202e``, ``\\u200b``, ``\\u2028``): a bidi
override would reorder the line it is read on, a zero-width space would hide that two names
differ. Every other character, ``é`` and ``中`` included, stays as typed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

UNPRINTED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# The characters that may need it: everything outside printable ASCII, checked by category.
_CANDIDATE = re.compile(r"[^\x20-\x7e]")


@lru_cache(maxsize=4096)
def escaped_char(char: str) -> str:
    """``char`` as its escape if it is one of ``UNPRINTED``, else itself."""
    if unicodedata.category(char) not in UNPRINTED:
        return char
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def escaped(text: str) -> str:
    """``text`` on one line with every ``UNPRINTED`` character as its escape: how a message
    repeats a name a client gave (an unknown tool, a project the token may not use)."""
    if text.isascii() and text.isprintable():  # most names: nothing to scan
        return text
    return _CANDIDATE.sub(lambda found: escaped_char(found.group()), text)
