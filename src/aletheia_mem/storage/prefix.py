"""The range of names that start with a prefix, as SQL over an index (both stores compare names
by their bytes: SQLite's BINARY, PostgreSQL's ``COLLATE "C"``)."""

from __future__ import annotations

LAST = "\U0010ffff"  # above every character: the end of a prefix range


def name_range(starting: str, placeholder: str) -> tuple[str, tuple[str, ...]]:
    """The upper bound of the names starting with ``starting`` (its lower bound is itself), as
    an SQL condition on ``project`` to append (with this store's ``placeholder``) and its
    parameters: none for the empty prefix, so that every name is in range."""
    if not starting:
        return "", ()
    return f" AND project < {placeholder}", (starting + LAST,)
