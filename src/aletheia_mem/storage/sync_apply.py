"""Sync records into a store: last writer wins per item, decided the same way on every store.

The version of an item is ``(changed_at, origin)``: the time of its last change and the id of
the store that made it. A record is applied when its version is greater than the local one;
equal versions are the same version and are skipped. Where applying would break a rule of the
store (two values of a fact valid at one instant, two memories with the same dedupe key), the
outcome is decided by the data alone, so every store picks the same one (a fact's timeline:
``sync_timeline``); and a store that writes something other than what it received gives that a
new version above both, so it travels on.

Everything here runs inside the caller's write transaction, with the change-log triggers
silenced: this module writes the log itself. The SQL is the same on every database; what differs
is a hook of the ``SyncDialect`` (``storage.sync_dialect``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aletheia_mem.canonical import canonical
from aletheia_mem.errors import ForbiddenError
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sync_dialect import SyncConn, SyncDialect, inserted_id, json_value
from aletheia_mem.storage.sync_export import read_items, store_id
from aletheia_mem.storage.sync_peers import set_pull_cursor
from aletheia_mem.storage.sync_records import (
    ApplyStats,
    Record,
    newest_requests,
    record_project,
)
from aletheia_mem.storage.sync_timeline import PageTimelines, retile_key

Version = tuple[int, str]


@dataclass(frozen=True)
class _Context:
    conn: SyncConn
    dialect: SyncDialect
    self_id: str
    now: int
    projects: tuple[str, ...] | None
    author: str | None = None
    shared_rules: bool = False  # rules wider than a project may come (a hub's pull page)
    timelines: PageTimelines = field(default_factory=PageTimelines)


def fact_key(text: str) -> str:
    """Must equal ``aletheia_mem.storage.sqlite.fact_key`` (a test holds them together)."""
    return canonical(" ".join(text.split()).lower())


def content_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "backslashreplace")
    ).hexdigest()


def _incoming(record: Record) -> Version:
    return (int(record["v"][0]), str(record["v"][1]))


def _version(ctx: _Context, kind: str, key: str) -> Version | None:
    row = ctx.conn.execute(
        "SELECT changed_at, origin FROM sync_log WHERE kind = ? AND key = ?", (kind, key)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def _incoming_wins(ctx: _Context, record: Record, local_key: str, local: Version | None) -> bool:
    """Last writer wins: the later version; equal versions only differ if a store broke."""
    incoming = _incoming(record)
    if local is None or incoming > local:
        return True
    if incoming < local:
        return False
    mine = read_items(ctx.conn, record["kind"], [local_key]).get(local_key)
    return mine is not None and content_hash(record["data"]) > content_hash(mine)


def _log(ctx: _Context, kind: str, key: str, version: Version, *, remote: bool) -> None:
    ctx.conn.execute(ctx.dialect.log_version, (kind, key, version[0], version[1], int(remote)))


def _bump(ctx: _Context, kind: str, key: str, *above: Version | None) -> None:
    """A new local version, just after every version given and the item's own: not the time
    of the merge, which would beat an edit made elsewhere after those versions but before the
    merge (a later list write, a dismissal), and keep the older words everywhere."""
    floor = max([v[0] for v in (*above, _version(ctx, kind, key)) if v is not None], default=0)
    _log(ctx, kind, key, (floor + 1, ctx.self_id), remote=False)


def _check_project(ctx: _Context, project: str | None) -> None:
    if ctx.projects is not None and project is not None and project not in ctx.projects:
        raise ForbiddenError(f'Project "{project}" is not allowed for this token.')


def _check_held(ctx: _Context, kind: str, project: str) -> None:
    """The item a record's key names here is ``project``'s: a project-limited sender may
    change only its projects' items. The refusal names no project: the sender's record named
    its own, and the item's (one the token may not see, as a pull leaves it out) is not told.
    """
    if ctx.projects is not None and project not in ctx.projects:
        raise ForbiddenError(f"A {kind}'s key must name an item of the token's projects, or none.")


def _check_rule(ctx: _Context, scope_tier: str, scope_name: str) -> None:
    """A project-limited sender writes only its projects' rules, never wider ones (but a hub,
    which shares those with every token)."""
    if ctx.projects is not None and scope_tier != "project" and not ctx.shared_rules:
        raise ForbiddenError(f'scope_tier "{scope_tier}" is not allowed for this token.')
    _check_project(ctx, scope_name if scope_tier == "project" else None)


# How many of a pushed rule's evidence ids the hub keeps waiting for items it does not have.
MAX_WAITING = 10
# The longest author a hub makes: every store refuses a longer name on pull
# (``sync.validate.MAX_NAME``; a test holds them equal).
MAX_AUTHOR = 200
# A memory record naming no item here that would become one with a memory by its dedupe key.
_TWIN = "same-key memory"
# The field that names who made an item, by kind.
_AUTHOR = {"memory": "tool", "fact": "source", "rule": "source", "episode": "tool"}
# What a record may change of a memory or an episode and keep the item's author (a dismissal, a
# restore): a change of anything else (its words, type, pin, dates; an episode's new requests)
# is the sender's work, whoever made the item.
_KEEPS_AUTHOR = {
    "memory": ("dismissed_at", "dismiss_reason", "updated_at"),
    "episode": ("dismissed_at", "dismiss_reason", "requests"),  # requests: only new ones count
}
# What an author writes of a fact or a rule (the rest is its timeline, which every store may
# change as it places a teammate's fact; a confirmation; a rule's text is its id).
_AUTHORED = {
    "fact": ("project", "subject", "predicate", "object", "valid_from"),
    "rule": (),
}


def _changes_authored(kind: str, mine: dict[str, Any], data: dict[str, Any]) -> bool:
    """Whether a record's ``data`` changes what the author of the item ``mine`` wrote."""
    if kind in _AUTHORED:
        return any(mine[name] != data[name] for name in (_AUTHOR[kind], *_AUTHORED[kind]))
    if kind == "episode":
        have = {(at, text) for at, text in mine["requests"]}
        if any((at, text) not in have for at, text in data["requests"]):
            return True
    return any(
        mine[name] != value for name, value in data.items() if name not in _KEEPS_AUTHOR[kind]
    )


def sender_author(token: str, claimed: str) -> str:
    """The author a hub keeps for an item ``token`` sends under the name ``claimed``:
    ``<token>/<tool>``, the tool being the last ``/`` part of ``claimed`` (``eve/codex`` sent
    by alice's token is ``alice/codex``; ``alice/codex`` stays, nothing stacks). ``claimed``
    equal to the token's name (or a tool part equal to it) is the token's name alone.

    The token's part is the hub's, so no sender poses as another token; the tool part is cut
    so that the whole stays within ``MAX_AUTHOR``.
    """
    # a token named before names were checked (a control character, a /) is shown without them
    token = "".join(char if char.isprintable() and char != "/" else "-" for char in token)
    tool = claimed.rsplit("/", 1)[-1].strip()
    room = MAX_AUTHOR - len(token) - 1
    tool = tool[:room].rstrip() if room > 0 else ""
    if claimed == token or not tool or tool == token:
        return token[:MAX_AUTHOR]
    return f"{token}/{tool}"


def _with_author(ctx: _Context, record: Record, stored: dict[tuple[str, str], Any]) -> Record:
    """The record as the receiver keeps it: its author stays what the receiver has when the
    record changes nothing its author wrote, else it is the sender's (``sender_author`` of
    ``ctx.author``, a hub token's name); a sender never names someone else, nor puts its
    words under their name. The record itself when that leaves it as it came.

    ``stored``: the items the page's records name here (``_stored_items``).
    """
    if ctx.author is None:
        return record
    kind, data = record["kind"], record["data"]
    field = _AUTHOR[kind]
    mine = stored.get((kind, record["key"]))
    if mine is not None and not _changes_authored(kind, mine, data):
        return record
    # A copy of a memory here under another id (its dedupe key's), changing nothing its author
    # wrote whatever author it names, becomes one with it and keeps its author: else any token
    # could take a teammate's note by sending its words again under an id of its own.
    twin = stored.get((_TWIN, record["key"])) if mine is None else None
    if twin is not None and not _changes_authored(kind, {**twin, field: data[field]}, data):
        return (
            record
            if data[field] == twin[field]
            else {**record, "data": {**data, field: twin[field]}}
        )
    author = sender_author(ctx.author, data[field])
    if author == data[field]:
        return record
    return {**record, "data": {**data, field: author}}


def _chunks(values: list[str], size: int = 500) -> list[list[str]]:
    return [values[start : start + size] for start in range(0, len(values), size)]


def _stored_items(conn: SyncConn, records: list[Record]) -> dict[tuple[str, str], Any]:
    """``(kind, record key)`` -> the data of the item it names here (a memory through its
    alias), for the records that name one; ``(_TWIN, record key)`` -> the memory here that a
    memory record naming none would become one with (by its dedupe key): a page's lookups in
    a few statements."""
    found: dict[tuple[str, str], Any] = {}
    for kind in _AUTHOR:
        keys = list(dict.fromkeys(r["key"] for r in records if r["kind"] == kind))
        named = _memory_uids(conn, keys) if kind == "memory" else {key: key for key in keys}
        items = read_items(conn, kind, sorted(set(named.values())))
        found.update(((kind, key), items[uid]) for key, uid in named.items() if uid in items)
    unknown = [r for r in records if r["kind"] == "memory" and ("memory", r["key"]) not in found]
    twins = _twin_uids(conn, unknown)
    items = read_items(conn, "memory", sorted(set(twins.values())))
    found.update(((_TWIN, key), items[uid]) for key, uid in twins.items() if uid in items)
    return found


def _twin_uids(conn: SyncConn, records: list[Record]) -> dict[str, str]:
    """Each memory record's key -> the uid of the memory here with its project and dedupe
    key, for those that have one."""
    wanted: dict[tuple[str, str], list[str]] = {}
    for record in records:
        key = record["data"]["dedupe_key"]
        if key is not None:
            wanted.setdefault((record["data"]["project"], key), []).append(record["key"])
    by_project: dict[str, list[str]] = {}
    for project, key in wanted:
        by_project.setdefault(project, []).append(key)
    found: dict[str, str] = {}
    for project, keys in by_project.items():
        for chunk in _chunks(keys):
            rows = conn.execute(
                "SELECT dedupe_key, uid FROM memories WHERE project = ?"
                f" AND dedupe_key IN ({','.join('?' * len(chunk))})",
                [project, *chunk],
            ).fetchall()
            for row in rows:
                found.update((key, str(row[1])) for key in wanted[(project, row[0])])
    return found


def _memory_uids(conn: SyncConn, uids: list[str]) -> dict[str, str]:
    """Each record key -> the uid of the memory it names here (itself, or through its alias)."""
    canonical = {uid: uid for uid in uids}
    for chunk in _chunks(uids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT uid, canonical FROM sync_aliases WHERE uid IN ({marks})"
        canonical.update((row[0], row[1]) for row in conn.execute(sql, chunk))
    return canonical


def _canonical(conn: SyncConn, uid: str) -> str:
    row = conn.execute("SELECT canonical FROM sync_aliases WHERE uid = ?", (uid,)).fetchone()
    return uid if row is None else str(row[0])


def _memory_id(conn: SyncConn, uid: str | None) -> int | None:
    if uid is None:
        return None
    row = conn.execute("SELECT id FROM memories WHERE uid = ?", (_canonical(conn, uid),)).fetchone()
    return None if row is None else int(row[0])


def _fact_id(conn: SyncConn, uid: str | None) -> int | None:
    if uid is None:
        return None
    row = conn.execute("SELECT id FROM facts WHERE uid = ?", (uid,)).fetchone()
    return None if row is None else int(row[0])


def _check_evidence(
    ctx: _Context, table: str, item_id: int, cited: str = "A rule's evidence"
) -> None:
    """A project-limited sender cites only its projects' items, as ``add_rule`` lets a tool
    (and a save ties a fact only to the memory saved with it)."""
    if ctx.projects is None:
        return
    row = ctx.conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
    if row is not None and row[0] not in ctx.projects:
        raise ForbiddenError(f"{cited} must be in the token's projects.")


def _set_pending(ctx: _Context, kind: str, key: str, waiting: list[tuple[str, str]]) -> None:
    ctx.conn.execute("DELETE FROM sync_pending WHERE kind = ? AND key = ?", (kind, key))
    ctx.conn.executemany(
        "INSERT INTO sync_pending (kind, key, field, target) VALUES (?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        [(kind, key, name, target) for name, target in waiting],
    )


# -- memories ------------------------------------------------------------------------------------

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


def _insert_new_memories(ctx: _Context, records: list[Record], reauthored: set[int]) -> set[int]:
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
    for chunk in _chunks(uids):
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
        _check_project(ctx, data["project"])
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
    # ``_bump`` would make of the version just received).
    conn.executemany(
        ctx.dialect.log_version,
        [
            ("memory", record["key"], _incoming(record)[0] + 1, ctx.self_id, 0)
            if position in reauthored
            else ("memory", record["key"], *_incoming(record), 1)
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
        for chunk in _chunks(dedupe_keys):
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


def _apply_memory(ctx: _Context, record: Record) -> str:
    conn, uid, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT id, uid, project FROM memories WHERE uid = ?", (_canonical(conn, uid),)
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
        _log(ctx, "memory", uid, _incoming(record), remote=True)
        return "applied"
    _check_held(ctx, "memory", row["project"])
    local_uid: str = row["uid"]
    local_version = _version(ctx, "memory", local_uid)
    wins = _incoming_wins(ctx, record, local_uid, local_version)
    final_uid = min(local_uid, uid)  # two ids for one item: the smaller one stays, everywhere
    if not wins and final_uid == local_uid:
        if local_uid == uid:
            return "skipped"
        _alias(conn, uid, local_uid)
        _bump(ctx, "memory", local_uid, _incoming(record))
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
        _log(ctx, "memory", uid, _incoming(record), remote=True)
        # kept as sent, but another item here (its dedupe key's) became this one: a merge
        return "applied" if local_uid == uid else "merged"
    _bump(ctx, "memory", final_uid, local_version, _incoming(record))
    return "merged"


# -- facts ---------------------------------------------------------------------------------------


def _apply_fact(ctx: _Context, record: Record) -> str:
    """Write the fact's fields, then place it in its key's timeline (``sync_timeline``)."""
    conn, uid, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT id, project, subject_key, predicate_key FROM facts WHERE uid = ?", (uid,)
    ).fetchone()
    if row is not None:
        _check_held(ctx, "fact", row["project"])
    if row is not None and not _incoming_wins(ctx, record, uid, _version(ctx, "fact", uid)):
        return "skipped"
    key = (data["project"], fact_key(data["subject"]), fact_key(data["predicate"]))
    memory_id = _memory_id(conn, data["memory"])
    if memory_id is not None:  # its facts mark a memory stale: none from outside the token
        _check_evidence(ctx, "memories", memory_id, "A fact's memory")
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
    _set_pending(ctx, "fact", uid, waiting)
    ctx.timelines.receive(uid, (data["valid_to"], data["superseded_by"]))
    ctx.timelines.keys.add(key)  # placed once the page is in (_version_retiled_facts)
    old_key = None if row is None else (row["project"], row["subject_key"], row["predicate_key"])
    if old_key is not None and old_key != key:  # the fact left a timeline: close its gap
        ctx.timelines.keys.add(old_key)
    # Logged as received; ``_version_retiled_facts`` gives it a version of this store's own if
    # the page leaves it with another valid_to or successor than the record's.
    _log(ctx, "fact", uid, _incoming(record), remote=True)
    return "applied"


def _version_retiled_facts(ctx: _Context, stats: ApplyStats) -> None:
    """Place the page's facts in their keys' timelines, each key once (a key's every fact is
    read to tile it: once per fact would cost a page of one key's versions its square), then
    give a version of this store's own to each fact left with another tile than the one it had
    or received: the change travels on, and the page's record counts as merged."""
    for key in sorted(ctx.timelines.keys):  # in one order, so that two pages never deadlock
        ctx.dialect.lock_fact_key(ctx.conn, key)  # put_fact's turn: it read a settled timeline
        ctx.timelines.note(retile_key(ctx.conn, key))
    for uid in ctx.timelines.changed(ctx.conn):
        _bump(ctx, "fact", uid)
        if uid in ctx.timelines.received:
            stats.applied -= 1
            stats.merged += 1


# -- rules ---------------------------------------------------------------------------------------


def _keep_hidden_evidence(
    ctx: _Context,
    rule_id: str,
    memory_ids: list[int],
    fact_ids: list[int],
    waiting: list[tuple[str, str]],
) -> None:
    """Keep the evidence of a rule a project-limited sender could not see (``within_projects``
    leaves it out of what that token pulls): items of other projects, and at the hub the
    references still waiting for their item. Such a token neither sees nor drops them."""
    row = ctx.conn.execute(
        "SELECT evidence_memory_ids, evidence_fact_ids FROM rules WHERE id = ?", (rule_id,)
    ).fetchone()
    projects = ctx.projects or ()
    for table, ids, held in (
        ("memories", memory_ids, json_value(row[0])),
        ("facts", fact_ids, json_value(row[1])),
    ):
        for item_id in held:
            found = ctx.conn.execute(
                f"SELECT project FROM {table} WHERE id = ?", (item_id,)
            ).fetchone()
            if found is not None and found[0] not in projects and item_id not in ids:
                ids.append(int(item_id))
    if ctx.author is None:
        return
    pending = ctx.conn.execute(
        "SELECT field, target FROM sync_pending WHERE kind = 'rule' AND key = ?", (rule_id,)
    ).fetchall()
    waiting.extend(
        (str(name), str(target))
        for name, target in pending
        if (str(name), str(target)) not in waiting
    )


def _apply_rule(ctx: _Context, record: Record) -> str:
    conn, rule_id, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT scope_tier, scope_name FROM rules WHERE id = ?", (rule_id,)
    ).fetchone()
    if row is not None:
        _check_rule(ctx, row["scope_tier"], row["scope_name"])
        if not _incoming_wins(ctx, record, rule_id, _version(ctx, "rule", rule_id)):
            return "skipped"
    memory_ids: list[int] = []
    fact_ids: list[int] = []
    waiting: list[tuple[str, str]] = []
    for target in data["evidence_memories"]:
        found = _memory_id(conn, target)
        if found is None:
            waiting.append(("evidence_memory", target))
        elif found not in memory_ids:
            _check_evidence(ctx, "memories", found)
            memory_ids.append(found)
    for target in data["evidence_facts"]:
        found = _fact_id(conn, target)
        if found is None:
            waiting.append(("evidence_fact", target))
        elif found not in fact_ids:
            _check_evidence(ctx, "facts", found)
            fact_ids.append(found)
    # A sender (a token, at the hub) may leave few references waiting per rule: each is kept
    # until its item comes, which may be never (add_rule refuses an unknown id). The first ones
    # by id are kept, and the rule gets a version of the hub's, so it travels back as kept.
    trimmed = ctx.author is not None and len(waiting) > MAX_WAITING
    if trimmed:
        waiting = sorted(waiting)[:MAX_WAITING]
    if row is not None and ctx.projects is not None:
        _keep_hidden_evidence(ctx, rule_id, memory_ids, fact_ids, waiting)
    conn.execute(
        "INSERT INTO rules (id, then_text, when_text, scope_tier, scope_name,"
        " evidence_memory_ids, evidence_fact_ids, source, added_at, last_confirmed_at, enabled,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET then_text = excluded.then_text,"
        " when_text = excluded.when_text, scope_tier = excluded.scope_tier,"
        " scope_name = excluded.scope_name, evidence_memory_ids = excluded.evidence_memory_ids,"
        " evidence_fact_ids = excluded.evidence_fact_ids, source = excluded.source,"
        " added_at = excluded.added_at, last_confirmed_at = excluded.last_confirmed_at,"
        " enabled = excluded.enabled, updated_at = excluded.updated_at",
        (
            rule_id,
            data["then"],
            data["when"],
            data["scope_tier"],
            data["scope_name"],
            json.dumps(memory_ids),
            json.dumps(fact_ids),
            data["source"],
            data["added_at"],
            data["last_confirmed_at"],
            int(bool(data["enabled"])),
            data["updated_at"],
        ),
    )
    _set_pending(ctx, "rule", rule_id, waiting)
    _log(ctx, "rule", rule_id, _incoming(record), remote=True)
    if trimmed:
        _bump(ctx, "rule", rule_id, _incoming(record))
        return "merged"
    return "applied"


# -- episodes ------------------------------------------------------------------------------------


def _apply_episode(ctx: _Context, record: Record) -> str:
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
        _log(ctx, "episode", uid, _incoming(record), remote=True)
        return "applied"
    _check_held(ctx, "episode", row["project"])
    episode_id = int(row["id"])
    local_version = _version(ctx, "episode", uid)
    wins = _incoming_wins(ctx, record, uid, local_version)
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
            _log(ctx, "episode", uid, _incoming(record), remote=True)
            return "applied"
    elif not missing:
        return "skipped"
    _bump(ctx, "episode", uid, local_version, _incoming(record))
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
    for chunk in _chunks([row[0] for row in oldest]):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM episode_requests WHERE id IN ({marks})", chunk)


def _add_requests(conn: SyncConn, episode_id: int, requests: list[Any]) -> None:
    conn.executemany(
        "INSERT INTO episode_requests (episode_id, at, text) VALUES (?, ?, ?)",
        [(episode_id, at, text) for at, text in requests],
    )


# -- pending references --------------------------------------------------------------------------


def _arrived(conn: SyncConn, records: list[Record]) -> list[Any]:
    """The references waiting for an item of ``records`` (a memory's or fact's key), with the
    local id and project of that item: only a page's own items can fill one in, so a page reads
    only theirs, however many references wait for items that never came."""
    rows: list[Any] = []
    for kind, (join, fields) in _WAITING_FOR.items():
        keys = sorted({record["key"] for record in records if record["kind"] == kind})
        for chunk in _chunks(keys):
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


def _resolve_pending(conn: SyncConn, records: list[Record]) -> None:
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


_APPLIERS: dict[str, Callable[[_Context, Record], str]] = {
    "memory": _apply_memory,
    "fact": _apply_fact,
    "rule": _apply_rule,
    "episode": _apply_episode,
}


def apply_records(
    conn: SyncConn,
    records: list[Record],
    *,
    dialect: SyncDialect,
    self_id: str,
    now: int,
    projects: tuple[str, ...] | None,
    author: str | None = None,
    shared_rules: bool = False,
    rewritten: frozenset[int] = frozenset(),
) -> ApplyStats:
    """Apply checked records in order; call inside a write transaction.

    ``author``: who sends them (a hub token's name); ``<author>/<tool>`` (``sender_author``)
    becomes the author of every item it creates or whose author or words it changes. None
    keeps the authors as sent. ``shared_rules``: rules for every project or a situation may
    come whatever ``projects`` says. ``rewritten``: the positions of records the receiver's
    checks changed from what was sent (a redaction, a default title, a list's key): like a
    record whose author it set, each gets a version of the receiver's own.

    Raises:
        ForbiddenError: a record (or the item it would change) is outside ``projects``.
    """
    ctx = _Context(conn, dialect, self_id, now, projects, author, shared_rules)
    stats = ApplyStats()
    dialect.set_quiet(conn, True)
    for record in records:
        if record["kind"] == "rule":
            _check_rule(ctx, record["data"]["scope_tier"], record["data"]["scope_name"])
    stored = {} if ctx.author is None else _stored_items(conn, records)
    authored = [_with_author(ctx, record, stored) for record in records]
    # Positions whose author the receiver set: the result gets a version of the receiver's
    # own, so it travels back to the sender too and every store ends the same.
    reauthored = {n for n, record in enumerate(records) if authored[n] is not record}
    reauthored |= rewritten
    records = authored
    inserted = _insert_new_memories(ctx, records, reauthored)
    for position, record in enumerate(records):
        project = record_project(record)
        _check_project(ctx, project)
        outcome = "applied" if position in inserted else _APPLIERS[record["kind"]](ctx, record)
        # (an inserted memory was logged with its final version already)
        if position in reauthored and outcome != "skipped" and position not in inserted:
            key = record["key"]
            _bump(ctx, record["kind"], _canonical(conn, key) if record["kind"] == "memory" else key)
        setattr(stats, outcome, getattr(stats, outcome) + 1)
        if outcome != "skipped" and project is not None:
            stats.touched_projects.add(project)
    _version_retiled_facts(ctx, stats)
    if conn.execute("SELECT 1 FROM sync_pending LIMIT 1").fetchone() is not None:
        _resolve_pending(conn, records)
    dialect.set_quiet(conn, False)
    return stats


def apply_page(
    conn: SyncConn,
    records: list[Record],
    *,
    dialect: SyncDialect,
    projects: tuple[str, ...] | None,
    now: int,
    pull_cursor: tuple[str, int, int] | None,
    author: str | None,
    shared_rules: bool = False,
    rewritten: frozenset[int] = frozenset(),
) -> ApplyStats:
    """``apply_records`` with this store's id, then the pull cursor if one is given (in the
    caller's write transaction: the page and its cursor are kept together or not at all)."""
    stats = apply_records(
        conn,
        records,
        dialect=dialect,
        self_id=store_id(conn),
        now=now,
        projects=projects,
        author=author,
        shared_rules=shared_rules,
        rewritten=rewritten,
    )
    if pull_cursor is not None:
        hub_id, token_id, cursor = pull_cursor
        set_pull_cursor(conn, hub_id, token_id, cursor, now)
    return stats
