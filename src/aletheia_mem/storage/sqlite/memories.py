"""Memories of the SQLite store: saving (with the facts a memory states), reading, pinning."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aletheia_mem.search.text import index_text
from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import Memory, MemoryHead
from aletheia_mem.storage.prefix import project_names_sql
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.facts import put_fact
from aletheia_mem.storage.sqlite.rows import (
    MEMORY_COLUMNS,
    in_clause,
    json_list,
    memory_from_row,
    read_memories,
)
from aletheia_mem.storage.uids import new_uid

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import NewFact, NewMemory


_INSERT_MEMORY = (
    "INSERT INTO memories (uid, project, type, kind, title, text, narrative, facts, files,"
    " tool, pinned, created_at, updated_at, dedupe_key)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# A save's insert refused by the project's dedupe key (memories_dedupe): the statement is
# undone whole, its id included. (ON CONFLICT DO NOTHING would use up an id each time.)
_DEDUPE_CONFLICT = "UNIQUE constraint failed: memories.project, memories.dedupe_key"


def insert_memory(conn: sqlite3.Connection, new: NewMemory, uid: str | None = None) -> int:
    """Insert and index a memory; its id."""
    memory_id = int(conn.execute(_INSERT_MEMORY, _memory_row(new, uid or new_uid())).lastrowid or 0)
    index_memory(conn, memory_id, new, fresh=True)
    return memory_id


def insert_new_memory(conn: sqlite3.Connection, new: NewMemory, uid: str) -> int | None:
    """``insert_memory``, or None (nothing written) when its dedupe key is saved already: one
    statement where a look-up first cost a fiftieth of a save."""
    try:
        cursor = conn.execute(_INSERT_MEMORY, _memory_row(new, uid))
    except sqlite3.IntegrityError as error:
        if str(error) == _DEDUPE_CONFLICT:
            return None
        raise
    memory_id = int(cursor.lastrowid or 0)
    index_memory(conn, memory_id, new, fresh=True)
    return memory_id


def _memory_row(new: NewMemory, uid: str) -> tuple[Any, ...]:
    return (
        uid,
        new.project,
        new.type,
        new.kind,
        new.title,
        new.text,
        new.narrative,
        json_list(new.facts),
        json_list(new.files),
        new.tool,
        int(new.pinned),
        new.created_at,
        new.created_at,
        new.dedupe_key,
    )


MEMORY_FTS_INSERT = (
    "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files) VALUES (?, ?, ?, ?, ?, ?)"
)


def memory_fts_row(memory_id: int, new: NewMemory | Memory) -> tuple[int, str, str, str, str, str]:
    """A memory's row of ``memory_fts``: its words as the index reads them."""
    return (
        memory_id,
        index_text(new.title),
        index_text(new.text),
        index_text(new.narrative or ""),
        index_text("\n".join(new.facts)),
        index_text("\n".join(new.files)),
    )


def index_memory(
    conn: sqlite3.Connection, memory_id: int, new: NewMemory, *, fresh: bool = False
) -> None:
    """Index a memory's words and file paths; ``fresh``: its id is new (AUTOINCREMENT never
    gives an id twice), so it has no earlier entries to remove."""
    if not fresh:
        conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (memory_id,))
    conn.execute(MEMORY_FTS_INSERT, memory_fts_row(memory_id, new))
    full_text.note_indexed(conn, "memory_fts", fresh=fresh)
    if not fresh:
        conn.execute("DELETE FROM memory_files WHERE memory_id = ?", (memory_id,))
    if new.files:  # most memories name none: no statement to look up and run for nothing
        conn.executemany(
            "INSERT OR IGNORE INTO memory_files (memory_id, path, path_reversed) VALUES (?, ?, ?)",
            [(memory_id, path, path[::-1]) for path in new.files],
        )


def _inserted(memory_id: int, uid: str, new: NewMemory) -> Memory:
    """The row ``insert_memory`` just wrote, as ``memory_from_row`` would read it back (no
    trigger changes it): reading it again would cost a twentieth of a save."""
    return Memory(
        id=memory_id,
        uid=uid,
        project=new.project,
        type=new.type,
        kind=new.kind,
        title=new.title,
        text=new.text,
        narrative=new.narrative,
        facts=tuple(new.facts),
        files=tuple(new.files),
        tool=new.tool,
        pinned=new.pinned,
        created_at=new.created_at,
        updated_at=new.created_at,
        dismissed_at=None,
        dismiss_reason=None,
    )


def _put_facts(conn: sqlite3.Connection, facts: Sequence[NewFact], memory_id: int) -> bool:
    """Write every fact (none skipped); whether any changed its key's timeline."""
    changed = False
    for fact in facts:
        changed = put_fact(conn, fact, memory_id)[1] or changed
    return changed


class SqliteMemories(SqliteDatabase):
    """Saving, reading and pinning memories."""

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]:
        """Insert a memory, and the facts it states, unless its dedupe key exists.

        Returns the memory and whether it was created now.
        """
        memory, created, _ = self.add_memory_noting(new, facts)
        return memory, created

    def add_memory_noting(
        self, new: NewMemory, facts: Sequence[NewFact] = ()
    ) -> tuple[Memory, bool, bool]:
        """``add_memory``, also telling whether a fact changed its key's timeline."""
        uid = new_uid()
        with self._write() as conn:
            memory_id = insert_new_memory(conn, new, uid)
            if memory_id is None:
                row = conn.execute(
                    f"SELECT {MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key = ?",
                    (new.project, new.dedupe_key),
                ).fetchone()
                # facts sent again still count: new ones supersede
                return memory_from_row(row), False, _put_facts(conn, facts, row["id"])
            return _inserted(memory_id, uid, new), True, _put_facts(conn, facts, memory_id)

    def find_memory(self, project: str, dedupe_key: str) -> Memory | None:
        row = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key = ?",
            (project, dedupe_key),
        ).fetchone()
        return None if row is None else memory_from_row(row)

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        """The memories with these ids, newest first; unknown ids are skipped."""
        return read_memories(self._conn, ids)

    def memory_heads(self, ids: Sequence[int]) -> list[MemoryHead]:
        """The heads of the memories with these ids, in that order; unknown ids are skipped.

        A page of search results is shown as index lines: reading whole rows (text, facts,
        files) would cost a tenth of the search.
        """
        if not ids:
            return []
        rows = self._conn.execute(
            "SELECT id, project, type, title, tool, pinned, created_at FROM memories"
            f" WHERE {in_clause('id', ids)}",
            list(ids),
        ).fetchall()
        by_id = {
            row[0]: MemoryHead(row[0], row[1], row[2], row[3], row[4], bool(row[5]), row[6])
            for row in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def get_memory(self, memory_id: int) -> Memory | None:
        found = self.get_memories([memory_id])
        return found[0] if found else None

    def set_pinned(self, memory_id: int, pinned: bool, at: int) -> Memory | None:
        """Pin or unpin a memory; None when there is no such memory."""
        with self._write() as conn:
            conn.execute(
                "UPDATE memories SET pinned = ?, updated_at = ? WHERE id = ? AND pinned != ?",
                (int(pinned), at, memory_id, int(pinned)),
            )
            row = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        return None if row is None else memory_from_row(row)

    def has_memories(self, projects: tuple[str, ...] | None, *, dismissed: bool = False) -> bool:
        """Whether any live memory (any at all with ``dismissed``) exists (in these projects);
        stops at the first one."""
        live = "1" if dismissed else "dismissed_at IS NULL"
        sql, params = f"SELECT 1 FROM memories WHERE {live}", []
        if projects is not None:
            sql += " AND " + in_clause("project", projects)
            params = list(projects)
        return self._conn.execute(sql + " LIMIT 1", params).fetchone() is not None

    def project_names(self, limit: int = 500, starting: str = "") -> list[str]:
        """The projects that have memories, by name: one index seek per project (a skip scan),
        so 100,000 memories in 4 projects cost 4 seeks, not a scan of 100,000 index entries."""
        rows = self._conn.execute(*project_names_sql("memories", starting, limit, "?")).fetchall()
        return [str(row[0]) for row in rows]

    def count_memories(self, projects: tuple[str, ...] | None) -> int:
        sql, params = "SELECT count(*) FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND " + in_clause("project", projects)
            params = list(projects)
        return int(self._conn.execute(sql, params).fetchone()[0])

    def count_pinned_memories(self, project: str) -> int:
        """How many live pinned memories the project has (``recent_memories`` of them, all)."""
        row = self._conn.execute(
            "SELECT count(*) FROM memories WHERE project = ? AND pinned = 1"
            " AND dismissed_at IS NULL",
            (project,),
        ).fetchone()
        return int(row[0])

    def newest_memory_id(self) -> int:
        """The highest memory id so far (dismissed ones too), 0 in an empty store."""
        return int(self._conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])

    def neighbours(
        self, anchor: Memory, projects: tuple[str, ...] | None, count: int, later: bool
    ) -> list[Memory]:
        """Live memories just before (or after) the anchor in time, nearest first, in
        ``projects`` (None: any)."""
        sign, direction = (">", "ASC") if later else ("<", "DESC")
        # A row value, not "a < ? OR (a = ? AND id < ?)": SQLite seeks the (project,
        # created_at) index with it (0.1 ms at 100,000 memories, where the OR scanned: 48 ms).
        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE dismissed_at IS NULL AND id != ?"
            f" AND (created_at, id) {sign} (?, ?)"
        )
        params: list[Any] = [anchor.id, anchor.created_at, anchor.id]
        if projects is not None:
            sql += " AND " + in_clause("project", projects)
            params.extend(projects)
        sql += f" ORDER BY created_at {direction}, id {direction} LIMIT ?"
        rows = self._conn.execute(sql, [*params, count]).fetchall()
        return [memory_from_row(row) for row in rows]

    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]:
        """The newest live memories of a project, pinned or unpinned."""
        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM memories"
            " WHERE project = ? AND pinned = ? AND dismissed_at IS NULL"
            f" AND NOT {in_clause('kind', exclude_kinds or ('',))}"
            " ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        params = [project, int(pinned), *(exclude_kinds or ("",)), limit]
        return [memory_from_row(row) for row in self._conn.execute(sql, params).fetchall()]

    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memories WHERE {in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    def dismissed_memory_ids(self, ids: Sequence[int], since: int = 0) -> set[int]:
        """Those of ``ids`` dismissed at ``since`` or later."""
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memories WHERE dismissed_at >= ? AND {in_clause('id', ids)}",
            [since, *ids],
        ).fetchall()
        return {int(row[0]) for row in rows}

    def stale_memory_ids(self, ids: Sequence[int], now: int) -> set[int]:
        """Those of ``ids`` whose stated facts have all ended (or been dismissed) by ``now``."""
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memory_rank WHERE stale_from <= ? AND {in_clause('id', ids)}",
            [now, *ids],
        ).fetchall()
        return {int(row[0]) for row in rows}
