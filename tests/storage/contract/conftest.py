"""The storage contract suite: every test runs against each store kind (tests/stores.py).

Tests here use only the protocols of ``storage.contracts``: no SQL, no dialect. On SQLite a
store is a file in the test's folder; on PostgreSQL a migrated schema per store name, emptied
for the test (``pg_schemas``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from aletheia_mem.storage.contracts import HubStore
from tests.stores import open_target, store_target

MakeStore = Callable[[str], HubStore]


@pytest.fixture
def make_store(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> Iterator[MakeStore]:
    """Opens empty stores of one kind, each by name (the same name twice: the same store)."""
    targets: dict[str, Path | str] = {}
    opened: list[HubStore] = []

    def make(name: str) -> HubStore:
        if name not in targets:  # emptied once: a second open sees the first one's writes
            targets[name] = store_target(request, store_kind, tmp_path, name)
        store = open_target(targets[name])
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in reversed(opened):
            store.close()


@pytest.fixture
def contract_store(make_store: MakeStore) -> HubStore:
    return make_store("main")
