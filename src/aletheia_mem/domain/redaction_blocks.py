"""Secrets that span lines: PEM private keys, PuTTY keys and Kubernetes Secret data.

The lines that say what the block is (``-----BEGIN RSA PRIVATE KEY-----``, ``data:`` and the
key names under it) are kept; the secret lines become one ``[REDACTED]``.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator

from aletheia_mem.domain.redaction_values import REDACTED, is_placeholder, redact_span

# -- PEM private keys ----------------------------------------------------------------------

# A key's lines may carry anything around their base64: quotes and "\n" escapes (string
# literals, JSON), "# " or "> " (comments, quotes), "-" or "+" (diffs), line numbers ("  2→",
# cat -n), "<br>", commas. So the key is found by its base64 chunks, not by its layout: from
# the first chunk after the BEGIN line to the last one before the END line, PGP armor headers
# ("Comment: ...") included. A chunk does not start right after a backslash ("\nMIIE": the
# "n" belongs to the escape).
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_CHUNK = re.compile(r"(?:(?<=\\[nrt])|(?<![\\A-Za-z0-9+/=]))[A-Za-z0-9+/=]{4,}+")
# A key cut before its END line: its lines are the ones whose base64 is most of the line
# (a run of 8+), after optional armor headers and blank lines.
_PEM_RUN = re.compile(r"(?:(?<=\\[nrt])|(?<![\\A-Za-z0-9+/=]))[A-Za-z0-9+/=]{8,}+")
_PEM_HEADER = re.compile(r"[^\w\n]{0,16}+[A-Za-z][\w\-]{0,40}+:[ \t]")
_MARK = REDACTED.strip("[]")  # a key redacted already: its "REDACTED" is no chunk
_PEM_DECORATION = re.compile(r"[^A-Za-z0-9+/=]*+")


def _keyish(run: str) -> bool:
    """Whether ``run`` reads as base64 rather than a long word: it mixes cases and holds a
    digit, "+" or "/" (a line of a key almost always does)."""
    return (
        not (run.islower() or run.isupper())
        and any(c.isdigit() or c in "+/" for c in run)
        and run != _MARK
    )


def _truncated_key(text: str, start: int, stop: int) -> tuple[int, int] | None:
    """The span of a key's lines from ``start`` (after its BEGIN line) up to ``stop``."""
    first = last = -1
    position = start
    while position < stop:
        line_end = text.find("\n", position, stop)
        line_end = stop if line_end == -1 else line_end
        runs = [run for run in _PEM_RUN.finditer(text, position, line_end) if _keyish(run[0])]
        filled = sum(len(run.group()) for run in runs)
        solid = len(text[position:line_end].replace(" ", "").replace("\t", ""))
        if runs and 2 * filled >= solid:
            first = runs[0].start() if first == -1 else first
            last = runs[-1].end()
        elif not (
            _PEM_DECORATION.fullmatch(text, position, line_end)
            or (first == -1 and _PEM_HEADER.match(text, position, line_end))
        ):
            break
        position = line_end + 1
    return (first, last) if first != -1 else None


def _pem_spans(text: str) -> list[tuple[int, int]]:
    begins = list(_PEM_BEGIN.finditer(text))
    ends = [match.start() for match in _PEM_END.finditer(text)]
    spans: list[tuple[int, int]] = []
    for index, begin in enumerate(begins):
        stop = begins[index + 1].start() if index + 1 < len(begins) else len(text)
        at = bisect.bisect_left(ends, begin.end())
        if at < len(ends) and ends[at] < stop:
            found = _PEM_CHUNK.finditer(text, begin.end(), ends[at])
            chunks = [chunk for chunk in found if chunk[0] != _MARK]
            if chunks:
                spans.append((chunks[0].start(), chunks[-1].end()))
        else:
            span = _truncated_key(text, begin.end(), stop)
            if span is not None:
                spans.append(span)
    return spans


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
        text = redact_span(text, _pem_spans(text))
    if "Private-" in text:
        text = _redact_putty(text)
    if "Secret" in text and "ata:" in text:
        text = _redact_kubernetes(text)
    return text
