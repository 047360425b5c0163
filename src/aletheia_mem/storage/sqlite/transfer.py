"""Whole-store export and import of the SQLite store, row by row (local SQLite only)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aletheia_mem.errors import ConflictError
from aletheia_mem.storage import full_text
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import index_memory
from aletheia_mem.storage.sqlite.rows import (
    fact_key,
)

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    pass


class SqliteTransfer(SqliteDatabase):
    """Whole-store export and import, row by row (local only)."""

    # Tables that hold the user's data, in an order that keeps references pointing backwards.
    DATA_TABLES = ("memories", "facts", "rules", "episodes", "episode_requests", "audit")
    # Columns rebuilt from others on import (and so left out of an export).
    _DERIVED_COLUMNS = (("facts", "subject_key"), ("facts", "predicate_key"))

    def data_columns(self, table: str) -> list[str]:
        """The stored (non-derived) columns of one data table, in schema order."""
        if table not in self.DATA_TABLES:
            raise ValueError(f"not a data table: {table}")
        rows = self._conn.execute(f"PRAGMA table_info({table})").fetchall()
        return [row["name"] for row in rows if (table, row["name"]) not in self._DERIVED_COLUMNS]

    def count_rows(self, table: str) -> int:
        columns = self.data_columns(table)  # validates the name
        del columns
        return int(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def export_rows(self, table: str) -> Iterator[dict[str, Any]]:
        """Every row of a data table as stored, in rowid order, read in one snapshot."""
        columns = self.data_columns(table)
        cursor = self._conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
        for row in cursor:
            yield dict(zip(columns, row, strict=True))

    def data_sequences(self) -> dict[str, int]:
        """The AUTOINCREMENT counters of the data tables (the next ids)."""
        rows = self._conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
        return {row[0]: int(row[1]) for row in rows if row[0] in self.DATA_TABLES}

    def is_empty(self) -> bool:
        """Whether no data table holds a row."""
        return _is_empty(self._conn)

    def import_rows(
        self, rows: Iterable[tuple[str, dict[str, Any]]], sequences: dict[str, int]
    ) -> int:
        """Insert exported rows as they were (ids included) in one transaction.

        Search indexes and derived columns are rebuilt; references may point forward within
        the batch (foreign keys are checked at commit). Returns the number of rows.

        Raises:
            ConflictError: the store holds data (another process may have saved since the
                caller's ``is_empty``: the transaction checks again).
        """
        count = 0
        with self._write() as conn:
            if not _is_empty(conn):
                raise holds_data(self.path)
            conn.execute("PRAGMA defer_foreign_keys = ON")
            for table, values in rows:
                columns = self.data_columns(table)
                record = {name: values.get(name) for name in columns}
                if table == "facts":
                    record["subject_key"] = fact_key(str(record["subject"]))
                    record["predicate_key"] = fact_key(str(record["predicate"]))
                names = list(record)
                try:
                    conn.execute(
                        f"INSERT INTO {table} ({', '.join(names)})"
                        f" VALUES ({', '.join('?' * len(names))})",
                        [record[name] for name in names],
                    )
                except sqlite3.IntegrityError as error:
                    raise ValueError(f"{table} row {record.get('id')}: {error}") from None
                self._index_imported(conn, table, record)
                count += 1
            broken = conn.execute("PRAGMA foreign_key_check").fetchone()
            if broken is not None:
                raise ValueError(f"{broken[0]} row {broken[1]} refers to a missing {broken[2]} row")
            for name, seq in sequences.items():
                if name in self.DATA_TABLES:
                    conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
                    conn.execute(
                        "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq)
                    )
        return count

    def _index_imported(self, conn: sqlite3.Connection, table: str, record: dict[str, Any]) -> None:
        if table == "memories":
            from aletheia_mem.storage.entries import NewMemory

            memory = NewMemory(
                project=record["project"],
                type=record["type"],
                kind=record["kind"],
                title=record["title"],
                text=record["text"],
                tool=record["tool"],
                created_at=record["created_at"],
                dedupe_key=record["dedupe_key"],
                narrative=record["narrative"],
                facts=tuple(json.loads(record["facts"])),
                files=tuple(json.loads(record["files"])),
            )
            index_memory(conn, record["id"], memory)
        elif table == "facts":
            full_text.index_fact(
                conn, record["id"], record["subject"], record["predicate"], record["object"]
            )


def _is_empty(conn: sqlite3.Connection) -> bool:
    return all(
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
        for table in SqliteTransfer.DATA_TABLES
    )


def holds_data(path: Path) -> ConflictError:
    return ConflictError(
        f"The store at {path} already holds data; import loads an export into an"
        " empty store. Point ALETHEIA_DATA_DIR at a new folder and import there."
    )


def remove_unused_store(path: Path) -> bool:
    """Remove the store at ``path`` (with its ``-wal`` and ``-shm``), which this process made
    and has closed, unless another process has it open or saved to it; returns whether it did.

    SQLite removes the ``-wal`` file when the last connection to a store closes: one still there
    once this process's connections are closed is another process's, and an agent's server
    that opened the new store would go on writing into a removed file, its saves lost.
    """
    wal = Path(f"{path}-wal")
    if wal.exists() or not path.exists():  # connecting would make an empty file
        return False
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            if not _is_empty(conn):
                return False
    except sqlite3.Error:
        return False  # a store this check cannot read is left as it is
    if wal.exists():  # opened by another process since: it is not the last connection here
        return False
    for suffix in ("", "-wal", "-shm", "-journal"):
        with suppress(OSError):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return True
