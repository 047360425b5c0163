"""MCP sessions of the hub's HTTP transport on PostgreSQL, shared by every hub process.

Rows are keyed by the SHA-256 of the session id, never the id itself. Inserts take turns under
one transaction-scoped advisory lock: a session begins once per client connection, so the wait
is rare, and it keeps each owner's cap exact when processes add sessions at the same moment.
"""

from __future__ import annotations

from dataclasses import asdict

from aletheia_mem.storage.contracts import SessionRow
from aletheia_mem.storage.postgres.database import PgDatabase

# Any constant: the key of the advisory lock that serialises session inserts.
_INSERT_LOCK = 0x6D637073  # "mcps"


class PgSessionRows:
    """``SessionRows`` on the store's pool; each write is one transaction."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def close(self) -> None:
        """Nothing to release: the pool belongs to the store, which closes it."""

    def insert(
        self, id_hash: str, row: SessionRow, *, expired_before: int, keep_at_most: int
    ) -> None:
        """Add a session after dropping expired ones and, past the cap of its owner's sessions,
        that owner's least recently used: an owner never ends another owner's session."""
        with self._db.write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INSERT_LOCK,))
            conn.execute("DELETE FROM mcp_sessions WHERE last_used_at < %s", (expired_before,))
            conn.execute(
                "DELETE FROM mcp_sessions WHERE id_hash IN (SELECT id_hash FROM mcp_sessions"
                " WHERE owner = %s ORDER BY last_used_at DESC, created_at DESC OFFSET %s)",
                (row.owner, max(0, keep_at_most - 1)),
            )
            conn.execute(
                "INSERT INTO mcp_sessions (id_hash, owner, protocol_version, client_name,"
                " created_at, last_used_at) VALUES (%(id_hash)s, %(owner)s,"
                " %(protocol_version)s, %(client_name)s, %(last_used_at)s, %(last_used_at)s)",
                {"id_hash": id_hash, **asdict(row)},
            )

    def find(self, id_hash: str) -> SessionRow | None:
        with self._db.read() as conn:
            found = conn.execute(
                "SELECT owner, protocol_version, client_name, last_used_at FROM mcp_sessions"
                " WHERE id_hash = %s",
                (id_hash,),
            ).fetchone()
        return None if found is None else SessionRow(*found)

    def touch(self, id_hash: str, at: int) -> None:
        self._db.statement(
            "UPDATE mcp_sessions SET last_used_at = greatest(last_used_at, %s) WHERE id_hash = %s",
            (at, id_hash),
        )

    def delete(self, id_hash: str, *, wait: bool = True) -> bool:  # a row lock: never long
        sql = "DELETE FROM mcp_sessions WHERE id_hash = %s RETURNING 1"
        return bool(self._db.statement(sql, (id_hash,)))

    def delete_other_owners(self, prefix: str, keep: str) -> int:
        with self._db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM mcp_sessions WHERE substr(owner, 1, %s) = %s AND owner <> %s",
                (len(prefix), prefix, keep),
            )
            return int(cursor.rowcount)

    def count(self) -> int:
        with self._db.read() as conn:
            row = conn.execute("SELECT count(*) FROM mcp_sessions").fetchone()
        return 0 if row is None else int(row[0])
