"""User text into search terms and safe FTS5 expressions: no query can raise.

A query word that is a code identifier or path contributes itself (an FTS phrase, so ``max_retries``
and ``src/app/main.py`` match their words in order), its joined form (``maxretries``) and its words
(``max``, ``retries``). English function words are dropped unless nothing else is left: they match
almost every memory, cost time on large stores and say little about relevance.
"""

from __future__ import annotations

from aletheia_mem.search.text import COMPOUND, joined, segments, split_identifier

MAX_TERMS = 32
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


def _compound_terms(compound: str) -> list[str]:
    parts = segments(compound)
    words = [word for segment in parts for word in segment]
    terms = [compound.lower()] if len(words) > 1 else []
    for segment in parts:
        whole = joined(segment)
        if whole is not None:
            terms.append(whole)
        for word in segment:
            terms.append(word.lower())
            terms.extend(part.lower() for part in split_identifier(word))
    return terms


def query_terms(text: str) -> list[str]:
    """The distinct search terms of ``text``: words, identifier parts, joined and whole forms."""
    seen: dict[str, None] = {}
    for match in COMPOUND.finditer(text):
        for term in _compound_terms(match.group()):
            seen.setdefault(term, None)
    content = [term for term in seen if term not in STOPWORDS]
    return (content or list(seen))[:MAX_TERMS]


def fts_match_expression(terms: list[str], operator: str = "OR") -> str:
    """An FTS5 MATCH expression joining the terms with ``OR`` (or ``AND``), each quoted so FTS
    syntax stays text."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)
