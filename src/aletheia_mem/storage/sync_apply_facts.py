"""Applying fact records: each fact's fields, then its key's timeline placed once per page."""

from __future__ import annotations

from aletheia_mem.canonical import fact_key
from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    bump_version,
    check_evidence,
    check_held,
    incoming_version,
    incoming_wins,
    log_item_version,
    memory_id_of,
    set_pending,
    stored_version,
)
from aletheia_mem.storage.sync_dialect import inserted_id
from aletheia_mem.storage.sync_records import ApplyStats, Record
from aletheia_mem.storage.sync_timeline import retile_key


def apply_fact(ctx: ApplyContext, record: Record) -> str:
    """Write the fact's fields, then place it in its key's timeline (``sync_timeline``)."""
    conn, uid, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT id, project, subject_key, predicate_key FROM facts WHERE uid = ?", (uid,)
    ).fetchone()
    if row is not None:
        check_held(ctx, "fact", row["project"])
    if row is not None and not incoming_wins(ctx, record, uid, stored_version(ctx, "fact", uid)):
        return "skipped"
    key = (data["project"], fact_key(data["subject"]), fact_key(data["predicate"]))
    memory_id = memory_id_of(conn, data["memory"])
    if memory_id is not None:  # its facts mark a memory stale: none from outside the token
        check_evidence(ctx, "memories", memory_id, "A fact's memory")
    # Written closed and empty (valid_to = valid_from, no successor) until retile_key places it
    # at the page's end: the unique index allows one open fact per key.
    values = (
        data["project"],
        data["subject"],
        key[1],
        data["predicate"],
        key[2],
        data["object"],
        data["valid_from"],
        data["valid_from"],
        data["recorded_at"],
        None,
        data["source"],
        memory_id,
        data["dismissed_at"],
        data["dismiss_reason"],
    )
    if row is None:
        fact_id = inserted_id(
            conn,
            "INSERT INTO facts (project, subject, subject_key, predicate, predicate_key,"
            " object, valid_from, valid_to, recorded_at, superseded_by, source, memory_id,"
            " dismissed_at, dismiss_reason, uid)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, uid),
        )
    else:
        fact_id = int(row["id"])
        conn.execute(
            "UPDATE facts SET project = ?, subject = ?, subject_key = ?, predicate = ?,"
            " predicate_key = ?, object = ?, valid_from = ?, valid_to = ?, recorded_at = ?,"
            " superseded_by = ?, source = ?, memory_id = ?, dismissed_at = ?,"
            " dismiss_reason = ? WHERE id = ?",
            (*values, fact_id),
        )
    words = (data["subject"], data["predicate"], data["object"])
    ctx.dialect.index_fact(conn, fact_id, *words, row is not None)
    waiting = [("memory", data["memory"])] if data["memory"] and memory_id is None else []
    set_pending(ctx, "fact", uid, waiting)
    ctx.timelines.receive(uid, (data["valid_to"], data["superseded_by"]))
    ctx.timelines.keys.add(key)  # placed once the page is in (version_retiled_facts)
    old_key = None if row is None else (row["project"], row["subject_key"], row["predicate_key"])
    if old_key is not None and old_key != key:  # the fact left a timeline: close its gap
        ctx.timelines.keys.add(old_key)
    # Logged as received; ``version_retiled_facts`` gives it a version of this store's own if
    # the page leaves it with another valid_to or successor than the record's.
    log_item_version(ctx, "fact", uid, incoming_version(record), remote=True)
    return "applied"


def version_retiled_facts(ctx: ApplyContext, stats: ApplyStats) -> None:
    """Place the page's facts in their keys' timelines, each key once (a key's every fact is
    read to tile it: once per fact would cost a page of one key's versions its square), then
    give a version of this store's own to each fact left with another tile than the one it had
    or received: the change travels on, and the page's record counts as merged."""
    for key in sorted(ctx.timelines.keys):  # in one order, so that two pages never deadlock
        ctx.dialect.lock_fact_key(ctx.conn, key)  # put_fact's turn: it read a settled timeline
        ctx.timelines.note(retile_key(ctx.conn, key))
    for uid in ctx.timelines.changed(ctx.conn):
        bump_version(ctx, "fact", uid)
        if uid in ctx.timelines.received:
            stats.applied -= 1
            stats.merged += 1
