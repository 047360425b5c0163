"""A connection's memo outlives reads and forgets everything at any write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.storage.connections import ThreadConnections


def test_memo_is_kept_across_reads_and_emptied_by_a_write_that_changes_no_row(
    tmp_path: Path,
) -> None:
    pool = ThreadConnections(tmp_path / "memo.db")
    try:
        pool.memo()["answer"] = 42
        pool.get().execute("SELECT 1").fetchone()
        assert pool.memo() == {"answer": 42}
        with pool.write() as conn:
            conn.execute("CREATE TABLE t (x)")
        assert pool.memo() == {}
    finally:
        pool.close()


def test_memo_is_emptied_when_another_connection_commits(tmp_path: Path) -> None:
    pool = ThreadConnections(tmp_path / "memo.db")
    other = sqlite3.connect(tmp_path / "memo.db", isolation_level=None)
    try:
        other.execute("CREATE TABLE t (x)")
        pool.memo()["answer"] = 42
        other.execute("INSERT INTO t VALUES (1)")
        assert pool.memo() == {}
    finally:
        other.close()
        pool.close()
