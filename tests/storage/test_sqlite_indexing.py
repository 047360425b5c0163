"""What the SQLite store indexes when it writes a memory."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.memories import insert_memory
from tests.storage.old_stores import store_before

NOW = 1_800_000_000_000


def _note(text: str, files: tuple[str, ...] = (), key: str | None = None) -> NewMemory:
    kind = "note" if key is None else "work_state"
    return NewMemory("shop", "note", kind, text, text, "cli", NOW, key, files=files)


def _found(store: SqliteStore, words: str = "", file: str | None = None) -> list[int]:
    query = MemoryQuery(terms=tuple(query_terms(words)), projects=("shop",), file=file)
    return [memory.id for memory in store.search_memories(query, NOW)]


def test_a_new_memory_is_found_by_its_words_and_its_files(store: SqliteStore) -> None:
    memory, created = store.add_memory(_note("ledger rounding rule", ("src/ledger.py",)))
    assert created
    assert _found(store, "rounding") == [memory.id]
    assert _found(store, file="src/ledger.py") == [memory.id]


def test_rewriting_a_list_forgets_its_old_words_and_files(store: SqliteStore) -> None:
    first = _note("alpha items", ("docs/alpha.md",), key="work:todo")
    list_id = store.put_work_state(first)
    second = replace(first, title="omega items", text="omega items", files=("docs/omega.md",))
    assert store.put_work_state(second) == list_id
    assert _found(store, "alpha") == []
    assert _found(store, file="docs/alpha.md") == []
    assert _found(store, "omega") == [list_id]
    assert _found(store, file="docs/omega.md") == [list_id]


def test_a_saved_memory_is_returned_as_it_reads_back(store: SqliteStore) -> None:
    new = replace(
        _note('ünïcode, quotes " and a\nnewline', ("src/a.py", "docs/ß.md")),
        narrative="why it matters",
        facts=("the API is v2", "[not json]"),
        pinned=True,
    )
    for memory in (store.add_memory(new)[0], store.add_memory(_note("plain note"))[0]):
        assert memory == store.get_memory(memory.id)


@pytest.mark.sqlite_only
def test_files_indexed_before_migration_14_are_found_after_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(store_before(path, 14)) as conn:
        old = insert_memory(conn, _note("ledger rounding rule", ("src/ledger.py", "docs/a.md")))
    store = SqliteStore(path)
    try:
        newer, _ = store.add_memory(_note("ledger audit", ("lib/src/ledger.py",)))
        assert _found(store, file="src/ledger.py") == [old]
        assert _found(store, file="docs/a.md") == [old]
        assert _found(store, file="lib/src/ledger.py") == [newer.id]
        suffix = MemoryQuery(projects=("shop",), file="ledger.py", file_suffix=True)
        assert {m.id for m in store.search_memories(suffix, NOW)} == {old, newer.id}
        with closing(sqlite3.connect(path)) as conn:
            indexes = {row[1] for row in conn.execute("PRAGMA index_list(memory_files)")}
            plain = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'memory_files'")
            assert "WITHOUT ROWID" in plain.fetchone()[0]
        assert "memory_files_path" not in indexes
        assert "memory_files_path_reversed" in indexes
    finally:
        store.close()


def test_a_memory_without_facts_or_files_reads_back_with_none(store: SqliteStore) -> None:
    bare, _ = store.add_memory(_note("bare note"))
    filed, _ = store.add_memory(_note("filed note", ("src/ledger.py",)))
    read = {memory.id: memory for memory in store.get_memories([bare.id, filed.id])}
    assert (read[bare.id].facts, read[bare.id].files) == ((), ())
    assert (read[filed.id].facts, read[filed.id].files) == ((), ("src/ledger.py",))
    assert read[bare.id] == bare
