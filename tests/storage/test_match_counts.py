"""Searches keep their per-word match counts until the store changes, whoever changes it."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from aletheia_mem.search.rank import Ranking
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore

# About the SQLite store's memo of match counts, kept until its file changes: SQLite alone.
pytestmark = pytest.mark.sqlite_only

NOW = 1_790_000_000_000

_SAVE_IN_ANOTHER_PROCESS = """
import sys
from pathlib import Path
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.test_match_counts import _memory
store = SqliteStore(Path(sys.argv[1]))
store.add_memory(_memory(sys.argv[2]))
store.close()
"""


def _memory(text: str) -> NewMemory:
    return NewMemory(
        project="shop",
        type="note",
        kind="note",
        title=text,
        text=text,
        tool="cli",
        created_at=NOW,
        dedupe_key=None,
    )


def _in_this_store(store: SqliteStore, path: Path, text: str) -> None:
    store.add_memory(_memory(text))


def _in_another_thread(store: SqliteStore, path: Path, text: str) -> None:
    worker = threading.Thread(target=store.add_memory, args=(_memory(text),))
    worker.start()
    worker.join(timeout=5)


def _in_another_store(store: SqliteStore, path: Path, text: str) -> None:
    other = SqliteStore(path)
    try:
        other.add_memory(_memory(text))
    finally:
        other.close()


def _in_another_process(store: SqliteStore, path: Path, text: str) -> None:
    subprocess.run(
        [sys.executable, "-c", _SAVE_IN_ANOTHER_PROCESS, str(path), text],
        cwd=Path(__file__).parents[2],
        check=True,
        capture_output=True,
        timeout=30,
    )


Writer = Callable[[SqliteStore, Path, str], None]


def _texts(store: SqliteStore, terms: tuple[str, ...], budget: int = 1000) -> set[str]:
    query = MemoryQuery(terms=terms, projects=("shop",))
    ids = store.rank_memory_ids(query, NOW, Ranking(score_budget=budget))
    return {memory.text for memory in store.get_memories(ids)}


@pytest.mark.parametrize(
    "save", [_in_this_store, _in_another_thread, _in_another_store, _in_another_process]
)
def test_a_word_counted_as_absent_is_found_once_a_memory_with_it_is_saved(
    store: SqliteStore, save: Writer
) -> None:
    store.add_memory(_memory("alpha release notes"))
    # "zebra" matches nothing: a search that counts it 0 leaves it out of the match.
    assert _texts(store, ("alpha", "zebra")) == {"alpha release notes"}
    save(store, store.path, "zebra crossing")
    assert _texts(store, ("alpha", "zebra")) == {"alpha release notes", "zebra crossing"}


@pytest.mark.parametrize("save", [_in_this_store, _in_another_store])
def test_a_word_that_grew_past_the_budget_is_left_out_on_the_next_search(
    store: SqliteStore, save: Writer
) -> None:
    store.add_memory(_memory("service outage postmortem"))
    store.add_memory(_memory("service log line"))
    both = {"service outage postmortem", "service log line"}
    assert _texts(store, ("service", "postmortem"), budget=3) == both
    for n in range(3):
        save(store, store.path, f"service restart {n}")
    # Four matches of "service" now blow a budget of 3: only the rare word is scored.
    assert _texts(store, ("service", "postmortem"), budget=3) == {"service outage postmortem"}


def test_a_repeated_search_counts_its_words_once(store: SqliteStore) -> None:
    store.add_memory(_memory("alpha release notes"))
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    _texts(store, ("alpha", "release"))
    _texts(store, ("alpha", "release"))
    store._conn.set_trace_callback(None)
    assert sum("count(*)" in sql for sql in statements) == 2


def test_a_full_memo_starts_over_and_searches_stay_the_same(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aletheia_mem.storage.sqlite.search._MAX_MEMO_ENTRIES", 2)
    store.add_memory(_memory("alpha release notes"))
    store.add_memory(_memory("beta release notes"))
    for _ in range(2):
        assert _texts(store, ("alpha", "beta", "gamma")) == {
            "alpha release notes",
            "beta release notes",
        }
        assert len(store._pool.memo()) <= 2
