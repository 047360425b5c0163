"""The storage contract suite: every test runs against each store in ``FACTORIES``.

Tests here use only the protocols of ``storage.contracts``: no SQL, no dialect. To run them on
another store, add its opener to ``FACTORIES`` (PostgreSQL: a fresh schema from ``pg_url``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.open import open_hub_store

# name -> (the test's request, a fresh folder, a name for this store) -> an empty store
Factory = Callable[[pytest.FixtureRequest, Path, str], HubStore]


def _sqlite(request: pytest.FixtureRequest, folder: Path, name: str) -> HubStore:
    return open_hub_store(folder / f"{name}.db")


FACTORIES: dict[str, Factory] = {
    "sqlite": _sqlite,
    # "postgres": lambda request, folder, name: open_hub_store(pg_store_url(request, name)),
}

MakeStore = Callable[[str], HubStore]


@pytest.fixture(params=sorted(FACTORIES))
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Opens empty stores of one kind, each by name (the same name twice: the same store)."""
    opened: list[HubStore] = []

    def make(name: str) -> HubStore:
        store = FACTORIES[request.param](request, tmp_path, name)
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
