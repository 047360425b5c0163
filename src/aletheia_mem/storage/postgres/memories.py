"""Memories on PostgreSQL: saving (with the facts they state), reading, listing, pinning.

Relevance search lives in ``memory_search``; both rank as the SQLite store does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import psycopg

from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import (
    ListCheck,
    Memory,
    MemoryHead,
    MemoryQuery,
    RenameRefusal,
    renamed_reason,
)
from aletheia_mem.storage.entries import AuditEntry, NewFact, NewMemory
from aletheia_mem.storage.postgres import full_text, memory_search
from aletheia_mem.storage.postgres.audit import insert_audit
from aletheia_mem.storage.postgres.database import PgDatabase, PgPart, Row
from aletheia_mem.storage.postgres.facts import put_fact, retrying, write_retrying
from aletheia_mem.storage.postgres.postings import Postings
from aletheia_mem.storage.postgres.reindex import reindex_owed
from aletheia_mem.storage.prefix import project_names_sql
from aletheia_mem.storage.uids import new_uid

_COLUMNS = ", ".join(field.name for field in fields(Memory))
_M_COLUMNS = ", ".join(f"m.{field.name}" for field in fields(Memory))
_LAST = "\U0010ffff"  # above every character: the end of a prefix range
_SUFFIX_INDEXED = 500  # characters of a reversed path its index holds (migration 0014)
# A memory by its dedupe key (parameters: the key, the project). The project is compared under
# the database's collation, not the column's "C": equality of text is byte equality under either
# (both deterministic), but no index on the project can serve it, so the planner takes the
# key's unique index (migration 0008) even when its statistics have not seen the project yet.
KEY_MATCH = 'dedupe_key = %s AND project = %s COLLATE "default"'
_NEW_KEY_MATCH = KEY_MATCH % ("%(key)s", "%(project)s")  # with the save's named parameters


def _json_list(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _json_tuple(text: str) -> tuple[Any, ...]:
    return () if text == "[]" else tuple(json.loads(text))


def memory_from_row(row: Row) -> Memory:
    """A memory from a row of ``_COLUMNS``, read by position."""
    values = list(row[:16])
    values[8], values[9] = _json_tuple(values[8]), _json_tuple(values[9])
    values[11] = bool(values[11])
    return Memory(*values)


def memory_texts(new: NewMemory) -> tuple[str, ...]:
    """The columns of ``memory_terms`` a memory is indexed under, in order."""
    return (new.title, new.text, new.narrative or "", "\n".join(new.facts), "\n".join(new.files))


def index_memory(
    conn: psycopg.Connection[Row], memory_id: int, new: NewMemory, totals: full_text.Totals
) -> None:
    """(Re)index a memory's words and files in the caller's transaction: every writer of
    memories (saves, work-state lists, sync) goes through here."""
    full_text.index_row(conn, full_text.MEMORY_INDEX, memory_id, memory_texts(new), totals)
    conn.execute("DELETE FROM memory_files WHERE memory_id = %s", (memory_id,))
    if new.files:
        conn.execute(
            "INSERT INTO memory_files (memory_id, path, path_reversed)"
            " SELECT %s, p, reverse(p) FROM unnest(%s::text[]) AS u (p)"
            " ON CONFLICT DO NOTHING",
            (memory_id, list(new.files)),
        )


class PgMemories(PgPart):
    """The ``MemoryStore`` of the PostgreSQL store, with the work-state lists' two methods."""

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)
        self._postings = Postings()
        reindex_owed(db)  # what a tokenizer change left (0016, 0017)

    # -- writes ----------------------------------------------------------------------------

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]:
        """Insert a memory, and the facts it states, unless its dedupe key exists (then the
        facts still count, for the memory found). Returns the memory and whether it is new."""
        memory, created, _ = self.add_memory_noting(new, facts)
        return memory, created

    def add_memory_noting(
        self, new: NewMemory, facts: Sequence[NewFact] = ()
    ) -> tuple[Memory, bool, bool]:
        """``add_memory``, also telling whether a fact changed its key's timeline."""
        if not facts:
            return (*self._add_memory_alone(new), False)

        def work(conn: psycopg.Connection[Row]) -> tuple[Memory, bool, bool]:
            with full_text.indexing(conn) as totals:
                memory = _insert_new_memory(conn, new, totals)
                # None: the key is taken (maybe by a racing writer, committed by now)
                memory_id = _taken_id(conn, new) if memory is None else memory.id
                changed = False
                for fact in facts:  # facts sent again still count: new ones supersede
                    changed = put_fact(conn, fact, memory_id, totals)[1] or changed
                if memory is None:
                    return self._read_memory(conn, memory_id), False, changed
                return memory, True, changed

        return write_retrying(self._db, work)

    def _add_memory_alone(self, new: NewMemory) -> tuple[Memory, bool]:
        """A memory without facts: its one statement is the whole transaction, committed on
        its own (no BEGIN and COMMIT round trips), with the index totals (the only totals row
        it locks, so no lock order to keep) and a hub call's audit row (the rider). Its key
        taken, the memory holding it is read after that commit, as the transaction read it."""
        statement = _new_memory_statement(new, add_totals=True)
        row = retrying(
            lambda: self._db.write_with(statement.ctes, statement.select, statement.params)
        )
        if row is not None:
            return memory_from_row(row), True
        with self._db.read() as conn:  # the key is taken (maybe by a racing writer, committed)
            return self._read_memory(conn, _taken_id(conn, new)), False

    def _insert_memory(
        self, conn: psycopg.Connection[Row], new: NewMemory, totals: full_text.Totals
    ) -> int | None:
        """The new memory's id; None when its dedupe key is taken (by a committed memory)."""
        row = conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, narrative, facts, files,"
            " tool, pinned, created_at, updated_at, dedupe_key)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (project, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"
            " RETURNING id",
            (
                new_uid(),
                new.project,
                new.type,
                new.kind,
                new.title,
                new.text,
                new.narrative,
                _json_list(new.facts),
                _json_list(new.files),
                new.tool,
                int(new.pinned),
                new.created_at,
                new.created_at,
                new.dedupe_key,
            ),
        ).fetchone()
        if row is None:
            return None
        memory_id = int(row[0])
        index_memory(conn, memory_id, new, totals)
        return memory_id

    @staticmethod
    def _read_memory(conn: psycopg.Connection[Row], memory_id: int) -> Memory:
        row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = %s", (memory_id,))
        return memory_from_row(_one(row.fetchone()))

    def put_work_state(self, new: NewMemory, check: ListCheck | None = None) -> int:
        """Create or replace the work-state list named by ``new.dedupe_key``; its id stays.
        ``check`` sees the live list first, its row locked until the write commits."""

        def work(conn: psycopg.Connection[Row]) -> int:
            _check_list(conn, new.project, new.dedupe_key or "", new.kind, check)
            with full_text.indexing(conn) as totals:
                return self._put_list(conn, new, totals)

        return write_retrying(self._db, work)

    def _put_list(
        self, conn: psycopg.Connection[Row], new: NewMemory, totals: full_text.Totals
    ) -> int:
        """Create the list named by ``new.dedupe_key``, or replace its items and bring it back
        if it was dismissed; its id stays. As the SQLite store's, a rewrite dates the list
        anew (created and updated at ``new.created_at``)."""
        if _keyed_id(conn, new) is None:
            memory_id = self._insert_memory(conn, new, totals)
            if memory_id is not None:
                return memory_id
        at = new.created_at
        row = conn.execute(
            "UPDATE memories SET title = %s, text = %s, tool = %s, created_at = %s,"
            " updated_at = %s, dismissed_at = NULL, dismiss_reason = NULL"
            f" WHERE {KEY_MATCH} RETURNING id",
            (new.title, new.text, new.tool, at, at, new.dedupe_key, new.project),
        ).fetchone()
        memory_id = int(_one(row)[0])
        index_memory(conn, memory_id, new, totals)
        return memory_id

    def rename_work_state(
        self, old_key: str, new: NewMemory, audit: AuditEntry, check: ListCheck | None = None
    ) -> int | RenameRefusal:
        """As the SQLite store's: the new list saved (with the old one's pin; a dismissed one
        of that name brought back) and the old one dismissed, with an audit row, in one
        transaction; nothing changes when it is missing or a live list has the new name.
        ``check`` sees the live list under ``old_key`` first, in the same transaction."""

        def work(conn: psycopg.Connection[Row]) -> int | RenameRefusal:
            _check_list(conn, new.project, old_key, new.kind, check)
            row = conn.execute(
                f"SELECT id, pinned FROM memories WHERE {KEY_MATCH} AND kind = %s"
                " AND dismissed_at IS NULL FOR UPDATE",
                (old_key, new.project, new.kind),
            ).fetchone()
            if row is None:
                return "missing"
            taken = conn.execute(
                f"SELECT 1 FROM memories WHERE {KEY_MATCH} AND dismissed_at IS NULL",
                (new.dedupe_key, new.project),
            ).fetchone()
            if taken is not None:
                return "taken"
            pinned = bool(row[1])
            with full_text.indexing(conn) as totals:
                memory_id = self._put_list(conn, replace(new, pinned=pinned), totals)
            conn.execute(  # a dismissed list of the new name came back: it takes the pin too
                "UPDATE memories SET pinned = %s WHERE id = %s AND pinned != %s",
                (int(pinned), memory_id, int(pinned)),
            )
            conn.execute(
                "UPDATE memories SET dismissed_at = %s, dismiss_reason = %s WHERE id = %s",
                (new.created_at, renamed_reason(new.title), int(row[0])),
            )
            insert_audit(conn, replace(audit, project=new.project))
            return memory_id

        return write_retrying(self._db, work)

    def set_pinned(self, memory_id: int, pinned: bool, at: int) -> Memory | None:
        """Pin or unpin a memory; None when there is no such memory."""
        with self._db.write() as conn:
            conn.execute(
                "UPDATE memories SET pinned = %s, updated_at = %s WHERE id = %s AND pinned != %s",
                (int(pinned), at, memory_id, int(pinned)),
            )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE id = %s", (memory_id,)
            ).fetchone()
        return None if row is None else memory_from_row(row)

    # -- reads -----------------------------------------------------------------------------

    def _memories(self, sql: str, params: Sequence[Any]) -> list[Memory]:
        with self._db.read() as conn:
            return [memory_from_row(row) for row in conn.execute(sql, params).fetchall()]

    def _ids(self, sql: str, params: Sequence[Any]) -> set[int]:
        with self._db.read() as conn:
            return {int(row[0]) for row in conn.execute(sql, params).fetchall()}

    def find_memory(self, project: str, dedupe_key: str) -> Memory | None:
        found = self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE {KEY_MATCH}", (dedupe_key, project)
        )
        return found[0] if found else None

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        """The memories with these ids, newest first; unknown ids are skipped."""
        if not ids:
            return []
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ANY (%s)"
            " ORDER BY created_at DESC, id DESC",
            (list(ids),),
        )

    def get_memory(self, memory_id: int) -> Memory | None:
        found = self.get_memories([memory_id])
        return found[0] if found else None

    def memory_heads(self, ids: Sequence[int]) -> list[MemoryHead]:
        """The heads of the memories with these ids, in that order; unknown ids are skipped."""
        if not ids:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, project, type, title, tool, pinned, created_at FROM memories"
                " WHERE id = ANY (%s)",
                (list(ids),),
            ).fetchall()
        by_id = {
            row[0]: MemoryHead(row[0], row[1], row[2], row[3], row[4], bool(row[5]), row[6])
            for row in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        return self._ids("SELECT id FROM memories WHERE id = ANY (%s)", (list(ids),))

    def dismissed_memory_ids(self, ids: Sequence[int], since: int = 0) -> set[int]:
        """Those of ``ids`` dismissed at ``since`` or later."""
        if not ids:
            return set()
        return self._ids(
            "SELECT id FROM memories WHERE dismissed_at >= %s AND id = ANY (%s)",
            (since, list(ids)),
        )

    def stale_memory_ids(self, ids: Sequence[int], now: int) -> set[int]:
        """Those of ``ids`` whose stated facts have all ended (or been dismissed) by ``now``."""
        if not ids:
            return set()
        return self._ids(
            "SELECT id FROM memory_rank WHERE stale_from <= %s AND id = ANY (%s)",
            (now, list(ids)),
        )

    def has_memories(self, projects: tuple[str, ...] | None, *, dismissed: bool = False) -> bool:
        """Whether any live memory (any at all with ``dismissed``) exists (in these projects)."""
        live = "true" if dismissed else "dismissed_at IS NULL"
        sql, params = f"SELECT 1 FROM memories WHERE {live}", []
        if projects is not None:
            sql += " AND project = ANY (%s)"
            params.append(list(projects))
        return bool(self._ids(sql + " LIMIT 1", params))

    def count_memories(self, projects: tuple[str, ...] | None) -> int:
        sql, params = "SELECT count(*) FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND project = ANY (%s)"
            params.append(list(projects))
        return self._count(sql, params)

    def count_pinned_memories(self, project: str) -> int:
        """How many live pinned memories the project has (``recent_memories`` of them, all)."""
        sql = "SELECT count(*) FROM memories WHERE project = %s AND pinned = 1"
        return self._count(sql + " AND dismissed_at IS NULL", [project])

    def _count(self, sql: str, params: list[Any]) -> int:
        """The one number a ``SELECT count(*)`` answers."""
        with self._db.read() as conn:
            row = conn.execute(sql, params).fetchone()
        return int(row[0]) if row is not None else 0

    def newest_memory_id(self) -> int:
        """The highest memory id so far (dismissed ones too), 0 in an empty store."""
        with self._db.read() as conn:
            row = conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()
        return int(row[0]) if row is not None else 0

    def project_names(self, limit: int = 500, starting: str = "") -> list[str]:
        """The projects that have memories, by name: one index seek per project."""
        with self._db.read() as conn:
            rows = conn.execute(*project_names_sql("memories", starting, limit, "%s")).fetchall()
        return [str(row[0]) for row in rows]

    def keyed_memories(self, project: str, key_prefix: str, kind: str, limit: int) -> list[Memory]:
        """A project's live memories of one kind whose dedupe key starts with ``key_prefix``
        (the work-state lists), newest write first."""
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories WHERE project = %s AND dedupe_key >= %s"
            " AND dedupe_key < %s AND kind = %s AND dismissed_at IS NULL"
            " ORDER BY updated_at DESC, id DESC LIMIT %s",
            (project, key_prefix, key_prefix + _LAST, kind, limit),
        )

    def neighbours(
        self, anchor: Memory, projects: tuple[str, ...] | None, count: int, later: bool
    ) -> list[Memory]:
        """Live memories just before (or after) the anchor in time, nearest first, in
        ``projects`` (None: any)."""
        sign, direction = (">", "ASC") if later else ("<", "DESC")
        sql = (
            f"SELECT {_COLUMNS} FROM memories WHERE dismissed_at IS NULL AND id != %s"
            f" AND (created_at, id) {sign} (%s, %s)"
        )
        params: list[Any] = [anchor.id, anchor.created_at, anchor.id]
        if projects is not None:
            sql += " AND project = ANY (%s)"
            params.append(list(projects))
        sql += f" ORDER BY created_at {direction}, id {direction} LIMIT %s"
        return self._memories(sql, [*params, count])

    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]:
        """The newest live memories of a project, pinned or unpinned."""
        return self._memories(
            f"SELECT {_COLUMNS} FROM memories"
            " WHERE project = %s AND pinned = %s AND dismissed_at IS NULL"
            " AND NOT (kind = ANY (%s)) ORDER BY created_at DESC, id DESC LIMIT %s",
            (project, int(pinned), list(exclude_kinds), limit),
        )

    # -- search ----------------------------------------------------------------------------

    def search_memories(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[Memory]:
        """One page of live memories matching the query, in the requested order."""
        where, params = memory_search.filters(query)
        if query.file is not None:
            return self._memories_by_file(query, where, params)
        if query.terms:
            ids = self.rank_memory_ids(query, now, ranking)
            by_id = {memory.id: memory for memory in self.get_memories(ids)}
            return [by_id[i] for i in ids if i in by_id]
        sql = f"SELECT {_M_COLUMNS} FROM memories m WHERE " + " AND ".join(where)
        sql += f" ORDER BY {memory_search.date_order(query)} LIMIT %s OFFSET %s"
        return self._memories(sql, [*params, query.limit, query.offset])

    def _memories_by_file(
        self, query: MemoryQuery, where: list[str], params: list[Any]
    ) -> list[Memory]:
        path = query.file or ""
        if query.file_suffix:
            # The index holds a reversed path's first characters (migration 0014): the range of
            # those leads, the whole reversed path is compared on the rows it finds.
            reversed_path = path[::-1]
            head = reversed_path[:_SUFFIX_INDEXED]
            match = (
                f"left(f.path_reversed, {_SUFFIX_INDEXED}) >= %s"
                f" AND left(f.path_reversed, {_SUFFIX_INDEXED}) < %s"
                " AND f.path_reversed >= %s AND f.path_reversed < %s"
            )
            values: list[Any] = [head, head + _LAST, reversed_path, reversed_path + _LAST]
        else:
            match, values = "f.path = %s", [path]
        sql = (
            f"SELECT {_M_COLUMNS} FROM memories m WHERE m.id IN"
            f" (SELECT f.memory_id FROM memory_files f WHERE {match}) AND "
            + " AND ".join(where)
            + " ORDER BY m.created_at DESC, m.id DESC LIMIT %s OFFSET %s"
        )
        return self._memories(sql, [*values, *params, query.limit, query.offset])

    def tokens_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Indexed memory tokens longer than ``prefix`` that start with it, in order."""
        with self._db.read() as conn:
            return memory_search.tokens_with_prefix(conn, prefix, limit)

    def rank_memory_ids(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[int]:
        """The ids of one page of live memories matching ``query.terms``, best first (scored
        in this process from held postings, for a relevance search)."""
        if query.terms and query.order == "relevance":
            return memory_search.rank_in_memory(self._db, self._postings, query, now, ranking)
        with self._db.read() as conn:
            return memory_search.rank_memory_ids(conn, query, now, ranking)


@dataclass(frozen=True)
class _NewMemoryStatement:
    """The one statement that inserts and indexes a memory, as CTEs and a final select."""

    ctes: list[str]
    select: str
    params: dict[str, Any]
    tokens: int


def _new_memory_statement(new: NewMemory, add_totals: bool) -> _NewMemoryStatement:
    """Insert and index a memory in one statement (one round trip): the row, its token count,
    its terms and its files (the files' CTE only when it has some), and with ``add_totals``
    the index totals too. It returns the new row, none when the memory's dedupe key is taken:
    then no id is drawn from the sequence (the ``#N`` users see stay dense), as when SQLite
    looks the key up first."""
    count, terms, cols, positions = full_text.row_terms(memory_texts(new))
    ctes = [
        "m AS (INSERT INTO memories (uid, project, type, kind, title, text, narrative,"
        " facts, files, tool, pinned, created_at, updated_at, dedupe_key)"
        " SELECT %(uid)s, %(project)s, %(type)s, %(kind)s, %(title)s, %(text)s, %(narrative)s,"
        " %(facts)s, %(files)s, %(tool)s, %(pinned)s, %(at)s, %(at)s, %(key)s"
        f" WHERE NOT EXISTS (SELECT 1 FROM memories WHERE {_NEW_KEY_MATCH})"
        " ON CONFLICT (project, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"
        f" RETURNING {_COLUMNS})",
        "d AS (INSERT INTO memory_docs (memory_id, tokens) SELECT id, %(count)s FROM m)",
        "t AS (INSERT INTO memory_terms (term, memory_id, col, positions)"
        " SELECT u.t, m.id, u.c, u.p::integer[] FROM m,"
        " unnest(%(terms)s::text[], %(cols)s::smallint[], %(positions)s::text[]) AS u (t, c, p))",
    ]
    if new.files:
        ctes.append(
            "f AS (INSERT INTO memory_files (memory_id, path, path_reversed)"
            " SELECT m.id, u.p, reverse(u.p) FROM m, unnest(%(paths)s::text[]) AS u (p)"
            " ON CONFLICT DO NOTHING)"
        )
    if add_totals:
        ctes.append(
            "c AS (UPDATE full_text_counts SET docs = docs + 1, tokens = tokens + %(count)s"
            f" WHERE index_name = 'memories' AND {full_text.OWN_SLOT}"
            " AND EXISTS (SELECT FROM m))"
        )
    params = {
        "uid": new_uid(),
        "project": new.project,
        "type": new.type,
        "kind": new.kind,
        "title": new.title,
        "text": new.text,
        "narrative": new.narrative,
        "facts": _json_list(new.facts),
        "files": _json_list(new.files),
        "tool": new.tool,
        "pinned": int(new.pinned),
        "at": new.created_at,
        "key": new.dedupe_key,
        "count": count,
        "terms": terms,
        "cols": cols,
        "positions": positions,
        "paths": list(new.files),
    }
    return _NewMemoryStatement(ctes, "SELECT * FROM m", params, count)


def _insert_new_memory(
    conn: psycopg.Connection[Row], new: NewMemory, totals: full_text.Totals
) -> Memory | None:
    """Insert and index a memory in the caller's transaction (``_new_memory_statement``),
    adding to ``totals``; None when its dedupe key is taken."""
    statement = _new_memory_statement(new, add_totals=False)
    row = conn.execute(
        "WITH " + ", ".join(statement.ctes) + " " + statement.select, statement.params
    ).fetchone()
    if row is None:
        return None
    totals.add(full_text.MEMORY_INDEX, 1, statement.tokens)
    return memory_from_row(row)


def _check_list(
    conn: psycopg.Connection[Row], project: str, key: str, kind: str, check: ListCheck | None
) -> None:
    """Run ``check`` on the live list under ``key`` in the caller's transaction, its row (live
    or not) locked until that transaction ends: no other write changes it in between."""
    if check is None:
        return
    row = conn.execute(
        f"SELECT text, kind, dismissed_at FROM memories WHERE {KEY_MATCH} FOR UPDATE",
        (key, project),
    ).fetchone()
    live = row is not None and row[1] == kind and row[2] is None
    check(str(row[0]) if live and row is not None else None)


def _keyed_id(conn: psycopg.Connection[Row], new: NewMemory) -> int | None:
    """The id of the memory holding ``new``'s dedupe key, if it has one and it is taken.

    Looked up before inserting, as SQLite does, so that a repeated save takes no id from the
    sequence (the ``#N`` users see stay dense where nothing races)."""
    if new.dedupe_key is None:
        return None
    row = conn.execute(
        f"SELECT id FROM memories WHERE {KEY_MATCH}", (new.dedupe_key, new.project)
    ).fetchone()
    return None if row is None else int(row[0])


def _taken_id(conn: psycopg.Connection[Row], new: NewMemory) -> int:
    """The id of the memory a racing writer saved under ``new``'s key (committed by now)."""
    found = _keyed_id(conn, new)
    if found is None:
        raise RuntimeError("a dedupe key conflicted with no memory")
    return found


def _one(row: Row | None) -> Row:
    """The row a statement of this module always finds (in the transaction that wrote it)."""
    if row is None:
        raise RuntimeError("a row written in this transaction is missing")
    return row
