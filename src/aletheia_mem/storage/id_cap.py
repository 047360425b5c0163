"""The largest id a store gives or an import takes: 2^53, the largest whole number every JSON
reader keeps exactly (a JavaScript client reads 2^53 + 1 as 2^53). Only an import sets a
table's ids and next id (``sqlite_sequence``) so high; past them, migration 0027's triggers
refuse the insert, so a store never shows an id it cannot export and import back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia_mem.errors import ConflictError

MAX_ID = 2**53
# What the triggers' RAISE says, the table's name after it.
_NO_IDS_LEFT = "aletheia: no ids left: "


def ids_used_up(path: Path, error: sqlite3.Error) -> ConflictError | None:
    """The error to tell for SQLite's ``error``, when a trigger refused an id past ``MAX_ID``."""
    text = str(error)
    if not text.startswith(_NO_IDS_LEFT):
        return None
    table = text.removeprefix(_NO_IDS_LEFT).replace("_", " ")
    return ConflictError(
        f"The store {path} has no ids left for {table}: ids stay at most {MAX_ID:,} (2^53, the"
        " largest whole number every JSON reader keeps exactly), which an import took them"
        " to. Nothing was changed."
    )
