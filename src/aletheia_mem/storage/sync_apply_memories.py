"""Applying memory records: new ones in bulk, the rest one by one, two ids for one item (by
dedupe key) made one everywhere through aliases."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    bump_version,
    canonical_uid,
    check_held,
    check_project,
    chunks,
    incoming_version,
    incoming_wins,
    log_item_version,
    stored_version,
)
from aletheia_mem.storage.sync_dialect import SyncConn, inserted_id
from aletheia_mem.storage.sync_records import Record

_MEMORY_COLUMNS = (
    "project, type, kind, title, text, narrative, facts, files, tool, pinned, created_at,"
    " updated_at, dismissed_at, dismiss_reason, dedupe_key"
)


def _memory_values(data: dict[str, Any]) -> tuple[Any, ...]:
    return (
        data["project"],
        data["type"],
        data["kind"],
        data["title"],
        data["text"],
        data["narrative"],
        json.dumps(data["facts"], ensure_ascii=False),
        json.dumps(data["files"], ensure_ascii=False),
        data["tool"],
        int(bool(data["pinned"])),
        data["created_at"],
        data["updated_at"],
        data["dismissed_at"],
        data["dismiss_reason"],
        data["dedupe_key"],
    )


def _indexed(data: dict[str, Any]) -> NewMemory:
    """What the search index needs of a memory record."""
    return NewMemory(
        project=data["project"],
        type=data["type"],
        kind=data["kind"],
        title=data["title"],
        text=data["text"],
        tool=data["tool"],
        created_at=data["created_at"],
        dedupe_key=data["dedupe_key"],
        narrative=data["narrative"],
        facts=tuple(data["facts"]),
        files=tuple(data["files"]),
        pinned=bool(data["pinned"]),
    )


def insert_new_memories(ctx: ApplyContext, records: list[Record], reauthored: set[int]) -> set[int]:
    """Insert, in bulk, the memory records that are new here and collide with nothing.

    ``reauthored``: the positions whose author the receiver set.

    Returns the positions (in ``records``) it took care of; the rest go the careful way.
    """
    conn = ctx.conn
    candidates = [(i, r) for i, r in enumerate(records) if r["kind"] == "memory"]
    if len(candidates) < 2:
        return set()
    uids = [record["key"] for _, record in candidates]
    # a uid a page names twice goes the careful way, where its later record finds the first
    known = {uid for uid, count in Counter(uids).items() if count > 1}
    for chunk in chunks(uids):
        marks = ",".join("?" * len(chunk))
        known.update(
            row[0]
            for row in conn.execute(
                f"SELECT uid FROM memories WHERE uid IN ({marks})"
                f" UNION SELECT uid FROM sync_aliases WHERE uid IN ({marks})",
                [*chunk, *chunk],
            )
        )
    keys: dict[tuple[str, str], int] = {}
    for _, record in candidates:
        key = (record["data"]["project"], record["data"]["dedupe_key"])
        keys[key] = keys.get(key, 0) + 1
    taken = _taken_dedupe_keys(conn, [key for key, count in keys.items() if count == 1])
    fresh = []
    for position, record in candidates:
        data = record["data"]
        if record["key"] in known:
            continue
        key = (data["project"], data["dedupe_key"])
        if data["dedupe_key"] is not None and (keys[key] > 1 or key in taken):
            continue
        check_project(ctx, data["project"])
        fresh.append((position, record))
    if not fresh:
        return set()
    ids = ctx.dialect.reserve_memory_ids(conn, len(fresh))
    conn.executemany(
        f"INSERT INTO memories (id, uid, {_MEMORY_COLUMNS})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (memory_id, record["key"], *_memory_values(record["data"]))
            for memory_id, (_, record) in zip(ids, fresh, strict=True)
        ],
    )
    indexed = [_indexed(record["data"]) for _, record in fresh]
    ctx.dialect.index_new_memories(conn, list(zip(ids, indexed, strict=True)))
    # A record whose author the receiver set gets a version of the receiver's own at once (what
    # ``bump_version`` would make of the version just received).
    conn.executemany(
        ctx.dialect.log_version,
        [
            ("memory", record["key"], incoming_version(record)[0] + 1, ctx.self_id, 0)
            if position in reauthored
            else ("memory", record["key"], *incoming_version(record), 1)
            for position, record in fresh
        ],
    )
    return {position for position, _ in fresh}


def _taken_dedupe_keys(conn: SyncConn, keys: list[tuple[str, str | None]]) -> set[tuple[str, str]]:
    """Of ``(project, dedupe_key)`` pairs, those a memory here already has."""
    by_project: dict[str, list[str]] = {}
    for project, dedupe_key in keys:
        if dedupe_key is not None:
            by_project.setdefault(project, []).append(dedupe_key)
    taken: set[tuple[str, str]] = set()
    for project, dedupe_keys in by_project.items():
        for chunk in chunks(dedupe_keys):
            marks = ",".join("?" * len(chunk))
            sql = (
                "SELECT dedupe_key FROM memories WHERE project = ? AND dedupe_key IS NOT NULL"
                f" AND dedupe_key IN ({marks})"
            )
            taken.update((project, row[0]) for row in conn.execute(sql, [project, *chunk]))
    return taken


def _alias(conn: SyncConn, uid: str, canonical: str) -> None:
    conn.execute("UPDATE sync_aliases SET canonical = ? WHERE canonical = ?", (canonical, uid))
    conn.execute(
        "INSERT INTO sync_aliases (uid, canonical) VALUES (?, ?)"
        " ON CONFLICT (uid) DO UPDATE SET canonical = excluded.canonical",
        (uid, canonical),
    )


def _key_kept_if_taken(conn: SyncConn, data: dict[str, Any], memory_id: int) -> dict[str, Any]:
    """``data`` for the memory ``memory_id``, with the dedupe key it has here instead of the
    record's when another memory of the project holds the record's: a key changed in place (a
    list an earlier build keyed ``todo-old``, keyed again from its name ``list:todo``) would
    break the unique key and stop every sync that brings it. The item stays as it was keyed
    (as before the key was made again), without a version of this store's own: every store
    and hub holding both items keeps them so alike, where a new version would go back and
    forth between them."""
    if data["dedupe_key"] is None:
        return data
    taken = conn.execute(
        "SELECT 1 FROM memories WHERE project = ? AND dedupe_key = ? AND id != ?",
        (data["project"], data["dedupe_key"], memory_id),
    ).fetchone()
    if taken is None:
        return data
    row = conn.execute("SELECT dedupe_key FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return {**data, "dedupe_key": row[0]}


def apply_memory(ctx: ApplyContext, record: Record) -> str:
    conn, uid, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT id, uid, project FROM memories WHERE uid = ?", (canonical_uid(conn, uid),)
    ).fetchone()
    if row is None and data["dedupe_key"] is not None:
        row = conn.execute(
            "SELECT id, uid, project FROM memories WHERE project = ? AND dedupe_key = ?",
            (data["project"], data["dedupe_key"]),
        ).fetchone()
    if row is None:
        memory_id = inserted_id(
            conn,
            f"INSERT INTO memories (uid, {_MEMORY_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (uid, *_memory_values(data)),
        )
        ctx.dialect.index_memory(conn, memory_id, _indexed(data))
        log_item_version(ctx, "memory", uid, incoming_version(record), remote=True)
        return "applied"
    check_held(ctx, "memory", row["project"])
    local_uid: str = row["uid"]
    local_version = stored_version(ctx, "memory", local_uid)
    wins = incoming_wins(ctx, record, local_uid, local_version)
    final_uid = min(local_uid, uid)  # two ids for one item: the smaller one stays, everywhere
    if not wins and final_uid == local_uid:
        if local_uid == uid:
            return "skipped"
        _alias(conn, uid, local_uid)
        bump_version(ctx, "memory", local_uid, incoming_version(record))
        return "merged"
    if wins:
        data = _key_kept_if_taken(conn, data, int(row["id"]))
        conn.execute(
            "UPDATE memories SET uid = ?,"
            + ", ".join(f"{name.strip()} = ?" for name in _MEMORY_COLUMNS.split(","))
            + " WHERE id = ?",
            (final_uid, *_memory_values(data), row["id"]),
        )
        ctx.dialect.index_memory(conn, int(row["id"]), _indexed(data))
    else:
        conn.execute("UPDATE memories SET uid = ? WHERE id = ?", (final_uid, row["id"]))
    if final_uid != local_uid:
        conn.execute("DELETE FROM sync_log WHERE kind = 'memory' AND key = ?", (local_uid,))
        _alias(conn, local_uid, final_uid)
    if final_uid != uid:
        _alias(conn, uid, final_uid)
    if wins and final_uid == uid:
        log_item_version(ctx, "memory", uid, incoming_version(record), remote=True)
        # kept as sent, but another item here (its dedupe key's) became this one: a merge
        return "applied" if local_uid == uid else "merged"
    bump_version(ctx, "memory", final_uid, local_version, incoming_version(record))
    return "merged"
