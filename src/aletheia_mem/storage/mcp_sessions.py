"""The ``mcp_sessions`` table: MCP sessions of the HTTP transport, shared by worker processes.

It lives in the store's file but has its own connections, so the transport never reaches into
the store of the tools. Rows are keyed by the SHA-256 of the session id, never the id itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from aletheia_mem.storage.connections import ThreadConnections
from aletheia_mem.storage.entries import SessionRow
from aletheia_mem.storage.store_file import store_problem

# How long a new session's row waits for another process's write lock: initialize answers the
# store's busy line past it rather than hold the client for the 30 s a tool's write waits.
INSERT_WAIT_MS = 2_000


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")


class SessionRows:
    """Reads and writes of ``mcp_sessions``; each write is one transaction."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._pool = ThreadConnections(path, _configure)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """The first row of a read; a damaged or unreadable file as the store's one-line error
        (writes are told so by ``ThreadConnections.write``)."""
        try:
            return self._pool.get().execute(sql, params).fetchone()
        except sqlite3.DatabaseError as error:
            raise store_problem(self._path, error) or error from None

    def close(self) -> None:
        self._pool.close()

    def insert(
        self,
        id_hash: str,
        row: SessionRow,
        *,
        expired_before: int,
        keep_at_most: int,
    ) -> None:
        """Add a session after dropping expired ones and, past the cap of its owner's sessions,
        that owner's least recently used: an owner never ends another owner's session."""
        with self._pool.write(wait_ms=INSERT_WAIT_MS) as conn:
            conn.execute("DELETE FROM mcp_sessions WHERE last_used_at < ?", (expired_before,))
            (count,) = conn.execute(
                "SELECT count(*) FROM mcp_sessions WHERE owner = ?", (row.owner,)
            ).fetchone()
            surplus = int(count) - keep_at_most + 1
            if surplus > 0:
                conn.execute(
                    "DELETE FROM mcp_sessions WHERE id_hash IN (SELECT id_hash FROM mcp_sessions"
                    " WHERE owner = ? ORDER BY last_used_at, created_at LIMIT ?)",
                    (row.owner, surplus),
                )
            conn.execute(
                "INSERT INTO mcp_sessions (id_hash, owner, protocol_version, client_name,"
                " created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    id_hash,
                    row.owner,
                    row.protocol_version,
                    row.client_name,
                    row.last_used_at,
                    row.last_used_at,
                ),
            )

    def find(self, id_hash: str) -> SessionRow | None:
        found = self._read(
            "SELECT owner, protocol_version, client_name, last_used_at FROM mcp_sessions"
            " WHERE id_hash = ?",
            (id_hash,),
        )
        return None if found is None else SessionRow(found[0], found[1], found[2], int(found[3]))

    def touch(self, id_hash: str, at: int) -> None:
        """Record a use, never waiting for another process's write lock: the store's busy error
        when it is held (the use is recorded at a later request)."""
        with self._pool.write(wait_ms=0) as conn:
            conn.execute(
                "UPDATE mcp_sessions SET last_used_at = max(last_used_at, ?) WHERE id_hash = ?",
                (at, id_hash),
            )

    def delete(self, id_hash: str, *, wait: bool = True) -> bool:
        """Remove a session; with ``wait`` False, the store's busy error at once when another
        process holds the write lock."""
        with self._pool.write(wait_ms=None if wait else 0) as conn:
            cursor = conn.execute("DELETE FROM mcp_sessions WHERE id_hash = ?", (id_hash,))
            return cursor.rowcount > 0

    def delete_other_owners(self, prefix: str, keep: str) -> int:
        with self._pool.write() as conn:
            cursor = conn.execute(
                "DELETE FROM mcp_sessions WHERE substr(owner, 1, ?) = ? AND owner <> ?",
                (len(prefix), prefix, keep),
            )
            return int(cursor.rowcount)

    def count(self) -> int:
        (count,) = self._read("SELECT count(*) FROM mcp_sessions")
        return int(count)
