"""What gets indexed: the text itself, plus code identifiers split into words and joined whole.

SQLite's ``unicode61`` tokenizer already splits on ``_``, ``-``, ``.`` and ``/`` and keeps a
camelCase word whole. So for ``max_retries`` the index holds ``max`` and ``retries`` and this module
adds ``maxretries``; for ``parseHTTPRequest`` the index holds the whole word and this module adds
``parse``, ``HTTP`` and ``Request``. Every spelling of one identifier then shares tokens with every
other (``maxRetries``, ``max-retries``, ``MAX_RETRIES``), and the whole form, being rare, ranks the
exact identifier first.

Parts too short or too common to mean anything on their own (one or two characters, bare digit
runs, the short letter runs of a word that mixes letters and digits, and every part of a made-up
id such as a hash or ``qx7k2m9``: ``is_id_like``) are neither indexed nor searched for: they
would let any hash or ticket id match memories that merely share a fragment with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from aletheia_mem.search import cjk

# A code-like word: letters and digits joined by the separators identifiers and paths use.
COMPOUND = re.compile(r"[^\W_]+(?:[_\-.:/\\]+[^\W_]+)*", re.UNICODE)
# The same on ASCII text, where ``[^\W_]`` is exactly ``[A-Za-z0-9]``: four times faster.
# Possessive: no part of a word is ever given back (nothing after it could use it), the same
# matches for less backtracking bookkeeping in the regex engine.
ASCII_COMPOUND = re.compile(r"[A-Za-z0-9]++(?:[_\-.:/\\]++[A-Za-z0-9]++)*+")
# ``ASCII_COMPOUND`` passing over the plain words (``is_plain``: ``Found``, ``pnpm``; a word
# followed by a separator is taken), which have no extras: most of a text's words, skipped in
# the regex engine rather than one by one in Python.
_ASCII_EXTRA_COMPOUND = re.compile(
    r"(?<![A-Za-z0-9])(?![A-Za-z][a-z]*+(?![A-Za-z0-9_\-.:/\\]))" + ASCII_COMPOUND.pattern
)
TOKEN_CACHE_SIZE = 16_384  # identifiers recur across memories; each entry is a few words
# Only tokens this short are cached: identifiers are, and a client's 20,000-character token
# and its extras would otherwise fill each of the cache's entries (40 KB each, 650 MB in all).
CACHED_TOKEN_CHARS = 64
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_PATH_SEPARATOR = re.compile(r"[.:/\\]+")
_WORD_SEPARATOR = re.compile(r"[_\-]+")
MIN_JOINED = 4
MIN_PART = 3  # a shorter part (``k2`` -> ``k``) means nothing on its own
MIN_MIXED_PART = 4  # a letter run in a word with digits (``3add9f`` -> ``add``) needs more


_DIGIT_RUN = re.compile(r"\d+")
_HEX_WORD = re.compile(r"[0-9a-f]{7,}|[0-9A-F]{7,}")
_HEX_LETTERS = frozenset("abcdefABCDEF")
_LETTERS = re.compile(r"[^\W\d_]+")


def is_fragment(part: str, word: str) -> bool:
    """Whether ``part``, split from ``word``, is too weak to match a memory on its own: every
    part of a made-up id (``is_id_like``) is."""
    if len(part) < MIN_PART or part.isdigit():
        return True
    if not any(char.isdigit() for char in word):
        return False
    return len(part) < MIN_MIXED_PART or is_id_like(word)


def strong_parts(word: str) -> list[str]:
    """The camelCase parts of ``word`` indexed and searched on their own (none a fragment,
    ``is_fragment``), for the cost of one pass over ``word``: ``Int32ToInt64Converter`` ->
    ``Converter``; ``qx7k2m9`` and ``aB3xK9mQ`` -> none."""
    parts = split_identifier(word)
    if not parts:
        return []
    if not any(part[0].isdigit() for part in parts):
        return [part for part in parts if len(part) >= MIN_PART]
    if _is_id_like(word, parts):
        return []
    found = [
        part
        for part in parts
        if not part[0].isdigit() and (len(part) >= MIN_MIXED_PART or _is_a_word(part))
    ]
    return found + [name for name in _numbered_names(parts) if len(name) < len(word)]


MAX_CAPITALS = 4  # a capital run named with its number: H264, S3, HTTP2 (not a code's letters)


def _numbered_names(parts: list[str]) -> list[str]:
    """The names said with their number among a name's parts: a word or a short capital run
    and the digits right after it (``Base64`` of ``Base64Encoder``, ``Int64``, ``H264``,
    ``S3``, ``sha256`` of ``sha256Sum``), with a capital run before that word (``OAuth2``);
    never an id's letter and digit (``a8`` of ``userId9a8b7c``), nor the whole word again."""
    found = []
    for at in range(1, len(parts)):
        name, number = parts[at - 1], parts[at]
        if not number[0].isdigit() or name[0].isdigit():
            continue
        if (
            _is_a_word(name)
            or (name.isupper() and len(name) <= MAX_CAPITALS)
            or (name.islower() and len(name) >= MIN_PART)
        ):
            found.append(name + number)
            before = parts[at - 2] if at > 1 else ""
            if before.isupper() and before.isalpha() and not name.isupper():
                found.append(before + name + number)
    return found


def is_id_like(word: str) -> bool:
    """Whether ``word`` is a made-up id rather than a name: letters and digits, and either hex
    of git's short SHA length or more (``c1e2ab8f``), or it starts with a digit or holds two
    digit runs or more (``9a8b7c``, ``qx7k2m9``, ``2fa``, ``3rd``) with no word among its
    letters. Its letter runs (``aaeb`` of a 40-character hash) say nothing.

    A word among the letters, a capitalised one (``30DayTrial``, ``1Password``, ``H264Mp4Muxer``)
    or a lower-case run of ``MIN_MIXED_PART`` letters or more (``face2face``, ``v2alpha1``),
    makes the word a name, whose words are found on their own; ``sha256``, ``utf8``, ``i18n``
    and ``k8s`` are names too."""
    if word.isalpha() or word.isdigit() or not word.isalnum():
        return False
    return _is_id_like(word, split_identifier(word))


def is_hash_like(word: str) -> bool:
    """Whether ``word`` may be a hash or a prefix of one (``3f9a8c1``): ``is_id_like`` by its
    hex rule."""
    return _HEX_WORD.fullmatch(word) is not None and is_id_like(word)


def _is_id_like(word: str, parts: list[str]) -> bool:
    """``is_id_like`` for a word of letters and digits, given its ``split_identifier`` parts
    (none for a word past ASCII: its letter runs are read instead)."""
    runs = [part for part in parts if not part[0].isdigit()] if parts else _LETTERS.findall(word)
    if _HEX_WORD.fullmatch(word) is not None and any(c in _HEX_LETTERS for c in word):
        # A hash, unless it is words around a number of one or two digits (``face2face``): a
        # hash's digits are many, and most of its letter runs short.
        numbers = _DIGIT_RUN.findall(word)
        words_around = len(numbers) == 1 and len(numbers[0]) <= 2 and len(runs) > 1
        return not (words_around and all(len(run) >= MIN_MIXED_PART for run in runs))
    if not word[0].isdigit() and len(_DIGIT_RUN.findall(word)) < 2:
        return False
    return not any(_is_a_word(run) for run in runs)


def _is_a_word(run: str) -> bool:
    """Whether a letter run of an identifier reads as a word: capitalised, with two lower-case
    letters or more (``Day``, ``Password``), or ``MIN_MIXED_PART`` lower-case letters."""
    if run[0].isupper():
        return len(run) >= MIN_PART and run[1:].islower()
    return len(run) >= MIN_MIXED_PART and run.islower()


def holds_id_parts(text: str) -> bool:
    """Whether ``text`` holds a made-up id with a letter run of ``MIN_MIXED_PART`` or more, which
    stores indexed as a word of its own before ``is_id_like`` (``aaeb`` of a hash): such a row
    is indexed again (the stores' migration 0021)."""
    return any(
        is_id_like(word)
        and any(
            len(part) >= MIN_MIXED_PART and not part.isdigit() for part in split_identifier(word)
        )
        for word in _words_mixing_digits(text)
    )


def holds_name_parts(text: str) -> bool:
    """Whether ``text`` holds a name with digits whose parts earlier releases did not all index:
    the words of what 0021's release took for a made-up id (``Password`` of ``1Password``), a
    capitalised word of three letters (``Day`` of ``30DayTrial``), a name said with its number
    (``Base64`` of ``Base64Encoder``): such a row is indexed again (the stores' migration 0022)."""
    return any(
        len(strong_parts(word)) > 0
        for word in _words_mixing_digits(text, b"0aaa", b"aaa0")
        if not word.isalpha() and not word.isdigit()
    )


def _words_mixing_digits(
    text: str, before: bytes = b"0aaaa", after: bytes = b"aaaa0"
) -> Iterator[str]:
    """The words of ``text``'s compounds, where a letter run of ``MIN_MIXED_PART`` letters or
    more (the shapes ``before`` and ``after`` a digit) meets a digit, or a character is past
    ASCII (others are passed over, ``_shapes``: a store's every row is read once, at about 2 µs a
    row); words without such a run may come too."""
    shapes = text.encode("utf-8", "surrogatepass").translate(_SHAPES)
    if before not in shapes and after not in shapes and b"u" not in shapes:
        return
    for token in COMPOUND.findall(text):
        for words in segments(token):
            yield from words


def _shapes() -> bytes:
    """A ``bytes.translate`` table: ASCII digits to ``0``, letters to ``a``, bytes past ASCII to
    ``u``, the rest to a space."""
    table = bytearray(b" " * 256)
    for digit in b"0123456789":
        table[digit] = ord("0")
    for letter in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz":
        table[letter] = ord("a")
    for byte in range(0x80, 0x100):
        table[byte] = ord("u")
    return bytes(table)


_SHAPES = _shapes()


def split_identifier(word: str) -> list[str]:
    """``parseHTTPRequest`` -> ``parse, HTTP, Request``; a plain word gives nothing."""
    parts = _CAMEL_PART.findall(word)
    return parts if len(parts) > 1 and "".join(parts) == word else []


def segments(compound: str) -> list[list[str]]:
    """The dotted/path segments of a compound token, each as its ``_``/``-`` separated words.

    ``src/max_retries.py`` -> ``[["src"], ["max", "retries"], ["py"]]``.
    """
    # A part without the separators is its own only piece: no split (a regex call each, most
    # of the cost of a token's extras) for ``parseHTTPRequest``, nor for each segment of a path.
    path = "." in compound or ":" in compound or "/" in compound or "\\" in compound
    found = []
    for segment in _PATH_SEPARATOR.split(compound) if path else (compound,):
        if "_" in segment or "-" in segment:
            words = [word for word in _WORD_SEPARATOR.split(segment) if word]
        else:
            words = [segment] if segment else []
        if words:
            found.append(words)
    return found


def joined(words: list[str]) -> str | None:
    """``["max", "retries"]`` -> ``maxretries``: one token for every spelling of a name."""
    if len(words) < 2:
        return None
    whole = "".join(words).lower()
    return whole if len(whole) >= MIN_JOINED else None


def index_extras(text: str) -> list[str]:
    """The extra tokens for ``text``: camelCase parts and the joined form of snake/kebab names."""
    extras: dict[str, None] = {}
    for token in (_ASCII_EXTRA_COMPOUND if text.isascii() else COMPOUND).findall(text):
        cached = len(token) <= CACHED_TOKEN_CHARS
        for extra in _cached_token_extras(token) if cached else _token_extras(token):
            extras.setdefault(extra, None)
    return list(extras)


def _token_extras(token: str) -> tuple[str, ...]:
    """The extra tokens of one compound token, in order (none for a plain word)."""
    if is_plain(token):
        return ()  # a plain word ("pnpm", "Decided"): no separators, no camelCase parts
    extras: dict[str, None] = {}
    for words in segments(token):
        whole = joined(words)
        if whole is not None:
            extras.setdefault(whole, None)
        for word in words:
            if is_plain(word) or word.isdigit():
                continue  # one camelCase part at most, or digits alone: nothing to add
            for part in strong_parts(word):
                extras.setdefault(part, None)
    return tuple(extras)


_cached_token_extras = lru_cache(maxsize=TOKEN_CACHE_SIZE)(_token_extras)


def is_plain(word: str) -> bool:
    """Letters only, lower case after the first: ``split_identifier`` finds nothing in it."""
    return word.isalpha() and word[1:].islower()


def index_text(text: str) -> str:
    """``text`` followed by the extra identifier tokens found in it, and for text holding CJK
    characters a line of the other parts of its mixed words and the bigrams of its runs, last
    and in order (``search.cjk``): other text is indexed as it always was."""
    if not text:  # a memory's narrative, facts and files are mostly empty
        return text
    extra = index_extras(text)
    indexed = f"{text}\n{' '.join(extra)}" if extra else text
    if not cjk.has_cjk(text):
        return indexed
    grams, parts = cjk.index_tokens(text)
    words = [*parts, *index_extras(" ".join(parts)), *grams]
    return f"{indexed}\n{' '.join(words)}" if words else indexed
