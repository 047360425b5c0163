"""Stored text that cannot drive the terminal or reorder the line a tool's output is read on.

Tool results are shown in terminals and chat panes: a stored ESC starts an escape sequence
(``\\x1b[2J`` clears the screen), BEL rings, a lone carriage return overwrites the line, and a
bidi override or isolate (U+202E) reverses what follows. Each such character is shown as its
escape (``\\x1b``, ``\\x07``, ``\\r``, ``\\u202e``), as the CLI and the owner's pages show them.

Tool outputs (read by models) escape only the dangerous ones: C0 and C1 controls, surrogates,
and the bidi controls (embeddings, overrides, isolates, marks). Other format characters are
text there: the zero-width joiner inside an emoji sequence, the zero-width non-joiner in Persian
words, the soft hyphen, emoji tags. What a person reads (the CLI, the owner's pages) escapes
every control, format and separator character (``escape_unprinted``), so that nothing hidden
is shown as if it were not there.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from aletheia_mem.escapes import UNPRINTED, escaped, escaped_char

# The bidi controls: Arabic letter mark, LRM and RLM, embeddings and overrides, isolates.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
# One line: its whitespace was already made single spaces, so every control is escaped.
_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]")
# A multi-line body keeps its newlines, tabs and Windows line ends (a carriage return before a
# newline moves nothing that the newline does not).
_IN_BODY = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]|\r(?!\n)")


def _escape(found: re.Match[str]) -> str:
    return found.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def escape_controls(text: str, *, multiline: bool = False) -> str:
    """``text`` with each control, surrogate and bidi control character as its escape.

    Args:
        text: stored text, one line (a title, a rule, a fact) or a body (``multiline``).
        multiline: keep newlines, tabs and CRLF line ends (a memory's text or narrative).
    """
    return (_IN_BODY if multiline else _IN_LINE).sub(_escape, text)


def _json_escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def escape_json_controls(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes C0 controls only) with
    each C1 control, surrogate and bidi control as its ``\\uXXXX`` escape: the same value."""
    return _IN_LINE.sub(_json_escape, dumped)


# The characters that may need an escape (``escapes.UNPRINTED``): everything outside printable
# ASCII, checked by category; multi-line text keeps its newlines and tabs.
_UNPRINTED_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")


@lru_cache(maxsize=4096)
def _shown_in_json(char: str) -> str:
    if unicodedata.category(char) not in UNPRINTED:
        return char
    data = char.encode("utf-16-be", "surrogatepass")
    units = (int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    return "".join(f"\\u{unit:04x}" for unit in units)


def escape_unprinted(text: str, *, multiline: bool = True) -> str:
    """``text`` with every control, format, surrogate and separator character as its escape
    (``\\x1b``, ``\\u202e``); ``multiline`` keeps newlines and tabs (a one-line field shows
    them as ``\\n`` and ``\\t``, so it cannot fake another row)."""
    if not multiline:
        return escaped(text)
    return _UNPRINTED_CANDIDATE.sub(lambda found: escaped_char(found.group()), text)


def json_escape_unprinted(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with each character
    ``escape_unprinted`` escapes as its ``\\uXXXX`` escape: the same value."""
    return _UNPRINTED_CANDIDATE.sub(lambda found: _shown_in_json(found.group()), dumped)
