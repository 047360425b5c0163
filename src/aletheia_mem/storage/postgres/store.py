"""The PostgreSQL store: every concern's part joined on one pool (see ``storage.contracts``).

A hub runs several processes on one database; each opens its own ``PostgresStore`` (its own
pool) and sees the others' writes at once: tokens, sessions and rate windows included.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from aletheia_mem.storage.contracts import HubStore, RateWindows, SessionRows
from aletheia_mem.storage.hub_rows import COUNT_ROWS_SQL, COUNTED_TABLES
from aletheia_mem.storage.postgres.audit import PgAudit
from aletheia_mem.storage.postgres.database import DEFAULT_POOL_SIZE, PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from aletheia_mem.storage.postgres.postings import DEFAULT_MAX_POSTINGS, PAIRS_PER_MB
from aletheia_mem.storage.postgres.rate_windows import PgRateWindows
from aletheia_mem.storage.postgres.rules import PgRules
from aletheia_mem.storage.postgres.sessions import PgSessionRows
from aletheia_mem.storage.postgres.sync import PgSync
from aletheia_mem.storage.postgres.tokens import PgTokens
from aletheia_mem.storage.postgres.work import PgWork


class PostgresStore(PgMemories, PgFacts, PgRules, PgWork, PgAudit, PgTokens, PgSync):
    """A hub's whole state on PostgreSQL: one base class per concern, all on one pool."""

    def __init__(self, db: PgDatabase, max_postings: int = DEFAULT_MAX_POSTINGS) -> None:
        super().__init__(db)
        self._postings.max_postings = max_postings
        self._sessions = PgSessionRows(db)
        self._rate_windows = PgRateWindows(db)

    def snapshot(self) -> AbstractContextManager[None]:
        return self._db.snapshot()

    def close(self) -> None:
        self._db.close()

    def sessions(self) -> SessionRows:
        return self._sessions

    def rate_windows(self) -> RateWindows:
        return self._rate_windows

    def check_schema(self) -> int:
        return self._db.check_schema()

    def row_counts(self) -> dict[str, int]:
        with self._db.read() as conn:
            [row] = conn.execute(COUNT_ROWS_SQL).fetchall()
        return dict(zip(COUNTED_TABLES, map(int, row), strict=True))

    def health(self) -> dict[str, Any]:
        """The server's version, the schema's and the database's size, read in one round trip
        (``connection`` "ok"), for ``aletheia doctor``.

        Raises:
            StoreUnavailableError: the database does not answer (one line, no password).
        """
        with self._db.read() as conn:
            [row] = conn.execute(
                "SELECT current_setting('server_version'), pg_database_size(current_database()),"
                " current_database(), (SELECT max(version) FROM schema_migrations)"
            ).fetchall()
        return {
            "connection": "ok",
            "url": self._db.display_url,
            "server_version": str(row[0]),
            "database": str(row[2]),
            "database_size_bytes": int(row[1]),
            "schema": int(row[3]),
        }


def open_postgres_store(
    url: str, pool_size: int | None = None, search_cache_mb: int | None = None
) -> PostgresStore:
    """Connect to the database at ``url`` (a ``postgresql://`` URL) and migrate it, with
    ``pool_size`` connections at most. Relevance search holds the postings of recently searched
    terms in about ``search_cache_mb`` MB. None keeps each default (8 connections, 50 MB)."""
    pairs = DEFAULT_MAX_POSTINGS if search_cache_mb is None else search_cache_mb * PAIRS_PER_MB
    connections = DEFAULT_POOL_SIZE if pool_size is None else pool_size
    return PostgresStore(PgDatabase(url, connections), pairs)


# Checked by mypy: it is everything a hub asks of its store.
_HUB_STORE: type[HubStore] = PostgresStore
