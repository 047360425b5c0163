"""Whether a text says nothing: imports only ``unicodedata``, for the start path of the tools'
argument checks.

A value made only of whitespace and Unicode format characters (category Cf: a zero-width space
U+200B, a zero-width joiner U+200D, a byte-order mark U+FEFF, a word joiner U+2060, a bidi
mark) shows nothing: it is as empty as one of spaces, wherever a blank value is refused or
stands for "not given" (a memory's text and title, a rule's words, a list's name, a project).
"""

from __future__ import annotations

import unicodedata


def is_blank_as_before(text: str) -> bool:
    """Whether ``text`` is empty or only whitespace: blank as releases before ``is_blank`` saw
    it. For a record another store sends or an export holds, which such a release may have
    made with a zero-width value: refused, it would stop that store's every sync (its release
    cannot leave it out) and the import of its export."""
    return not text.strip()


def is_blank(text: str) -> bool:
    """Whether ``text`` is empty, or only whitespace and format (Cf) characters. Told at the
    first character that is neither: for most text, the first."""
    for char in text:  # noqa: SIM110 (a generator costs 3x the one test most text needs)
        if not char.isspace() and unicodedata.category(char) != "Cf":
            return False
    return True
