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


def project_names_sql(
    table: str, starting: str, limit: int, placeholder: str
) -> tuple[str, tuple[str | int, ...]]:
    """The SQL (with this store's ``placeholder``) and parameters reading the projects of
    ``table`` that start with ``starting``, by name, at most ``limit``: each next name found by
    one index seek (a skip scan), so 100,000 memories in 4 projects cost 4 seeks, not a scan of
    100,000 index entries."""
    bound, ends = name_range(starting, placeholder)
    sql = (
        "WITH RECURSIVE p(name, n) AS ("
        f" SELECT min(project), 1 FROM {table} WHERE project >= {placeholder}{bound}"
        f" UNION ALL SELECT (SELECT min(project) FROM {table}"
        f" WHERE project > p.name{bound}),"
        f" n + 1 FROM p WHERE p.name IS NOT NULL AND n < {placeholder})"
        " SELECT name FROM p WHERE name IS NOT NULL"
    )
    return sql, (starting, *ends, *ends, limit)
