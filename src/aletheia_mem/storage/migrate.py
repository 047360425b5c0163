"""Numbered schema steps, each applied in one transaction together with its record."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage.audit_tools import redact_audit_tools
from aletheia_mem.storage.canonical_keys import canonicalize_keys

# Read as plain files: importlib.resources would add ~10 ms to every server start.
_MIGRATIONS_DIR = Path(__file__).with_name("migrations")
NFC_KEYS_STEP = 24  # its SQL is a no-op; ``canonicalize_keys`` does the work
AUDIT_TOOLS_STEP = 26  # likewise: ``redact_audit_tools``


def _steps() -> list[tuple[int, str]]:
    return sorted(
        (int(entry.name.split("_", 1)[0]), entry.read_text(encoding="utf-8"))
        for entry in _MIGRATIONS_DIR.iterdir()
        if entry.name.endswith(".sql")
    )


def _statements(script: str) -> list[str]:
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return [s for s in statements if s.strip(" ;\n")]


def newer_store(where: str, found: int, known: int) -> StoreTooNewError:
    """The error for a store whose schema (``found``) is past the last step this version knows
    (``known``): made by a newer version, as after a downgrade. Both dialects tell it so."""
    return StoreTooNewError(
        f"The store {where} was made by a newer version of Aletheia (schema {found}; this"
        f" version knows up to {known}); nothing was changed. Upgrade Aletheia to use it"
        " (pipx upgrade aletheia-mem, or pip install -U aletheia-mem)."
    )


class SchemaGuard:
    """Refuses a write into a store that a newer version migrated after this process opened it:
    an upgrade while a server of the older version still runs (a host keeps its server until
    it restarts). Its writes would follow the old schema's rules into the new one.

    ``check`` runs in each write transaction, after ``BEGIN IMMEDIATE`` (no migration can run
    then). It reads the header's ``user_version``, which each migration step sets to its number
    (about 2 µs), and reads the migrations only when that moved.
    """

    def __init__(self, conn: sqlite3.Connection, where: str, known: int) -> None:
        self._where = where
        self.known = known  # the last step this version has (``migrate`` returns it)
        self._seen = _user_version(conn)

    def check(self, conn: sqlite3.Connection) -> None:
        """Refuse the write when a newer version has migrated the store.

        Raises:
            StoreTooNewError: it has; the write is rolled back.
        """
        seen = _user_version(conn)
        if seen == self._seen:
            return
        found = int(conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0)
        if found > self.known:
            raise upgraded_store(self._where, found, self.known)
        self._seen = seen


def upgraded_store(where: str, found: int, known: int) -> StoreTooNewError:
    """The refusal of a write into a store a newer version migrated (to ``found``) after this
    process opened it (knowing up to ``known``). Both dialects tell it so."""
    return StoreTooNewError(
        f"The store {where} was upgraded by a newer version of Aletheia while this process ran"
        f" (schema {found}; this process knows up to {known}); nothing was changed. Restart"
        " this server (or the tool that started it) to use the new version."
    )


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, where: str = "") -> int:
    """Apply every step not applied yet; returns the number of the last step this version has.
    Safe when several processes start at once.

    Raises:
        StoreTooNewError: the store is past the last step known here (``where`` names it);
            nothing was changed.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations"
        " (version INTEGER PRIMARY KEY, applied_at TEXT)"
    )
    steps = _steps()
    found = int(conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0)
    if found > steps[-1][0]:
        raise newer_store(where or "in use", found, steps[-1][0])
    for version, script in steps:
        if _applied(conn, version):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not _applied(conn, version):  # another process may have won the race
                for statement in _statements(script):
                    conn.execute(statement)
                if version == NFC_KEYS_STEP:
                    _index_titles_again(conn, canonicalize_keys(conn))
                if version == AUDIT_TOOLS_STEP:
                    redact_audit_tools(conn)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, datetime('now'))", (version,)
                )
                conn.execute(f"PRAGMA user_version = {int(version)}")  # what SchemaGuard reads
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a failed COMMIT (a full disk) may have ended it already
                conn.execute("ROLLBACK")
            raise
    return steps[-1][0]


def _index_titles_again(conn: sqlite3.Connection, retitled: list[tuple[int, str]]) -> None:
    """The titles the NFC step rewrote, indexed as they now are (in its transaction)."""
    if not retitled:  # a new store, or one with no decomposed list: no index code loaded
        return
    from aletheia_mem.storage.full_text import index_title_again

    for memory_id, title in retitled:
        index_title_again(conn, memory_id, title)


def _applied(conn: sqlite3.Connection, version: int) -> bool:
    row = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
    return row is not None
