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
from functools import lru_cache

from aletheia_mem.search import cjk

# A code-like word: letters and digits joined by the separators identifiers and paths use.
COMPOUND = re.compile(r"[^\W_]+(?:[_\-.:/\\]+[^\W_]+)*", re.UNICODE)
# The same on ASCII text, where ``[^\W_]`` is exactly ``[A-Za-z0-9]``: four times faster.
ASCII_COMPOUND = re.compile(r"[A-Za-z0-9]+(?:[_\-.:/\\]+[A-Za-z0-9]+)*")
# ``ASCII_COMPOUND`` passing over the plain words (``is_plain``: ``Found``, ``pnpm``; a word
# followed by a separator is taken), which have no extras: most of a text's words, skipped in
# the regex engine rather than one by one in Python.
_ASCII_EXTRA_COMPOUND = re.compile(
    r"(?<![A-Za-z0-9])(?![A-Za-z][a-z]*(?![A-Za-z0-9_\-.:/\\]))" + ASCII_COMPOUND.pattern
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


def is_fragment(part: str, word: str) -> bool:
    """Whether ``part``, split from ``word``, is too weak to match a memory on its own: every
    part of a made-up id (``is_id_like``) is."""
    if len(part) < MIN_PART or part.isdigit():
        return True
    if not any(char.isdigit() for char in word):
        return False
    return len(part) < MIN_MIXED_PART or is_id_like(word)


def is_id_like(word: str) -> bool:
    """Whether ``word`` is a made-up id rather than a name: letters and digits, and it starts
    with a digit (``9a8b7c``, ``2fa``), holds two digit runs or more (``qx7k2m9``, ``v1beta1``)
    or is hex of git's short SHA length or more (``c1e2ab8f``). Its letter runs (``aaeb`` of
    a 40-character hash) say nothing; ``sha256``, ``utf8``, ``i18n`` and ``k8s`` are names."""
    if word.isalpha() or word.isdigit() or not word.isalnum():
        return False
    if word[0].isdigit() or len(_DIGIT_RUN.findall(word)) > 1:
        return True
    return _HEX_WORD.fullmatch(word) is not None and any(c in _HEX_LETTERS for c in word)


def holds_id_parts(text: str) -> bool:
    """Whether ``text`` holds a made-up id with a letter run of ``MIN_MIXED_PART`` or more, which
    stores indexed as a word of its own before ``is_id_like`` (``aaeb`` of a hash): such a row
    is indexed again (the stores' migration 0021). Such a run meets a digit; text where no four
    ASCII letters meet one, and no character is past ASCII, is passed over (``_shapes``: a
    store's every row is read once, at about 2 µs a row)."""
    shapes = text.encode("utf-8", "surrogatepass").translate(_SHAPES)
    if b"0aaaa" not in shapes and b"aaaa0" not in shapes and b"u" not in shapes:
        return False
    return any(
        is_id_like(word)
        and any(
            len(part) >= MIN_MIXED_PART and not part.isdigit() for part in split_identifier(word)
        )
        for token in COMPOUND.findall(text)
        for words in segments(token)
        for word in words
    )


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
    found = []
    for segment in _PATH_SEPARATOR.split(compound):
        words = [word for word in _WORD_SEPARATOR.split(segment) if word]
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
            if is_plain(word):
                continue  # one camelCase part at most: nothing to add
            for part in split_identifier(word):
                if not is_fragment(part, word):
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
    extra = index_extras(text)
    indexed = f"{text}\n{' '.join(extra)}" if extra else text
    if not cjk.has_cjk(text):
        return indexed
    grams, parts = cjk.index_tokens(text)
    words = [*parts, *index_extras(" ".join(parts)), *grams]
    return f"{indexed}\n{' '.join(words)}" if words else indexed
