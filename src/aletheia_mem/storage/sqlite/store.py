"""The SQLite store: every part over one file and one set of connections."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from aletheia_mem.storage.sqlite.audit import SqliteAudit
from aletheia_mem.storage.sqlite.database import tells_store_problems
from aletheia_mem.storage.sqlite.facts import SqliteFacts
from aletheia_mem.storage.sqlite.home import SqliteHome
from aletheia_mem.storage.sqlite.memories import SqliteMemories
from aletheia_mem.storage.sqlite.remote import SqliteRemote
from aletheia_mem.storage.sqlite.repositories import SqliteRepositories
from aletheia_mem.storage.sqlite.rules import SqliteRules
from aletheia_mem.storage.sqlite.search import SqliteSearch
from aletheia_mem.storage.sqlite.sync import SqliteSync
from aletheia_mem.storage.sqlite.tokens import SqliteTokens
from aletheia_mem.storage.sqlite.transfer import SqliteTransfer
from aletheia_mem.storage.sqlite.work import SqliteWork

if TYPE_CHECKING:  # the hub's and the HTTP transport's tables: imported when first asked for
    from aletheia_mem.storage.mcp_sessions import SessionRows
    from aletheia_mem.storage.sqlite.rate_windows import SqliteRateWindows


_OPENING = threading.Lock()  # one store's rate windows opened once


@tells_store_problems
class SqliteStore(
    SqliteMemories,
    SqliteSearch,
    SqliteFacts,
    SqliteRules,
    SqliteWork,
    SqliteAudit,
    SqliteTokens,
    SqliteSync,
    SqliteRemote,
    SqliteHome,
    SqliteTransfer,
):
    """One SQLite file shared by every process on the machine (a ``HubStore``)."""

    _windows: SqliteRateWindows | None = None  # opened by the first ``rate_windows()``
    _own_windows = False  # on a file of their own, which ``close`` closes

    def sessions(self) -> SessionRows:
        """The MCP sessions table of this file, on its own connections (the caller closes it)."""
        from aletheia_mem.storage.mcp_sessions import SessionRows

        return SessionRows(self.path)

    def row_counts(self) -> dict[str, int]:
        from aletheia_mem.storage.hub_rows import COUNT_ROWS_SQL, COUNTED_TABLES

        row = self._conn.execute(COUNT_ROWS_SQL).fetchone()
        return dict(zip(COUNTED_TABLES, map(int, row), strict=True))

    def rate_windows(self) -> SqliteRateWindows:
        """The hub's shared rate-limit windows: in their own file beside this one (a count
        never waits for this file's write lock), else on this store's connections. Opened once
        (every caller takes turns on the same ones) and closed with the store."""
        from aletheia_mem.storage.sqlite.rate_windows import SqliteRateWindows, beside

        with _OPENING:
            if self._windows is None:
                own = beside(self.path)
                self._windows = SqliteRateWindows(own or self._pool)
                self._own_windows = own is not None
            return self._windows

    def close(self) -> None:
        """The store's connections, and those of its rate windows' own file."""
        try:
            super().close()
        finally:
            if self._windows is not None and self._own_windows:
                self._windows.close()

    def repositories(self) -> SqliteRepositories:
        """The repositories its hosts work in, on this store's connections (a local feature)."""
        return SqliteRepositories(self._pool)
