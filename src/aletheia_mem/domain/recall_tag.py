"""The recall tag neutralised in stored text: whatever a reader would take for
``<aletheia-memory>`` or its closing tag, in any spelling, stops being one.

A reader takes the two words joined by any run of separators for the tag as well:
``</aletheia memory>``, ``</aletheia_memory>``, ``</aletheia.memory>``, ``</aletheiamemory>``."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# The characters a reader takes for "<": the ASCII one, its full-width and small forms, and the
# angle brackets and arrowheads drawn like it, the Runic kauna and the invisible TAG less-than.
_LESS_THAN = "<\ufe64\uff1c\u02c2\u1438\u2039\u2329\u276c\u276e\u27e8\u3008\u16b2\U000e003c"
# And those drawn like ">", which end a tag as "<" starts one.
_GREATER_THAN = ">\ufe65\uff1e\u02c3\u1433\u203a\u232a\u276d\u276f\u27e9\u3009"
# The tag's two words; any run of separators (none too) may join them.
_FIRST, _SECOND = "aletheia", "memory"
# In the regex below: a character ASCII text may skip (white space and controls), one that is
# not ASCII, whose reading is left to Python, and a run of ASCII separators (all but letters,
# digits, "<" and ">").
_ASCII_GAP = "[\\x00-\\x20\\x7f]*"
_NOT_ASCII = "[^\\x00-\\x7f]"
_ASCII_SEPARATORS = "[\\x00-\\x2f\\x3a\\x3b\\x3d\\x3f\\x40\\x5b-\\x60\\x7b-\\x7f]*"


def _ascii_start(word: str, then: str = "") -> str:
    """A regex for text whose ASCII part before its first non-ASCII character reads as ``word``
    (and ``then``) or a start of it."""
    pattern = then
    for letter in reversed(word):
        pattern = f"{_ASCII_GAP}(?:{_NOT_ASCII}|[{re.escape(letter + letter.upper())}]{pattern})"
    return pattern


# After the first word: separators, then the second word. The run of separators is followed by
# no separator, so a long run is tried in linear time.
_ASCII_TAIL = (
    f"{_ASCII_SEPARATORS}(?:{_NOT_ASCII}|[{_SECOND[0]}{_SECOND[0].upper()}]"
    f"{_ascii_start(_SECOND[1:])})"
)
# Where a tag may start: a "<" that what follows can complete, a "/" first or not. Most "<" in
# code and markup ("a < b", "List<T>", "</div>", "<a href>") are passed over here, in C.
_TAG_START = re.compile(
    f"[{_LESS_THAN}](?={_ASCII_GAP}(?:{_NOT_ASCII}|/{_ascii_start(_FIRST, _ASCII_TAIL)}|"
    f"[aA]{_ascii_start(_FIRST[1:], _ASCII_TAIL)}))"
)

# Default-ignorable code points (Unicode DerivedCoreProperties) that are not in a category the
# gap test skips already: Hangul fillers, unassigned ones in 2060-206F, FFF0-FFF8 and E0000-E0FFF
# (TAG characters, variation selectors); and the braille blank, drawn as a space.
_IGNORABLE = (
    (0x115F, 0x1160),
    (0x2060, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
# Letters drawn like those of the tag (and slashes and a minus), as casefolded: from Cyrillic,
# Greek, Armenian, Georgian, Hebrew, Arabic and Lisu, Latin small capitals and IPA letters. Only
# the tag's letters matter: Cyrillic es or ze cannot spell it.
_LOOKALIKES = {
    **dict.fromkeys("\u0430\u03b1\u0251\u1d00\u237a", "a"),
    **dict.fromkeys("\u04cf\u01c0\u029f\u0627\u05d5\u05df\ua4f2", "l"),
    **dict.fromkeys("\u0435\u03b5\u0454\u04bd\u1d07\u212e", "e"),
    **dict.fromkeys("\u0442\u03c4\u1d1b", "t"),
    **dict.fromkeys("\u04bb\u043d\u03b7\u029c\u0570", "h"),
    **dict.fromkeys("\u0456\u03b9\u0131\u0269", "i"),
    **dict.fromkeys("\u043c\u03bc\u1d0d", "m"),
    **dict.fromkeys("\u043e\u03bf\u03c3\u1d0f\u0585\u0e50\u1040", "o"),
    **dict.fromkeys("\u0433\u0280", "r"),
    **dict.fromkeys("\u0443\u04af\u03b3\u03c5\u028f\u10e7\u0263", "y"),
    **dict.fromkeys("\u2044\u2215\u29f8", "/"),
    **dict.fromkeys("\u2212\u02d7\u2043\u2796", "-"),
}


def _is_gap(char: str) -> bool:
    """Whether a reader skips ``char`` inside a tag: white space, invisible and combining."""
    if char.isspace() or unicodedata.category(char) in {"Cc", "Cf", "Mn", "Me"}:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _IGNORABLE)


@lru_cache(maxsize=4096)
def _reading(char: str) -> str:
    """What a reader takes ``char`` for: its compatibility form casefolded, marks dropped,
    dashes read as "-" and look-alikes as the letter; "" for a character not seen."""
    if _is_gap(char):
        return ""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", char).casefold())
    letters = [part for part in folded if unicodedata.category(part) not in {"Mn", "Me"}]
    if not letters:  # a spacing form of a mark, as the half-width voiced sound mark: seen
        return folded
    return "".join(
        "-" if unicodedata.category(part) == "Pd" else _LOOKALIKES.get(part, part)
        for part in letters
    )


def _is_separator(char: str) -> bool:
    """Whether ``char``, as read, may join the tag's two words: anything but a letter, a digit
    and the brackets that start or end a tag."""
    return not char.isalnum() and char not in _LESS_THAN and char not in _GREATER_THAN


def _reads_as_tag(text: str, start: int) -> bool:
    """Whether ``text`` from ``start`` reads as ``aletheia``, separators and ``memory``, a "/"
    before it or not."""
    wanted = _FIRST + _SECOND
    matched = 0  # letters of ``wanted`` read so far
    slash_first = True  # a "/" may still come first
    for index in range(start, len(text)):
        for read in _reading(text[index]):
            if slash_first and read == "/":
                slash_first = False
            elif matched == len(_FIRST) and _is_separator(read):
                continue
            elif read != wanted[matched]:
                return False
            else:
                matched += 1
                if matched == len(wanted):
                    return True
            slash_first = False
    return False


def _defuse(match: re.Match[str]) -> str:
    return "&lt;" if _reads_as_tag(match.string, match.end()) else match.group()


def neutralize(text: str) -> str:
    """Stored text can neither close nor open the recall block.

    Each "<" (or a look-alike) that a reader takes with what follows for the recall tag, open or
    close, becomes "&lt;". What follows is read a character at a time: case, compatibility forms
    (full-width, mathematical letters), accents, invisible characters and white space, other
    slashes, and Cyrillic or Greek look-alike letters all read as the tag, and any run of
    separators (none, "-", "_", ".", spaces, other punctuation) between its two words.
    """
    if "<" not in text and text.isascii():  # most text: skip the scan
        return text
    return _TAG_START.sub(_defuse, text)
