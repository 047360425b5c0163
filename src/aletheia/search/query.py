"""User text into search terms and safe FTS5 expressions: no query can raise."""

from __future__ import annotations

import re

from aletheia.search.text import split_identifier

MAX_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The distinct lower-case words of ``text``, with code identifiers also split into parts."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        for part in (word, *split_identifier(word)):
            key = part.lower()
            if key.strip("_"):
                seen.setdefault(key, None)
    return list(seen)[:MAX_TERMS]


def fts_match_expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression that ORs the terms, each quoted so FTS syntax stays text."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
