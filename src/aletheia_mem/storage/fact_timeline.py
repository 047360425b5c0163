"""Where a new fact goes in its key's timeline, written once for both stores.

A key's facts tile its timeline: each holds from its ``valid_from`` up to its ``valid_to``
(open when NULL), where its ``superseded_by`` starts. A new value splits the tile its
``valid_from`` falls in, or, before the key's first fact, ends where that fact starts. Each
store reads and writes its own rows (``KeyTimeline``) inside the caller's write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

from aletheia_mem.storage.fact_start import FactRow, start_after_same_instant

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import NewFact

R = TypeVar("R", bound=FactRow)
Row_co = TypeVar("Row_co", bound=FactRow, covariant=True)


class KeyTimeline(Protocol[Row_co]):
    """One fact key's rows, in the caller's write transaction."""

    def fact_at(self, at: int) -> Row_co | None:
        """The fact valid at ``at`` (the latest one, should old rows overlap)."""

    def starts_from(self, at: int) -> Iterable[int]:
        """The distinct instants at or after ``at`` that facts of the key start at, in order."""

    def first_after(self, at: int) -> Row_co | None:
        """The first fact (``id``, ``valid_from``) starting after ``at``."""

    def close(self, column: str, value: int, fact_id: int) -> None:
        """Set a fact's ``valid_to`` or ``superseded_by`` (not a change of its own to sync)."""

    def insert(self, new: NewFact, valid_to: int | None, successor: int | None) -> Row_co:
        """Insert ``new``, valid up to ``valid_to`` and superseded by ``successor``."""


def put_in_timeline(new: NewFact, timeline: KeyTimeline[R]) -> tuple[R, bool]:
    """Put ``new`` into its key's timeline at its ``valid_from`` (moved on past a write of the
    same millisecond: ``fact_start``). The same object as the fact valid then gives that fact's
    row and False; another one splits the timeline there and gives the new row and True."""
    holder = timeline.fact_at(new.valid_from)
    new, holder = start_after_same_instant(new, holder, timeline.starts_from, timeline.fact_at)
    if holder is not None and holder["object"] == new.object:
        return holder, False
    if holder is not None:
        # Closed before the insert: the unique index allows one open fact per key.
        timeline.close("valid_to", new.valid_from, holder["id"])
        valid_to, successor = holder["valid_to"], holder["superseded_by"]
    else:
        after = timeline.first_after(new.valid_from)
        valid_to, successor = (None, None) if after is None else (after["valid_from"], after["id"])
    row = timeline.insert(new, valid_to, successor)
    if holder is not None:
        timeline.close("superseded_by", row["id"], holder["id"])
    return row, True
