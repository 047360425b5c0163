"""What the SQLite store indexes when it writes a memory."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.search.query import query_terms
from aletheia_mem.storage.base import MemoryQuery, NewMemory
from aletheia_mem.storage.sqlite import SqliteStore

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
