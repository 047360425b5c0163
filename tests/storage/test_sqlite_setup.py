"""How the SQLite store sets up each connection it opens."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from aletheia_mem.storage.sqlite import SqliteStore

# About SQLite's own connection settings (PRAGMAs): SQLite alone.
pytestmark = pytest.mark.sqlite_only

_TEMP_STORE_MEMORY = 2


def test_every_connection_keeps_statement_journals_and_temporary_tables_in_memory(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "setup.db")
    try:
        seen = [store._conn.execute("PRAGMA temp_store").fetchone()[0]]
        worker = threading.Thread(
            target=lambda: seen.append(store._conn.execute("PRAGMA temp_store").fetchone()[0])
        )
        worker.start()
        worker.join()
        assert seen == [_TEMP_STORE_MEMORY, _TEMP_STORE_MEMORY]
    finally:
        store.close()
