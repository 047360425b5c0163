"""Every SQLite table whose ids an import may set (AUTOINCREMENT) refuses an id past ``MAX_ID``:
migration 0027's triggers, whose number must be ``MAX_ID``'s."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.storage.id_cap import MAX_ID
from aletheia_mem.storage.sqlite import SqliteStore


def test_each_autoincrement_table_has_a_trigger_refusing_ids_past_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    try:
        tables = {
            name
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
            )
            if sql is not None and "AUTOINCREMENT" in sql.upper()
        }
        capped = dict(
            conn.execute(
                "SELECT tbl_name, sql FROM sqlite_master WHERE name LIKE '%\\_id\\_cap' ESCAPE '\\'"
            ).fetchall()
        )
    finally:
        conn.close()
    # The hub's tokens and the counters of the change log and of the vectors to compute are never
    # set by an import, nor shown.
    assert set(capped) == tables - {"hub_tokens", "sync_log", "memory_vectors"}, tables
    assert all(f"NEW.id > {MAX_ID}" in sql for sql in capped.values())
