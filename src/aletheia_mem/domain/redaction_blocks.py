"""Secrets that span lines: PEM private keys, PuTTY keys and Kubernetes Secret data.

The lines that say what the block is (``-----BEGIN RSA PRIVATE KEY-----``, ``data:`` and the
key names under it) are kept; the secret lines become one ``[REDACTED]``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from aletheia_mem.domain.redaction_values import REDACTED, is_placeholder, redact_span

# -- PEM private keys ----------------------------------------------------------------------

# The body holds base64, blanks, "Proc-Type: 4,ENCRYPTED" style headers and "\n" escapes (keys
# inside JSON strings); it stops at the first "-----". A key cut before its END line is still
# redacted, up to its last base64 line.
_PEM = re.compile(
    r"(?P<begin>-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)"
    r"(?P<body>(?:[A-Za-z0-9+/=\s:,.\\]|-(?!----))*+)"
    r"(?P<end>-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)?"
)
_PEM_LINES = re.compile(r"(?:\s|\\n)*+(?:[A-Za-z0-9+/=]++(?:\r?\n|\\n|\Z))*+")
_PEM_BLANK = re.compile(r"(?:\s|\\n)*+")  # blanks and "\n" escapes around the base64
_PEM_BLANK_REVERSED = re.compile(r"(?:\s|n\\)*+")  # the same, read from the end


def _redact_pem(match: re.Match[str]) -> str:
    body, rest = match["body"], ""
    if match["end"] is None:  # truncated: redact whole base64 lines only
        lines = _PEM_LINES.match(match.string, match.start("body"))
        split = min(len(body), lines.end() - match.start("body")) if lines else 0
        body, rest = body[:split], body[split:]
    lead = _PEM_BLANK.match(body).end()  # type: ignore[union-attr]
    trail = len(body) - _PEM_BLANK_REVERSED.match(body[::-1]).end()  # type: ignore[union-attr]
    if lead >= trail:
        return match.group(0)
    return match["begin"] + body[:lead] + REDACTED + body[trail:] + rest + (match["end"] or "")


# PuTTY .ppk: the lines after "Private-Lines: N" and the MAC.
_PUTTY = re.compile(
    r"Private-Lines:[ \t]*+\d++\r?\n(?P<secret>(?:[A-Za-z0-9+/=]++\r?\n?)++)"
    r"|Private-MAC:[ \t]*+(?P<mac>[0-9a-fA-F]++)"
)


def _redact_putty(text: str) -> str:
    spans = []
    for match in _PUTTY.finditer(text):
        group = "secret" if match["secret"] is not None else "mac"
        start = match.start(group)
        spans.append((start, start + len(match[group].rstrip())))
    return redact_span(text, spans)


# -- Kubernetes Secrets --------------------------------------------------------------------

_DOCUMENT_SPLIT = re.compile(r"^---[ \t]*$", re.MULTILINE)
_SECRET_KIND = re.compile(r"^kind:[ \t]*+[\"']?Secret[\"']?[ \t]*$", re.MULTILINE)
_DATA_HEADER = re.compile(r"^(?P<indent>[ \t]*+)(?:data|stringData):[ \t]*+$", re.MULTILINE)
_DATA_LINE = re.compile(r"(?P<indent>[ \t]*+)[\w.\-]++:[ \t]++(?P<value>\S.*?)[ \t]*$")
_BLOCK_SCALAR = re.compile(r"[|>][-+]?\d?")


def _lines_from(text: str, position: int) -> Iterator[tuple[int, str]]:
    """Each line of ``text`` from ``position`` on, with where it starts, read lazily."""
    while position <= len(text):
        end = text.find("\n", position)
        end = len(text) if end == -1 else end
        yield position, text[position:end]
        position = end + 1


def _data_spans(document: str, offset: int) -> list[tuple[int, int]]:
    """The values under ``data:`` and ``stringData:`` of one YAML document."""
    spans: list[tuple[int, int]] = []
    for header in _DATA_HEADER.finditer(document):
        base = len(header["indent"])
        block_indent: int | None = None  # inside a "key: |" block scalar
        for position, line in _lines_from(document, header.end() + 1):
            indent = len(line) - len(line.lstrip(" \t"))
            if line.strip() and indent <= base:
                break
            start = offset + position
            if block_indent is not None and (not line.strip() or indent > block_indent):
                if line.strip():
                    spans.append((start + indent, start + len(line)))
                continue
            block_indent = None
            match = _DATA_LINE.fullmatch(line)
            if match is not None and _BLOCK_SCALAR.fullmatch(match["value"]):
                block_indent = len(match["indent"])
            elif match is not None and not is_placeholder(match["value"].strip("\"'")):
                spans.append((start + match.start("value"), start + match.end("value")))
    return spans


def _redact_kubernetes(text: str) -> str:
    spans: list[tuple[int, int]] = []
    bounds = [0, *(match.start() for match in _DOCUMENT_SPLIT.finditer(text)), len(text)]
    for start, end in itertools.pairwise(bounds):
        document = text[start:end]
        if _SECRET_KIND.search(document):
            spans += _data_spans(document, start)
    return redact_span(text, sorted(spans))


def redact_blocks(text: str) -> str:
    """Private key blocks and Kubernetes Secret values."""
    if "PRIVATE KEY" in text:
        text = _PEM.sub(_redact_pem, text)
    if "Private-" in text:
        text = _redact_putty(text)
    if "Secret" in text and "ata:" in text:
        text = _redact_kubernetes(text)
    return text
