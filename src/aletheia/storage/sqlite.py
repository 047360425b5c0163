"""The SQLite store: WAL, a busy timeout, one writer at a time through ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from aletheia.search.query import fts_match_expression
from aletheia.search.text import index_text
from aletheia.storage.base import (
    AuditEntry,
    Fact,
    Memory,
    MemoryQuery,
    NewFact,
    NewMemory,
    Rule,
    SessionRequest,
)
from aletheia.storage.migrate import migrate

BUSY_TIMEOUT_MS = 30_000
DismissTable = Literal["memories", "facts", "episodes"]
# bm25 column weights: title, text, narrative, facts, files.
_BM25 = "bm25(memory_fts, 4.0, 1.0, 0.8, 1.2, 1.0)"
_MONTH_MS = 2_592_000_000.0


def _json_list(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _memory(row: sqlite3.Row) -> Memory:
    return Memory(
        id=row["id"],
        uid=row["uid"],
        project=row["project"],
        type=row["type"],
        kind=row["kind"],
        title=row["title"],
        text=row["text"],
        narrative=row["narrative"],
        facts=tuple(json.loads(row["facts"])),
        files=tuple(json.loads(row["files"])),
        tool=row["tool"],
        pinned=bool(row["pinned"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        dismissed_at=row["dismissed_at"],
        dismiss_reason=row["dismiss_reason"],
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


class SqliteStore:
    """One SQLite file shared by every process on the machine."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        migrate(self._conn)

    # -- connections and transactions -------------------------------------------------------

    @property
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                timeout=BUSY_TIMEOUT_MS / 1000,
                check_same_thread=False,
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # -- memories ----------------------------------------------------------------------------

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]:
        """Insert a memory, and the facts it states, unless its dedupe key exists.

        Returns the memory and whether it was created now.
        """
        with self._write() as conn:
            if new.dedupe_key is not None:
                row = conn.execute(
                    "SELECT * FROM memories WHERE project = ? AND dedupe_key = ?",
                    (new.project, new.dedupe_key),
                ).fetchone()
                if row is not None:
                    return _memory(row), False
            memory_id = self._insert_memory(conn, new)
            for fact in facts:
                self._put_fact(conn, fact, memory_id)
            row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
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
            "SELECT * FROM memories WHERE project = ? AND dedupe_key = ?", (project, dedupe_key)
        ).fetchone()
        return None if row is None else _memory(row)

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        """The memories with these ids, newest first; unknown ids are skipped."""
        if not ids:
            return []
        rows = self._conn.execute(
            f"SELECT * FROM memories WHERE {_in_clause('id', ids)}"
            " ORDER BY created_at DESC, id DESC",
            list(ids),
        ).fetchall()
        return [_memory(row) for row in rows]

    def get_memory(self, memory_id: int) -> Memory | None:
        found = self.get_memories([memory_id])
        return found[0] if found else None

    def search_memories(self, query: MemoryQuery, now: int) -> list[Memory]:
        """One page of live memories matching the query, in the requested order."""
        where, params = self._filters(query)
        if query.file is not None:
            return self._memories_by_file(query, where, params)
        if query.terms:
            sql = (
                f"SELECT m.*, {_BM25} AS score FROM memory_fts JOIN memories m"
                " ON m.id = memory_fts.rowid WHERE memory_fts MATCH ? AND " + " AND ".join(where)
            )
            params = [fts_match_expression(list(query.terms)), *params]
        else:
            sql = "SELECT m.* FROM memories m WHERE " + " AND ".join(where)
        sql += " ORDER BY " + self._order(query, params, now) + " LIMIT ? OFFSET ?"
        params += [query.limit, query.offset]
        return [_memory(row) for row in self._conn.execute(sql, params).fetchall()]

    def _order(self, query: MemoryQuery, params: list[Any], now: int) -> str:
        if query.order == "date_asc":
            return "m.created_at ASC, m.id ASC"
        if query.order == "date_desc" or not query.terms:
            return "m.created_at DESC, m.id DESC"
        # bm25 is negative (lower is better): pinned and recent items get a gentle boost.
        params.append(now)
        return (
            "score * (1.0 + 0.1 * m.pinned)"
            f" * (1.0 + 0.05 / (1.0 + max(? - m.created_at, 0) / {_MONTH_MS})),"
            " m.created_at DESC, m.id DESC"
        )

    def _filters(self, query: MemoryQuery) -> tuple[list[str], list[Any]]:
        where: list[str] = ["m.dismissed_at IS NULL"]
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
            "SELECT DISTINCT m.* FROM memory_files f JOIN memories m ON m.id = f.memory_id"
            f" WHERE {match} AND "
            + " AND ".join(where)
            + " ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?"
        )
        rows = self._conn.execute(sql, [*params, query.limit, query.offset]).fetchall()
        return [_memory(row) for row in rows]

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
        sql = (
            "SELECT * FROM memories WHERE dismissed_at IS NULL AND id != ?"
            f" AND (created_at {sign} ? OR (created_at = ? AND id {sign} ?))"
        )
        params: list[Any] = [anchor.id, anchor.created_at, anchor.created_at, anchor.id]
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
            "SELECT * FROM memories WHERE project = ? AND pinned = ? AND dismissed_at IS NULL"
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
        conn.execute(
            "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
            (fact_id, index_text(new.subject), index_text(new.predicate), index_text(new.object)),
        )
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
        rows = self._conn.execute(sql + " ORDER BY added_at, id").fetchall()
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
        rows = self._conn.execute(
            "SELECT r.episode_id, r.at, r.text, e.tool FROM episode_requests r"
            " JOIN episodes e ON e.id = r.episode_id"
            " WHERE e.project = ? AND e.dismissed_at IS NULL ORDER BY r.at DESC, r.id DESC LIMIT ?",
            (project, limit),
        ).fetchall()
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
