"""Writes refused once a newer version migrated the database under this process: the
PostgreSQL side of ``migrate.SchemaGuard`` (a rolling upgrade of a multi-process hub leaves the
old processes running while the first new one migrates).

Each guarded write sends two statements ahead of its own, in the same round trip (a pipeline)
and the same transaction: a shared hold on the migrations' advisory lock, so that no migration
runs between the check and the commit (``migrate`` takes the lock exclusively), then a read of
the last step applied that fails the transaction when it is past what this process knows. The
failure is the server's, so a statement sent with it is never run: no round trip is added, and
the guard costs the backend two small statements per write. Once refused, the process knows the
schema only moves on, and refuses every later write without asking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage.migrate import upgraded_store

# Any constant: the key of the advisory lock that lets one process at a time migrate.
MIGRATION_LOCK = 0x616C6574  # "alet"
HOLD_OFF_MIGRATIONS = f"SELECT pg_advisory_xact_lock_shared({MIGRATION_LOCK})"
_MARK = "newer than this process knows"
_FOUND = re.compile(r"schema (\d+) is " + _MARK)


class PgSchemaGuard:
    """The schema version a process was opened on, checked in each of its write transactions."""

    def __init__(self, where: str, known: int) -> None:
        self._where = where
        self._known = int(known)  # the last step this version has
        self.found: int | None = None  # the schema that refused a write, once one did
        # A text cast to integer fails with the text in the error: one the server logs and
        # ``refused`` reads back. CASE keeps the cast from running while the schema is known.
        self._check = (
            f"SELECT CASE WHEN max(version) > {self._known} THEN ('Aletheia store schema '"
            f" || max(version) || ' is {_MARK} ({self._known})')::integer END"
            " FROM schema_migrations"
        )

    def refuse_if_refused(self) -> None:
        """Refuse at once in a process refused before: the schema only moves on.

        Raises:
            StoreTooNewError: an earlier write found the schema past this process.
        """
        if self.found is not None:
            raise self.refusal()

    def send(self, conn: psycopg.Connection[Any]) -> None:
        """Queue the hold and the check in ``conn``'s transaction (in a pipeline: not waited
        for)."""
        conn.execute(HOLD_OFF_MIGRATIONS)
        conn.execute(self._check)

    def check(self, found: int) -> None:
        """Refuse, from now on, when ``found`` (the schema read) is past this process.

        Raises:
            StoreTooNewError: it is.
        """
        if found > self._known:
            self.found = found
            raise self.refusal()

    def refusal(self) -> StoreTooNewError:
        return upgraded_store(self._where, self.found or 0, self._known)

    @contextmanager
    def refused(self) -> Iterator[None]:
        """Tell the check's failure, raised within the block, as ``StoreTooNewError``.

        Raises:
            StoreTooNewError: the check found the schema past this process.
        """
        try:
            yield
        except psycopg.errors.InvalidTextRepresentation as error:
            found = _FOUND.search(str(error))
            if found is None:
                raise
            self.found = int(found.group(1))
            raise self.refusal() from None
