"""Numbered schema steps, each applied in one transaction together with its record."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.errors import StoreTooNewError

# Read as plain files: importlib.resources would add ~10 ms to every server start.
_MIGRATIONS_DIR = Path(__file__).with_name("migrations")


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


def migrate(conn: sqlite3.Connection, where: str = "") -> None:
    """Apply every step not applied yet. Safe when several processes start at once.

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
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, datetime('now'))", (version,)
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _applied(conn: sqlite3.Connection, version: int) -> bool:
    row = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
    return row is not None
