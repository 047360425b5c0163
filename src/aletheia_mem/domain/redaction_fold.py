"""The text as a reader or a normalising tool reads it: NFKC-folded, invisible characters gone.

A secret typed in look-alikes (full-width letters, digits, ``=`` or ``:``, mathematical
letters, ligatures), with a zero-width space or a soft hyphen inside, or cut by a
shell line continuation, is found in the folded copy; :meth:`Folded.original_span` gives the
characters it came from, which alone are redacted in the original. Each character is folded on
its own, so every folded character comes from exactly one original character and the folded copy
of a piece of text is that piece of the folded copy.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

# Format characters (Unicode category Cf: zero-width space and joiners, soft hyphen, bidi
# controls, word joiner, BOM, TAG characters) and the other default-ignorable ones (combining
# grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and variation selectors).
# Written out: computed from unicodedata, the class would cost every process 70 ms to start;
# tests/domain/test_redaction_lookalikes.py checks that it holds every Cf character.
_INVISIBLE_CLASS = (
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
_INVISIBLE = re.compile(_INVISIBLE_CLASS)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]++")
# A token cut by a shell line continuation ("GITHUB_TOKEN=ghp_R4nd\" + newline + "Xy9Zq8..."),
# between token characters on both sides.
_CONTINUATION = re.compile(
    r"(?<=[A-Za-z0-9+/=_\-]{8})\\\r?\n(?=[A-Za-z0-9+/_][A-Za-z0-9+/=_\-]{7})"
)
_SKIN_TONES = range(0x1F3FB, 0x1F400)
_MAX_ATTACHED = 32  # marks stacked on one character beyond this are text of their own


def _attached(char: str, before: str) -> bool:
    """Whether ``char`` belongs to the character ``before`` it: a combining mark, a variation
    selector, an emoji skin tone, the low half of a surrogate pair."""
    return (
        unicodedata.category(char)[0] == "M"
        or ord(char) in _SKIN_TONES
        or ("\ud800" <= before <= "\udbff" and "\udc00" <= char <= "\udfff")
    )


@functools.lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    return "" if _INVISIBLE.match(char) else unicodedata.normalize("NFKC", char)


@dataclass(frozen=True, slots=True)
class Folded:
    """A folded copy of ``source``: ``origin[i]`` is the index in ``source`` of the character
    that folded character ``i`` comes from."""

    source: str
    text: str
    origin: list[int]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The whole original characters that folded ``text[start:end]`` comes from, with the
        marks that belong to the last one (an empty span stays empty)."""
        if start >= len(self.origin):
            return len(self.source), len(self.source)
        first = self.origin[start]
        if end <= start:
            return first, first
        last = self.origin[end - 1] + 1
        limit = min(len(self.source), last + _MAX_ATTACHED)
        while last < limit and _attached(self.source[last], self.source[last - 1]):
            last += 1
        return first, last


def _needs_folding(text: str) -> bool:
    """Whether some character of ``text`` changes when folded (checked in C, not per character).
    Text in NFD form says yes though it folds unchanged: folding it finds that out."""
    return not unicodedata.is_normalized("NFKC", text) or _INVISIBLE.search(text) is not None


def _fold_characters(text: str) -> tuple[str, list[int]]:
    """``text`` with each non-ASCII character folded, and where each folded character is from."""
    pieces: list[str] = []
    origin: list[int] = []
    done = 0
    for run in _NON_ASCII_RUN.finditer(text):
        start, chunk = run.start(), run.group()
        if not _needs_folding(chunk):
            continue
        pieces.append(text[done:start])
        origin.extend(range(done, start))
        parts = list(map(_fold_char, chunk))
        folded = "".join(parts)
        pieces.append(folded)
        if len(folded) == len(chunk) and "" not in parts:
            origin.extend(range(start, run.end()))
        else:
            origin.extend([start + i for i, part in enumerate(parts) for _ in part])
        done = run.end()
    pieces.append(text[done:])
    origin.extend(range(done, len(text)))
    return "".join(pieces), origin


def _join_continuations(text: str, origin: list[int] | None) -> tuple[str, list[int] | None]:
    """``text`` without the line continuations inside tokens (``origin`` None: ``text`` is the
    original)."""
    cuts = list(_CONTINUATION.finditer(text))
    if not cuts:
        return text, origin
    if origin is None:
        origin = list(range(len(text)))
    pieces: list[str] = []
    kept: list[int] = []
    done = 0
    for cut in cuts:
        pieces.append(text[done : cut.start()])
        kept.extend(origin[done : cut.start()])
        done = cut.end()
    pieces.append(text[done:])
    kept.extend(origin[done:])
    return "".join(pieces), kept


def fold(text: str) -> Folded | None:
    """The folded copy of ``text``, or None when folding changes nothing (plain ASCII text is
    told at once, so it costs next to nothing here)."""
    folded, origin = text, None
    if not text.isascii() and _needs_folding(text):
        folded, origin = _fold_characters(text)
    if "\\" in folded and ("\\\n" in folded or "\\\r\n" in folded):
        folded, origin = _join_continuations(folded, origin)
    return None if origin is None or folded == text else Folded(text, folded, origin)


def folded_text(text: str) -> str:
    """``text`` as :func:`fold` reads it."""
    folded = fold(text)
    return text if folded is None else folded.text
