"""Memory heads: what a search index line shows, read in the order asked for."""

from __future__ import annotations

import pytest

from aletheia_mem.storage.base import MemoryHead
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.test_match_counts import NOW, _memory


def test_heads_come_in_the_order_asked_and_unknown_ids_are_skipped(store: SqliteStore) -> None:
    first, _ = store.add_memory(_memory("first note"))
    second, _ = store.add_memory(_memory("second note"))
    store.set_pinned(second.id, True, NOW)
    assert store.memory_heads([second.id, 999, first.id]) == [
        MemoryHead(second.id, "shop", "note", "second note", "cli", True, NOW),
        MemoryHead(first.id, "shop", "note", "first note", "cli", False, NOW),
    ]
    assert store.memory_heads([]) == []


def test_a_head_is_immutable(store: SqliteStore) -> None:
    memory, _ = store.add_memory(_memory("a note"))
    (head,) = store.memory_heads([memory.id])
    with pytest.raises(AttributeError):
        head.title = "changed"  # type: ignore[misc]
    assert (head.id, head.title, head.pinned, head.created_at) == (memory.id, "a note", False, NOW)
