"""Which parts of a text a chain of redaction rules replaced, in the text's own coordinates.

Each rule replaces spans of the text the previous rule returned. While :func:`recording`, every
replacement is noted (:func:`note`, called by ``redact_span``); :func:`replaced_regions` then
follows the notes back to the first text. Used to redact in the original text what was found in
its folded copy (:mod:`aletheia_mem.domain.redaction_fold`).
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

Span = tuple[int, int]
_NOTES: ContextVar[list[tuple[list[Span], int]] | None] = ContextVar(
    "redaction_notes", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[list[Span], int]]]:
    """Note each replacement made inside the block: the sorted spans, the replacement's length."""
    notes: list[tuple[list[Span], int]] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note(spans: list[Span], replacement_length: int) -> None:
    """Note that ``spans`` (sorted, overlapping ones merged as they are replaced) were replaced."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append((spans, replacement_length))


@dataclass(frozen=True, slots=True)
class _Piece:
    """A stretch of the current text: kept from the first text's ``[first, last)``, or a
    replacement (``replaced``) standing for the first text's ``[first, last)``."""

    length: int
    first: int
    last: int
    replaced: bool

    def cut(self, start: int, end: int) -> _Piece:
        """The part ``[start, end)`` of this piece (part of a replacement stands for all of it)."""
        if self.replaced:
            return _Piece(end - start, self.first, self.last, True)
        return _Piece(end - start, self.first + start, self.first + end, False)

    def origin(self, offset: int, *, at_end: bool) -> int:
        """Where the character at ``offset`` in the piece (its end with ``at_end``) was."""
        if self.replaced:
            return self.last if at_end else self.first
        return self.first + offset + at_end


def merged_spans(spans: list[Span]) -> list[Span]:
    """``spans`` as ``redact_span`` replaces them: one replacement per run of overlapping spans."""
    merged: list[Span] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _replay(pieces: list[_Piece], spans: list[Span], length: int) -> list[_Piece]:
    """The pieces of the text after ``spans`` of it were each replaced by ``length`` characters."""
    starts = [0]
    for piece in pieces:
        starts.append(starts[-1] + piece.length)
    total = starts[-1]

    def position(index: int, *, at_end: bool) -> int:
        if at_end:
            index -= 1
        at = bisect.bisect_right(starts, index) - 1
        return pieces[at].origin(index - starts[at], at_end=at_end)

    def copy(start: int, end: int) -> Iterator[_Piece]:
        at = bisect.bisect_right(starts, start) - 1
        while start < end:
            stop = min(end, starts[at + 1])
            yield pieces[at].cut(start - starts[at], stop - starts[at])
            start, at = stop, at + 1

    replayed: list[_Piece] = []
    done = 0
    for start, end in merged_spans(spans):
        replayed += copy(done, start)
        if start >= total:
            first = last = pieces[-1].last if pieces else 0
        else:
            first = position(start, at_end=False)
            last = position(end, at_end=True) if end > start else first
        replayed.append(_Piece(length, first, last, True))
        done = end
    replayed += copy(done, total)
    return replayed


def replaced_regions(length: int, notes: list[tuple[list[Span], int]]) -> list[Span]:
    """The regions of the first text (of ``length`` characters) that the noted replacements
    replaced, in order; adjacent replacements stay apart, as they are in the final text."""
    pieces = [_Piece(length, 0, length, False)] if length else []
    for spans, replacement_length in notes:
        pieces = _replay(pieces, spans, replacement_length)
    regions: list[Span] = []
    previous: _Piece | None = None
    for piece in pieces:
        if piece.replaced and not (
            previous is not None
            and previous.replaced
            and (previous.first, previous.last) == (piece.first, piece.last)
        ):
            regions.append((piece.first, piece.last))
        previous = piece
    return regions
