"""The audit trail on PostgreSQL: who did what, newest first."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from aletheia_mem.storage.audit_where import audit_where
from aletheia_mem.storage.entries import AuditEntry, AuditPage, AuditQuery
from aletheia_mem.storage.postgres.database import PgPart
from aletheia_mem.storage.riders import Rider, riding_next_write

_SELECT = "SELECT at, actor, tool, project, result, detail FROM audit"
_ORDER = " ORDER BY at DESC, id DESC"


_INSERT = (
    "INSERT INTO audit (at, actor, tool, project, result, detail) VALUES (%s, %s, %s, %s, %s, %s)"
)


def _values(entry: AuditEntry) -> tuple[Any, ...]:
    return (entry.at, entry.actor, entry.tool, entry.project, entry.result, entry.detail)


def insert_audit(conn: psycopg.Connection[Any], entry: AuditEntry) -> None:
    """Write one audit row in the caller's transaction."""
    conn.execute(_INSERT, _values(entry))


def _audit_rider(entry: AuditEntry) -> Rider:
    """The audit row as a rider: parameters named apart from any statement's it joins."""
    return Rider(
        "INSERT INTO audit (at, actor, tool, project, result, detail) VALUES (%(audit_at)s,"
        " %(audit_actor)s, %(audit_tool)s, %(audit_project)s, %(audit_result)s,"
        " %(audit_detail)s)",
        {
            "audit_at": entry.at,
            "audit_actor": entry.actor,
            "audit_tool": entry.tool,
            "audit_project": entry.project,
            "audit_result": entry.result,
            "audit_detail": entry.detail,
        },
    )


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(int(row[0]), row[1], row[2], row[3], row[4], row[5])


class PgAudit(PgPart):
    """``AuditLog``."""

    def add_audit(self, entry: AuditEntry) -> None:
        self._db.statement(_INSERT, _values(entry))

    @contextmanager
    def audit_with_next_write(self, entry: AuditEntry) -> Iterator[Rider]:
        """Within the block, ``entry`` is written by the first write transaction that commits
        in this thread (one commit for a call and its audit row); the rider's ``result`` is then
        the row's id, for ``set_audit_result``. Nothing written when no write commits."""
        rider = _audit_rider(entry)
        with riding_next_write(rider):
            yield rider

    def set_audit_result(self, audit_id: int, result: str) -> None:
        """Correct the outcome of a row written before its call ended (the call failed after
        its write committed)."""
        self._db.statement("UPDATE audit SET result = %s WHERE id = %s", (result, audit_id))

    def list_audit(self, limit: int) -> list[AuditEntry]:
        with self._db.read() as conn:
            rows = conn.execute(f"{_SELECT}{_ORDER} LIMIT %s", (limit,))
            return [_entry(row) for row in rows.fetchall()]

    def list_audit_page(
        self,
        limit: int,
        actor: str | None,
        tool: str | None,
        project: str | None = None,
        result: str | None = None,
    ) -> list[AuditEntry]:
        """The newest audit rows, optionally of one actor, tool, project and result."""
        projects = None if project is None else (project,)
        where, params = audit_where(AuditQuery(limit, 0, actor, tool, projects, result), "%s")
        with self._db.read() as conn:
            rows = conn.execute(f"{_SELECT} WHERE {where}{_ORDER} LIMIT %s", [*params, limit])
            return [_entry(row) for row in rows.fetchall()]

    def audit_page(self, query: AuditQuery) -> AuditPage:
        """As the SQLite store's, in one snapshot: a page of the rows ``query`` matches from its
        offset (at most the last row), how many match and the highest id of them."""
        where, params = audit_where(query, "%s")
        with self._db.read_snapshot() as conn:
            row = conn.execute(f"SELECT count(*), max(id) FROM audit WHERE {where}", params)
            found = row.fetchone()
            total = int(found[0]) if found is not None else 0
            newest = int(found[1] or 0) if found is not None else 0
            offset = min(query.offset, max(total - 1, 0))
            rows = conn.execute(
                f"{_SELECT} WHERE {where}{_ORDER} LIMIT %s OFFSET %s",
                [*params, query.limit, offset],
            ).fetchall()
        return AuditPage(total, offset, [_entry(r) for r in rows], newest)

    def last_audit_by_actor(self) -> dict[str, int]:
        """When each actor last appears in the audit trail."""
        with self._db.read() as conn:
            rows = conn.execute("SELECT actor, max(at) FROM audit GROUP BY actor").fetchall()
        return {str(row[0]): int(row[1]) for row in rows}
