"""The ``repositories`` table of a SQLite store (a ``RepositoryLog``): a path and its project,
with when each was last seen.

Recorded by the session hook and the stdio server; read by the Rules page's Write to tools.
This module only stores rows: what a path may be, and whether it still is a repository, is
``domain.repositories``' call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aletheia_mem.storage.connections import ThreadConnections

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import Repository

MAX_REPOSITORIES = 200  # the least recently seen are forgotten past this
SEEN_AGAIN_MS = 3_600_000  # a repository seen within the hour is not written again


class SqliteRepositories:
    """The ``repositories`` table of one SQLite store."""

    def __init__(self, pool: ThreadConnections) -> None:
        self._pool = pool

    def remember(self, path: str, project: str, at: int) -> bool:
        """Record ``path`` as seen at ``at``; returns whether a row was written.

        A repository seen within the hour under the same project is left as it is, so that a
        server or hook starting many times a minute writes nothing.
        """
        row = (
            self._pool.get()
            .execute("SELECT project, last_seen_at FROM repositories WHERE path = ?", (path,))
            .fetchone()
        )
        if row is not None and row[0] == project and at - int(row[1]) < SEEN_AGAIN_MS:
            return False
        with self._pool.write() as conn:
            conn.execute(
                "INSERT INTO repositories (path, project, first_seen_at, last_seen_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET"
                " project = excluded.project,"
                " last_seen_at = max(last_seen_at, excluded.last_seen_at)",
                (path, project, at, at),
            )
            conn.execute(
                "DELETE FROM repositories WHERE path IN (SELECT path FROM repositories"
                " ORDER BY last_seen_at DESC LIMIT -1 OFFSET ?)",
                (MAX_REPOSITORIES,),
            )
        return True

    def recent(self, limit: int) -> list[Repository]:
        """The repositories seen most recently first."""
        from aletheia_mem.storage.entries import Repository

        rows = self._pool.get().execute(
            "SELECT path, project, last_seen_at FROM repositories"
            " ORDER BY last_seen_at DESC, path LIMIT ?",
            (limit,),
        )
        return [Repository(str(path), str(project), int(at)) for path, project, at in rows]
