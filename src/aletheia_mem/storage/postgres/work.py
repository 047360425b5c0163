"""Episodes (sessions of a host) and their requests, and dismissals, on PostgreSQL.

The work-state lists (``put_work_state``, ``keyed_memories``) are memories: see ``memories``.
"""

from __future__ import annotations

from dataclasses import replace

from psycopg import sql

from aletheia_mem.storage.base import DismissTable
from aletheia_mem.storage.entries import AuditEntry, SessionRequest
from aletheia_mem.storage.postgres.audit import insert_audit
from aletheia_mem.storage.postgres.database import PgPart
from aletheia_mem.storage.uids import new_uid

# How many of the newest requests (all projects) recent_requests reads before a full sort.
_REQUEST_WINDOW = 200
_DISMISSABLE = frozenset(("memories", "facts", "episodes"))
# set_dismissed, as the SQLite store's: a restore clears both; a dismissal keeps the first time,
# and the reason unless it takes the dismissal over (keep false); a row it would not change is
# not written.
_NEW_REASON = (
    "CASE WHEN dismissed_at IS NULL OR NOT %(keep)s THEN %(reason)s::text ELSE dismiss_reason END"
)
_SET_DISMISSED = (
    "UPDATE {} SET"
    " dismissed_at = CASE WHEN %(at)s::bigint IS NULL THEN NULL"
    "  ELSE coalesce(dismissed_at, %(at)s::bigint) END,"
    f" dismiss_reason = CASE WHEN %(at)s::bigint IS NULL THEN NULL ELSE {_NEW_REASON} END"
    " WHERE id = %(id)s AND CASE WHEN %(at)s::bigint IS NULL THEN dismissed_at IS NOT NULL"
    f"  ELSE dismissed_at IS NULL OR dismiss_reason IS DISTINCT FROM {_NEW_REASON} END"
    " RETURNING project"
)


def _table(table: DismissTable) -> sql.Identifier:
    if table not in _DISMISSABLE:  # a Literal to mypy, any string at run time
        raise ValueError(f"not a table of dismissable items: {table!r}")
    return sql.Identifier(table)


class PgWork(PgPart):
    """``WorkStore`` but for the work-state lists."""

    def start_episode(self, project: str, tool: str, at: int) -> int:
        with self._db.write() as conn:
            [row] = conn.execute(
                "INSERT INTO episodes (uid, project, tool, started_at) VALUES (%s, %s, %s, %s)"
                " RETURNING id",
                (new_uid(), project, tool, at),
            ).fetchall()
            return int(row[0])

    def open_episode(self, uid: str, project: str, tool: str, at: int) -> int:
        """The episode with this uid, started now if new and open again if it had ended."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO episodes (uid, project, tool, started_at) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (uid) DO UPDATE SET ended_at = NULL"
                " WHERE episodes.ended_at IS NOT NULL",
                (uid, project, tool, at),
            )
            [row] = conn.execute("SELECT id FROM episodes WHERE uid = %s", (uid,)).fetchall()
            return int(row[0])

    def episode_id_by_uid(self, uid: str) -> int | None:
        with self._db.read() as conn:
            row = conn.execute("SELECT id FROM episodes WHERE uid = %s", (uid,)).fetchone()
        return None if row is None else int(row[0])

    def episode_started_at(self, episode_id: int) -> int | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT started_at FROM episodes WHERE id = %s", (episode_id,)
            ).fetchone()
        return None if row is None else int(row[0])

    def link_episode_memory(self, episode_id: int, memory_id: int) -> None:
        """Note that the episode's session saved the memory (again: no change)."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO episode_memories (episode_id, memory_id) VALUES (%s, %s)"
                " ON CONFLICT DO NOTHING",
                (episode_id, memory_id),
            )

    def episode_memory_ids(self, episode_id: int, kind: str, limit: int) -> list[int]:
        """The ids of the first ``limit`` memories of ``kind`` the episode's session saved,
        oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT l.memory_id FROM episode_memories AS l"
                " JOIN memories AS m ON m.id = l.memory_id"
                " WHERE l.episode_id = %s AND m.kind = %s ORDER BY l.memory_id LIMIT %s",
                (episode_id, kind, limit),
            ).fetchall()
        return [int(row[0]) for row in rows]

    def retire_episode_memory(
        self, episode_id: int, memory_id: int, at: int, reason: str, audit: AuditEntry
    ) -> bool:
        """As the SQLite store's: unlink, and dismiss unless dismissed or linked elsewhere."""
        with self._db.write() as conn:
            conn.execute(
                "DELETE FROM episode_memories WHERE episode_id = %s AND memory_id = %s",
                (episode_id, memory_id),
            )
            row = conn.execute(
                "UPDATE memories AS m SET dismissed_at = %s, dismiss_reason = %s"
                " WHERE m.id = %s AND m.dismissed_at IS NULL AND NOT EXISTS (SELECT 1"
                " FROM episodes AS e JOIN episode_memories AS l ON l.episode_id = e.id"
                " AND l.memory_id = m.id WHERE e.project = m.project) RETURNING m.project",
                (at, reason, memory_id),
            ).fetchone()
            if row is None:
                return False
            insert_audit(conn, replace(audit, project=row[0]))
            return True

    def add_request(self, episode_id: int, text: str, at: int) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO episode_requests (episode_id, at, text) VALUES (%s, %s, %s)",
                (episode_id, at, text),
            )

    def end_episode(self, episode_id: int, at: int, summary: str | None) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE episodes SET ended_at = %s, summary = coalesce(%s, summary) WHERE id = %s",
                (at, summary, episode_id),
            )
            return cursor.rowcount > 0

    def episode_requests(self, episode_id: int, limit: int) -> list[SessionRequest]:
        """As the SQLite store's: a live episode's first requests, oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT r.episode_id, r.at, r.text, e.tool FROM episode_requests AS r"
                " JOIN episodes AS e ON e.id = r.episode_id WHERE r.episode_id = %s"
                " AND e.dismissed_at IS NULL ORDER BY r.at, r.id LIMIT %s",
                (episode_id, limit),
            ).fetchall()
        return [SessionRequest(int(row[0]), int(row[1]), row[2], row[3]) for row in rows]

    def recent_requests(self, project: str, limit: int) -> list[SessionRequest]:
        """A project's newest requests (of episodes not dismissed), newest first: looked for
        among the newest few hundred of every project first, which is one short range of the
        ``at`` index, and among all of the project's only when those hold too few."""
        query = (
            "SELECT r.episode_id, r.at, r.text, e.tool FROM {} r"
            " JOIN episodes e ON e.id = r.episode_id"
            " WHERE e.project = %s AND e.dismissed_at IS NULL"
            " ORDER BY r.at DESC, r.id DESC LIMIT %s"
        )
        newest = "(SELECT * FROM episode_requests ORDER BY at DESC, id DESC LIMIT %s)"
        with self._db.read() as conn:
            rows = conn.execute(query.format(newest), (_REQUEST_WINDOW, project, limit)).fetchall()
            if len(rows) < limit:
                rows = conn.execute(query.format("episode_requests"), (project, limit)).fetchall()
        return [SessionRequest(int(row[0]), int(row[1]), row[2], row[3]) for row in rows]

    def set_dismissed(
        self,
        table: DismissTable,
        item_id: int,
        at: int | None,
        reason: str | None,
        audit: AuditEntry,
        *,
        keep_reason: bool = True,
        unchanged_detail: str | None = None,
    ) -> str | None:
        """Hide (``at`` set) or restore (``at`` None) one item and audit it, in one transaction.
        Restoring an item that is not dismissed changes nothing, and dismissing it again keeps
        its first time and reason (unless ``keep_reason`` is false); a call that changes nothing
        is audited with ``unchanged_detail`` (when given) as its detail (see the SQLite store's).

        Returns the item's project, or None when there is no such item.
        """
        with self._db.write() as conn:
            row = conn.execute(
                sql.SQL(_SET_DISMISSED).format(_table(table)),
                {"at": at, "reason": reason, "id": item_id, "keep": keep_reason},
            ).fetchone()
            detail = audit.detail
            if row is None:  # nothing changed
                detail = detail if unchanged_detail is None else unchanged_detail
                row = conn.execute(
                    sql.SQL("SELECT project FROM {} WHERE id = %s").format(_table(table)),
                    (item_id,),
                ).fetchone()
            if row is None:
                return None
            insert_audit(conn, replace(audit, project=row[0], detail=detail))
            return str(row[0])

    def project_of(self, table: DismissTable, item_id: int) -> str | None:
        with self._db.read() as conn:
            row = conn.execute(
                sql.SQL("SELECT project FROM {} WHERE id = %s").format(_table(table)),
                (item_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    def is_dismissed(self, table: DismissTable, item_id: int) -> bool:
        """Whether the item is there and dismissed."""
        query = sql.SQL("SELECT 1 FROM {} WHERE id = %s AND dismissed_at IS NOT NULL")
        with self._db.read() as conn:
            row = conn.execute(query.format(_table(table)), (item_id,)).fetchone()
        return row is not None
