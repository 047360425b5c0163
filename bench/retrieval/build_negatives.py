"""Build the negative query set: searches that should find nothing, deterministically.

Six kinds of 50, each a query whose whole tokens occur nowhere in the corpus, so the right answer
is ``No matches.``: hex hashes (7 to 40 digits, as commits and digests are quoted), ticket ids
(``PREFIX-1234`` with prefixes the corpus never uses), identifiers that were never saved
(camelCase, snake_case and letter/digit mixes such as ``absentqx7k2m9``), pairs of invented
words, and two kinds that share a piece with the corpus on purpose: hashes holding a word of the
corpus spelled in hex letters (``9e0c4beef1d2``: ``beef``), and words of the corpus joined to a
made-up id (``user-9a8b7c``, ``userId9a8b7c``). A false positive is a negative query that
returns any memory.

Usage: ``python bench/retrieval/build_negatives.py`` writes ``data/negatives.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from dataset import load_corpus

HERE = Path(__file__).resolve().parent
NEGATIVES = HERE / "data" / "negatives.jsonl"
PER_KIND = 50
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _listed(text: str) -> list[str]:
    return text.split()


_PREFIXES = _listed(
    "JIRA PROJ TICKET INC OPSX SECR BUGZ ISSUE TASKS CHG REQST SUPP PLAT INFRA CORE WEBX "
    "MOBL DATA PAYM AUTHZ SRE QAX DEVX ENG FEAT HOTFIX RISK CVEX OPSY TKT"
)
_ONSETS = _listed("b br c cl d dr f fl g gr k kl m n p pl qu r s sk st t tr v w z zr")
_VOWELS = _listed("a e i o u ae io ou")
_CODAS = _listed("b d k l m n r sh st t x z")


def _stream(salt: str) -> Iterator[int]:
    """Deterministic pseudo-random integers."""
    n = 0
    while True:
        digest = hashlib.sha256(f"{salt}:{n}".encode()).digest()
        yield from (int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4))
        n += 1


def _word(numbers: Iterator[int], syllables: int) -> str:
    parts = []
    for _ in range(syllables):
        parts.append(_ONSETS[next(numbers) % len(_ONSETS)])
        parts.append(_VOWELS[next(numbers) % len(_VOWELS)])
    parts.append(_CODAS[next(numbers) % len(_CODAS)])
    return "".join(parts)


def _hashes(numbers: Iterator[int]) -> Iterator[str]:
    for n in range(10**6):
        length = (7, 8, 10, 12, 40)[n % 5]
        yield hashlib.sha256(f"neg-hash:{next(numbers)}".encode()).hexdigest()[:length]


def _tickets(numbers: Iterator[int]) -> Iterator[str]:
    while True:
        prefix = _PREFIXES[next(numbers) % len(_PREFIXES)]
        yield f"{prefix}-{1000 + next(numbers) % 90000}"


def _identifiers(numbers: Iterator[int]) -> Iterator[str]:
    for n in range(10**6):
        first, second = _word(numbers, 2), _word(numbers, 2)
        digits = next(numbers) % 1000
        yield (
            f"{first}{second.capitalize()}",
            f"{first}_{second}_{digits}",
            f"absent{first[:2]}{digits}{second[:1]}{next(numbers) % 10}",
            f"{first.upper()}_{second.upper()}",
        )[n % 4]


def _absent_words(numbers: Iterator[int]) -> Iterator[str]:
    while True:
        yield f"{_word(numbers, 2)} {_word(numbers, 3)}"


_HEX_WORD = re.compile(r"[a-f]{4,8}")


def _hashes_holding(words: list[str]) -> Iterator[str]:
    """Hex hashes with a hex-letter word of the corpus between their digits."""
    numbers = _stream("hash holding a word")
    for n in range(10**6):
        digest = hashlib.sha256(f"neg-word-hash:{next(numbers)}".encode()).hexdigest()
        word = words[next(numbers) % len(words)]
        length = (12, 16, 40)[n % 3]
        at = 1 + next(numbers) % (length - len(word) - 2)
        yield f"{digest[:at]}{next(numbers) % 10}{word}{next(numbers) % 10}{digest[at:]}"[:length]


def _words_with_ids(words: list[str]) -> Iterator[str]:
    """A word of the corpus joined to a made-up id, as user ids and request ids are written."""
    numbers = _stream("word with id")
    for n in range(10**6):
        word = words[next(numbers) % len(words)]
        made_up = hashlib.sha256(f"neg-id:{next(numbers)}".encode()).hexdigest()
        made_up = f"{next(numbers) % 10}{made_up[:5]}{next(numbers) % 10}"
        yield (
            f"{word}-{made_up}",
            f"{word}_{made_up}",
            f"{word}Id{made_up}",
            f"{word}_id_{made_up}",
        )[n % 4]


def build() -> list[dict[str, object]]:
    corpus = load_corpus()
    seen = {
        token.lower()
        for item in corpus
        for field in ("title", "text", "narrative")
        for token in _TOKEN.findall(str(item.get(field) or ""))
    }
    queries: list[dict[str, object]] = []
    kinds = (
        ("hash", _hashes),
        ("ticket", _tickets),
        ("identifier", _identifiers),
        ("absent word", _absent_words),
    )
    for kind, make in kinds:
        made: list[str] = []
        for text in make(_stream(kind)):
            tokens = [t.lower() for t in [*_TOKEN.findall(text), *_PART.findall(text)]]
            whole = text.lower().replace("-", "").replace("_", "")
            if whole in seen or any(t in seen for t in tokens if not t.isdigit()):
                continue
            if text not in made:
                made.append(text)
            if len(made) == PER_KIND:
                break
        queries += [{"kind": "negative", "subkind": kind, "query": q, "targets": []} for q in made]
    common = sorted(word for word in seen if word.isalpha() and 4 <= len(word) <= 10)
    hex_words = [word for word in common if _HEX_WORD.fullmatch(word)]
    sharing = (
        ("hash holding a word", _hashes_holding(hex_words)),
        ("word with an id", _words_with_ids(common)),
    )
    for kind, texts in sharing:  # a piece is in the corpus; the whole and the id are not
        made = []
        for text in texts:
            ids = [t.lower() for t in _TOKEN.findall(text) if any(c.isdigit() for c in t)]
            whole = text.lower().replace("-", "").replace("_", "")
            if whole in seen or any(t in seen for t in ids) or text in made:
                continue
            made.append(text)
            if len(made) == PER_KIND:
                break
        queries += [{"kind": "negative", "subkind": kind, "query": q, "targets": []} for q in made]
    for n, query in enumerate(queries, start=1):
        query["id"] = 10_000 + n
    return queries


def main() -> None:
    queries = build()
    NEGATIVES.write_text(
        "".join(json.dumps(q, ensure_ascii=False, sort_keys=True) + "\n" for q in queries),
        encoding="utf-8",
    )
    print(f"{len(queries)} negative queries -> {NEGATIVES}")


if __name__ == "__main__":
    main()
