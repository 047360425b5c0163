"""Applying episode records: the other fields by last writer, the union of requests kept."""

from __future__ import annotations

from typing import Any

from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    bump_version,
    check_held,
    chunks,
    incoming_version,
    incoming_wins,
    log_item_version,
    stored_version,
)
from aletheia_mem.storage.sync_dialect import SyncConn, inserted_id
from aletheia_mem.storage.sync_records import Record, newest_requests


def apply_episode(ctx: ApplyContext, record: Record) -> str:
    conn, uid, data = ctx.conn, record["key"], record["data"]
    row = conn.execute("SELECT id, project FROM episodes WHERE uid = ?", (uid,)).fetchone()
    values = (
        data["project"],
        data["tool"],
        data["started_at"],
        data["ended_at"],
        data["summary"],
        data["dismissed_at"],
        data["dismiss_reason"],
    )
    incoming = [tuple(request) for request in data["requests"]]
    if row is None:
        episode_id = inserted_id(
            conn,
            "INSERT INTO episodes (project, tool, started_at, ended_at, summary,"
            " dismissed_at, dismiss_reason, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, uid),
        )
        _add_requests(conn, episode_id, incoming)
        log_item_version(ctx, "episode", uid, incoming_version(record), remote=True)
        return "applied"
    check_held(ctx, "episode", row["project"])
    episode_id = int(row["id"])
    local_version = stored_version(ctx, "episode", uid)
    wins = incoming_wins(ctx, record, uid, local_version)
    have = {
        (r[0], r[1])
        for r in conn.execute(
            "SELECT at, text FROM episode_requests WHERE episode_id = ?", (episode_id,)
        )
    }
    missing = [request for request in dict.fromkeys(incoming) if request not in have]
    # Requests are only ever added: the union is kept whoever wins the other fields, up to the
    # newest MAX_REQUESTS of it that fit MAX_REQUESTS_BYTES, so that no merge makes an episode
    # larger than a pull page may carry.
    _add_requests(conn, episode_id, missing)
    union = [*have, *missing]
    if len(newest_requests(union)) < len(union):
        _keep_newest_requests(conn, episode_id)
    if wins:
        conn.execute(
            "UPDATE episodes SET project = ?, tool = ?, started_at = ?, ended_at = ?,"
            " summary = ?, dismissed_at = ?, dismiss_reason = ? WHERE id = ?",
            (*values, episode_id),
        )
        if have <= set(incoming):
            log_item_version(ctx, "episode", uid, incoming_version(record), remote=True)
            return "applied"
    elif not missing:
        return "skipped"
    bump_version(ctx, "episode", uid, local_version, incoming_version(record))
    return "merged"


def _keep_newest_requests(conn: SyncConn, episode_id: int) -> None:
    """Of an episode's requests, keep the newest that fit a record (``newest_requests``: at
    most ``MAX_REQUESTS``, and ``MAX_REQUESTS_BYTES`` of JSON) by time, then text: decided by
    the data alone, so every store keeps the same ones (a store trims a record of more)."""
    rows = conn.execute(
        "SELECT id, at, text FROM episode_requests WHERE episode_id = ? ORDER BY id",
        (episode_id,),
    ).fetchall()
    kept = set(newest_requests([(row[1], row[2]) for row in rows]))
    oldest = [row for n, row in enumerate(rows) if n not in kept]
    for chunk in chunks([row[0] for row in oldest]):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM episode_requests WHERE id IN ({marks})", chunk)


def _add_requests(conn: SyncConn, episode_id: int, requests: list[Any]) -> None:
    conn.executemany(
        "INSERT INTO episode_requests (episode_id, at, text) VALUES (?, ?, ?)",
        [(episode_id, at, text) for at, text in requests],
    )
