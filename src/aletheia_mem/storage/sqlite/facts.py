"""Facts of the SQLite store: per subject and predicate, a timeline of values, none overlapping."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aletheia_mem.canonical import fact_key
from aletheia_mem.search.query import fts_match_expression
from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import Fact, FactPage
from aletheia_mem.storage.fact_timeline import put_in_timeline
from aletheia_mem.storage.prefix import project_names_sql
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.rows import (
    F_FACT_COLUMNS,
    fact_from_row,
    in_clause,
)
from aletheia_mem.storage.uids import new_uid

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import NewFact


def put_fact(conn: sqlite3.Connection, new: NewFact, memory_id: int | None) -> tuple[Fact, bool]:
    """Put ``new`` into its key's timeline at ``valid_from`` (``fact_timeline``): the same object
    as the fact valid then returns that fact (False); another one splits the timeline (True)."""
    row, created = put_in_timeline(new, _KeyTimeline(conn, new, memory_id))
    if created:
        full_text.index_fact(conn, row["id"], new.subject, new.predicate, new.object)
    return fact_from_row(row), created


class _KeyTimeline:
    """``new``'s key's rows in ``conn``'s transaction (``fact_timeline.KeyTimeline``)."""

    def __init__(self, conn: sqlite3.Connection, new: NewFact, memory_id: int | None) -> None:
        self._conn = conn
        self._key = (new.project, fact_key(new.subject), fact_key(new.predicate))
        self._memory_id = memory_id

    def fact_at(self, at: int) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn.execute(_FACT_AT, (*self._key, at, at)).fetchone()
        return row

    def starts_from(self, at: int) -> list[int]:
        rows = self._conn.execute(_STARTS_FROM, (*self._key, at)).fetchall()
        return [int(row[0]) for row in rows]

    def first_after(self, at: int) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn.execute(_FACT_AFTER, (*self._key, at)).fetchone()
        return row

    def close(self, column: str, value: int, fact_id: int) -> None:
        _close(self._conn, column, value, fact_id)

    def insert(self, new: NewFact, valid_to: int | None, successor: int | None) -> sqlite3.Row:
        fact_id = _insert_fact(self._conn, new, self._key, valid_to, successor, self._memory_id)
        row: sqlite3.Row = self._conn.execute(
            "SELECT * FROM facts WHERE id = ?", (fact_id,)
        ).fetchone()
        return row


_CLOSE = {
    "valid_to": "UPDATE facts SET valid_to = ? WHERE id = ?",
    "superseded_by": "UPDATE facts SET superseded_by = ? WHERE id = ?",
}


def _close(conn: sqlite3.Connection, column: str, value: int, fact_id: int) -> None:
    """Set the tile (``valid_to`` or ``superseded_by``) of the fact a new one splits, without
    a sync version: every store tiles a key itself from its facts (``sync_timeline``), so the
    new fact is the whole change. Logged, it would be an edit of the older fact, whose copy
    here would win over a change made elsewhere meanwhile (a dismissal)."""
    conn.execute("UPDATE sync_control SET quiet = 1")
    conn.execute(_CLOSE[column], (value, fact_id))
    conn.execute("UPDATE sync_control SET quiet = 0")


# A key's facts tile its timeline: each holds from its valid_from up to its valid_to (open when
# NULL), where its superseded_by starts; one written later at the same valid_from the caller
# gave empties it (one written without a valid_from starts after it: ``fact_start``).
# The fact valid at an instant (the latest one, should old rows overlap):
_FACT_AT = (
    "SELECT * FROM facts WHERE project = ? AND subject_key = ? AND predicate_key = ?"
    " AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
    " ORDER BY valid_from DESC, id DESC LIMIT 1"
)
# A fact ``f`` valid at an instant (two parameters, the instant twice): a value written for a
# later time is not valid yet, and the one it will replace still is.
_VALID_AT_F = "f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
# Where a fact written when another of its key starts may start (``fact_start``):
_STARTS_FROM = (
    "SELECT DISTINCT valid_from FROM facts WHERE project = ? AND subject_key = ?"
    " AND predicate_key = ? AND valid_from >= ? ORDER BY valid_from"
)
# The first fact after an instant no fact is valid at: a fact put there ends where it starts.
_FACT_AFTER = (
    "SELECT id, valid_from FROM facts WHERE project = ? AND subject_key = ? AND predicate_key = ?"
    " AND valid_from > ? ORDER BY valid_from, id LIMIT 1"
)


def _insert_fact(
    conn: sqlite3.Connection,
    new: NewFact,
    key: tuple[str, str, str],
    valid_to: int | None,
    successor: int | None,
    memory_id: int | None,
) -> int:
    """Insert ``new`` under ``key``, valid up to ``valid_to``, superseded by ``successor``."""
    project, subject_key, predicate_key = key
    cursor = conn.execute(
        "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
        " object, valid_from, valid_to, recorded_at, superseded_by, source, memory_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new_uid(),
            project,
            new.subject,
            subject_key,
            new.predicate,
            predicate_key,
            new.object,
            new.valid_from,
            valid_to,
            new.recorded_at,
            successor,
            new.source,
            memory_id,
        ),
    )
    return int(cursor.lastrowid or 0)


def newest_current_sql(
    projects: tuple[str, ...] | None, limit: int, now: int
) -> tuple[str, list[Any]]:
    """``newest_current_facts``' statement: of every project, read newest first through
    ``facts_recorded`` (migration 0025); of named projects, through each one's facts
    (``facts_project_recorded``) or by time, as the planner finds cheaper."""
    sql = (
        "SELECT * FROM facts WHERE valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
        " AND dismissed_at IS NULL"
    )
    params: list[Any] = [now, now]
    if projects is not None:
        sql += " AND " + in_clause("project", projects)
        params.extend(projects)
    return sql + " ORDER BY recorded_at DESC, id DESC LIMIT ?", [*params, limit]


class SqliteFacts(SqliteDatabase):
    """Facts over time: a new value supersedes the one valid at its valid_from."""

    def add_fact(self, new: NewFact, memory_id: int | None = None) -> tuple[Fact, bool]:
        with self._write() as conn:
            return put_fact(conn, new, memory_id)

    def get_fact(self, fact_id: int) -> Fact | None:
        row = self._conn.execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()
        return None if row is None else fact_from_row(row)

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
        return [fact_from_row(row) for row in self._conn.execute(sql, params).fetchall()]

    def fact_history_page(
        self,
        subject: str,
        projects: tuple[str, ...] | None,
        predicate: str | None,
        *,
        offset: int,
        limit: int,
        now: int,
        upto: int | None = None,
        dismissed: bool = False,
    ) -> FactPage:
        """``limit`` live facts of a subject from ``offset`` (at most the last one), newest
        validity first, the history's size and highest id, and its facts valid ``now``; of the
        facts with ids up to ``upto`` when given; ``dismissed``: of the dismissed ones instead."""
        where = f"subject_key = ? AND dismissed_at IS {'NOT NULL' if dismissed else 'NULL'}"
        params: list[Any] = [fact_key(subject)]
        if projects is not None:
            where += " AND " + in_clause("project", projects)
            params.extend(projects)
        if predicate is not None:
            where += " AND predicate_key = ?"
            params.append(fact_key(predicate))
        if upto is not None:
            where += " AND id <= ?"
            params.append(upto)
        order = " ORDER BY valid_from DESC, id DESC"
        with self.snapshot():  # the size and the page of one history
            conn = self._conn
            sql = f"SELECT count(*), max(id) FROM facts WHERE {where}"
            total = conn.execute(sql, params).fetchone()
            offset = min(offset, max(int(total[0]) - 1, 0))
            page = conn.execute(  # the ids sorted, not whole rows: a third of the time
                f"SELECT * FROM facts WHERE id IN (SELECT id FROM facts WHERE {where}{order}"
                f" LIMIT ? OFFSET ?){order}",
                [*params, limit, offset],
            ).fetchall()
            current = conn.execute(
                f"SELECT * FROM facts WHERE {where} AND valid_from <= ?"
                f" AND (valid_to IS NULL OR valid_to > ?){order}",
                [*params, now, now],
            ).fetchall()
        return FactPage(
            int(total[0]),
            offset,
            [fact_from_row(r) for r in page],
            [fact_from_row(r) for r in current],
            int(total[1] or 0),
        )

    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]:
        """Live facts valid ``now`` matching any term, best first."""
        sql = (
            f"SELECT {F_FACT_COLUMNS} FROM fact_fts JOIN facts f ON f.id = fact_fts.rowid"
            f" WHERE fact_fts MATCH ? AND {_VALID_AT_F} AND f.dismissed_at IS NULL"
        )
        params: list[Any] = [fts_match_expression(list(terms)), now, now]
        if projects is not None:
            sql += " AND " + in_clause("f.project", projects)
            params.extend(projects)
        sql += " ORDER BY bm25(fact_fts, 2.0, 1.0, 1.0), f.recorded_at DESC LIMIT ?"
        rows = self._conn.execute(sql, [*params, limit]).fetchall()
        return [Fact(*row) for row in rows]  # by position: the columns are Fact's fields

    def current_facts(self, project: str, limit: int, now: int) -> list[Fact]:
        """The project's live facts valid ``now``, newest recorded first."""
        rows = self._conn.execute(
            "SELECT * FROM facts WHERE project = ? AND valid_from <= ?"
            " AND (valid_to IS NULL OR valid_to > ?) AND dismissed_at IS NULL"
            " ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (project, now, now, limit),
        ).fetchall()
        return [fact_from_row(row) for row in rows]

    def newest_current_facts(
        self, projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]:
        """The live facts valid ``now`` of ``projects`` (None: all), newest recorded first:
        ``current_facts`` of many projects in one statement."""
        rows = self._conn.execute(*newest_current_sql(projects, limit, now)).fetchall()
        return [fact_from_row(row) for row in rows]

    def fact_project_names(self, limit: int = 500, starting: str = "") -> list[str]:
        """The projects that have facts, by name: one index seek per project (a skip scan of
        facts_project_recorded), as ``project_names`` reads the memories'."""
        rows = self._conn.execute(*project_names_sql("facts", starting, limit, "?")).fetchall()
        return [str(row[0]) for row in rows]

    def count_current_facts(self, project: str, now: int) -> int:
        """How many live facts of the project are valid ``now`` (``current_facts`` unbounded)."""
        row = self._conn.execute(
            "SELECT count(*) FROM facts WHERE project = ? AND valid_from <= ?"
            " AND (valid_to IS NULL OR valid_to > ?) AND dismissed_at IS NULL",
            (project, now, now),
        ).fetchone()
        return int(row[0])

    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM facts WHERE {in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    def superseded_fact_ids(self, ids: Sequence[int], *, now: int, since: int = 0) -> set[int]:
        """Those of ``ids`` superseded by ``now`` (by a successor in force then: one written for
        a later time supersedes nothing before it) at ``since`` or later (when the successor
        took force, or was recorded if that was later). Dismissal is ``dismissed_fact_ids``."""
        if not ids:
            return set()
        rows = self._conn.execute(
            "SELECT f.id FROM facts f LEFT JOIN facts s ON s.id = f.superseded_by"
            " WHERE f.superseded_by IS NOT NULL AND coalesce(f.valid_to, 0) <= ?"
            " AND max(coalesce(s.recorded_at, 0), coalesce(f.valid_to, 0)) >= ?"
            f" AND {in_clause('f.id', ids)}",
            [now, since, *ids],
        ).fetchall()
        return {int(row[0]) for row in rows}

    def dismissed_fact_ids(self, ids: Sequence[int], since: int = 0) -> set[int]:
        """Those of ``ids`` dismissed at ``since`` or later."""
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM facts WHERE dismissed_at >= ? AND {in_clause('id', ids)}",
            [since, *ids],
        ).fetchall()
        return {int(row[0]) for row in rows}
