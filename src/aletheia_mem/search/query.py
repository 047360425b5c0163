"""User text into search terms and safe FTS5 expressions: no query can raise.

A query word that is a code identifier or path contributes itself (an FTS phrase, so ``max_retries``
and ``src/app/main.py`` match their words in order), its joined form (``maxretries``) and its words
(``max``, ``retries``). English function words are dropped unless nothing else is left: they match
almost every memory, cost time on large stores and say little about relevance.

A query's whole tokens always count; a part split from one (a path segment, a ``snake_case`` word,
a camelCase part) counts unless it is a fragment (``text.is_fragment``: one or two characters, a
bare digit run, a short letter run of a hash), so an unknown hash or ticket id finds nothing
rather than every memory sharing a ``7`` or a ``k2`` with it. A path or label holding a made-up
id (``src/qx7k2m9/app.py``, ``revert:3f9a8c1``) counts as a whole: the id is searched on its own,
its words are not (``_labelled_id_terms``). An e-mail address is searched as
the phrase of its tokens alone (``query_words``): it never finds another address of its domain.

A search also looks for the other spellings of a query's words that memories use
(``with_spellings``: ``timezone`` for ``time zone``, ``Straße`` for ``Strasse``, ``3.11.7`` for
``v3.11.7``), and matches facts, which head its answer, without the camelCase parts of its words
(``without_word_parts``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence

from aletheia_mem.search import cjk
from aletheia_mem.search.text import (
    ASCII_COMPOUND,
    COMPOUND,
    MIN_JOINED,
    MIN_PART,
    is_fragment,
    is_hash_like,
    is_id_like,
    is_plain,
    joined,
    segments,
    split_identifier,
    strong_parts,
)

MAX_TERMS = 32
MIN_ID_CHARS = 5  # a shorter made-up word (2fa, 3rd, 4x4) is as often a word of a sentence
# How much of a query is read: its first 32 terms count, so a pasted log of megabytes costs no
# more than its start (splitting 10 MB of words took 10 s, blocking the stdio server).
MAX_QUERY_CHARS = 10_000
_STOPWORD_TEXT = """
    a about above after again against am an and are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself of once or other our ours ourselves own same she should so some
    such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would
    you your yours yourself yourselves s t don doesn isn wasn
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def query_start(text: str) -> str:
    """What a search reads of ``text``: up to ``MAX_QUERY_CHARS``, cut at white space, in
    composed Unicode (NFC): a decomposed ``Ü`` (``U`` and a combining diaeresis, as macOS file
    names spell it) would split its word in two, where the index reads one."""
    if len(text) > MAX_QUERY_CHARS:
        start = text[:MAX_QUERY_CHARS]
        space = max(start.rfind(" "), start.rfind("\n"), start.rfind("\t"))
        text = start[:space] if space > 0 else start
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _compound_terms(compound: str) -> list[str]:
    parts = segments(compound)
    words = [word for segment in parts for word in segment]
    single = len(words) == 1  # the word is the whole token: it counts whatever it is
    if not single and len(parts) > 1 and any(_is_made_up(word) for word in words):
        return _labelled_id_terms(compound, parts)
    terms = [] if single else [compound.lower()]
    for segment in parts:
        whole = joined(segment)
        if whole is not None:
            terms.append(whole)
        if _numbered(segment):  # PAY-9999, gcc-12: the id as a whole, never its name alone;
            terms.extend(_hashes_named(segment))  # a hash named with words: itself too
            continue
        for word in segment:
            if single or not is_fragment(word, word):
                terms.append(word.lower())
            if not _ends_in_a_number(word):  # SHOP4822, Matrix4x4, userId9a8b7c: whole
                terms.extend(part.lower() for part in strong_parts(word))
    return terms


def _labelled_id_terms(compound: str, parts: list[list[str]]) -> list[str]:
    """The terms of a compound whose segments hold a made-up id (``revert:3f9a8c1``,
    ``src/qx7k2m9/app.py``, ``origin/revert-3f9a8c1``): the compound, each id standing alone
    between ``:``, ``/`` or ``.`` (a whole token of the index), and each segment naming an id
    as ``_compound_terms`` takes it (``revert3f9a8c1`` and its hash); never a word alone, which
    would find every memory naming ``revert`` or ``app``, and anything for an unknown id."""
    terms = [compound.lower()]
    for segment in parts:
        if len(segment) == 1 and _is_made_up(segment[0]):
            terms.append(segment[0].lower())
        elif _numbered(segment):
            whole = joined(segment)
            terms.extend(([] if whole is None else [whole]) + _hashes_named(segment))
    return terms


def _is_made_up(word: str) -> bool:
    """Whether ``word`` is a made-up id long enough to be searched on its own: a hash or a
    hash's start (``3f9a8c1``), or ``is_id_like`` of ``MIN_ID_CHARS`` or more (``qx7k2m9``)."""
    return is_hash_like(word) or (len(word) >= MIN_ID_CHARS and is_id_like(word))


def _hashes_named(segment: list[str]) -> list[str]:
    """The hash of a segment that names one with words (``revert-3f9a8c1``, ``3f9a8c1-dirty``),
    searched on its own too; none of an id written in groups, whose other groups are numbers or
    made-up ids (a UUID, ``6ba7b810-9dad-11d1-80b4-00c04fd430c8``): a group is a fragment of
    it, shared by other ids (every v1 UUID of one host ends in the same group)."""
    ids = [word for word in segment if word.isdigit() or is_id_like(word)]
    return [ids[0].lower()] if len(ids) == 1 and is_hash_like(ids[0]) else []


def _ends_in_a_number(word: str) -> bool:
    """Whether a digit follows the last word of ``word``'s camelCase parts (``SHOP4822``,
    ``gcc12``, ``Matrix4x4``, ``userId9a8b7c``): a name and its number or id, asked for whole as
    ``SHOP-4822`` is, where ``H264Mp4Muxer`` ends in a word."""
    return bool(number_tail(word))


def number_tail(word: str) -> str:
    """What follows the last word of ``word``'s camelCase parts, from its first digit on:
    ``4822`` of ``SHOP4822``, ``4x4`` of ``Matrix4x4``, ``9a8b7c`` of ``userId9a8b7c`` (and of
    ``userid9a8b7c``, as a query term spells it); empty for ``H264Mp4Muxer`` or ``sha256sum``."""
    pieces = split_identifier(word)
    start = len(pieces)
    for at in range(len(pieces) - 1, -1, -1):
        if pieces[at][0].isdigit():
            start = at
        elif len(pieces[at]) >= MIN_PART:
            break
    return "".join(pieces[start:])


def _cjk_terms(compound: str) -> list[str]:
    """The terms of a word that may hold CJK runs: each run's (``cjk.run_terms``: its bigrams'
    phrase and each bigram) and those of the other parts, in order."""
    if not cjk.has_cjk(compound):
        return _compound_terms(compound)
    terms: list[str] = []
    for piece, is_run in cjk.split_runs(compound):
        if is_run:
            terms.extend(cjk.run_terms(piece))
            continue
        for word in COMPOUND.findall(piece):
            terms.extend([word.lower()] if is_plain(word) else _compound_terms(word))
    return terms


def _numbered(segment: list[str]) -> bool:
    """Whether a segment's words are a name and a number or a made-up id (a ticket, an error
    code, a versioned name, ``user-9a8b7c``): its words alone would find every other ticket of
    that name, or every memory naming its word."""
    return len(segment) > 1 and any(word.isdigit() or is_id_like(word) for word in segment)


# An e-mail address: a local part, then a domain of dotted names ending in letters (not a package
# at a version, ``react@18.2.0``), each part bounded (RFC 5321) so that no query costs more than a
# few steps a character. Searched whole, as the phrase of its tokens.
_ADDRESS = r"[^\W_][\w.%+\-]{0,63}@(?:[^\W_][\w\-]{0,62}\.){1,8}[^\W\d_]{2,24}\b"
_ADDRESSES = re.compile(rf"(?P<address>{_ADDRESS})", re.UNICODE)


def query_words(text: str) -> Iterator[re.Match[str]]:
    """The words of ``text`` (code-like compounds), an e-mail address as one (group
    ``address``): it names one mailbox, and its domain alone would find everyone at it."""
    if "@" in text:
        return _around_addresses(text)
    return (ASCII_COMPOUND if text.isascii() else COMPOUND).finditer(text)


def _around_addresses(text: str) -> Iterator[re.Match[str]]:
    """The addresses of ``text`` first, then the compounds between them, in order: a compound
    may not take an address's start (``mailto:alice`` of ``mailto:alice@example.com``)."""
    start = 0
    for address in _ADDRESSES.finditer(text):
        yield from COMPOUND.finditer(text, start, address.start())
        yield address
        start = address.end()
    yield from COMPOUND.finditer(text, start)


def query_terms(text: str) -> list[str]:
    """The distinct search terms of ``text``: words, identifier parts, joined and whole forms."""
    seen: dict[str, None] = {}
    text = query_start(text)
    some_cjk = cjk.has_cjk(text)
    for word in query_words(text):
        compound = word.group()
        if is_plain(compound) or word.lastgroup == "address":  # one term, as most words are
            seen.setdefault(compound.lower(), None)
            continue
        found = _cjk_terms(compound) if some_cjk else _compound_terms(compound)
        for term in found:
            seen.setdefault(term, None)
    content = [term for term in seen if term not in STOPWORDS]
    return (content or list(seen))[:MAX_TERMS]


def with_spellings(text: str, terms: Sequence[str]) -> list[str]:
    """``terms`` (``query_terms(text)``) with the other spellings of ``text``'s words that
    memories use, at most ``MAX_TERMS`` in all (the query's own terms first):

    - two plain words written apart, joined (``time zone``: ``timezone``; ``user name``,
      ``front end``, ``log in``), as an identifier's words are (``max_retries``: ``maxretries``);
    - a word with ``ß`` spelled with ``ss`` and back (``Straße``, ``Strasse``: Swiss German
      and upper case write ``ss``);
    - a version with and without its ``v`` (``v3.11.7``, ``3.11.7``: a tag and a package
      version).

    A spelling no memory holds matches nothing and costs one lookup: the search leaves it out.
    """
    found: dict[str, None] = dict.fromkeys(terms)
    for word in _joined_neighbours(text):
        found.setdefault(word, None)
    for term in list(found):
        variant = _sharp_s_variant(term) or _version_variant(term)
        if variant is not None:
            found.setdefault(variant, None)
    return list(found)[:MAX_TERMS]


def without_word_parts(text: str, terms: Sequence[str]) -> list[str]:
    """``terms`` without those that are only a camelCase part of a word of ``text``: ``java``
    and ``script`` of ``JavaScript``, ``sql`` of ``MySQL`` (a word the query spells out,
    ``payments`` of ``payments_db`` or ``java`` in ``Java or JavaScript``, stays).

    What search matches facts with: they are listed before every memory, whatever their score,
    so a fact that shares only such a part with the query (``Java 21`` for ``JavaScript``)
    would head the answer without being about what was asked.
    """
    spelled: set[str] = set()
    parts: set[str] = set()
    start = query_start(text)
    for compound in (ASCII_COMPOUND if start.isascii() else COMPOUND).findall(start):
        spelled.add(compound.lower())
        for segment in segments(compound):
            for word in segment:
                spelled.add(word.lower())
                parts.update(part.lower() for part in split_identifier(word))
    return [term for term in terms if term not in parts - spelled]


_VERSION = re.compile(r"(v?)(\d+(?:\.\d+)+)")


def _version_variant(term: str) -> str | None:
    """``v3.11.7`` -> ``3.11.7`` and back; None for a term that is no dotted version."""
    match = _VERSION.fullmatch(term)
    if match is None:
        return None
    return match.group(2) if match.group(1) else "v" + term


def _joined_neighbours(text: str) -> Iterator[str]:
    """Each two plain words of ``text`` next to each other (white space between), joined, when
    one at least is not a function word (``set up``: ``setup``; ``what is``: nothing)."""
    text = query_start(text)
    before: re.Match[str] | None = None
    for match in query_words(text):
        if before is not None and text[before.end() : match.start()].isspace():
            first, second = before.group(), match.group()
            both_plain = is_plain(first) and is_plain(second)
            words = first.lower(), second.lower()
            if both_plain and not set(words) <= STOPWORDS and len(first + second) >= MIN_JOINED:
                yield "".join(words)
        before = match


def _sharp_s_variant(term: str) -> str | None:
    """``straße`` -> ``strasse`` and ``strasse`` -> ``straße``; None for a term that has
    neither (or is not a word)."""
    if not term.isalpha():
        return None
    if "ß" in term:
        return term.replace("ß", "ss")
    return term.replace("ss", "ß") if "ss" in term else None


# A git short SHA: git prints 7 hex characters at least. A query term that could be one (hex, with
# a digit and a letter) also matches the longer indexed tokens it starts, a few at most, so that
# ``3f9a8c1`` finds the memory that saved the full 40-character hash.
MIN_HASH_PREFIX = 7
MAX_PREFIX_TOKENS = 8
_HEX_PREFIX = re.compile(rf"[0-9a-f]{{{MIN_HASH_PREFIX},63}}")


def hash_prefixes(terms: Sequence[str]) -> list[str]:
    """The terms that may be the start of a longer hash (``3f9a8c1``, not ``1234567`` or
    ``deadbeef``): hex, ``MIN_HASH_PREFIX`` characters or more, with digits and letters."""
    return [
        term
        for term in terms
        if _HEX_PREFIX.fullmatch(term)
        and any(char.isdigit() for char in term)
        and not term.isdigit()
    ]


def with_prefix_tokens(terms: Sequence[str], found: Mapping[str, Sequence[str]]) -> list[str]:
    """``terms`` with, after each hash prefix, the indexed tokens ``found`` for it (at most
    ``MAX_TERMS`` in all)."""
    seen: dict[str, None] = {}
    for term in terms:
        seen.setdefault(term, None)
        for token in found.get(term, ()):
            seen.setdefault(token, None)
    return list(seen)[:MAX_TERMS]


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """The range of tokens that start with ``prefix`` and are longer: ``(low, high)``, both
    exclusive, in code-point order."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


_TERM_WORDS = re.compile(r"[^\W_]+")


def id_terms(terms: Sequence[str]) -> list[int]:
    """The indexes of the ``terms`` that are or hold a made-up id of ``MIN_ID_CHARS`` or more
    (a hash, the tokens a hash prefix starts, a UUID and its joined form, ``revert-3f9a8c1``,
    a name ending in one, ``userid9a8b7c``): a memory holding one of them ranks above every
    memory matching only the query's other terms (both stores), whatever its words score, so
    that a unique id finds its memory first.
    """
    return [
        index
        for index, term in enumerate(terms)
        if any(_holds_made_up_id(word) for word in _TERM_WORDS.findall(term))
    ]


def _holds_made_up_id(word: str) -> bool:
    """Whether ``word`` is a made-up id of ``MIN_ID_CHARS`` or more, or a name ending in one
    (``userid9a8b7c``, ``commit3f9a8c1``; not ``sha256sum`` or ``gcc12``)."""
    if len(word) < MIN_ID_CHARS:
        return False
    if is_id_like(word):
        return True
    tail = number_tail(word)
    return len(tail) >= MIN_ID_CHARS and is_id_like(tail)


def first_tier(terms: Sequence[str]) -> list[int]:
    """``id_terms`` when some of ``terms`` are no id (only then does holding one set a memory
    apart); else none."""
    ids = id_terms(terms)
    return ids if len(ids) < len(terms) else []


MAX_ACRONYM = 5  # longer capital runs are codes (ENOSPC, ETIMEDOUT)


def is_prose(text: str) -> bool:
    """Whether every word of ``text`` is a plain word (no digits, separators or inner capitals)
    or an acronym (``CI``, ``API``: up to ``MAX_ACRONYM`` capitals), with one plain word at least.

    A query that names an identifier, a hash or a ticket asks for that thing: the embedding model
    finds look-alike strings similar (``qx7k2m8`` to ``qx7k2m9``: 0.67, more than most
    paraphrases), so such a query is ranked by its words alone. A sentence naming an acronym is
    still a sentence; a capital run alone (``ENOSPC``, ``API SSH``) is a code. A query with CJK
    text is ranked by its words too: the model reads English only.
    """
    text = query_start(text)
    if cjk.has_cjk(text):  # the model (all-MiniLM-L6-v2) is English: CJK is noise to it
        return False
    words = [match.group() for match in COMPOUND.finditer(text)]
    plain = sum(1 for word in words if word.isalpha() and word[1:] == word[1:].lower())
    acronyms = sum(1 for word in words if _is_acronym(word))
    return plain > 0 and plain + acronyms == len(words)


def _is_acronym(word: str) -> bool:
    return 1 < len(word) <= MAX_ACRONYM and word.isalpha() and word.isupper()


def fts_match_expression(terms: list[str], operator: str = "OR") -> str:
    """An FTS5 MATCH expression joining the terms with ``OR`` (or ``AND``), each quoted so FTS
    syntax stays text."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)
