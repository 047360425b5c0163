"""Whole-store export and import of the SQLite store, row by row (local SQLite only)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

from aletheia_mem.errors import ConflictError, InvalidInputError
from aletheia_mem.search.text import index_text
from aletheia_mem.storage import full_text
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import MEMORY_FTS_INSERT, memory_fts_row
from aletheia_mem.storage.sqlite.rows import fact_key

# One row of an import: its table, its stored columns' values, and the line it came from.
ImportRow = tuple[str, dict[str, Any], int]


class SqliteTransfer(SqliteDatabase):
    """Whole-store export and import, row by row (local only)."""

    # Tables that hold the user's data, in an order that keeps references pointing backwards.
    DATA_TABLES = (
        "memories",
        "facts",
        "rules",
        "episodes",
        "episode_requests",
        "episode_memories",
        "audit",
    )
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

    def import_rows(self, rows: Iterable[ImportRow], sequences: dict[str, int]) -> int:
        """Insert exported rows as they were (ids included) in one transaction.

        ``rows`` is read, and each row's index entries worked out, before the write lock is
        taken: the lock is held only for the inserts, so that agents saving meanwhile wait
        seconds, not as long as a large file takes to read and check. Search indexes and
        derived columns are rebuilt; references may point forward within the batch. Returns
        the number of rows.

        Foreign keys are checked once, after the inserts (``PRAGMA foreign_key_check``), not
        row by row: with a reference pending (a fact superseded by a later one), SQLite
        searches every new fact's referrers, without an index on ``superseded_by``, so the
        lock grew with the square of the facts.

        Raises:
            ConflictError: the store holds data (another process may have saved since the
                caller's ``is_empty``: the transaction checks again).
            InvalidInputError: a row clashes with another, or refers to one that is not there
                (the message names the row's line).
        """
        batch = _Batch({table: self.data_columns(table) for table in self.DATA_TABLES})
        for table, values, line in rows:
            batch.add(table, values, line)
        batch.rows.sort(key=lambda row: _ORDER[row[0]])  # stable: a table's rows in file order
        # SQLite takes this only outside a transaction: before the write below begins one.
        self._conn.execute("PRAGMA foreign_keys = OFF")
        try:
            with self._write() as conn:
                if not _is_empty(conn):
                    raise holds_data(self.path)
                batch.insert(conn)
                _set_sequences(conn, sequences)
        finally:
            self._conn.execute("PRAGMA foreign_keys = ON")
        return len(batch.rows)


def _set_sequences(conn: sqlite3.Connection, sequences: dict[str, int]) -> None:
    """The data tables' next ids as the export had them."""
    for name, seq in sequences.items():
        if name in SqliteTransfer.DATA_TABLES:
            conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
            conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq))


class _Batch:
    """An import's rows made ready to insert (statements, values, index entries), and the line
    each came from, for its errors."""

    def __init__(self, columns: dict[str, list[str]]) -> None:
        self._statements = {
            table: (
                f"INSERT INTO {table} ({', '.join(names + _keys(table))})"
                f" VALUES ({', '.join('?' * len(names + _keys(table)))})",
                names,
            )
            for table, names in columns.items()
        }
        self.rows: list[tuple[str, str, list[Any], int]] = []  # table, statement, values, line
        self.lines: dict[tuple[str, Any], int] = {}
        self._count: dict[str, int] = {}
        self.memory_fts: list[tuple[Any, ...]] = []
        self.memory_files: list[tuple[Any, str, str]] = []
        self.fact_fts: list[tuple[Any, ...]] = []

    def add(self, table: str, values: dict[str, Any], line: int) -> None:
        sql, names = self._statements[table]
        params = [values.get(name) for name in names]
        if table == "facts":
            params += [fact_key(str(values.get("subject"))), fact_key(str(values.get("predicate")))]
        self.rows.append((table, sql, params, line))
        # A row is found again by its id, or by its rowid where it has none (a link's): rows go
        # into an empty table in file order, so that is their count so far.
        self._count[table] = self._count.get(table, 0) + 1
        self.lines.setdefault((table, values.get("id", self._count[table])), line)
        if table == "memories":
            self._index_memory(values)
        elif table == "facts":
            self.fact_fts.append(
                (
                    values.get("id"),
                    index_text(str(values.get("subject"))),
                    index_text(str(values.get("predicate"))),
                    index_text(str(values.get("object"))),
                )
            )

    def _index_memory(self, values: dict[str, Any]) -> None:
        from aletheia_mem.storage.entries import NewMemory  # off the start path

        memory_id = values.get("id", 0)
        files = tuple(json.loads(values.get("files") or "[]"))
        memory = NewMemory(
            project=str(values.get("project")),
            type=str(values.get("type")),
            kind=str(values.get("kind")),
            title=str(values.get("title")),
            text=str(values.get("text")),
            tool=str(values.get("tool")),
            created_at=values.get("created_at", 0),
            dedupe_key=values.get("dedupe_key"),
            narrative=values.get("narrative"),
            facts=tuple(json.loads(values.get("facts") or "[]")),
            files=files,
        )
        self.memory_fts.append(memory_fts_row(memory_id, memory))
        self.memory_files += [(memory_id, path, path[::-1]) for path in files]

    def insert(self, conn: sqlite3.Connection) -> None:
        """Every row, index entry, change-log entry and check, in the caller's transaction.

        The change-log triggers stay silent for the inserts (a request's would rewrite its
        episode's entry each time): the log is written once, after them.
        """
        conn.execute("UPDATE sync_control SET quiet = 1")
        for _, sql, params, line in self.rows:
            try:
                conn.execute(sql, params)
            except sqlite3.IntegrityError as error:
                raise InvalidInputError(
                    f"Line {line}: this record does not fit with the others ({error})."
                ) from None
        for log in _LOG_VERSIONS:
            conn.execute(log)
        conn.execute("UPDATE sync_control SET quiet = 0")
        conn.executemany(MEMORY_FTS_INSERT, self.memory_fts)
        conn.executemany(
            "INSERT OR IGNORE INTO memory_files (memory_id, path, path_reversed) VALUES (?, ?, ?)",
            self.memory_files,
        )
        conn.executemany(
            "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
            self.fact_fts,
        )
        for index, entries in (("memory_fts", self.memory_fts), ("fact_fts", self.fact_fts)):
            if entries:
                full_text.note_indexed(conn, index, fresh=True)
        self._check_references(conn)

    def _check_references(self, conn: sqlite3.Connection) -> None:
        broken = conn.execute("PRAGMA foreign_key_check").fetchone()
        if broken is not None:
            line = self.lines.get((broken[0], broken[1]), "?")
            raise InvalidInputError(
                f"Line {line}: this {broken[0]} record refers to a missing {broken[2]} record."
            )
        for column, table, noun in _EVIDENCE:
            cited = conn.execute(
                f"SELECT rules.id, each.value FROM rules, json_each(rules.{column}) AS each"
                f" WHERE each.value NOT IN (SELECT id FROM {table}) LIMIT 1"
            ).fetchone()
            if cited is not None:
                line = self.lines.get(("rules", cited[0]), "?")
                raise InvalidInputError(
                    f"Line {line}: rule cites {noun} #{cited[1]}, which the export does not hold."
                )


# Rows go in table by table, in DATA_TABLES order: a memory before the facts that state it,
# whose insert trigger marks it stale or not (a fact put in first would find no row to mark).
_ORDER = {table: index for index, table in enumerate(SqliteTransfer.DATA_TABLES)}
# Every imported item a change of this store, as the insert triggers of 0005_hub_sync.sql log
# it: its version the time now (past the item's earlier version, if the log held one) and this
# store's id, so that a first sync carries it. Kind by kind, each in the order of its rows.
_LOG_VERSIONS = tuple(
    "INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)"
    f" SELECT '{kind}', item.{key},"
    " max(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER),"
    "     coalesce((SELECT changed_at + 1 FROM sync_log"
    f"               WHERE kind = '{kind}' AND key = item.{key}), 0)),"
    " (SELECT store_id FROM sync_identity), 0"
    f" FROM {table} AS item ORDER BY item.rowid"
    for kind, table, key in (
        ("memory", "memories", "uid"),
        ("fact", "facts", "uid"),
        ("rule", "rules", "id"),
        ("episode", "episodes", "uid"),
    )
)
# A rule's evidence: its column, the table cited and what the table holds.
_EVIDENCE = (
    ("evidence_memory_ids", "memories", "memory"),
    ("evidence_fact_ids", "facts", "fact"),
)


def _keys(table: str) -> list[str]:
    """The derived columns an insert into ``table`` adds after the stored ones."""
    return [column for name, column in SqliteTransfer._DERIVED_COLUMNS if name == table]


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
