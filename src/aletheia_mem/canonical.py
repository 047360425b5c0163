"""One spelling for names compared by equality: project keys, list names, fact subjects and
predicates. Unicode lets ``é`` be one code point or ``e`` and a combining accent (macOS gives
folder names so); both are the same name, stored and looked up in NFC."""

from __future__ import annotations

import unicodedata


def canonical(name: str) -> str:
    """``name`` in Unicode normalization form C (composed): text typed by a person or a model
    and a macOS folder name then compare equal."""
    return unicodedata.normalize("NFC", name)


def decomposed(text: str) -> str:
    """``text`` in Unicode normalization form D (``é`` as ``e`` and a combining accent), as a
    release before names and words were kept in NFC stored what macOS or a person typed so."""
    return unicodedata.normalize("NFD", text)


def fact_key(text: str) -> str:
    """How a fact's subject or predicate is matched, by the stores, sync and the checks of a
    save: without regard to case, runs of spaces or Unicode form (NFC)."""
    return canonical(" ".join(text.split()).lower())
