"""Whether characters after a token's prefix read as a name made of words
("alt_ToggleFullScreenModeKeyBindingX", "alt_getUserProfileSettingsFromCache"), not as the
random characters of a token.

A name is cut into words at its capitals ("HTTP2ServerConfig": HTTP, 2, Server, Config). Nearly
all of it is in words of three letters or more that a person could say (a vowel, never four
consonants in a row), and those use the letters English uses most ("e", "t", "a"...) more often
than the rare ones ("z", "q", "x", "j"). Random characters make short pieces ("Xq", "k7"), case
changes inside words ("sauw3A") and words without vowels or of rare letters. Of random bodies of
URL-safe base64 (a hub token's), one or two in a billion read as a name
(``bench/hub_token_names_bench.py`` estimates it); a name with many rare letters
("QuickJsonQueryZoomIndexBox"), one- and two-letter words ("ReadAFileOfSizeNInBytes") or
acronyms ("HTTP2ServerConfigForTheEURegion") is still read as random, and redacted.
"""

from __future__ import annotations

import functools
import math
import re

_SEPARATOR = re.compile(r"[_\-]")
# A part between separators that is made of words: a first word in small letters, then words
# from a capital on, runs of capitals (an acronym: the last capital starts the next word when
# small letters follow it) and numbers. Small letters after a number or inside an acronym
# ("k7x", "sauw3A") make no name.
_NAMED_PART = re.compile(
    r"[a-z]*+(?:[A-Z][a-z]++|[A-Z]++(?![a-z])|[A-Z]+?(?=[A-Z][a-z])|[0-9]++)*+"
)
_PIECE = re.compile(r"^[a-z]++|[A-Z][a-z]++|[A-Z]++(?![a-z])|[A-Z]+?(?=[A-Z][a-z])|[0-9]++")
# A word a person could say: three letters or more, a capital at most first, a vowel, and never
# four consonants in a row ("Screen" is one; "Xmxjyy" is not)
_WORD = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouy]")
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xz]{4}")
_MIN_WORD = 3
# How much of a name is in words, at least
_MIN_IN_WORDS = 0.85
# How much likelier, on average per letter of the name, its words' letters are in English text
# than at random (natural log): "ToggleFullScreenModeKeyBindingX" 0.18, random bodies -0.6
_MIN_ENGLISH = 0.15
# How often each letter comes in English text, per thousand letters
ENGLISH_LETTERS = {
    "e": 127, "t": 91, "a": 82, "o": 75, "i": 70, "n": 67, "s": 63, "h": 61, "r": 60, "d": 43,
    "l": 40, "c": 28, "u": 28, "m": 24, "w": 24, "f": 22, "g": 20, "y": 20, "p": 19, "b": 15,
    "v": 10, "k": 8, "j": 1.5, "x": 1.5, "q": 1, "z": 0.7,
}  # fmt: skip


@functools.cache
def _likelier() -> dict[str, float]:
    """How much likelier each letter is in English text than at random (natural log)."""
    total = sum(ENGLISH_LETTERS.values())
    return {letter: math.log(26 * share / total) for letter, share in ENGLISH_LETTERS.items()}


def _said(piece: str) -> bool:
    """Whether ``piece`` is a word a person could say."""
    low = piece.lower()
    return (
        len(piece) >= _MIN_WORD
        and _WORD.fullmatch(piece) is not None
        and _VOWEL.search(low) is not None
        and _CONSONANTS.search(low) is None
    )


def reads_as_words(body: str) -> bool:
    """Whether ``body`` (letters, digits, "-" and "_") reads as a name made of words."""
    parts = [part for part in _SEPARATOR.split(body) if part]
    if not parts or not all(_NAMED_PART.fullmatch(part) for part in parts):
        return False
    pieces = [piece for part in parts for piece in _PIECE.findall(part)]
    words = [piece.lower() for piece in pieces if _said(piece)]
    length = sum(map(len, pieces))
    if sum(map(len, words)) < _MIN_IN_WORDS * length:
        return False
    likelier = _likelier()
    english = sum(likelier[letter] for word in words for letter in word)
    return english >= _MIN_ENGLISH * sum(piece.isalpha() for piece in "".join(pieces))
