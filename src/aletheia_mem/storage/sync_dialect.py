"""What the sync engine needs of a database, so that one engine serves SQLite and PostgreSQL.

``sync_apply`` and ``sync_export`` write their SQL once, with ``?`` placeholders and SQL that
both databases read alike (``ON CONFLICT ... DO UPDATE``, ``RETURNING id``). They run it
through a ``SyncConn``: a ``sqlite3.Connection`` is one as it is; a psycopg connection is
wrapped so that its placeholders become ``%s``. What cannot be written alike is a hook of the
``SyncDialect``: how a version replaces an item's row in the log (and renews its ``seq``), how
the change-log triggers are silenced, how ids are reserved for a bulk insert, how a memory or a
fact is indexed for search, and how a fact key's other writers are kept out while sync re-tiles
its timeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aletheia_mem.storage.entries import NewMemory


class SyncCursor(Protocol):
    """The rows of one statement, each readable by column name and by position."""

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class SyncConn(Protocol):
    """A connection inside the caller's transaction; SQL with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> SyncCursor: ...
    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> object: ...


# Index one memory row for search (full text, file paths): the store's own indexer.
IndexMemory = Callable[[Any, int, NewMemory], None]
# Index memories inserted just now, nothing indexed under their ids yet: ``(id, memory)`` pairs.
IndexNewMemories = Callable[[Any, list[tuple[int, NewMemory]]], None]
# Index one fact's words (subject, predicate, object) under its id; the last argument says
# whether it was indexed before (and that entry must go).
IndexFact = Callable[[Any, int, str, str, str, bool], None]
# Keep the other writers of a fact key (project, subject_key, predicate_key) out until the
# transaction ends.
LockFactKey = Callable[[Any, tuple[str, str, str]], None]


@dataclass(frozen=True)
class SyncDialect:
    """The few things sync does differently on each database.

    Attributes:
        log_version: SQL taking ``(kind, key, changed_at, origin, remote)`` that makes this the
            item's one row in ``sync_log``, with a ``seq`` later than every change before it.
        set_quiet: silence (True) or wake (False) the change-log triggers for the rest of the
            transaction, while sync writes the log itself.
        reserve_memory_ids: ``count`` fresh memory ids, for a bulk insert with explicit ids.
        index_memory: index a memory row (the store's indexer).
        index_new_memories: index many memories just inserted (a bulk insert's).
        index_fact: index a fact's words.
        lock_fact_key: take the turn of a fact key's writers before reading its timeline.

    Every hook gets the ``SyncConn`` the engine was given.
    """

    log_version: str
    set_quiet: Callable[[Any, bool], None]
    reserve_memory_ids: Callable[[Any, int], list[int]]
    index_memory: IndexMemory
    index_new_memories: IndexNewMemories
    index_fact: IndexFact
    lock_fact_key: LockFactKey


def json_value(value: Any) -> Any:
    """A JSON column's value: text on SQLite, already decoded from jsonb on PostgreSQL."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def inserted_id(conn: SyncConn, sql: str, params: Sequence[Any]) -> int:
    """Run an ``INSERT`` and return the id of its row (both databases know ``RETURNING``)."""
    return int(conn.execute(sql + " RETURNING id", params).fetchall()[0][0])
