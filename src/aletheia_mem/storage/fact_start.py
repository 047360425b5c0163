"""Where a fact written without a valid_from starts: at the moment of its write, after the
writes of its key in that same millisecond.

Two saves in one millisecond (agents saving at once, a server's workers) would both put their
value at that instant, and the one written second would end the first where it starts: a fact
valid at no instant. A store writes one fact of a key at a time (``put_fact``'s transaction
and, on PostgreSQL, the key's lock), so the second write is the later one; it starts at the
next millisecond that no fact of its key starts at, and the first value holds until then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import NewFact


class FactRow(Protocol):
    """A fact's row read by column name (``sqlite3.Row``, the PostgreSQL store's ``Row``)."""

    def __getitem__(self, key: str, /) -> Any: ...


R = TypeVar("R", bound=FactRow)


def start_after_same_instant(
    new: NewFact,
    holder: R | None,
    starts_from: Callable[[int], Iterable[int]],
    holder_at: Callable[[int], R | None],
) -> tuple[NewFact, R | None]:
    """``new`` and the fact valid at its start (``holder``, read by the caller at
    ``new.valid_from``), moved on past the milliseconds from there on that facts of its key
    start at, one after another, when ``new`` starts when written.

    A fact starts at an instant exactly when the one valid then does (a key's facts tile its
    timeline), so a write that meets none costs no query; one that does costs two, however
    many writes it follows: ``starts_from(at)``, the distinct instants at or after ``at`` that
    facts of the key start at, in order, and ``holder_at(at)``, the fact valid at ``at``.
    """
    if not new.starts_when_written or holder is None or holder["valid_from"] != new.valid_from:
        return new, holder
    start = new.valid_from
    for taken in starts_from(start):
        if taken != start:
            break
        start += 1
    return dataclasses.replace(new, valid_from=start), holder_at(start)
