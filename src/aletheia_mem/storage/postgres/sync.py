"""The change log of a PostgreSQL store: what other stores pull from it and push to it.

The engine is SQLite's (``storage.sync_apply``, ``storage.sync_export``); this module gives it a
connection that reads ``?`` placeholders and the hooks of ``SyncDialect`` for PostgreSQL. How
the log stays right with several writers at once is told in ``migrations/0003_sync.sql``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import psycopg

from aletheia_mem.search.text import index_text
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgPart, Row
from aletheia_mem.storage.postgres.facts import lock_fact_key, write_retrying
from aletheia_mem.storage.postgres.memories import index_memory, memory_texts
from aletheia_mem.storage.sync_apply import apply_page
from aletheia_mem.storage.sync_dialect import SyncDialect
from aletheia_mem.storage.sync_export import export_page, item_number, store_id
from aletheia_mem.storage.sync_peers import (
    Projects,
    set_push_cursor,
    set_sync_scope,
    sync_cursors,
    sync_scope,
)
from aletheia_mem.storage.sync_records import ApplyStats, ExportPage

# The sync lock (0003_sync.sql), held exclusive while a page is applied.
_SYNC_LOCK = (1937337955, 1)

LOG_VERSION = (
    "INSERT INTO sync_log (kind, key, changed_at, origin, remote) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (kind, key) DO UPDATE SET changed_at = excluded.changed_at,"
    " origin = excluded.origin, remote = excluded.remote, seq = NULL"
)


@lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    """psycopg's placeholders for the engine's ``?`` ones (its SQL holds no other ``?``)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgSyncConn:
    """A psycopg connection that takes the engine's SQL as it is written."""

    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.raw = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Row]:
        return self.raw.execute(_placeholders(sql), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> object:
        with self.raw.cursor() as cursor:
            cursor.executemany(_placeholders(sql), parameters)
        return None


def _set_quiet(conn: PgSyncConn, quiet: bool) -> None:
    """Silence the triggers for the rest of this transaction only."""
    conn.execute("SELECT set_config('aletheia.sync_quiet', ?, true)", ("on" if quiet else "off",))


def _reserve_memory_ids(conn: PgSyncConn, count: int) -> list[int]:
    rows = conn.execute(
        "SELECT nextval(pg_get_serial_sequence('memories', 'id')) FROM generate_series(1, ?)",
        (count,),
    ).fetchall()
    return [int(row[0]) for row in rows]


def pg_dialect(totals: full_text.Totals) -> SyncDialect:
    """The hooks for one transaction; what it indexes is counted in ``totals``."""

    def index_one_memory(conn: PgSyncConn, memory_id: int, new: NewMemory) -> None:
        index_memory(conn.raw, memory_id, new, totals)

    def index_new_memories(conn: PgSyncConn, rows: list[tuple[int, NewMemory]]) -> None:
        index_fresh_memories(conn.raw, rows, totals)

    def index_fact(
        conn: PgSyncConn, fact_id: int, subject: str, predicate: str, obj: str, known: bool
    ) -> None:
        texts = (subject, predicate, obj)  # index_row replaces an earlier entry itself
        full_text.index_row(conn.raw, full_text.FACT_INDEX, fact_id, texts, totals)

    return SyncDialect(
        log_version=LOG_VERSION,
        set_quiet=_set_quiet,
        reserve_memory_ids=_reserve_memory_ids,
        index_memory=index_one_memory,
        index_new_memories=index_new_memories,
        index_fact=index_fact,
        lock_fact_key=lambda conn, key: lock_fact_key(conn.raw, key),
    )


def index_fresh_memories(
    conn: psycopg.Connection[Row], rows: list[tuple[int, NewMemory]], totals: full_text.Totals
) -> None:
    """Index memories inserted just now (nothing is indexed under their ids yet) as
    ``PgMemories`` indexes one, in three statements for them all instead of a few each."""
    index = full_text.MEMORY_INDEX
    docs: list[tuple[int, int]] = []
    terms: list[tuple[str, int, int, str]] = []
    for memory_id, new in rows:
        tokens = full_text.column_tokens([index_text(text) for text in memory_texts(new)])
        docs.append((memory_id, sum(len(found) for column in tokens for found in column.values())))
        terms.extend(
            (term, memory_id, col, "{" + ",".join(map(str, found)) + "}")
            for col, column in enumerate(tokens)
            for term, found in column.items()
        )
    conn.execute(
        f"INSERT INTO {index.docs} ({index.key}, tokens)"
        " SELECT * FROM unnest(%s::bigint[], %s::integer[])",
        ([doc[0] for doc in docs], [doc[1] for doc in docs]),
    )
    if terms:
        # COPY: psycopg writes rows in C, where array parameters are built in Python.
        with (
            conn.cursor() as cursor,
            cursor.copy(
                f"COPY {index.terms} (term, {index.key}, col, positions) FROM STDIN"
            ) as copy,
        ):
            for row in terms:
                copy.write_row(row)
    files = [(memory_id, path) for memory_id, new in rows for path in new.files]
    if files:
        conn.execute(
            "INSERT INTO memory_files (memory_id, path, path_reversed)"
            " SELECT k, p, reverse(p) FROM unnest(%s::bigint[], %s::text[]) AS u (k, p)"
            " ON CONFLICT DO NOTHING",
            [list(values) for values in zip(*files, strict=True)],
        )
    totals.add(index, len(docs), sum(doc[1] for doc in docs))


class PgSync(PgPart):
    """``SyncLog`` on PostgreSQL: the hub's side of ``aletheia sync``, or a store's own."""

    def sync_store_id(self) -> str:
        """This store's global id: the origin of the changes made here."""
        with self._db.read() as conn:
            return store_id(PgSyncConn(conn))

    def sync_item_number(self, kind: str, key: str) -> int | None:
        """The ``#N`` of the item with this global id here, or None (``item_number``)."""
        with self._db.read() as conn:
            return item_number(PgSyncConn(conn), kind, key)

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
        """One page of the change log after ``after``: the changes are numbered first (in a
        transaction of their own), then the page is read in one snapshot."""
        with self._db.write() as conn:
            conn.execute("SELECT sync_number_changes()")
        with self._db.read_snapshot() as conn:
            return export_page(
                PgSyncConn(conn),
                after=after,
                limit=limit,
                max_bytes=max_bytes,
                local_only=local_only,
                exclude_origin=exclude_origin,
                projects=projects,
            )

    def apply_changes(
        self,
        records: list[dict[str, Any]],
        *,
        projects: tuple[str, ...] | None,
        now: int,
        pull_cursor: tuple[str, int, int] | None = None,
        author: str | None = None,
        shared_rules: bool = False,
        rewritten: frozenset[int] = frozenset(),
    ) -> ApplyStats:
        """Apply remote records in one transaction, with the pull cursor when one is given
        (see ``SqliteStore.apply_changes``). Pages take turns, and other writes of synced
        items wait for the page; a writer that locked a row the page needs before it took
        the sync lock makes a deadlock that PostgreSQL breaks, and the loser runs again."""

        def work(conn: psycopg.Connection[Row]) -> ApplyStats:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _SYNC_LOCK)
            with full_text.indexing(conn) as totals:
                return apply_page(
                    PgSyncConn(conn),
                    records,
                    dialect=pg_dialect(totals),
                    projects=projects,
                    now=now,
                    pull_cursor=pull_cursor,
                    author=author,
                    shared_rules=shared_rules,
                    rewritten=rewritten,
                )

        return write_retrying(self._db, work)

    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]:
        """Where this store stands with a hub and token: ``(push_cursor, pull_cursor)``."""
        with self._db.read() as conn:
            return sync_cursors(PgSyncConn(conn), hub_id, token_id)

    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None:
        with self._db.write() as conn:
            set_push_cursor(PgSyncConn(conn), hub_id, token_id, cursor, now)

    def sync_scope(self, hub_url: str, token_digest: str) -> tuple[bool, Projects]:
        """Whether this store synced with the hub and token before, and the projects named."""
        with self._db.read() as conn:
            return sync_scope(PgSyncConn(conn), hub_url, token_digest)

    def set_sync_scope(self, hub_url: str, token_digest: str, projects: Projects) -> None:
        with self._db.write() as conn:
            set_sync_scope(PgSyncConn(conn), hub_url, token_digest, projects)
