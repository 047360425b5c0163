"""References waiting for an item a sender had not sent yet (a fact's memory or successor, a
rule's evidence), filled in when a page brings it."""

from __future__ import annotations

import json
from typing import Any

from aletheia_mem.storage.sync_apply_context import (
    chunks,
)
from aletheia_mem.storage.sync_dialect import SyncConn, json_value
from aletheia_mem.storage.sync_records import Record


def _arrived(conn: SyncConn, records: list[Record]) -> list[Any]:
    """The references waiting for an item of ``records`` (a memory's or fact's key), with the
    local id and project of that item: only a page's own items can fill one in, so a page reads
    only theirs, however many references wait for items that never came."""
    rows: list[Any] = []
    for kind, (join, fields) in _WAITING_FOR.items():
        keys = sorted({record["key"] for record in records if record["kind"] == kind})
        for chunk in chunks(keys):
            rows += conn.execute(
                "SELECT p.kind, p.key, p.field, p.target, t.id AS found, t.project"
                f" FROM sync_pending p {join} WHERE p.field IN {fields}"
                f" AND p.target IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
    return rows


# What a waiting reference to an item of each kind names (joined as t), and its fields.
_WAITING_FOR = {
    "memory": (
        "JOIN memories t ON t.uid = coalesce("
        " (SELECT canonical FROM sync_aliases a WHERE a.uid = p.target), p.target)",
        "('memory', 'evidence_memory')",
    ),
    "fact": ("JOIN facts t ON t.uid = p.target", "('superseded_by', 'evidence_fact')"),
}


def resolve_pending(conn: SyncConn, records: list[Record]) -> None:
    """Fill in the references whose targets the page ``records`` brought."""
    for row in _arrived(conn, records):
        if row["field"] == "memory":
            # A fact is tied only to a memory of its own project, as a save ties it: a memory
            # of that key arriving in another project (another sender's) is not the fact's.
            conn.execute(
                "UPDATE facts SET memory_id = ? WHERE uid = ? AND project = ?",
                (row["found"], row["key"], row["project"]),
            )
        elif row["field"] == "superseded_by":
            conn.execute(
                "UPDATE facts SET superseded_by = ? WHERE uid = ?", (row["found"], row["key"])
            )
        else:
            column = (
                "evidence_memory_ids" if row["field"] == "evidence_memory" else "evidence_fact_ids"
            )
            current = conn.execute(
                f"SELECT {column}, scope_tier, scope_name FROM rules WHERE id = ?", (row["key"],)
            ).fetchone()
            # A project rule's waiting evidence is only an item of its project, as a fact's
            # memory is only one of the fact's: its sender may have had no right to another
            # project's item (a project-limited token is refused one it cites once known).
            if current is not None and _may_cite(current, row["project"]):
                ids = json_value(current[0])
                if row["found"] not in ids:
                    conn.execute(
                        f"UPDATE rules SET {column} = ? WHERE id = ?",
                        (json.dumps([*ids, row["found"]]), row["key"]),
                    )
        conn.execute(
            "DELETE FROM sync_pending WHERE kind = ? AND key = ? AND field = ? AND target = ?",
            (row["kind"], row["key"], row["field"], row["target"]),
        )


def _may_cite(rule: Any, project: str) -> bool:
    """Whether a waiting reference of ``rule`` (its row: evidence, tier, name) may be filled in
    with an item of ``project``: a project rule's only with its own project's."""
    return bool(rule[1] != "project" or rule[2] == project)
