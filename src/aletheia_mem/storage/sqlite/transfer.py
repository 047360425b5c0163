"""Whole-store export and import of the SQLite store, row by row (local SQLite only)."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import IO, Any

from aletheia_mem.canonical import fact_key
from aletheia_mem.errors import ConflictError, InvalidInputError
from aletheia_mem.search.text import index_text
from aletheia_mem.storage import full_text
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.memories import MEMORY_FTS_INSERT, memory_fts_row

# A reference of a synced item still waiting for the item it names (``sync_pending``): the field
# (a fact's ``memory``, a rule's ``evidence_memory`` or ``evidence_fact``) and the item's uid.
Waiting = list[tuple[str, str]]
# One row of an import: its table, its stored columns' values, the line it came from, the
# time of the item's sync version as exported (``changed_at``; None: an export made before
# exports carried it, or a row that is no synced item: a request, an audit row), and its
# references still waiting for their items.
ImportRow = tuple[str, dict[str, Any], int, int | None, Waiting]


class SqliteTransfer(SqliteDatabase):
    """Whole-store export and import, row by row (local only)."""

    # Tables that hold the user's data, in an order that keeps references pointing backwards.
    DATA_TABLES = (
        "memories",
        "facts",
        "rules",
        "episodes",
        "episode_requests",
        "episode_memories",
        "audit",
    )
    # Columns rebuilt from others on import (and so left out of an export).
    _DERIVED_COLUMNS = (("facts", "subject_key"), ("facts", "predicate_key"))

    def data_columns(self, table: str) -> list[str]:
        """The stored (non-derived) columns of one data table, in schema order."""
        if table not in self.DATA_TABLES:
            raise ValueError(f"not a data table: {table}")
        rows = self._conn.execute(f"PRAGMA table_info({table})").fetchall()
        return [row["name"] for row in rows if (table, row["name"]) not in self._DERIVED_COLUMNS]

    def count_rows(self, table: str) -> int:
        columns = self.data_columns(table)  # validates the name
        del columns
        return int(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def export_rows(self, table: str) -> Iterator[dict[str, Any]]:
        """Every row of a data table as stored, in rowid order, read in one snapshot."""
        for row, _, _ in self.export_versioned_rows(table):
            yield row

    def export_versioned_rows(
        self, table: str
    ) -> Iterator[tuple[dict[str, Any], int | None, Waiting]]:
        """``export_rows`` with the time of each item's sync version in the change log (None
        for a row of a table that holds no synced item, or an item the log does not hold), and
        the item's references still waiting for their items (a fact's or a rule's, in the
        order of field and uid)."""
        waiting = self._waiting(table)
        columns = self.data_columns(table)
        selected = ", ".join(f"item.{name}" for name in columns)
        synced = _SYNCED.get(table)
        if synced is None:
            sql = f"SELECT {selected}, NULL FROM {table} AS item ORDER BY item.rowid"
        else:
            kind, key, _ = synced
            sql = (
                f"SELECT {selected}, log.changed_at FROM {table} AS item"
                f" LEFT JOIN sync_log AS log ON log.kind = '{kind}' AND log.key = item.{key}"
                " ORDER BY item.rowid"
            )
        for row in self._conn.execute(sql):
            changed_at = row[len(columns)]
            values = dict(zip(columns, row[: len(columns)], strict=True))
            held = waiting.get(values[synced[1]], []) if synced is not None and waiting else []
            yield values, None if changed_at is None else int(changed_at), held

    def _waiting(self, table: str) -> dict[str, Waiting]:
        """The references of ``table``'s items still waiting for their items, by item key (a
        few: each waits only until a sync brings its item). One whose item the store holds
        is left out: a sync fills a reference in only as its item arrives, so it would wait
        for good (and an import refuses it)."""
        kind = _WAITING_KINDS.get(table)
        if kind is None:
            return {}
        found: dict[str, Waiting] = {}
        for key, field, target in self._conn.execute(
            f"SELECT p.key, p.field, p.target FROM sync_pending p WHERE p.kind = ?"
            f" AND NOT ({_HELD}) ORDER BY p.key, p.field, p.target",
            (kind,),
        ):
            found.setdefault(str(key), []).append((str(field), str(target)))
        return found

    def data_sequences(self) -> dict[str, int]:
        """The AUTOINCREMENT counters of the data tables (the next ids)."""
        rows = self._conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
        return {row[0]: int(row[1]) for row in rows if row[0] in self.DATA_TABLES}

    def is_empty(self) -> bool:
        """Whether no data table holds a row."""
        return _is_empty(self._conn)

    def import_rows(self, rows: Iterable[ImportRow], sequences: dict[str, int]) -> int:
        """Insert exported rows as they were (ids included) in one transaction; returns the
        number of rows.

        Rows are inserted as ``rows`` yields them, each with its index entries, inside the
        transaction: the import holds one record at a time, whatever the size of the file (a
        team's years of memory), and SQLite spills what the transaction wrote to the WAL as it
        goes. An error from ``rows`` or from a row rolls everything back. The write lock is held
        while ``rows`` is drawn: the import reads and checks its file before (``domain.transfer``
        gives checked rows from a temporary file), so a save waits only for the inserts. Search
        indexes and derived columns are rebuilt; references may point forward within the file,
        and rows may come in any order of tables.

        Foreign keys are checked once, after the inserts (``PRAGMA foreign_key_check``), not
        row by row: with a reference pending (a fact superseded by a later one), SQLite
        searches every new fact's referrers, without an index on ``superseded_by``, so the
        lock grew with the square of the facts. The line each row came from is kept in a
        temporary file beside the store, read again only to name the line of a broken one.

        A memory whose dedupe key an earlier memory of its project already has (two notes whose
        keys an older version made differently) goes in without it: the later note is kept, and
        a save of those words finds the earlier one.

        Raises:
            ConflictError: the store holds data (another process may have saved since the
                caller's ``is_empty``: the transaction checks again).
            InvalidInputError: a row clashes with another, or refers to one that is not there
                (the message names the row's line).
        """
        columns = {table: self.data_columns(table) for table in self.DATA_TABLES}
        with tempfile.TemporaryFile(
            "w+", encoding="utf-8", dir=self.path.parent, prefix=".import-lines-"
        ) as lines:
            # SQLite takes this only outside a transaction: before the write below begins one.
            self._conn.execute("PRAGMA foreign_keys = OFF")
            try:
                with self._write() as conn:
                    if not _is_empty(conn):
                        raise holds_data(self.path)
                    loader = _Loader(conn, columns, lines)
                    for table, values, line, changed_at, waiting in rows:
                        loader.add(table, values, line, changed_at, waiting)
                    loader.finish()
                    _set_sequences(conn, sequences)
            finally:
                self._conn.execute("PRAGMA foreign_keys = ON")
        return loader.count


def _set_sequences(conn: sqlite3.Connection, sequences: dict[str, int]) -> None:
    """The data tables' next ids as the export had them."""
    for name, seq in sequences.items():
        if name in SqliteTransfer.DATA_TABLES:
            conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
            conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq))


class _Loader:
    """An import's rows inserted one by one in the caller's transaction, with their index
    entries; the line each came from written to ``lines`` (``table key line``), for errors.

    The change-log triggers stay silent for the inserts (a request's would rewrite its
    episode's entry each time): the log is written once, by ``finish``.
    """

    def __init__(
        self, conn: sqlite3.Connection, columns: dict[str, list[str]], lines: IO[str]
    ) -> None:
        self._conn = conn
        self._statements = {
            table: (
                f"INSERT INTO {table} ({', '.join(names + _keys(table))})"
                f" VALUES ({', '.join('?' * len(names + _keys(table)))})",
                names,
            )
            for table, names in columns.items()
        }
        self._lines = lines
        self._count: dict[str, int] = {}
        self._last = 0  # the DATA_TABLES position of the latest row's table
        self._reordered = False  # a row came after one of a table that follows its own
        self.count = 0
        # The change log's end before the import: a version logged after it is an imported one.
        self._log_end = int(
            conn.execute("SELECT coalesce(max(seq), 0) FROM sync_log").fetchone()[0]
        )
        conn.execute("UPDATE sync_control SET quiet = 1")

    def add(
        self,
        table: str,
        values: dict[str, Any],
        line: int,
        changed_at: int | None,
        waiting: Waiting,
    ) -> None:
        sql, names = self._statements[table]
        if table == "memories" and self._key_taken(values):
            values = {**values, "dedupe_key": None}
        params = [values.get(name) for name in names]
        if table == "facts":
            params += [fact_key(str(values.get("subject"))), fact_key(str(values.get("predicate")))]
        try:
            self._conn.execute(sql, params)
        except sqlite3.IntegrityError as error:
            repeated = _repeated(table, values, str(error))
            told = repeated or f"this record does not fit with the others ({error})"
            raise InvalidInputError(f"Line {line}: {told}.") from None
        self.count += 1
        # A row is found again by its id, or by its rowid where it has none (a link's): rows go
        # into an empty table in file order, so that is their count so far.
        self._count[table] = self._count.get(table, 0) + 1
        self._lines.write(f"{table}\t{values.get('id', self._count[table])}\t{line}\n")
        if _ORDER[table] < self._last:
            self._reordered = True
        self._last = max(self._last, _ORDER[table])
        synced = _SYNCED.get(table)
        if synced is not None and changed_at is not None:
            kind, key, _ = synced
            self._conn.execute(_LOG_VERSION, {"kind": kind, "key": values[key], "at": changed_at})
        if synced is not None and waiting:
            kind, key, _ = synced
            self._conn.executemany(
                "INSERT INTO sync_pending (kind, key, field, target) VALUES (?, ?, ?, ?)",
                [(kind, values[key], field, target) for field, target in waiting],
            )

    def _key_taken(self, memory: dict[str, Any]) -> bool:
        """Whether an earlier memory of the project holds this memory's dedupe key."""
        if memory.get("dedupe_key") is None:
            return False
        found = self._conn.execute(
            "SELECT 1 FROM memories WHERE project = ? AND dedupe_key = ?",
            (memory.get("project"), memory["dedupe_key"]),
        ).fetchone()
        return found is not None

    def finish(self) -> None:
        """The change log, the search indexes, the facts' marks on memories listed after them,
        and the checks."""
        for table, log in _LOG_VERSIONS:
            self._log_versions(table, log)
        self._conn.execute("UPDATE sync_control SET quiet = 0")
        self._index()
        if self._reordered:  # a fact inserted before its memory found no rank row to mark
            self._conn.execute(_MARK_STALE)
        self._check_references()
        self._check_waiting()

    def _log_versions(self, table: str, log: str) -> None:
        """``log`` (one of ``_LOG_VERSIONS``) over every row of ``table``, chunk by chunk."""
        last = -_LAST_ROWID - 1
        while True:
            upper = self._conn.execute(
                f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid"
                f" LIMIT 1 OFFSET {_LOG_CHUNK - 1}",
                (last,),
            ).fetchone()
            bounds = {"after": last, "upto": _LAST_ROWID if upper is None else upper[0]}
            self._conn.execute(log, {**bounds, "log_end": self._log_end})
            if upper is None:
                return
            last = upper[0]

    def _index(self) -> None:
        """The full-text and file indexes, from the rows just inserted, read back one at a time.

        Index by index after the rows, not row by row between them: each index's b-trees are
        then written in one run (interleaved with the rows' inserts, the import took a third
        longer)."""
        conn = self._conn
        memories = conn.execute(f"SELECT {', '.join(_MEMORY_FIELDS)} FROM memories ORDER BY id")
        conn.executemany(MEMORY_FTS_INSERT, (_memory_fts_row(row) for row in memories))
        conn.executemany(
            "INSERT OR IGNORE INTO memory_files (memory_id, path, path_reversed) VALUES (?, ?, ?)",
            (
                (memory_id, path, path[::-1])
                for memory_id, files in conn.execute(
                    "SELECT id, files FROM memories WHERE files != '[]' ORDER BY id"
                )
                for path in json.loads(files or "[]")
            ),
        )
        conn.executemany(
            "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
            (
                (fact_id, index_text(subject), index_text(predicate), index_text(obj))
                for fact_id, subject, predicate, obj in conn.execute(
                    "SELECT id, subject, predicate, object FROM facts ORDER BY id"
                )
            ),
        )
        for index, table in (("memory_fts", "memories"), ("fact_fts", "facts")):
            if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
                full_text.note_indexed(conn, index, fresh=True)

    def _line(self, table: str, key: Any) -> str:
        """The line of the first row of ``table`` found by ``key`` (its id, or its rowid)."""
        self._lines.flush()
        self._lines.seek(0)
        wanted = f"{table}\t{key}\t"
        for entry in self._lines:
            if entry.startswith(wanted):
                return entry[len(wanted) :].strip()
        return "?"

    def _check_references(self) -> None:
        broken = self._conn.execute("PRAGMA foreign_key_check").fetchone()
        if broken is not None:
            line = self._line(broken[0], broken[1])
            raise InvalidInputError(
                f"Line {line}: this {broken[0]} record refers to a missing {broken[2]} record."
            )
        for table, query, told in _CROSS_PROJECT:
            crossed = self._conn.execute(query).fetchone()
            if crossed is not None:
                key, *named = crossed
                shown = [json.dumps(value, ensure_ascii=False) for value in named]
                raise InvalidInputError(f"Line {self._line(table, key)}: {told.format(*shown)}.")
        for column, table, noun in _EVIDENCE:
            cited = self._conn.execute(
                f"SELECT rules.id, each.value FROM rules, json_each(rules.{column}) AS each"
                f" WHERE each.value NOT IN (SELECT id FROM {table}) LIMIT 1"
            ).fetchone()
            if cited is not None:
                line = self._line("rules", cited[0])
                raise InvalidInputError(
                    f"Line {line}: rule cites {noun} #{cited[1]}, which the export does not hold."
                )

    def _check_waiting(self) -> None:
        """No reference waits for an item the import holds (a sync fills one in as its item
        arrives, and one the store holds would never arrive again)."""
        found = self._conn.execute(_ARRIVED).fetchone()
        if found is not None:
            table = "facts" if found[0] == "fact" else "rules"
            raise InvalidInputError(
                f"Line {self._line(table, found[1])}: this {found[0]} record waits for item"
                f" {found[2]}, which the export holds: cite it by its id."
            )


# Each data table's place: an export lists memories before the facts that state it, whose
# insert trigger marks it stale or not (a fact listed first finds no row to mark: _MARK_STALE).
_UNIQUE_FAILED = "UNIQUE constraint failed: "


def _repeated(table: str, values: dict[str, Any], error: str) -> str | None:
    """In words, when SQLite refused a row as a repeat: which of its values (``id 3``,
    ``uid "ab12..."``) an earlier record of the file already has. None for other failures."""
    if not error.startswith(_UNIQUE_FAILED):
        return None
    spec = error[len(_UNIQUE_FAILED) :]
    if spec.startswith("index "):  # a unique index on expressions: no columns to name
        return f"this {table} record repeats an earlier one of the file"
    columns = [column.rsplit(".", 1)[-1] for column in spec.split(", ")]
    if table == "facts" and "subject_key" in columns:  # facts_current: one current a key
        return (
            f"an earlier facts record of the file is current too (valid_to null) for project"
            f" {json.dumps(values.get('project'))}, subject {json.dumps(values.get('subject'))}"
            f" and predicate {json.dumps(values.get('predicate'))}; only one fact of a subject"
            " and predicate is current, the others end (valid_to) and name it (superseded_by)"
        )
    shown = [f"{column} {json.dumps(values.get(column))}" for column in columns]
    return f"an earlier {table} record of the file has the same {' and '.join(shown)}"


_ORDER = {table: index for index, table in enumerate(SqliteTransfer.DATA_TABLES)}
# Each synced table's kind in the change log, the column of its global id, and the latest
# time its row holds of a change (when it was made, updated, confirmed, dismissed, ended or
# last asked): the best its row tells of its version.
_SYNCED = {
    "memories": (
        "memory", "uid", "max(item.created_at, item.updated_at, coalesce(item.dismissed_at, 0))",
    ),
    "facts": ("fact", "uid", "max(item.recorded_at, coalesce(item.dismissed_at, 0))"),
    "rules": ("rule", "id", "max(item.added_at, item.last_confirmed_at, item.updated_at)"),
    "episodes": (
        "episode", "uid",
        "max(item.started_at, coalesce(item.ended_at, 0), coalesce(item.dismissed_at, 0),"
        " coalesce((SELECT max(at) FROM episode_requests WHERE episode_id = item.id), 0))",
    ),
}  # fmt: skip
# An imported item is logged as a change of this store (so that a first sync carries it) at
# the time of the version it had (``:at``, as its export says), not the time now: a hub or
# teammate holding that version or a later one keeps its own (for the same time, the greater
# origin wins, and the words are the same), and this store pulls the later one; a new, empty
# hub still gets every item. Past a version the log held before, it is one later, as the
# triggers of 0005_hub_sync.sql log a change.
_LOG_VERSION = """
INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)
SELECT :kind, :key,
    max(:at, coalesce((SELECT changed_at + 1 FROM sync_log WHERE kind = :kind AND key = :key), 0)),
    store_id, 0
FROM sync_identity
"""
# Every imported item its export gave no version's time (one made before exports carried it)
# gets this store's version at the latest time its row holds (``_SYNCED``), not the time now: a
# teammate's later change on the hub stays newer than the import's copy and wins. Kind by kind,
# each in the order of its rows, a chunk of rows (rowids after ``:after``, up to ``:upto``) at a
# time: a statement that reads the table it inserts into gathers all it inserts first (in
# memory: temp_store), so that one over every row held the whole log of the import at once.
_LOG_VERSIONS = tuple(
    (
        table,
        "INSERT OR REPLACE INTO sync_log (kind, key, changed_at, origin, remote)"
        f" SELECT '{kind}', item.{key},"
        f" max({latest}, coalesce((SELECT changed_at + 1 FROM sync_log"
        f"     WHERE kind = '{kind}' AND key = item.{key}), 0)),"
        " (SELECT store_id FROM sync_identity), 0"
        f" FROM {table} AS item WHERE item.rowid > :after AND item.rowid <= :upto"
        f" AND NOT EXISTS (SELECT 1 FROM sync_log WHERE kind = '{kind}' AND key = item.{key}"
        "                  AND seq > :log_end)"
        " ORDER BY item.rowid",
    )
    for table, (kind, key, latest) in _SYNCED.items()
)
_LOG_CHUNK = 1_000
_LAST_ROWID = 2**63 - 1
# What a memory's full-text row is made from (the fields of NewMemory).
_MEMORY_FIELDS = (
    "id", "project", "type", "kind", "title", "text", "tool", "created_at", "dedupe_key",
    "narrative", "facts", "files",
)  # fmt: skip


def _memory_fts_row(row: sqlite3.Row | tuple[Any, ...]) -> tuple[Any, ...]:
    from aletheia_mem.storage.entries import NewMemory  # off the start path

    values = dict(zip(_MEMORY_FIELDS, row, strict=True))
    memory = NewMemory(
        project=str(values["project"]),
        type=str(values["type"]),
        kind=str(values["kind"]),
        title=str(values["title"]),
        text=str(values["text"]),
        tool=str(values["tool"]),
        created_at=values["created_at"] or 0,
        dedupe_key=values["dedupe_key"],
        narrative=values["narrative"],
        facts=tuple(json.loads(values["facts"] or "[]")),
        files=tuple(json.loads(values["files"] or "[]")),
    )
    return memory_fts_row(values["id"], memory)


# Every memory's mark as the facts' insert trigger (0015_stale_from.sql) sets it, for all of them
# at once: when the facts come before their memories, each trigger found no row to mark.
_MARK_STALE = """
UPDATE memory_rank SET stale_from = (
    SELECT CASE WHEN count(*) = 0 THEN 0 WHEN count(*) > count(valid_to) THEN NULL
                ELSE max(valid_to) END
    FROM facts WHERE memory_id = memory_rank.id AND dismissed_at IS NULL
) WHERE id IN (SELECT memory_id FROM facts WHERE memory_id IS NOT NULL)
"""
# A rule's evidence: its column, the table cited and what the table holds.
_EVIDENCE = (
    ("evidence_memory_ids", "memories", "memory"),
    ("evidence_fact_ids", "facts", "fact"),
)


# The references no tool makes across projects, each with the line's table, the query of the
# first that does (the key of its row, then what the message names) and what the line is told:
# a fact is superseded by a later fact of its key (so of its project), states a memory of its
# project (a save's, and sync ties it to no other), and a session's hooks link the memories
# they save in the session's project.
_CROSS_PROJECT = (
    (
        "facts",
        "SELECT f.id, f.project, t.id, t.project FROM facts f JOIN facts t"
        " ON t.id = f.superseded_by WHERE t.project != f.project LIMIT 1",
        "this fact of project {0} is superseded by fact #{1} of project {2}; a fact is"
        " superseded only by a fact of its own project",
    ),
    (
        "facts",
        "SELECT f.id, f.project, m.id, m.project FROM facts f JOIN memories m"
        " ON m.id = f.memory_id WHERE m.project != f.project LIMIT 1",
        "this fact of project {0} names memory #{1} of project {2}; a fact belongs only to a"
        " memory of its own project",
    ),
    (
        "episode_memories",
        "SELECT l.rowid, e.id, e.project, m.id, m.project FROM episode_memories l"
        " JOIN episodes e ON e.id = l.episode_id JOIN memories m ON m.id = l.memory_id"
        " WHERE m.project != e.project LIMIT 1",
        "this episode_memory record links episode #{0} of project {1} to memory #{2} of"
        " project {3}; a session holds only memories of its own project",
    ),
)
# The tables whose items' references may wait for an item (``sync_pending``), by their kind.
_WAITING_KINDS = {"facts": "fact", "rules": "rule"}
# Whether the item a waiting reference ``p`` names is held: a sync fills a reference in as its
# item arrives, so one waiting for an item the store holds would wait for good.
_HELD = (
    "(p.field IN ('memory', 'evidence_memory')"
    " AND EXISTS (SELECT 1 FROM memories WHERE uid = p.target))"
    " OR (p.field = 'evidence_fact' AND EXISTS (SELECT 1 FROM facts WHERE uid = p.target))"
)
# A waiting reference whose item the import holds, with the key of the line that gave it.
_ARRIVED = f"""
SELECT p.kind, coalesce(f.id, p.key), p.target FROM sync_pending p
LEFT JOIN facts f ON p.kind = 'fact' AND f.uid = p.key
WHERE {_HELD}
LIMIT 1
"""


def _keys(table: str) -> list[str]:
    """The derived columns an insert into ``table`` adds after the stored ones."""
    return [column for name, column in SqliteTransfer._DERIVED_COLUMNS if name == table]


def _is_empty(conn: sqlite3.Connection) -> bool:
    return all(
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
        for table in SqliteTransfer.DATA_TABLES
    )


def holds_data(path: Path) -> ConflictError:
    return ConflictError(
        f"The store at {path} already holds data; import loads an export into an"
        " empty store. Point ALETHEIA_DATA_DIR at a new folder and import there."
    )


def remove_unused_store(path: Path) -> bool:
    """Remove the store at ``path`` (with its ``-wal`` and ``-shm``), which this process made
    and has closed, unless another process has it open or saved to it; returns whether it did.

    SQLite removes the ``-wal`` file when the last connection to a store closes: one still there
    once this process's connections are closed is another process's, and an agent's server
    that opened the new store would go on writing into a removed file, its saves lost.
    """
    wal = Path(f"{path}-wal")
    if wal.exists() or not path.exists():  # connecting would make an empty file
        return False
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            if not _is_empty(conn):
                return False
    except sqlite3.Error:
        return False  # a store this check cannot read is left as it is
    if wal.exists():  # opened by another process since: it is not the last connection here
        return False
    for suffix in ("", "-wal", "-shm", "-journal"):
        with suppress(OSError):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return True
