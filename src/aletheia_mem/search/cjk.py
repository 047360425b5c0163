"""CJK text as search reads it: each run of CJK characters also as its overlapping bigrams.

Chinese and Japanese put no spaces between words, Korean attaches particles to them, and the
index's ``unicode61`` tokenizer reads a whole run of such letters as one token: ``数据库`` was
not found in ``使用数据库连接池``. As CJK-aware engines do (Lucene's ``CJKBigramFilter``,
PostgreSQL's ``pg_bigm``), a run of two characters or more is also indexed as its overlapping
bigrams, in order (``使用 用数 数据 据库 库连 连接 接池``), and a query's run searches for:

- the phrase of its bigrams (``"数据 据库"``: adjacent and in order, so the run itself, in any
  longer run), for runs of up to ``MAX_PHRASE_CHARS``;
- each of its bigrams alone, so that a longer query (a sentence) still finds the memories that
  hold some of its words; a memory holding only these, apart, ranks below one with the phrase.

Each run's bigrams follow a break no query matches (``RUN_BREAK``), so that the phrase never
spans two runs: characters that punctuation keeps apart are no word.

A word mixing CJK with other letters (``用Redis做缓存``: one token to ``unicode61``) also has
its other parts indexed (``Redis``), with their identifier tokens (``search.text``).

A single character is not indexed alone: most are a syllable or a particle (的, の, 이) that
would match nearly every memory in that language, and indexing them would double the tokens of
CJK text. A one-character query finds the memories where that character stands alone (between
spaces, punctuation or other scripts). Everything here runs only on text holding a CJK
character (``has_cjk``), so other text is indexed and searched exactly as before.
"""

from __future__ import annotations

import re
from functools import cache

# Han (with extension A, the compatibility ideographs and extensions B to F), kana (half-width
# too, with ー and the iteration marks), Hangul syllables and jamo: the letters of these scripts
# that ``unicode61`` reads as token characters (not the kana voicing marks, U+30A0 or U+30FB).
_CJK_CHARS = (
    "\u1100-\u11ff\u3005-\u3007\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0002ebef"
)
# Every CJK letter is at or past this one: text whose largest character is below it (Latin,
# Cyrillic, Greek...) is answered by ``max`` alone, with no pattern compiled or run.
_FIRST_CJK = "\u1100"


@cache
def _run() -> re.Pattern[str]:
    """A run of CJK letters; compiled at first need (about a millisecond, off the start path)."""
    return re.compile(f"[{_CJK_CHARS}]+")


# A word as ``unicode61`` reads one, near enough: letters and digits.
_WORD = re.compile(r"[^\W_]+")
MAX_PHRASE_CHARS = 10  # a longer run is searched by its bigrams alone (a phrase of 9 tokens)
# Indexed before the bigrams of each run: a token no query holds (a private-use character, which
# ``unicode61`` keeps and a query's words never match), so that a phrase of bigrams stays within
# one run: ``数据。据库存`` (数据 ends a sentence, 据库 starts the next) holds no ``数据库``.
RUN_BREAK = "\ue000"


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (ASCII text, most text, is answered at once)."""
    if text.isascii() or max(text) < _FIRST_CJK:
        return False
    return _run().search(text) is not None


def bigrams(run: str) -> list[str]:
    """``数据库`` -> ``数据, 据库``; a run of one character gives nothing."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_tokens(text: str) -> tuple[list[str], list[str]]:
    """What ``text`` adds to the index: the bigrams of its runs, in order and repeated as they
    occur (phrases match on their positions), each run's after a ``RUN_BREAK``, and the other
    parts of words that mix CJK with other letters (``Redis`` of ``用Redis做缓存``), each whole
    up to the next run or white space (``alice@example.com`` of ``詳細はalice@example.comまで``:
    its tokens in order, as the phrase that searches an address or a path needs them)."""
    grams: list[str] = []
    parts: list[str] = []
    for stretch in text.split():
        mixed = False
        for word in _WORD.findall(stretch):
            found = _run().findall(word)
            if not found:
                continue
            if found[0] == word:  # all CJK: a word of two is its own bigram already
                grams.extend(_run_grams(word) if len(word) > 2 else ())
                continue
            mixed = True
            for run in found:
                grams.extend(_run_grams(run))
        if mixed:
            parts.extend(part for part in _run().split(stretch) if _WORD.search(part))
    return grams, parts


def _run_grams(run: str) -> list[str]:
    """The bigrams of a run after a ``RUN_BREAK`` (nothing for a run of one character)."""
    return [RUN_BREAK, *bigrams(run)] if len(run) > 1 else []


def run_terms(run: str) -> list[str]:
    """The search terms of one run of a query: itself when it is one token of the index (one or
    two characters), else the phrase of its bigrams (up to ``MAX_PHRASE_CHARS``) and each
    bigram."""
    if len(run) <= 2:
        return [run]
    grams = bigrams(run)
    phrase = [" ".join(grams)] if len(run) <= MAX_PHRASE_CHARS else []
    return phrase + list(dict.fromkeys(grams))


def split_runs(compound: str) -> list[tuple[str, bool]]:
    """``用Redis做缓存`` -> ``[("用", True), ("Redis", False), ("做缓存", True)]``."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in _run().finditer(compound):
        if match.start() > at:
            pieces.append((compound[at : match.start()], False))
        pieces.append((match.group(), True))
        at = match.end()
    if at < len(compound):
        pieces.append((compound[at:], False))
    return pieces
