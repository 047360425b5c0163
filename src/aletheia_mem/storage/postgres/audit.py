"""The audit trail on PostgreSQL: who did what, newest first."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.postgres.database import PgPart
from aletheia_mem.storage.riders import Rider, riding_next_write

_SELECT = "SELECT at, actor, tool, project, result, detail FROM audit"


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
            rows = conn.execute(_SELECT + " ORDER BY at DESC, id DESC LIMIT %s", (limit,))
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
        with self._db.read() as conn:
            rows = conn.execute(
                _SELECT + " WHERE (%(actor)s::text IS NULL OR actor = %(actor)s)"
                " AND (%(tool)s::text IS NULL OR tool = %(tool)s)"
                " AND (%(project)s::text IS NULL OR project = %(project)s)"
                " AND (%(result)s::text IS NULL OR result = %(result)s)"
                " ORDER BY at DESC, id DESC LIMIT %(limit)s",
                {"actor": actor, "tool": tool, "project": project, "result": result,
                 "limit": limit},
            )  # fmt: skip
            return [_entry(row) for row in rows.fetchall()]

    def last_audit_by_actor(self) -> dict[str, int]:
        """When each actor last appears in the audit trail."""
        with self._db.read() as conn:
            rows = conn.execute("SELECT actor, max(at) FROM audit GROUP BY actor").fetchall()
        return {str(row[0]): int(row[1]) for row in rows}
