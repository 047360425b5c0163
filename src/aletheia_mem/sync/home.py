"""A new sync id for a store that is not the file its id was made for, before it syncs.

A hub leaves a store's own versions (by its id) out of what that store pulls. A copied data
folder, or a store restored from a file backup, holds the id of the store it came from: each of
the two would miss the other's changes for good (a dismissal, a rule's disable or confirm). So
a store found in another file, path or machine than its id was made for takes a new id and
forgets its pull cursors: its next pull brings every item again, the old id's versions too
(those it holds change nothing), and its changes not yet pushed go under the new id. The
original file keeps its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from aletheia_mem.storage.store_home import StoreHome, home_of, why_elsewhere

ASKED = "asked for with --new-store-id"


class HomedStore(Protocol):
    """A local store that knows where its sync id was made (``SqliteHome``)."""

    path: Path

    def store_home(self) -> StoreHome | None: ...
    def record_store_home(self, home: StoreHome, now: int) -> None: ...
    def take_new_store_id(
        self, home: StoreHome, now: int, *, again: bool = True
    ) -> tuple[str, str] | None: ...


@dataclass(frozen=True)
class NewStoreId:
    """A store's sync id given up for a new one, and why."""

    old_id: str
    new_id: str
    why: str

    def line(self) -> str:
        """What the sync says of it, in one line."""
        return (
            f"This store now syncs as a new store (id {self.new_id}, was {self.old_id}):"
            f" {self.why}. This sync pulls every item again; changes not yet pushed go"
            " under the new id."
        )

    def as_json(self) -> dict[str, str]:
        return {"old": self.old_id, "new": self.new_id, "why": self.why}


def new_id_if_elsewhere(store: HomedStore, now: int, *, asked: bool = False) -> NewStoreId | None:
    """A new sync id when the store is not where its id was made (or ``asked``); None when it
    is. A store with no place recorded (made by an earlier release) records it and keeps its id.

    Raises:
        OSError: the store's file cannot be looked at.
    """
    home = home_of(store.path)
    if asked:
        why: str | None = ASKED
    else:
        made = store.store_home()
        if made is None:
            store.record_store_home(home, now)
            return None
        why = why_elsewhere(made, home)
    if why is None:
        return None
    taken = store.take_new_store_id(home, now, again=asked)  # once for two syncs at a time
    return None if taken is None else NewStoreId(*taken, why)
