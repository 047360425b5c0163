"""Where a hub's store lives for a test: a SQLite file, then a PostgreSQL schema (store_kind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stores import store_target


@pytest.fixture
def hub_db(request: pytest.FixtureRequest, store_kind: str, tmp_path: Path) -> Path | str:
    """An empty hub store for this test: its file, or the URL of its emptied schema."""
    return store_target(request, store_kind, tmp_path, "hub")


@pytest.fixture(scope="module")
def module_hub_db(
    request: pytest.FixtureRequest, store_kind: str, tmp_path_factory: pytest.TempPathFactory
) -> Path | str:
    """An empty hub store for a module's hub process (one per module and kind)."""
    return store_target(request, store_kind, tmp_path_factory.mktemp("hub"), "hub")
