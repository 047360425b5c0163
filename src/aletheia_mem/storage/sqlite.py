"""The SQLite store: WAL, a busy timeout, one writer at a time through ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from aletheia_mem.search.query import fts_match_expression
from aletheia_mem.search.rank import DAY_MS, DEFAULT_RANKING, Ranking
from aletheia_mem.search.text import index_text
from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import (
    AuditEntry,
    DismissTable,
    Fact,
    Memory,
    MemoryHead,
    MemoryQuery,
    NewFact,
    NewMemory,
    Rule,
    SessionRequest,
)
from aletheia_mem.storage.connections import ThreadConnections
from aletheia_mem.storage.files import write_private_text
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.migrate import migrate
from aletheia_mem.storage.store_file import (
    check_header,
    create_store,
    foreign,
    is_foreign,
    store_problem,
    tighten_store,
)
from aletheia_mem.storage.sync_apply import ApplyStats, apply_page
from aletheia_mem.storage.sync_export import ExportPage, export_page, store_id
from aletheia_mem.storage.sync_peers import set_push_cursor, sync_cursors
from aletheia_mem.storage.sync_sqlite import sqlite_dialect

WAL_AUTOCHECKPOINT_PAGES = 10_000  # ~40 MB of WAL between checkpoints (SQLite's default: 1000)
# How many of the newest requests (all projects) recent_requests reads before a full sort.
_REQUEST_WINDOW = 200
# At most this many values (match counts) in a connection's memo: a few MB at worst.
_MAX_MEMO_ENTRIES = 10_000
HUB_TOKEN_FILE = "hub-token"  # noqa: S105 - a file name


def _json_list(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


# What _memory reads, in this order: the fields of Memory are named after the columns.
_MEMORY_COLUMNS = ", ".join(field.name for field in fields(Memory))
_M_MEMORY_COLUMNS = ", ".join(f"m.{field.name}" for field in fields(Memory))


def _json_tuple(text: str) -> tuple[Any, ...]:
    return () if text == "[]" else tuple(json.loads(text))  # most lists are empty


def _memory(row: sqlite3.Row) -> Memory:
    """A memory from a row of ``_MEMORY_COLUMNS`` (read by position: by name costs twice as
    much, and searches build thousands of these a second)."""
    return Memory(
        id=row[0],
        uid=row[1],
        project=row[2],
        type=row[3],
        kind=row[4],
        title=row[5],
        text=row[6],
        narrative=row[7],
        facts=_json_tuple(row[8]),
        files=_json_tuple(row[9]),
        tool=row[10],
        pinned=bool(row[11]),
        created_at=row[12],
        updated_at=row[13],
        dismissed_at=row[14],
        dismiss_reason=row[15],
    )


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(
        id=row["id"],
        uid=row["uid"],
        project=row["project"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        superseded_by=row["superseded_by"],
        source=row["source"],
        memory_id=row["memory_id"],
        dismissed_at=row["dismissed_at"],
    )


def _rule(row: sqlite3.Row) -> Rule:
    return Rule(
        id=row["id"],
        then=row["then_text"],
        when=row["when_text"],
        scope_tier=row["scope_tier"],
        scope_name=row["scope_name"],
        evidence_memory_ids=tuple(json.loads(row["evidence_memory_ids"])),
        evidence_fact_ids=tuple(json.loads(row["evidence_fact_ids"])),
        source=row["source"],
        added_at=row["added_at"],
        last_confirmed_at=row["last_confirmed_at"],
        enabled=bool(row["enabled"]),
    )


def fact_key(text: str) -> str:
    """Subjects and predicates match without regard to case or outer spaces."""
    return " ".join(text.split()).lower()


def _in_clause(column: str, values: Sequence[object]) -> str:
    return f"{column} IN ({','.join('?' * len(values))})"


def _configure(conn: sqlite3.Connection) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # A save dirties ~25 pages; checkpointing every 1000 (the default) costs two fsyncs
    # per ~40 saves. The WAL is checkpointed and removed when the last connection closes.
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
    conn.execute("PRAGMA foreign_keys = ON")


def _configure_ours(path: Path) -> Callable[[sqlite3.Connection], None]:
    """``_configure`` for an existing file, once it is known to be an Aletheia store: another
    program's database is refused before anything (such as WAL mode) changes it."""

    def configure(conn: sqlite3.Connection) -> None:
        if is_foreign(conn):
            conn.close()
            raise foreign(path)
        _configure(conn)

    return configure


def _build(conn: sqlite3.Connection) -> None:
    _configure(conn)
    migrate(conn)


class SqliteStore:
    """One SQLite file shared by every process on the machine."""

    def __init__(self, path: Path) -> None:
        """Open the store at ``path``, made whole (0600, in a 0700 folder) if there is none.

        Raises:
            StoreBrokenError: the file is empty, damaged, cut short or another program's.
            StoreReadOnlyError: the store needs a change this user may not write.
        """
        self.path = path
        if not check_header(path):
            create_store(path, _build)
        self._pool = ThreadConnections(path, _configure_ours(path))
        try:
            migrate(self._conn)
            self._move_hub_token_out()
        except sqlite3.Error as error:
            self._pool.close()
            raise store_problem(path, error) or error from None
        except BaseException:
            self._pool.close()
            raise
        tighten_store(path)

    # -- connections and transactions -------------------------------------------------------

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._pool.get()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; the full-text index's upkeep runs in it before the commit."""
        with self._pool.write() as conn:
            yield conn
            full_text.tidy(conn)

    def close(self) -> None:
        self._pool.close()

    # -- memories ----------------------------------------------------------------------------

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]:
        """Insert a memory, and the facts it states, unless its dedupe key exists.

        Returns the memory and whether it was created now.
        """
        with self._write() as conn:
            if new.dedupe_key is not None:
                row = conn.execute(
                    f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key = ?",
                    (new.project, new.dedupe_key),
                ).fetchone()
                if row is not None:
                    for fact in facts:  # facts sent again still count: new ones supersede
                        self._put_fact(conn, fact, row["id"])
                    return _memory(row), False
            memory_id = self._insert_memory(conn, new)
            for fact in facts:
                self._put_fact(conn, fact, memory_id)
            row = conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            return _memory(row), True

    def _insert_memory(self, conn: sqlite3.Connection, new: NewMemory) -> int:
        cursor = conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, narrative, facts, files,"
            " tool, pinned, created_at, updated_at, dedupe_key)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uuid.uuid4().hex,
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
        )
        memory_id = int(cursor.lastrowid or 0)
        self._index_memory(conn, memory_id, new)
        return memory_id

    def _index_memory(self, conn: sqlite3.Connection, memory_id: int, new: NewMemory) -> None:
        conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (memory_id,))
        conn.execute(
            "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                memory_id,
                index_text(new.title),
                index_text(new.text),
                index_text(new.narrative or ""),
                index_text("\n".join(new.facts)),
                index_text("\n".join(new.files)),
            ),
        )
        full_text.note_indexed(conn)
        conn.execute("DELETE FROM memory_files WHERE memory_id = ?", (memory_id,))
        conn.executemany(
            "INSERT OR IGNORE INTO memory_files (memory_id, path, path_reversed) VALUES (?, ?, ?)",
            [(memory_id, path, path[::-1]) for path in new.files],
        )

    def put_work_state(self, new: NewMemory) -> int:
        """Create or replace the work-state list named by ``new.dedupe_key``; its id stays."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT id FROM memories WHERE project = ? AND dedupe_key = ?",
                (new.project, new.dedupe_key),
            ).fetchone()
            if row is None:
                return self._insert_memory(conn, new)
            conn.execute(
                "UPDATE memories SET title = ?, text = ?, tool = ?, updated_at = ?,"
                " dismissed_at = NULL, dismiss_reason = NULL WHERE id = ?",
                (new.title, new.text, new.tool, new.created_at, row["id"]),
            )
            self._index_memory(conn, row["id"], new)
            return int(row["id"])

    def find_memory(self, project: str, dedupe_key: str) -> Memory | None:
        row = self._conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key = ?",
            (project, dedupe_key),
        ).fetchone()
        return None if row is None else _memory(row)

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        """The memories with these ids, newest first; unknown ids are skipped."""
        if not ids:
            return []
        rows = self._conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {_in_clause('id', ids)}"
            " ORDER BY created_at DESC, id DESC",
            list(ids),
        ).fetchall()
        return [_memory(row) for row in rows]

    def memory_heads(self, ids: Sequence[int]) -> list[MemoryHead]:
        """The heads of the memories with these ids, in that order; unknown ids are skipped.

        A page of search results is shown as index lines: reading whole rows (text, facts,
        files) would cost a tenth of the search.
        """
        if not ids:
            return []
        rows = self._conn.execute(
            "SELECT id, project, type, title, tool, pinned, created_at FROM memories"
            f" WHERE {_in_clause('id', ids)}",
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
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        return None if row is None else _memory(row)

    def search_memories(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[Memory]:
        """One page of live memories matching the query, in the requested order."""
        where, params = self._filters(query)
        if query.file is not None:
            return self._memories_by_file(query, where, params)
        if query.terms:
            return self._memories_in_order(self.rank_memory_ids(query, now, ranking))
        sql = f"SELECT {_M_MEMORY_COLUMNS} FROM memories m WHERE " + " AND ".join(where)
        sql += " ORDER BY " + self._order(query, params, now, ranking) + " LIMIT ? OFFSET ?"
        params += [query.limit, query.offset]
        return [_memory(row) for row in self._conn.execute(sql, params).fetchall()]

    def rank_memory_ids(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[int]:
        """The ids of one page of live memories matching ``query.terms``, best first.

        Scores and filters on the narrow ``memory_rank`` table (aliased ``m``, with the columns
        the filters use), so that ranking thousands of matches never reads whole memories.
        """
        where, params = self._filters(query)
        weights = ", ".join(repr(float(w)) for w in ranking.bm25_weights())
        scored = query.order == "relevance"
        expression, newest = self._match(list(query.terms), ranking.score_budget if scored else 0)
        sql = (
            f"SELECT m.id, bm25(memory_fts, {weights}) AS score FROM memory_fts"
            " JOIN memory_rank m ON m.id = memory_fts.rowid WHERE memory_fts MATCH ? AND "
            + " AND ".join(where)
        )
        params = [expression, *params]
        if newest is not None:
            sql += " AND memory_fts.rowid >= ?"
            params.append(newest)
        sql += " ORDER BY " + self._order(query, params, now, ranking) + " LIMIT ? OFFSET ?"
        params += [query.limit, query.offset]
        return [int(row[0]) for row in self._conn.execute(sql, params).fetchall()]

    def _memories_in_order(self, ids: Sequence[int]) -> list[Memory]:
        by_id = {memory.id: memory for memory in self.get_memories(ids)}
        return [by_id[i] for i in ids if i in by_id]

    def _match(self, terms: list[str], budget: int) -> tuple[str, int | None]:
        """The MATCH expression to run, and the lowest rowid to score (None: all of them).

        bm25 costs microseconds per matching row, so a relevance search scores about ``budget``
        rows at most (0: no bound, for date orders that score nothing): its terms are taken rarest
        first while their matches fit. A word common enough to blow the budget says little about
        relevance (its idf is low) and is left out. When even the rarest term is that common, the
        query needs all of its terms, and if that still matches too much, its newest matches are
        the ones scored.
        """
        if budget <= 0:
            return fts_match_expression(terms), None
        counts = self._pool.memo()
        counted = sorted(
            (self._count_matches(counts, fts_match_expression([term]), budget), i)
            for i, term in enumerate(terms)
        )
        chosen: list[int] = []
        total = 0
        for matches, index in counted:
            if matches > 0 and total + matches <= budget:
                chosen.append(index)
                total += matches
        if chosen or counted[-1][0] == 0:
            return fts_match_expression([terms[i] for i in sorted(chosen)] or terms), None
        expression = fts_match_expression(terms, "AND")
        if self._count_matches(counts, expression, budget) <= budget:
            return expression, None
        row = self._conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC"
            " LIMIT 1 OFFSET ?",
            (expression, budget),
        ).fetchone()
        return expression, None if row is None else int(row[0])

    def _count_matches(self, counts: dict[Any, Any], expression: str, budget: int) -> int:
        """How many memories match (counting stops past ``budget``).

        ``counts`` is the connection's memo, which forgets them whenever the store changes: most
        searches share words with earlier ones, and counting is a fifth of a search's time.
        """
        key = ("match count", expression, budget)
        found = counts.get(key)
        if found is None:
            row = self._conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?"
                " LIMIT ?)",
                (expression, budget + 1),
            ).fetchone()
            if len(counts) >= _MAX_MEMO_ENTRIES:
                counts.clear()
            found = counts[key] = int(row[0])
        return int(found)

    def _order(self, query: MemoryQuery, params: list[Any], now: int, ranking: Ranking) -> str:
        if query.order == "date_asc":
            return "m.created_at ASC, m.id ASC"
        if query.order == "date_desc" or not query.terms:
            return "m.created_at DESC, m.id DESC"
        # bm25 is negative (lower is better); the priors of search/rank.py scale it, the same
        # formula as Ranking.prior: a pinned lift, a smooth recency decay, a stale penalty.
        scale = ranking.recency_scale_days * DAY_MS
        params += [ranking.pinned_boost, ranking.recency_boost * scale, scale, now]
        params.append(ranking.stale_factor)
        return (
            "score * (1.0 + ? * m.pinned) * (1.0 + ? / (? + max(? - m.created_at, 0)))"
            " * (CASE WHEN m.stale THEN ? ELSE 1.0 END), m.created_at DESC, m.id DESC"
        )

    def stale_memory_ids(self, ids: Sequence[int]) -> set[int]:
        """Those of ``ids`` whose stated facts have all been superseded."""
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memory_rank WHERE stale AND {_in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    def _filters(self, query: MemoryQuery) -> tuple[list[str], list[Any]]:
        where = ["m.dismissed_at IS NOT NULL" if query.dismissed else "m.dismissed_at IS NULL"]
        params: list[Any] = []
        if query.projects is not None:
            where.append(_in_clause("m.project", query.projects))
            params.extend(query.projects)
        for column, value in (("m.type", query.type), ("m.kind", query.kind)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if query.exclude_kinds:
            where.append("NOT " + _in_clause("m.kind", query.exclude_kinds))
            params.extend(query.exclude_kinds)
        if query.since is not None:
            where.append("m.created_at >= ?")
            params.append(query.since)
        if query.until is not None:
            where.append("m.created_at < ?")
            params.append(query.until)
        return where, params

    def _memories_by_file(
        self, query: MemoryQuery, where: list[str], params: list[Any]
    ) -> list[Memory]:
        path = query.file or ""
        if query.file_suffix:
            reversed_path = path[::-1]
            match = "f.path_reversed >= ? AND f.path_reversed < ?"
            params = [reversed_path, reversed_path + "\U0010ffff", *params]
        else:
            match = "f.path = ?"
            params = [path, *params]
        sql = (
            f"SELECT DISTINCT {_M_MEMORY_COLUMNS} FROM memory_files f"
            " JOIN memories m ON m.id = f.memory_id"
            f" WHERE {match} AND "
            + " AND ".join(where)
            + " ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?"
        )
        rows = self._conn.execute(sql, [*params, query.limit, query.offset]).fetchall()
        return [_memory(row) for row in rows]

    def has_memories(self, projects: tuple[str, ...] | None) -> bool:
        """Whether any live memory exists (in these projects); stops at the first one."""
        sql, params = "SELECT 1 FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND " + _in_clause("project", projects)
            params = list(projects)
        return self._conn.execute(sql + " LIMIT 1", params).fetchone() is not None

    def keyed_memories(self, project: str, key_prefix: str, kind: str, limit: int) -> list[Memory]:
        """A project's live memories of one kind whose dedupe key starts with ``key_prefix``
        (the work-state lists), newest write first: a range on the dedupe index, no scan."""
        rows = self._conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE project = ? AND dedupe_key >= ?"
            " AND dedupe_key < ? AND kind = ? AND dismissed_at IS NULL"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            (project, key_prefix, key_prefix + "\U0010ffff", kind, limit),
        ).fetchall()
        return [_memory(row) for row in rows]

    def project_names(self, limit: int = 500) -> list[str]:
        """The projects that have memories, by name: one index seek per project (a skip scan),
        so 100,000 memories in 4 projects cost 4 seeks, not a scan of 100,000 index entries."""
        rows = self._conn.execute(
            "WITH RECURSIVE p(name, n) AS ("
            " SELECT min(project), 1 FROM memories"
            " UNION ALL SELECT (SELECT min(project) FROM memories WHERE project > p.name), n + 1"
            " FROM p WHERE p.name IS NOT NULL AND n < ?)"
            " SELECT name FROM p WHERE name IS NOT NULL",
            (limit,),
        ).fetchall()
        return [str(row[0]) for row in rows]

    def count_memories(self, projects: tuple[str, ...] | None) -> int:
        sql, params = "SELECT count(*) FROM memories WHERE dismissed_at IS NULL", []
        if projects is not None:
            sql += " AND " + _in_clause("project", projects)
            params = list(projects)
        return int(self._conn.execute(sql, params).fetchone()[0])

    def neighbours(
        self, anchor: Memory, project: str | None, count: int, later: bool
    ) -> list[Memory]:
        """Live memories just before (or after) the anchor in time, nearest first."""
        sign, direction = (">", "ASC") if later else ("<", "DESC")
        # A row value, not "a < ? OR (a = ? AND id < ?)": SQLite seeks the (project,
        # created_at) index with it (0.1 ms at 100,000 memories, where the OR scanned: 48 ms).
        sql = (
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE dismissed_at IS NULL AND id != ?"
            f" AND (created_at, id) {sign} (?, ?)"
        )
        params: list[Any] = [anchor.id, anchor.created_at, anchor.id]
        if project is not None:
            sql += " AND project = ?"
            params.append(project)
        sql += f" ORDER BY created_at {direction}, id {direction} LIMIT ?"
        rows = self._conn.execute(sql, [*params, count]).fetchall()
        return [_memory(row) for row in rows]

    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]:
        """The newest live memories of a project, pinned or unpinned."""
        sql = (
            f"SELECT {_MEMORY_COLUMNS} FROM memories"
            " WHERE project = ? AND pinned = ? AND dismissed_at IS NULL"
            f" AND NOT {_in_clause('kind', exclude_kinds or ('',))}"
            " ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        params = [project, int(pinned), *(exclude_kinds or ("",)), limit]
        return [_memory(row) for row in self._conn.execute(sql, params).fetchall()]

    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memories WHERE {_in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    # -- facts -------------------------------------------------------------------------------

    def add_fact(self, new: NewFact, memory_id: int | None = None) -> tuple[Fact, bool]:
        with self._write() as conn:
            return self._put_fact(conn, new, memory_id)

    def _put_fact(
        self, conn: sqlite3.Connection, new: NewFact, memory_id: int | None
    ) -> tuple[Fact, bool]:
        subject_key, predicate_key = fact_key(new.subject), fact_key(new.predicate)
        current = conn.execute(
            "SELECT * FROM facts WHERE project = ? AND subject_key = ? AND predicate_key = ?"
            " AND valid_to IS NULL",
            (new.project, subject_key, predicate_key),
        ).fetchone()
        if current is not None:
            if current["object"] == new.object:
                return _fact(current), False
            # One current fact per key (a unique index): close the old one before the insert.
            conn.execute(
                "UPDATE facts SET valid_to = max(?, valid_from) WHERE id = ?",
                (new.valid_from, current["id"]),
            )
        cursor = conn.execute(
            "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
            " object, valid_from, recorded_at, source, memory_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uuid.uuid4().hex,
                new.project,
                new.subject,
                subject_key,
                new.predicate,
                predicate_key,
                new.object,
                new.valid_from,
                new.recorded_at,
                new.source,
                memory_id,
            ),
        )
        fact_id = int(cursor.lastrowid or 0)
        if current is not None:
            conn.execute(
                "UPDATE facts SET superseded_by = ? WHERE id = ?", (fact_id, current["id"])
            )
        full_text.index_fact(conn, fact_id, new.subject, new.predicate, new.object)
        return _fact(conn.execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()), True

    def get_fact(self, fact_id: int) -> Fact | None:
        row = self._conn.execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()
        return None if row is None else _fact(row)

    def facts_about(self, subject: str, project: str | None, predicate: str | None) -> list[Fact]:
        """Every live fact of a subject (all versions), newest validity first."""
        sql = "SELECT * FROM facts WHERE subject_key = ? AND dismissed_at IS NULL"
        params: list[Any] = [fact_key(subject)]
        if project is not None:
            sql += " AND project = ?"
            params.append(project)
        if predicate is not None:
            sql += " AND predicate_key = ?"
            params.append(fact_key(predicate))
        sql += " ORDER BY valid_from DESC, id DESC"
        return [_fact(row) for row in self._conn.execute(sql, params).fetchall()]

    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int
    ) -> list[Fact]:
        """Current live facts matching any term, best first."""
        sql = (
            "SELECT f.* FROM fact_fts JOIN facts f ON f.id = fact_fts.rowid"
            " WHERE fact_fts MATCH ? AND f.valid_to IS NULL AND f.dismissed_at IS NULL"
        )
        params: list[Any] = [fts_match_expression(list(terms))]
        if projects is not None:
            sql += " AND " + _in_clause("f.project", projects)
            params.extend(projects)
        sql += " ORDER BY bm25(fact_fts, 2.0, 1.0, 1.0), f.recorded_at DESC LIMIT ?"
        return [_fact(row) for row in self._conn.execute(sql, [*params, limit]).fetchall()]

    def current_facts(self, project: str, limit: int) -> list[Fact]:
        rows = self._conn.execute(
            "SELECT * FROM facts WHERE project = ? AND valid_to IS NULL"
            " AND dismissed_at IS NULL ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (project, limit),
        ).fetchall()
        return [_fact(row) for row in rows]

    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM facts WHERE {_in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    def add_rule(self, rule: Rule) -> tuple[Rule, bool]:
        """Insert a rule; an identical one (same id) is enabled again and returned."""
        with self._write() as conn:
            row = conn.execute("SELECT * FROM rules WHERE id = ?", (rule.id,)).fetchone()
            if row is not None:
                if not row["enabled"]:
                    conn.execute(
                        "UPDATE rules SET enabled = 1, updated_at = ? WHERE id = ?",
                        (rule.added_at, rule.id),
                    )
                    return _rule(row), True
                return _rule(row), False
            conn.execute(
                "INSERT INTO rules (id, then_text, when_text, scope_tier, scope_name,"
                " evidence_memory_ids, evidence_fact_ids, source, added_at, last_confirmed_at,"
                " enabled, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rule.id,
                    rule.then,
                    rule.when,
                    rule.scope_tier,
                    rule.scope_name,
                    _json_list(rule.evidence_memory_ids),
                    _json_list(rule.evidence_fact_ids),
                    rule.source,
                    rule.added_at,
                    rule.last_confirmed_at,
                    int(rule.enabled),
                    rule.added_at,
                ),
            )
            return rule, True

    def get_rule(self, rule_id: str) -> Rule | None:
        row = self._conn.execute("SELECT * FROM rules WHERE id = ?", (rule_id,)).fetchone()
        return None if row is None else _rule(row)

    def list_rules(self, *, enabled_only: bool = True) -> list[Rule]:
        sql = "SELECT * FROM rules"
        if enabled_only:
            sql += " WHERE enabled = 1"
        rows = self._conn.execute(sql + " ORDER BY added_at, rowid").fetchall()
        return [_rule(row) for row in rows]

    def confirm_rule(self, rule_id: str, at: int) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET last_confirmed_at = ?, updated_at = ? WHERE id = ?",
                (at, at, rule_id),
            )
            return cursor.rowcount > 0

    def set_rule_enabled(self, rule_id: str, enabled: bool, at: int) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET enabled = ?, updated_at = ? WHERE id = ?",
                (int(enabled), at, rule_id),
            )
            return cursor.rowcount > 0

    def dismissed_memory_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM memories WHERE dismissed_at IS NOT NULL AND {_in_clause('id', ids)}",
            list(ids),
        ).fetchall()
        return {int(row[0]) for row in rows}

    def superseded_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            "SELECT id FROM facts WHERE (superseded_by IS NOT NULL OR dismissed_at IS NOT NULL)"
            f" AND {_in_clause('id', ids)}",
            list(ids),
        ).fetchall()
        return {int(row[0]) for row in rows}

    # -- episodes ----------------------------------------------------------------------------

    def start_episode(self, project: str, tool: str, at: int) -> int:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO episodes (uid, project, tool, started_at) VALUES (?, ?, ?, ?)",
                (uuid.uuid4().hex, project, tool, at),
            )
            return int(cursor.lastrowid or 0)

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

    def recent_requests(self, project: str, limit: int) -> list[SessionRequest]:
        """The newest requests of a project's live episodes, newest first.

        The newest requests of all projects (one range of the ``at`` index) usually hold them;
        only when they hold fewer than ``limit`` are all of the project's requests sorted.
        """
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

    # -- dismissals and audit ----------------------------------------------------------------

    def set_dismissed(
        self,
        table: DismissTable,
        item_id: int,
        at: int | None,
        reason: str | None,
        audit: AuditEntry,
    ) -> str | None:
        """Hide (``at`` set) or restore (``at`` None) one item and audit it, in one transaction.

        Returns the item's project, or None when there is no such item.
        """
        with self._write() as conn:
            row = conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                return None
            conn.execute(
                f"UPDATE {table} SET dismissed_at = ?, dismiss_reason = ? WHERE id = ?",
                (at, reason, item_id),
            )
            self._insert_audit(conn, replace(audit, project=row["project"]))
            return str(row["project"])

    def project_of(self, table: DismissTable, item_id: int) -> str | None:
        row = self._conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
        return None if row is None else str(row[0])

    def add_audit(self, entry: AuditEntry) -> None:
        with self._write() as conn:
            self._insert_audit(conn, entry)

    @staticmethod
    def _insert_audit(conn: sqlite3.Connection, entry: AuditEntry) -> None:
        conn.execute(
            "INSERT INTO audit (at, actor, tool, project, result, detail)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (entry.at, entry.actor, entry.tool, entry.project, entry.result, entry.detail),
        )

    def list_audit(self, limit: int) -> list[AuditEntry]:
        rows = self._conn.execute(
            "SELECT at, actor, tool, project, result, detail FROM audit"
            " ORDER BY at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [AuditEntry(*row) for row in rows]

    # -- whole-store export and import, hook episodes (used by the CLI and hooks) ---------------

    # Tables that hold the user's data, in an order that keeps references pointing backwards.
    DATA_TABLES = ("memories", "facts", "rules", "episodes", "episode_requests", "audit")
    # Columns rebuilt from others on import (and so left out of an export).
    _DERIVED_COLUMNS = (("facts", "subject_key"), ("facts", "predicate_key"))

    def data_columns(self, table: str) -> list[str]:
        """The stored (non-derived) columns of one data table, in schema order."""
        if table not in self.DATA_TABLES:
            raise ValueError(f"not a data table: {table}")
        rows = self._conn.execute(f"PRAGMA table_info({table})").fetchall()
        return [row["name"] for row in rows if (table, row["name"]) not in self._DERIVED_COLUMNS]

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one consistent state of the store (a read transaction)."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def count_rows(self, table: str) -> int:
        columns = self.data_columns(table)  # validates the name
        del columns
        return int(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def export_rows(self, table: str) -> Iterator[dict[str, Any]]:
        """Every row of a data table as stored, in rowid order, read in one snapshot."""
        columns = self.data_columns(table)
        cursor = self._conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
        for row in cursor:
            yield dict(zip(columns, row, strict=True))

    def data_sequences(self) -> dict[str, int]:
        """The AUTOINCREMENT counters of the data tables (the next ids)."""
        rows = self._conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
        return {row[0]: int(row[1]) for row in rows if row[0] in self.DATA_TABLES}

    def schema_version(self) -> int:
        row = self._conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def is_empty(self) -> bool:
        """Whether no data table holds a row."""
        return all(
            self._conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
            for table in self.DATA_TABLES
        )

    def import_rows(
        self, rows: Iterable[tuple[str, dict[str, Any]]], sequences: dict[str, int]
    ) -> int:
        """Insert exported rows as they were (ids included) in one transaction.

        Search indexes and derived columns are rebuilt; references may point forward within
        the batch (foreign keys are checked at commit). Returns the number of rows.
        """
        count = 0
        with self._write() as conn:
            conn.execute("PRAGMA defer_foreign_keys = ON")
            for table, values in rows:
                columns = self.data_columns(table)
                record = {name: values.get(name) for name in columns}
                if table == "facts":
                    record["subject_key"] = fact_key(str(record["subject"]))
                    record["predicate_key"] = fact_key(str(record["predicate"]))
                names = list(record)
                try:
                    conn.execute(
                        f"INSERT INTO {table} ({', '.join(names)})"
                        f" VALUES ({', '.join('?' * len(names))})",
                        [record[name] for name in names],
                    )
                except sqlite3.IntegrityError as error:
                    raise ValueError(f"{table} row {record.get('id')}: {error}") from None
                self._index_imported(conn, table, record)
                count += 1
            broken = conn.execute("PRAGMA foreign_key_check").fetchone()
            if broken is not None:
                raise ValueError(f"{broken[0]} row {broken[1]} refers to a missing {broken[2]} row")
            for name, seq in sequences.items():
                if name in self.DATA_TABLES:
                    conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
                    conn.execute(
                        "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq)
                    )
        return count

    def _index_imported(self, conn: sqlite3.Connection, table: str, record: dict[str, Any]) -> None:
        if table == "memories":
            memory = NewMemory(
                project=record["project"],
                type=record["type"],
                kind=record["kind"],
                title=record["title"],
                text=record["text"],
                tool=record["tool"],
                created_at=record["created_at"],
                dedupe_key=record["dedupe_key"],
                narrative=record["narrative"],
                facts=tuple(json.loads(record["facts"])),
                files=tuple(json.loads(record["files"])),
            )
            self._index_memory(conn, record["id"], memory)
        elif table == "facts":
            full_text.index_fact(
                conn, record["id"], record["subject"], record["predicate"], record["object"]
            )

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

    def set_busy_timeout(self, ms: int) -> None:
        """How long this process's connection waits for another writer (hooks wait little)."""
        self._conn.execute(f"PRAGMA busy_timeout = {int(ms)}")

    # -- hub tokens and sync between stores (used by the hub and `aletheia sync`) --------------

    def add_token(self, token: HubToken) -> HubToken | None:
        """Store a new token (its id is assigned); None when the name is taken."""
        projects = None if token.projects is None else _json_list(token.projects)
        with self._write() as conn:
            try:
                cursor = conn.execute(
                    "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (token.name, token.token_hash, token.prefix, token.scope, projects,
                     token.created_at),
                )  # fmt: skip
            except sqlite3.IntegrityError:
                return None
            return replace(token, id=int(cursor.lastrowid or 0))

    @staticmethod
    def _token(row: sqlite3.Row) -> HubToken:
        projects = None if row["projects"] is None else tuple(json.loads(row["projects"]))
        return HubToken(
            id=row["id"],
            name=row["name"],
            token_hash=row["token_hash"],
            prefix=row["prefix"],
            scope=row["scope"],
            projects=projects,
            created_at=row["created_at"],
            revoked_at=row["revoked_at"],
        )

    def find_token(self, token_hash: str) -> HubToken | None:
        """The token with this hash, revoked or not."""
        row = self._conn.execute(
            "SELECT * FROM hub_tokens WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else self._token(row)

    def list_tokens(self) -> list[HubToken]:
        rows = self._conn.execute("SELECT * FROM hub_tokens ORDER BY id").fetchall()
        return [self._token(row) for row in rows]

    def revoke_token(self, name: str, at: int) -> HubToken | None:
        """Revoke a live token by name (or by its shown prefix); None when none matches."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT * FROM hub_tokens WHERE (name = ? OR prefix = ?) AND revoked_at IS NULL"
                " ORDER BY id LIMIT 1",
                (name, name),
            ).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE hub_tokens SET revoked_at = ? WHERE id = ?", (at, row["id"]))
            return replace(self._token(row), revoked_at=at)

    def last_audit_by_actor(self) -> dict[str, int]:
        """When each actor last appears in the audit trail."""
        rows = self._conn.execute("SELECT actor, max(at) FROM audit GROUP BY actor").fetchall()
        return {str(row[0]): int(row[1]) for row in rows}

    def list_audit_page(
        self,
        limit: int,
        actor: str | None,
        tool: str | None,
        project: str | None = None,
        result: str | None = None,
    ) -> list[AuditEntry]:
        """The newest audit rows, optionally of one actor, tool, project and result."""
        sql, params = "SELECT at, actor, tool, project, result, detail FROM audit WHERE 1 = 1", []
        filters = (("actor", actor), ("tool", tool), ("project", project), ("result", result))
        for column, value in filters:
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        rows = self._conn.execute(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*params, limit])
        return [AuditEntry(*row) for row in rows.fetchall()]

    def sync_store_id(self) -> str:
        """This store's global id: the origin of the changes made here."""
        return store_id(self._conn)

    def export_changes(
        self,
        *,
        after: int,
        limit: int,
        max_bytes: int,
        local_only: bool,
        exclude_origin: str | None,
        projects: tuple[str, ...] | None,
    ) -> ExportPage:
        """One page of the change log after ``after``, read in one snapshot."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            return export_page(
                conn,
                after=after,
                limit=limit,
                max_bytes=max_bytes,
                local_only=local_only,
                exclude_origin=exclude_origin,
                projects=projects,
            )
        finally:
            conn.execute("COMMIT")

    def apply_changes(
        self,
        records: list[dict[str, Any]],
        *,
        projects: tuple[str, ...] | None,
        now: int,
        pull_cursor: tuple[str, int, int] | None = None,
        author: str | None = None,
    ) -> ApplyStats:
        """Apply remote records in one transaction, with the pull cursor when one is given.

        Args:
            records: checked sync records, in log order.
            projects: the projects the sender may write (None: all).
            now: the time new local versions start from.
            pull_cursor: ``(hub_id, token_id, cursor)`` to store with the page.
            author: the sender's name, recorded as the author of what it makes (a hub token).
        """
        with self._write() as conn:
            return apply_page(
                conn,
                records,
                dialect=sqlite_dialect(self._index_memory),
                projects=projects,
                now=now,
                pull_cursor=pull_cursor,
                author=author,
            )

    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]:
        """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
        return sync_cursors(self._conn, hub_id, token_id)

    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None:
        with self._write() as conn:
            set_push_cursor(conn, hub_id, token_id, cursor, now)

    @property
    def hub_token_path(self) -> Path:
        """Where the remembered hub's token is kept: a 0600 file beside the store, never in it."""
        return self.path.with_name(HUB_TOKEN_FILE)

    def remembered_hub(self) -> tuple[str, str, str | None] | None:
        """The hub ``aletheia sync`` uses when none is named: ``(url, token, ca_file)``; the
        token is empty when its file is gone."""
        row = self._conn.execute("SELECT url, ca_file FROM sync_remote").fetchone()
        if row is None:
            return None
        try:
            token = self.hub_token_path.read_text(encoding="utf-8").strip()
        except OSError:
            token = ""
        return row[0], token, row[1]

    def remember_hub(self, url: str, token: str, ca_file: str | None) -> None:
        write_private_text(self.hub_token_path, token + "\n")
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO sync_remote (id, url, token, ca_file) VALUES (1, ?, '', ?)",
                (url, ca_file),
            )

    def _move_hub_token_out(self) -> None:
        """A token that an older version kept in the store goes to its file."""
        row = self._conn.execute("SELECT token FROM sync_remote WHERE token != ''").fetchone()
        if row is not None:
            write_private_text(self.hub_token_path, str(row[0]) + "\n")
            self._conn.execute("PRAGMA secure_delete = ON")  # the old bytes zeroed, not freed
            with self._write() as conn:
                conn.execute("UPDATE sync_remote SET token = ''")
            self._conn.execute("PRAGMA secure_delete = OFF")

    def health(self) -> dict[str, Any]:
        """SQLite's integrity check (its first problems), version and journal mode, for
        ``aletheia doctor``."""
        conn = self._conn
        rows = conn.execute("PRAGMA integrity_check(5)").fetchall()
        problems = [
            line for row in rows for line in str(row[0]).splitlines() if not line.startswith("***")
        ]
        return {
            "integrity_check": "; ".join(problems),
            "schema": self.schema_version(),
            "sqlite_version": sqlite3.sqlite_version,
            "journal_mode": str(conn.execute("PRAGMA journal_mode").fetchone()[0]),
        }
