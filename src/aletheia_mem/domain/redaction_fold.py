"""The text as a reader or a normalising tool reads it: NFKC-folded, invisible characters gone,
Cyrillic and Greek letters that look like Latin ones read as those.

A secret typed in look-alikes (full-width letters, digits, ``=`` or ``:``, mathematical
letters, ligatures, a Cyrillic er in "ghp_" or A in "AKIA"), with a zero-width space or a
soft hyphen inside, a combining mark or a no-break space inside a vendor token, or cut by a
shell line continuation, is found in the folded copy; :meth:`Folded.original_span` gives the
characters it came from, which alone are redacted in the original. Each character is folded on
its own, so every folded character comes from exactly one original character and, look-alikes
and glue inside tokens aside, the folded copy of a piece of text is that piece of the folded
copy. Cyrillic and Greek look-alikes are read as Latin letters, one for one, in each run of
non-blank characters where one of them stands for a Latin letter (:data:`_AS_LATIN`); only the
folded copy reads them so: Russian, Ukrainian or Greek text around a secret is kept as it is,
and a text with no secret is not changed at all.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from aletheia_mem.domain.redaction_trail import merged_spans
from aletheia_mem.domain.redaction_vendors import vendor_token_spans

# Format characters (Unicode category Cf: zero-width space and joiners, soft hyphen, bidi
# controls, word joiner, BOM, TAG characters) and the other default-ignorable ones (combining
# grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and variation selectors).
# Written out: computed from unicodedata, the class would cost every process 70 ms to start;
# tests/domain/test_redaction_lookalikes.py checks that it holds every Cf character.
_INVISIBLE_BMP = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb"
)
_INVISIBLE_ASTRAL = (
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_BMP}{_INVISIBLE_ASTRAL}]")
# Searched apart: a class of BMP characters is a bitmap, several times faster to search.
_INVISIBLE_IN_BMP = re.compile(f"[{_INVISIBLE_BMP}]")
_INVISIBLE_OUTSIDE_BMP = re.compile(f"[{_INVISIBLE_ASTRAL}]")
_OUTSIDE_BMP = re.compile("[\U00010000-\U0010ffff]")
# A token cut by a shell line continuation ("GITHUB_TOKEN=ghp_R4nd\" + newline + "Xy9Zq8..."),
# between token characters on both sides.
_CONTINUATION = re.compile(
    r"(?<=[A-Za-z0-9+/=_\-]{8})\\\r?\n(?=[A-Za-z0-9+/_][A-Za-z0-9+/=_\-]{7})"
)
# Cyrillic and Greek letters that look like a Latin one, by the Latin letter: those whose
# prototype in Unicode's confusables.txt (UTS #39) is that one ASCII letter, and Greek kappa and
# Cyrillic Qa, drawn as "k" and "Q" in the usual fonts. confusables.txt folds capital I to "l";
# the letters that look like it (Greek Iota, Cyrillic I and Palochka) are read as "I", in the
# case a token's shape asks for ("AK" + Cyrillic I + "A" is "AKIA"), the small Palochka as "l".
# Shared by the redaction and the hub's token names (``lookalike_key``).
_LOOKALIKES = {
    "A": "\u0391\u0410",  # Greek Alpha, Cyrillic A
    "B": "\u0392\u0412",  # Beta, Ve
    "C": "\u03f9\u0421",  # lunate Sigma, Es
    "E": "\u0395\u0415",  # Epsilon, Ie
    "F": "\u03dc",  # Digamma
    "G": "\u050c",  # Komi Sje
    "H": "\u0397\u041d",  # Eta, En
    "I": "\u0399\u0406\u04c0",  # Iota, Byelorussian-Ukrainian I, Palochka
    "J": "\u037f\u0408",  # Yot, Je
    "K": "\u039a\u041a",  # Kappa, Ka
    "M": "\u039c\u03fa\u041c",  # Mu, San, Em
    "N": "\u039d",  # Nu
    "O": "\u039f\u041e",  # Omicron, O
    "P": "\u03a1\u0420",  # Rho, Er
    "Q": "\u051a",  # Qa
    "S": "\u0405",  # Dze
    "T": "\u03a4\u0422",  # Tau, Te
    "V": "\u0474",  # Izhitsa
    "W": "\u051c",  # We
    "X": "\u03a7\u0425",  # Chi, Ha
    "Y": "\u03a5\u03d2\u0423\u04ae",  # Upsilon, Upsilon with hook, U, straight U
    "Z": "\u0396",  # Zeta
    "a": "\u03b1\u0430",  # alpha, a
    "b": "\u042c",  # capital soft sign
    "c": "\u03f2\u0441",  # lunate sigma, es
    "d": "\u0501",  # Komi de
    "e": "\u0435\u04bd",  # ie, Abkhasian che
    "h": "\u04bb",  # shha
    "i": "\u03b9\u0456\ua647",  # iota, Byelorussian-Ukrainian i, Cyrillic iota
    "j": "\u03f3\u0458",  # yot, je
    "k": "\u03ba",  # kappa
    "l": "\u04cf",  # palochka
    "o": "\u03bf\u03c3\u043e",  # omicron, sigma, o
    "p": "\u03c1\u03f1\u0440",  # rho, rho symbol, er
    "q": "\u051b",  # qa
    "r": "\u0433",  # ghe
    "s": "\u0455",  # dze
    "u": "\u03c5",  # upsilon
    "v": "\u03bd\u0475",  # nu, izhitsa
    "w": "\u0461\u051d",  # omega, we
    "x": "\u0445",  # ha
    "y": "\u03b3\u0443\u04af",  # gamma, u, straight u
}
LATIN_LOOKALIKES = {
    ord(lookalike): latin for latin, lookalikes in _LOOKALIKES.items() for lookalike in lookalikes
}
_ANY_LOOKALIKE = "[" + "".join(_LOOKALIKES.values()) + "]"
_LOOKALIKE = re.compile(_ANY_LOOKALIKE)
# No-break spaces: NFKC makes them spaces, but inside a token they join it (see _join_tokens).
_NO_BREAK = "\u00a0\u2007\u202f"
# Where look-alikes stand for Latin letters: beside a Latin letter, a digit or "_" (a word that
# mixes scripts: "gh" + Cyrillic er + "_...", "p" + Cyrillic a + "ssword"), or two or more alone
# as a name before "=" or ":" (Cyrillic "KEY="), a quote or ">" ({"KEY": ...}, <KEY>...</KEY>).
# Russian, Ukrainian or Greek text without such a place is read as it is: no prefix or name of a
# secret is in it, and read twice, folded and as it is, it would cost 2.5 to 3.3 times as much
# (this search: a quarter more). Searched from the look-alike, which a bitmap finds fast.
_LATIN_PLACE = (
    f"{_ANY_LOOKALIKE}(?:(?<=[A-Za-z0-9_].)|[A-Za-z0-9_]"
    f"|(?<!\\w.){_ANY_LOOKALIKE}++(?:[ \\t{_NO_BREAK}]*+[=:]|[\"'>]))"
)
_AS_LATIN = re.compile(_LATIN_PLACE)
# Only the run of non-blank characters around such a place is read as Latin: Greek or Cyrillic
# words elsewhere in the text stay what they are ("TOKEN" in Greek capitals names no secret).
_LATIN_RUN = re.compile(f"(?<!\\S)\\S*?{_LATIN_PLACE}\\S*+")
# Combining marks of the generic blocks (diacritics, their supplements and extensions, marks for
# symbols, half marks) and no-break spaces, inside a token: "ghp_R4nd" + acute + "Xy9...", "A" +
# acute + "KIA...". The folded copy drops them where that makes a vendor token (_join_tokens).
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_GLUE = _MARKS + _NO_BREAK
_INVISIBLE_OR_MARK_IN_BMP = re.compile(f"[{_INVISIBLE_BMP}{_MARKS}]")
_WORDISH = "A-Za-z0-9_\\-"
# A piece of glue in a run of 20 or more token characters and glue (a token's least length): 10
# or more of them on one side of it. A mark in a word ("re" + acute + "sume") or a no-break space
# in prose ("5" + NBSP + "km") has fewer. Searched from the glue: marks by a bitmap, each no-break
# space as a literal, which is searched twice as fast.
_BESIDE_A_RUN = f"(?:(?<=[{_WORDISH}{_GLUE}]{{10}}.)|(?=[{_WORDISH}{_GLUE}]{{10}}))"
_MARK_IN_RUN = re.compile(f"[{_MARKS}]{_BESIDE_A_RUN}")
_NO_BREAK_IN_RUN = tuple((char, re.compile(char + _BESIDE_A_RUN)) for char in _NO_BREAK)
_MARK = re.compile(f"[{_MARKS}]")
# Such a run, glue inside it.
_GLUED_RUN = re.compile(
    f"[{_WORDISH}](?<![{_WORDISH}{_GLUE}].)(?=[{_WORDISH}{_GLUE}]{{19}})"
    f"[{_WORDISH}]*+(?:[{_GLUE}]++[{_WORDISH}]++)++"
)
_GLUE_CHAR = re.compile(f"[{_GLUE}]")


@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    if _INVISIBLE.match(char):
        return ""
    # a look-alike is left to be read as Latin: NFKC makes the lunate sigma a final sigma
    return char if ord(char) in LATIN_LOOKALIKES else unicodedata.normalize("NFKC", char)


@functools.lru_cache(maxsize=64)
def _resized(characters: str) -> re.Pattern[str]:
    """Runs of ``characters``: the ones that fold to none or several."""
    return re.compile("[" + "".join(map(re.escape, characters)) + "]++")


@dataclass(frozen=True, slots=True)
class Folded:
    """A folded copy of ``source``: ``origin[i]`` is the index in ``source`` of the character
    that folded character ``i`` comes from."""

    source: str
    text: str
    origin: list[int] | None  # None: each folded character is from the one at its index

    def _at(self, index: int) -> int:
        return index if self.origin is None else self.origin[index]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The whole original characters that folded ``text[start:end]`` comes from (an empty
        span stays empty). It ends at the last of them: the marks, variation selectors and
        joiners after it are kept, so an emoji sequence that follows a secret stays whole."""
        if start >= len(self.text):
            return len(self.source), len(self.source)
        first = self._at(start)
        if end <= start:
            return first, first
        return first, self._at(end - 1) + 1


def _scan(text: str) -> tuple[bool, bool]:
    """Whether some character of ``text`` may change when folded, and whether it may hold a
    combining mark (checked in C, at once). Text in NFD form says yes though it folds unchanged:
    folding it finds that out."""
    if not unicodedata.is_normalized("NFKC", text):
        return True, True  # folding tells (_fold_characters)
    hit = _INVISIBLE_OR_MARK_IN_BMP.search(text)
    marks = hit is not None and _INVISIBLE_IN_BMP.match(hit.group()) is None
    if marks:  # NFKC keeps a mark after a letter that has no composed form ("d" + acute)
        hit = _INVISIBLE_IN_BMP.search(text, hit.end())  # type: ignore[union-attr]
    needs = hit is not None or (
        _OUTSIDE_BMP.search(text) is not None and _INVISIBLE_OUTSIDE_BMP.search(text) is not None
    )
    return needs, marks


def _fold_characters(text: str) -> tuple[str, list[int] | None, bool]:
    """``text`` folded, where each folded character is from (None: from the character at the
    same index, as when each of them folds to one), and whether it holds a combining mark. Each
    distinct character is looked up once, then ``str.translate`` folds them all."""
    table = {ord(char): _fold_char(char) for char in set(text)}
    table.update((ord(char), char) for char in _NO_BREAK if ord(char) in table)  # see fold
    marks = _MARK.search("".join(table.values())) is not None
    folded = text.translate(table)
    resized = "".join(sorted(chr(code) for code, part in table.items() if len(part) != 1))
    if not resized:
        return folded, None, marks
    origin: list[int] = []
    done = 0
    for run in _resized(resized).finditer(text):
        start = run.start()
        origin.extend(range(done, start))
        origin.extend([start + i for i, char in enumerate(run.group()) for _ in table[ord(char)]])
        done = run.end()
    origin.extend(range(done, len(text)))
    return folded, origin, marks


def _join_continuations(text: str, origin: list[int] | None) -> tuple[str, list[int] | None]:
    """``text`` without the line continuations inside tokens."""
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


def _as_latin(text: str) -> str:
    """``text`` with the look-alikes of each run of non-blank characters where one stands for
    a Latin letter (:data:`_AS_LATIN`) read as Latin letters, one for one."""
    return _LATIN_RUN.sub(_read_as_latin, text)


def _read_as_latin(run: re.Match[str]) -> str:
    return run.group().translate(LATIN_LOOKALIKES)


def _join_tokens(text: str, origin: list[int] | None) -> tuple[str, list[int] | None]:
    """``text`` without the marks and no-break spaces inside a vendor token (``ghp_R4nd`` +
    acute + ``Xy9...``): only where dropping them makes one, so that a no-break space between
    a name and its value ("api_key" + NBSP + "Xq7...") still parts them."""
    dropped: list[int] = []
    for run in _GLUED_RUN.finditer(text):
        tokens = merged_spans(vendor_token_spans(_GLUE_CHAR.sub("", run.group())))
        at_token = 0
        # the n-th piece of glue stood before the character at its index - n of the joined run
        for removed, part in enumerate(_GLUE_CHAR.finditer(run.group())):
            at = part.start() - removed
            while at_token < len(tokens) and tokens[at_token][1] <= at:
                at_token += 1
            if at_token < len(tokens) and tokens[at_token][0] < at:
                dropped.append(run.start() + part.start())
    if not dropped:
        return text, origin
    if origin is None:
        origin = list(range(len(text)))
    drop = set(dropped)
    kept = [i for i in range(len(text)) if i not in drop]
    return "".join(text[i] for i in kept), [origin[i] for i in kept]


def fold(text: str, *, name: bool = False) -> Folded | None:
    """The folded copy of ``text``, or None when folding changes nothing (plain ASCII text is
    told at once, so it costs next to nothing here). Cyrillic and Greek look-alikes are read as
    Latin letters where they stand for them (beside Latin letters or digits, as a name before
    "=", ":", a quote or ">"), and everywhere in a ``name`` (a fact's predicate, a form field).
    Marks and no-break spaces inside a vendor token are dropped."""
    folded, origin = text, None
    if not text.isascii():
        needs_folding, marks = _scan(text)
        if needs_folding:
            folded, origin, marks = _fold_characters(text)
        if not folded.isascii():
            if name:
                if _LOOKALIKE.search(folded):
                    folded = folded.translate(LATIN_LOOKALIKES)
            elif _AS_LATIN.search(folded):
                folded = _as_latin(folded)
            if (marks and _MARK_IN_RUN.search(folded)) or any(
                char in folded and glue.search(folded) for char, glue in _NO_BREAK_IN_RUN
            ):
                folded, origin = _join_tokens(folded, origin)
            for no_break in _NO_BREAK:  # one for one: NFKC's space
                if no_break in folded:
                    folded = folded.replace(no_break, " ")
    if "\\" in folded and ("\\\n" in folded or "\\\r\n" in folded):
        folded, origin = _join_continuations(folded, origin)
    return Folded(text, folded, origin) if folded != text else None


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds a character that prints as nothing (format characters, Hangul
    fillers, variation selectors...): some of them Python counts printable."""
    return _INVISIBLE.search(text) is not None


def folded_text(text: str, *, name: bool = False) -> str:
    """``text`` as :func:`fold` reads it."""
    folded = fold(text, name=name)
    return text if folded is None else folded.text
