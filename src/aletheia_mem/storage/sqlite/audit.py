"""The audit trail of the SQLite store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from aletheia_mem.storage.audit_where import audit_where
from aletheia_mem.storage.riders import Rider, riding_next_write
from aletheia_mem.storage.sqlite.database import SqliteDatabase

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import AuditEntry, AuditPage, AuditQuery


_SELECT = "SELECT at, actor, tool, project, result, detail FROM audit"
_ORDER = " ORDER BY at DESC, id DESC"
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

        rows = self._conn.execute(f"{_SELECT}{_ORDER} LIMIT ?", (limit,)).fetchall()
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
        from aletheia_mem.storage.entries import AuditEntry, AuditQuery

        projects = None if project is None else (project,)
        where, params = audit_where(AuditQuery(limit, 0, actor, tool, projects, result), "?")
        rows = self._conn.execute(f"{_SELECT} WHERE {where}{_ORDER} LIMIT ?", [*params, limit])
        return [AuditEntry(*row) for row in rows.fetchall()]

    def audit_page(self, query: AuditQuery) -> AuditPage:
        """A page of the rows ``query`` matches, newest first, from its offset (at most the
        last row), with how many match and the highest id of them, read in one snapshot."""
        from aletheia_mem.storage.entries import AuditEntry, AuditPage

        where, params = audit_where(query, "?")
        with self.snapshot():
            conn = self._conn
            total, newest = conn.execute(
                f"SELECT count(*), max(id) FROM audit WHERE {where}", params
            ).fetchone()
            offset = min(query.offset, max(int(total) - 1, 0))
            rows = conn.execute(
                f"{_SELECT} WHERE {where}{_ORDER} LIMIT ? OFFSET ?",
                [*params, query.limit, offset],
            ).fetchall()
        return AuditPage(int(total), offset, [AuditEntry(*row) for row in rows], int(newest or 0))

    def last_audit_by_actor(self) -> dict[str, int]:
        """When each actor last appears in the audit trail."""
        rows = self._conn.execute("SELECT actor, max(at) FROM audit GROUP BY actor").fetchall()
        return {str(row[0]): int(row[1]) for row in rows}
