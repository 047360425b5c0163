"""Facts of the SQLite store: one current value per subject and predicate, older ones superseded."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aletheia_mem.search.query import fts_match_expression
from aletheia_mem.storage import full_text
from aletheia_mem.storage.base import Fact
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.rows import (
    F_FACT_COLUMNS,
    fact_from_row,
    fact_key,
    in_clause,
)
from aletheia_mem.storage.uids import new_uid

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import NewFact


def put_fact(conn: sqlite3.Connection, new: NewFact, memory_id: int | None) -> tuple[Fact, bool]:
    subject_key, predicate_key = fact_key(new.subject), fact_key(new.predicate)
    current = conn.execute(
        "SELECT * FROM facts WHERE project = ? AND subject_key = ? AND predicate_key = ?"
        " AND valid_to IS NULL",
        (new.project, subject_key, predicate_key),
    ).fetchone()
    if current is not None:
        if current["object"] == new.object:
            return fact_from_row(current), False
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
            new_uid(),
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
        conn.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (fact_id, current["id"]))
    full_text.index_fact(conn, fact_id, new.subject, new.predicate, new.object)
    return fact_from_row(
        conn.execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()
    ), True


class SqliteFacts(SqliteDatabase):
    """Facts over time: a new value supersedes the current one."""

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

    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int
    ) -> list[Fact]:
        """Current live facts matching any term, best first."""
        sql = (
            f"SELECT {F_FACT_COLUMNS} FROM fact_fts JOIN facts f ON f.id = fact_fts.rowid"
            " WHERE fact_fts MATCH ? AND f.valid_to IS NULL AND f.dismissed_at IS NULL"
        )
        params: list[Any] = [fts_match_expression(list(terms))]
        if projects is not None:
            sql += " AND " + in_clause("f.project", projects)
            params.extend(projects)
        sql += " ORDER BY bm25(fact_fts, 2.0, 1.0, 1.0), f.recorded_at DESC LIMIT ?"
        rows = self._conn.execute(sql, [*params, limit]).fetchall()
        return [Fact(*row) for row in rows]  # by position: the columns are Fact's fields

    def current_facts(self, project: str, limit: int) -> list[Fact]:
        rows = self._conn.execute(
            "SELECT * FROM facts WHERE project = ? AND valid_to IS NULL"
            " AND dismissed_at IS NULL ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (project, limit),
        ).fetchall()
        return [fact_from_row(row) for row in rows]

    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            f"SELECT id FROM facts WHERE {in_clause('id', ids)}", list(ids)
        ).fetchall()
        return {int(row[0]) for row in rows}

    def superseded_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        rows = self._conn.execute(
            "SELECT id FROM facts WHERE (superseded_by IS NOT NULL OR dismissed_at IS NOT NULL)"
            f" AND {in_clause('id', ids)}",
            list(ids),
        ).fetchall()
        return {int(row[0]) for row in rows}
