"""The audit trail of the SQLite store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from aletheia_mem.storage.riders import Rider, riding_next_write
from aletheia_mem.storage.sqlite.database import SqliteDatabase

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import AuditEntry


_INSERT = "INSERT INTO audit (at, actor, tool, project, result, detail) VALUES (?, ?, ?, ?, ?, ?)"


def _values(entry: AuditEntry) -> tuple[object, ...]:
    return (entry.at, entry.actor, entry.tool, entry.project, entry.result, entry.detail)


def insert_audit(conn: sqlite3.Connection, entry: AuditEntry) -> None:
    conn.execute(_INSERT, _values(entry))


class SqliteAudit(SqliteDatabase):
    """The audit trail, newest first."""

    def add_audit(self, entry: AuditEntry) -> None:
        with self._write() as conn:
            insert_audit(conn, entry)

    @contextmanager
    def audit_with_next_write(self, entry: AuditEntry) -> Iterator[Rider]:
        """Within the block, ``entry`` is written by the first write transaction that commits
        in this thread (a call and its audit row in one commit: a kill between two commits
        would leave the write without its row); the rider's ``result`` is then the row's id,
        for ``set_audit_result``. Nothing written when no write commits."""
        with riding_next_write(Rider(_INSERT, _values(entry))) as rider:
            yield rider

    def set_audit_result(self, audit_id: int, result: str) -> None:
        """Correct the outcome of a row written before its call ended (the call failed after
        its write committed)."""
        with self._write() as conn:
            conn.execute("UPDATE audit SET result = ? WHERE id = ?", (result, audit_id))

    def list_audit(self, limit: int) -> list[AuditEntry]:
        from aletheia_mem.storage.entries import AuditEntry

        rows = self._conn.execute(
            "SELECT at, actor, tool, project, result, detail FROM audit"
            " ORDER BY at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [AuditEntry(*row) for row in rows]

    def list_audit_page(
        self,
        limit: int,
        actor: str | None,
        tool: str | None,
        project: str | None = None,
        result: str | None = None,
    ) -> list[AuditEntry]:
        """The newest audit rows, optionally of one actor, tool, project and result."""
        from aletheia_mem.storage.entries import AuditEntry

        sql, params = "SELECT at, actor, tool, project, result, detail FROM audit WHERE 1 = 1", []
        filters = (("actor", actor), ("tool", tool), ("project", project), ("result", result))
        for column, value in filters:
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        rows = self._conn.execute(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*params, limit])
        return [AuditEntry(*row) for row in rows.fetchall()]

    def last_audit_by_actor(self) -> dict[str, int]:
        """When each actor last appears in the audit trail."""
        rows = self._conn.execute("SELECT actor, max(at) FROM audit GROUP BY actor").fetchall()
        return {str(row[0]): int(row[1]) for row in rows}
