"""The uids every store gives memories, facts and episodes: version 7 UUIDs, in time order."""

from __future__ import annotations

import time
import uuid

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.uids import new_uid


def _millis(uid: str) -> int:
    return int(uid[:12], 16)


def test_new_uids_are_distinct_version_7_uuids_carrying_the_time_they_were_made() -> None:
    before = time.time_ns() // 1_000_000
    uids = [new_uid() for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    assert len(set(uids)) == len(uids)
    for uid in uids:
        parsed = uuid.UUID(hex=uid)
        assert (parsed.hex, parsed.version, parsed.variant) == (uid, 7, uuid.RFC_4122)
        assert before <= _millis(uid) <= after


def test_uids_made_in_a_later_millisecond_sort_after_earlier_ones() -> None:
    first = new_uid()
    while _millis(new_uid()) == _millis(first):
        pass
    assert new_uid() > first


def test_uids_made_in_one_millisecond_differ_in_their_random_bits() -> None:
    uids = [new_uid() for _ in range(200)]
    same_millisecond = [uid for uid in uids if _millis(uid) == _millis(uids[0])]
    assert len({uid[12:] for uid in same_millisecond}) == len(same_millisecond)


def test_a_memory_saved_later_has_a_later_uid(store: SqliteStore) -> None:
    uids = []
    for n in range(3):
        memory, _ = store.add_memory(
            NewMemory("shop", "note", "note", f"n{n}", f"n{n}", "cli", n, None)
        )
        uids.append(memory.uid)
        while _millis(new_uid()) == _millis(memory.uid):
            pass
    assert uids == sorted(uids)
    assert len(set(uids)) == 3
