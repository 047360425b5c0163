"""Rows of the SQLite store as the shared dataclasses, and the SQL fragments that read them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from aletheia_mem.storage.base import Fact, Memory

# What memory_from_row reads, in this order: the fields of Memory are named after the columns.
MEMORY_COLUMNS = ", ".join(field.name for field in fields(Memory))
M_MEMORY_COLUMNS = ", ".join(f"m.{field.name}" for field in fields(Memory))
# The fields of Fact as columns of ``facts f``, in order: a search reads its rows by position.
F_FACT_COLUMNS = ", ".join(f"f.{field.name}" for field in fields(Fact))


# Built once: ``json.dumps`` with a keyword builds a new encoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def json_list(values: Iterable[Any]) -> str:
    items = list(values)
    return _ENCODER.encode(items) if items else "[]"  # most saves state no facts


def _json_tuple(text: str) -> tuple[Any, ...]:
    return () if text == "[]" else tuple(json.loads(text))  # most lists are empty


def memory_from_row(row: sqlite3.Row) -> Memory:
    """A memory from a row of ``MEMORY_COLUMNS`` (read by position: by name costs twice as
    much, and searches build thousands of these a second)."""
    return Memory(
        id=row[0],
        uid=row[1],
        project=row[2],
        type=row[3],
        kind=row[4],
        title=row[5],
        text=row[6],
        narrative=row[7],
        facts=_json_tuple(row[8]),
        files=_json_tuple(row[9]),
        tool=row[10],
        pinned=bool(row[11]),
        created_at=row[12],
        updated_at=row[13],
        dismissed_at=row[14],
        dismiss_reason=row[15],
    )


def fact_from_row(row: sqlite3.Row) -> Fact:
    return Fact(
        id=row["id"],
        uid=row["uid"],
        project=row["project"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        superseded_by=row["superseded_by"],
        source=row["source"],
        memory_id=row["memory_id"],
        dismissed_at=row["dismissed_at"],
    )


def in_clause(column: str, values: Sequence[object]) -> str:
    return f"{column} IN ({','.join('?' * len(values))})"


def read_memories(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Memory]:
    """The memories with these ids, newest first; unknown ids are skipped."""
    if not ids:
        return []
    rows = conn.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {in_clause('id', ids)}"
        " ORDER BY created_at DESC, id DESC",
        list(ids),
    ).fetchall()
    return [memory_from_row(row) for row in rows]
