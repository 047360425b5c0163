"""The full-text index stays in few b-trees: each write merges a little, and the whole index is
merged into one once enough memories were indexed since the last full merge. Merging changes
no search result."""

from __future__ import annotations

import itertools
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.memories import insert_memory
from tests.conftest import ToolCaller
from tests.storage.old_stores import store_before
from tests.storage.test_match_counts import NOW, _memory

# About SQLite's own full-text index (FTS5 segments, merges, upkeep rows): SQLite alone.
pytestmark = pytest.mark.sqlite_only

_STRUCTURE_ROWID = 10  # FTS5 keeps the list of its b-trees in this row of %_data
_STRUCTURE_V2 = b"\xff\x00\x00\x01"


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at ``at``: (value, next position)."""
    value = 0
    for step in range(9):
        byte = data[at + step]
        if step == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + step + 1
    raise AssertionError("unreachable")


def btree_count(path: Path, index: str = "memory_fts") -> int:
    """How many b-trees (segments) the index is made of, read from its structure record."""
    with closing(sqlite3.connect(path)) as conn:
        (record,) = conn.execute(
            f"SELECT block FROM {index}_data WHERE id = ?", (_STRUCTURE_ROWID,)
        ).fetchone()
    at = 4  # the cookie
    if record[at : at + 4] == _STRUCTURE_V2:
        at += 4
    _levels, at = _varint(record, at)
    segments, _ = _varint(record, at)
    return segments


def upkeep(path: Path) -> tuple[int, int]:
    """The rows indexed since the last full merge, and how many memories there were then."""
    with closing(sqlite3.connect(path)) as conn:
        return full_text.changes_since_merge(conn)


def upkeep_row(path: Path) -> tuple[int, ...]:
    with closing(sqlite3.connect(path)) as conn:
        return tuple(conn.execute("SELECT * FROM fts_upkeep").fetchone())


def search_ids(store: SqliteStore, text: str) -> list[int]:
    query = MemoryQuery(terms=tuple(query_terms(text)), projects=("shop",), limit=50)
    return store.rank_memory_ids(query, NOW)


@pytest.fixture
def upkeep_each_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every indexing transaction looks whether a full merge is due (not every eighth)."""
    monkeypatch.setattr(full_text, "UPKEEP_EVERY", 1)


@pytest.mark.usefixtures("upkeep_each_write")
def test_a_store_written_one_memory_at_a_time_is_merged_into_one_btree(
    store: SqliteStore,
) -> None:
    for n in range(full_text.MIN_CHANGES - 1):
        store.add_memory(_memory(f"release {n} of the billing service"))
    assert upkeep(store.path) == (full_text.MIN_CHANGES - 1, 0)
    store.add_memory(_memory("the last release before the merge"))
    assert btree_count(store.path) == 1
    assert upkeep(store.path) == (0, full_text.MIN_CHANGES)


@pytest.mark.usefixtures("upkeep_each_write")
def test_merges_come_rarer_as_the_store_grows(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_text, "MIN_CHANGES", 4)
    merged_at: list[int] = []
    for n in range(1, 201):
        store.add_memory(_memory(f"note number {n}"))
        if upkeep(store.path)[0] == 0:
            merged_at.append(n)
    assert merged_at[0] == 4
    for earlier, later in itertools.pairwise(merged_at):
        assert later - earlier == max(4, earlier // full_text.SHARE)
    assert merged_at[-1] > 150


def test_a_merge_rolls_back_with_the_write_that_began_it(store: SqliteStore) -> None:
    for n in range(full_text.MIN_CHANGES - 1):
        store.add_memory(_memory(f"kept {n}"))
    with pytest.raises(RuntimeError), store._write() as conn:
        insert_memory(conn, _memory("rolled back"))
        raise RuntimeError("the write fails after indexing")
    assert upkeep(store.path) == (full_text.MIN_CHANGES - 1, 0)
    assert search_ids(store, "rolled back") == []


def test_between_full_merges_each_write_merges_a_little(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_text, "MIN_CHANGES", 10**6)
    counts = []
    for n in range(300):
        store.add_memory(_memory(f"saved alone {n}"))
        counts.append(btree_count(store.path))
    # Left to FTS5, writes this small pile up 16 b-trees before they are merged.
    assert max(counts) <= 8
    assert counts[-1] > 1
    before = {text: search_ids(store, text) for text in ("saved alone 7", "alone", "12 saved")}
    with store._write() as conn:
        full_text.merge_fully(conn)
    assert btree_count(store.path) == 1
    assert {text: search_ids(store, text) for text in before} == before


def test_facts_are_counted_and_merged_with_the_memories(
    store: SqliteStore, call: ToolCaller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_text, "MIN_CHANGES", 10**6)
    for n in range(120):
        fact = {"subject": f"service-{n}", "predicate": "owner", "object": f"team {n % 7}"}
        assert not call("save_memory", text=f"service-{n} is owned by team", facts=[fact]).is_error
        assert btree_count(store.path, "fact_fts") <= 8
    assert upkeep(store.path) == (240, 0)  # a memory and a fact per save
    with store._write() as conn:
        full_text.merge_fully(conn)
    assert btree_count(store.path, "fact_fts") == 1
    assert btree_count(store.path, "memory_fts") == 1


def test_a_save_between_full_merges_writes_no_upkeep_row(store: SqliteStore) -> None:
    store.add_memory(_memory("first of many"))
    row = upkeep_row(store.path)
    store.add_memory(_memory("second of many"))
    assert upkeep_row(store.path) == row
    assert upkeep(store.path) == (2, 0)


def test_a_list_written_again_counts_as_a_change(store: SqliteStore) -> None:
    work_list = replace(_memory("todo: ship it"), kind="work_state", dedupe_key="work:todo")
    list_id = store.put_work_state(work_list)
    assert store.put_work_state(replace(work_list, text="todo: shipped")) == list_id
    assert upkeep(store.path) == (2, 0)
    assert search_ids(store, "shipped") == [list_id]


def test_the_count_carries_over_from_a_store_made_before_migration_13(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(store_before(path, 13)) as conn:
        for n in range(5):
            insert_memory(conn, _memory(f"older note {n}"))
        conn.execute("UPDATE fts_upkeep SET changes = 5, merged_rows = 0, pending = 1")
    store = SqliteStore(path)
    try:
        assert upkeep(store.path) == (5, 0)
        store.add_memory(_memory("a newer note"))
        assert upkeep(store.path) == (6, 0)
        assert len(search_ids(store, "note")) == 6
    finally:
        store.close()


@pytest.mark.usefixtures("upkeep_each_write")
def test_a_full_merge_waits_for_a_quarter_of_the_store_to_be_indexed_since_the_last(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_text, "MIN_CHANGES", 4)
    merged_at = [n for n in range(1, 121) if _saved_and_merged(store, n)]
    # From 38 memories on, each full merge comes a quarter of the store after the last one.
    assert merged_at[merged_at.index(38) :] == [38, 38 + 9, 47 + 11, 58 + 14, 72 + 18, 90 + 22]


def test_the_upkeep_of_every_eighth_write_merges_fully_when_due_and_every_index(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_text, "MIN_CHANGES", 4)
    every = full_text.UPKEEP_EVERY
    merged_at = [n for n in range(1, 41) if _saved_and_merged(store, n)]
    # Due at 4, 8, 12...: each merge at the next write whose connection looks (1, 9, 17...).
    assert merged_at == [n for n in range(1, 41, every) if n > 1]
    # A fact-less save leaves fact_fts alone but for every eighth write, which merges it too.
    monkeypatch.setattr(full_text, "MIN_CHANGES", 10**6)
    for n in range(every + 1):  # one b-tree each, merged two at a time by facts' own writes
        store.add_fact(NewFact("shop", f"service-{n}", "owner", "team", NOW, NOW, "cli"))
    piled = btree_count(store.path, "fact_fts")
    assert piled > 1
    for n in range(every):
        store.add_memory(_memory(f"no fact here {n}"))
        after = btree_count(store.path, "fact_fts")
        assert after == piled or n == every - 1  # left alone but by the eighth write
    assert after < piled


def _saved_and_merged(store: SqliteStore, n: int) -> bool:
    store.add_memory(_memory(f"note number {n}"))
    return upkeep(store.path)[0] == 0
