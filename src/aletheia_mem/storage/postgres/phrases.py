"""Phrases matched on postings in Python, as ``full_text.phrase_sql`` matches them in SQL.

Postings map a term to, per row holding it, its ``Entries``. A query term of several tokens is
a phrase: it occurs in a row's column where its tokens stand adjacent and in order. Relevance
search of memories matches on the postings a process holds (``postings``); fact search on the
postings one statement reads (``facts``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# A term in one row: per column holding it, in column order, (col, occurrences) (what bm25
# reads), and beside them each column's positions (what phrases match by) as PostgreSQL writes
# an array, "{3,17}": parsed only for a phrase of several tokens (``positions``). Parsing every
# array as it loads took four times the rest of a term row's load.
Entries = tuple[tuple[tuple[int, int], ...], tuple[str, ...]]
TermPostings = Mapping[int, Entries]


def positions(array: str) -> list[int]:
    """The positions of an entry (PostgreSQL's text of an ``integer[]``, "{3,17}")."""
    return [int(position) for position in array[1:-1].split(",")]


def with_column(held: Entries | None, col: int, array: str) -> Entries:
    """A row's entries for a term with one more column's positions (columns kept in order)."""
    entries: Entries = (((col, array.count(",") + 1),), (array,))
    if held is None:
        return entries
    columns = sorted(zip(held[0] + entries[0], held[1] + entries[1], strict=True))
    return tuple(c[0] for c in columns), tuple(c[1] for c in columns)


def grouped(
    rows: Iterable[tuple[str, int, int, str]],
    found: dict[str, dict[int, Entries]] | None = None,
    shared: dict[Entries, Entries] | None = None,
) -> dict[str, dict[int, Entries]]:
    """Term rows ``(term, row id, col, positions)`` as postings, per term, per row, added to
    ``found``; with ``shared``, equal entries are one object, the one ``shared`` holds."""
    found = {} if found is None else found
    for term, row_id, col, array in rows:
        postings = found.get(term)
        if postings is None:
            postings = found[term] = {}
        entries = with_column(postings.get(row_id), col, array)
        postings[row_id] = entries if shared is None else shared.setdefault(entries, entries)
    return found


class PhraseMatches:
    """Where one phrase occurs: ``docs`` holds a key per matching row; ``hits`` gives a row's
    ``(col, hits)`` in column order (``full_text.phrase_sql``)."""

    def __init__(self, term: Callable[[str], TermPostings], tokens: Sequence[str]) -> None:
        self.docs: Mapping[int, Any] = {}
        self._single = len(tokens) == 1
        if self._single:
            self.docs = term(tokens[0])
        elif tokens:
            self.docs = _adjacent(term(tokens[0]), [term(token) for token in tokens[1:]])

    def hits(self, doc: int) -> Sequence[tuple[int, int]]:
        found = self.docs.get(doc)
        if found is None:
            return ()
        return found[0] if self._single else found  # type: ignore[no-any-return]


def _adjacent(
    first: TermPostings, rest: list[TermPostings]
) -> dict[int, tuple[tuple[int, int], ...]]:
    """Per row, per column, how often the tokens occur adjacent and in order."""
    found: dict[int, tuple[tuple[int, int], ...]] = {}
    for doc in set(first).intersection(*rest):
        pairs, arrays = first[doc]
        later = [postings[doc] for postings in rest]
        per_col = []
        for (col, _), array in zip(pairs, arrays, strict=True):
            following = _arrays_in_column(later, col)
            if following is not None and (hits := _adjacent_hits(array, following)):
                per_col.append((col, hits))
        if per_col:
            found[doc] = tuple(per_col)
    return found


def _arrays_in_column(entries: list[Entries], col: int) -> list[str] | None:
    """Each entry's positions in column ``col``; None when one of them is not in it."""
    found = []
    for pairs, arrays in entries:
        for (entry_col, _), array in zip(pairs, arrays, strict=True):
            if entry_col == col:
                found.append(array)
                break
        else:
            return None
    return found


def _adjacent_hits(array: str, following: list[str]) -> int:
    """How many positions of ``array`` each following token takes the next position after."""
    if len(following) == 1:
        if "," not in array and "," not in following[0]:  # once each, the usual case
            return int(int(following[0][1:-1]) == int(array[1:-1]) + 1)
        after = set(positions(following[0]))
        return sum(1 for p in positions(array) if p + 1 in after)
    later = [set(positions(at)) for at in following]
    return sum(all(p + i in at for i, at in enumerate(later, 1)) for p in positions(array))
