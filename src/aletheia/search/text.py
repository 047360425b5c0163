"""What gets indexed: the text itself, plus code identifiers split into their words."""

from __future__ import annotations

import re

_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{3,}")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(word: str) -> list[str]:
    """``parseHTTPRequest`` -> ``parse, HTTP, Request``; a plain word gives nothing."""
    parts = _CAMEL_PART.findall(word)
    return parts if len(parts) > 1 else []


def index_text(text: str) -> str:
    """``text`` followed by the parts of every camelCase identifier in it.

    The FTS tokenizer already splits on ``_``, ``-``, ``.`` and ``/``; camelCase it keeps whole,
    so its parts are appended to let ``config parser`` find ``ConfigParser``.
    """
    extra = [part for run in _ALNUM_RUN.findall(text) for part in split_identifier(run)]
    return f"{text}\n{' '.join(extra)}" if extra else text
