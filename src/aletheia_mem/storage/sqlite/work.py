"""Work state of the SQLite store: work-state lists, episodes and their requests, dismissals."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import TYPE_CHECKING

from aletheia_mem.storage.base import (
    DismissTable,
    ListCheck,
    Memory,
    RenameRefusal,
    renamed_reason,
)
from aletheia_mem.storage.sqlite.audit import insert_audit
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import index_memory, insert_memory
from aletheia_mem.storage.sqlite.rows import (
    MEMORY_COLUMNS,
    memory_from_row,
)
from aletheia_mem.storage.uids import new_uid

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import AuditEntry, NewMemory, SessionRequest

# How many of the newest requests (all projects) recent_requests reads before a full sort.
_REQUEST_WINDOW = 200
# set_dismissed: a restore (:at NULL) clears both; a dismissal keeps the first time, and the
# reason unless a new one is given; a row it would not change is not written (no sync version).
_DISMISSED_AT = "CASE WHEN :at IS NULL THEN NULL ELSE coalesce(dismissed_at, :at) END"
# A dismissal of a dismissed item keeps its reason, unless it takes it over (``keep`` false).
_NEW_REASON = "CASE WHEN dismissed_at IS NULL OR NOT :keep THEN :reason ELSE dismiss_reason END"
_REASON = f"CASE WHEN :at IS NULL THEN NULL ELSE {_NEW_REASON} END"
_CHANGES = (
    "CASE WHEN :at IS NULL THEN dismissed_at IS NOT NULL"
    f" ELSE dismissed_at IS NULL OR dismiss_reason IS NOT {_NEW_REASON} END"
)


def _check_list(
    conn: sqlite3.Connection, project: str, key: str, kind: str, check: ListCheck | None
) -> None:
    """Run ``check`` on the live list under ``key`` in the caller's write transaction."""
    if check is None:
        return
    row = conn.execute(
        "SELECT text FROM memories WHERE project = ? AND dedupe_key = ? AND kind = ?"
        " AND dismissed_at IS NULL",
        (project, key, kind),
    ).fetchone()
    check(None if row is None else str(row[0]))


def _put_list(conn: sqlite3.Connection, new: NewMemory) -> int:
    """Create the list named by ``new.dedupe_key``, or replace its items and bring it back if it
    was dismissed; its id stays. A list is replaced whole, so a rewrite dates it anew (created
    and updated at ``new.created_at``): "since today" and the timeline find it where it was
    last written."""
    row = conn.execute(
        "SELECT id FROM memories WHERE project = ? AND dedupe_key = ?",
        (new.project, new.dedupe_key),
    ).fetchone()
    if row is None:
        return insert_memory(conn, new)
    conn.execute(
        "UPDATE memories SET title = ?, text = ?, tool = ?, created_at = ?, updated_at = ?,"
        " dismissed_at = NULL, dismiss_reason = NULL WHERE id = ?",
        (new.title, new.text, new.tool, new.created_at, new.created_at, row["id"]),
    )
    index_memory(conn, row["id"], new)
    return int(row["id"])


class SqliteWork(SqliteDatabase):
    """Work-state lists, episodes and their requests, dismissals."""

    def put_work_state(self, new: NewMemory, check: ListCheck | None = None) -> int:
        """Create or replace the work-state list named by ``new.dedupe_key``; its id stays.
        ``check`` sees the live list first, in the same transaction (see ``ListCheck``)."""
        with self._write() as conn:
            _check_list(conn, new.project, new.dedupe_key or "", new.kind, check)
            return _put_list(conn, new)

    def rename_work_state(
        self, old_key: str, new: NewMemory, audit: AuditEntry, check: ListCheck | None = None
    ) -> int | RenameRefusal:
        """Rename the live list under ``old_key``: ``new`` (its pin taken from the old list) is
        saved under the new key and the old list is dismissed, its reason naming the new one,
        with an audit row, in one transaction. A dismissed list of the new name comes back with
        the new items, as ``put_work_state`` brings it back. Nothing changes when there is no
        such list or a live one holds the new name. Returns the new list's id, or why nothing
        moved.

        Two ordinary changes, not a key changed in place: a synced store that holds another
        list under the new name merges the new one as two writes of one name, where a row whose
        key changed would break that store's unique key and stop its sync. ``check`` sees the
        live list under ``old_key`` first, in the same transaction."""
        with self._write() as conn:
            _check_list(conn, new.project, old_key, new.kind, check)
            row = conn.execute(
                "SELECT id, pinned FROM memories WHERE project = ? AND dedupe_key = ? AND kind = ?"
                " AND dismissed_at IS NULL",
                (new.project, old_key, new.kind),
            ).fetchone()
            if row is None:
                return "missing"
            taken = conn.execute(
                "SELECT 1 FROM memories WHERE project = ? AND dedupe_key = ?"
                " AND dismissed_at IS NULL",
                (new.project, new.dedupe_key),
            ).fetchone()
            if taken is not None:
                return "taken"
            pinned = bool(row["pinned"])
            memory_id = _put_list(conn, replace(new, pinned=pinned))
            conn.execute(  # a dismissed list of the new name came back: it takes the pin too
                "UPDATE memories SET pinned = ? WHERE id = ? AND pinned != ?",
                (int(pinned), memory_id, int(pinned)),
            )
            conn.execute(
                "UPDATE memories SET dismissed_at = ?, dismiss_reason = ? WHERE id = ?",
                (new.created_at, renamed_reason(new.title), row["id"]),
            )
            insert_audit(conn, replace(audit, project=new.project))
            return memory_id

    def keyed_memories(self, project: str, key_prefix: str, kind: str, limit: int) -> list[Memory]:
        """A project's live memories of one kind whose dedupe key starts with ``key_prefix``
        (the work-state lists), newest write first: a range on the dedupe index, no scan."""
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key >= ?"
            " AND dedupe_key < ? AND kind = ? AND dismissed_at IS NULL"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            (project, key_prefix, key_prefix + "\U0010ffff", kind, limit),
        ).fetchall()
        return [memory_from_row(row) for row in rows]

    def start_episode(self, project: str, tool: str, at: int) -> int:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO episodes (uid, project, tool, started_at) VALUES (?, ?, ?, ?)",
                (new_uid(), project, tool, at),
            )
            return int(cursor.lastrowid or 0)

    def open_episode(self, uid: str, project: str, tool: str, at: int) -> int:
        """The episode with this uid, started now if new and open again if it had ended."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO episodes (uid, project, tool, started_at)"
                " VALUES (?, ?, ?, ?)",
                (uid, project, tool, at),
            )
            conn.execute(
                "UPDATE episodes SET ended_at = NULL WHERE uid = ? AND ended_at IS NOT NULL",
                (uid,),
            )
            row = conn.execute("SELECT id FROM episodes WHERE uid = ?", (uid,)).fetchone()
            return int(row[0])

    def episode_id_by_uid(self, uid: str) -> int | None:
        row = self._conn.execute("SELECT id FROM episodes WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else int(row[0])

    def episode_started_at(self, episode_id: int) -> int | None:
        row = self._conn.execute(
            "SELECT started_at FROM episodes WHERE id = ?", (episode_id,)
        ).fetchone()
        return None if row is None else int(row[0])

    def link_episode_memory(self, episode_id: int, memory_id: int) -> None:
        """Note that the episode's session saved the memory (again: no change)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO episode_memories (episode_id, memory_id) VALUES (?, ?)",
                (episode_id, memory_id),
            )

    def episode_memory_ids(self, episode_id: int, kind: str, limit: int) -> list[int]:
        """The ids of the first ``limit`` memories of ``kind`` the episode's session saved,
        oldest first."""
        rows = self._conn.execute(
            "SELECT l.memory_id FROM episode_memories AS l JOIN memories AS m ON m.id = l.memory_id"
            " WHERE l.episode_id = ? AND m.kind = ? ORDER BY l.memory_id LIMIT ?",
            (episode_id, kind, limit),
        ).fetchall()
        return [int(row[0]) for row in rows]

    def retire_episode_memory(
        self, episode_id: int, memory_id: int, at: int, reason: str, audit: AuditEntry
    ) -> bool:
        """Unlink a memory from the episode (a summary its session replaced), and dismiss it
        with an audit row unless it is dismissed already (the user's reason stays) or another
        episode of its project still links it (the same summary, saved once for two sessions):
        one transaction, so a session that links it first keeps it. Whether it was dismissed."""
        with self._write() as conn:
            conn.execute(
                "DELETE FROM episode_memories WHERE episode_id = ? AND memory_id = ?",
                (episode_id, memory_id),
            )
            cursor = conn.execute(
                "UPDATE memories SET dismissed_at = ?, dismiss_reason = ?"
                " WHERE id = ? AND dismissed_at IS NULL AND NOT EXISTS (SELECT 1 FROM episodes AS e"
                " JOIN episode_memories AS l ON l.episode_id = e.id AND l.memory_id = memories.id"
                " WHERE e.project = memories.project)",
                (at, reason, memory_id),
            )
            if cursor.rowcount == 0:
                return False
            row = conn.execute("SELECT project FROM memories WHERE id = ?", (memory_id,)).fetchone()
            insert_audit(conn, replace(audit, project=row[0]))
            return True

    def add_request(self, episode_id: int, text: str, at: int) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO episode_requests (episode_id, at, text) VALUES (?, ?, ?)",
                (episode_id, at, text),
            )

    def end_episode(self, episode_id: int, at: int, summary: str | None) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE episodes SET ended_at = ?, summary = coalesce(?, summary) WHERE id = ?",
                (at, summary, episode_id),
            )
            return cursor.rowcount > 0

    def episode_requests(self, episode_id: int, limit: int) -> list[SessionRequest]:
        """The first ``limit`` requests of a live episode, oldest first (none of a dismissed
        one): a range of the ``(episode_id, at)`` index, whatever other sessions asked since."""
        from aletheia_mem.storage.entries import SessionRequest

        rows = self._conn.execute(
            "SELECT r.episode_id, r.at, r.text, e.tool FROM episode_requests AS r"
            " JOIN episodes AS e ON e.id = r.episode_id WHERE r.episode_id = ?"
            " AND e.dismissed_at IS NULL ORDER BY r.at, r.id LIMIT ?",
            (episode_id, limit),
        ).fetchall()
        return [SessionRequest(row[0], row[1], row[2], row[3]) for row in rows]

    def recent_requests(self, project: str, limit: int) -> list[SessionRequest]:
        """The newest requests of a project's live episodes, newest first.

        The newest requests of all projects (one range of the ``at`` index) usually hold them;
        only when they hold fewer than ``limit`` are all of the project's requests sorted.
        """
        from aletheia_mem.storage.entries import SessionRequest

        sql = (
            "SELECT r.episode_id, r.at, r.text, e.tool FROM {} r"
            " JOIN episodes e ON e.id = r.episode_id"
            " WHERE e.project = ? AND e.dismissed_at IS NULL ORDER BY r.at DESC, r.id DESC LIMIT ?"
        )
        newest = "(SELECT * FROM episode_requests ORDER BY at DESC, id DESC LIMIT ?)"
        rows = self._conn.execute(sql.format(newest), (_REQUEST_WINDOW, project, limit)).fetchall()
        if len(rows) < limit:
            rows = self._conn.execute(sql.format("episode_requests"), (project, limit)).fetchall()
        return [SessionRequest(row[0], row[1], row[2], row[3]) for row in rows]

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
        Restoring an item that is not dismissed changes nothing (no sync version that could
        undo an edit made elsewhere meanwhile), and is audited all the same, with
        ``unchanged_detail`` (when given) as its row's detail. Dismissing it again changes
        nothing either: it keeps when it was first dismissed, and its reason (unless
        ``keep_reason`` is false: a dismissal the user does not own is taken over, its
        reason replaced).

        Returns the item's project, or None when there is no such item.
        """
        with self._write() as conn:
            row = conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                return None
            changed = conn.execute(
                f"UPDATE {table} SET dismissed_at = {_DISMISSED_AT}, dismiss_reason = {_REASON}"
                f" WHERE id = :id AND {_CHANGES}",
                {"at": at, "reason": reason, "id": item_id, "keep": keep_reason},
            ).rowcount
            detail = audit.detail if changed or unchanged_detail is None else unchanged_detail
            insert_audit(conn, replace(audit, project=row["project"], detail=detail))
            return str(row["project"])

    def project_of(self, table: DismissTable, item_id: int) -> str | None:
        row = self._conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
        return None if row is None else str(row[0])

    def is_dismissed(self, table: DismissTable, item_id: int) -> bool:
        """Whether the item is there and dismissed."""
        sql = f"SELECT 1 FROM {table} WHERE id = ? AND dismissed_at IS NOT NULL"
        return self._conn.execute(sql, (item_id,)).fetchone() is not None
