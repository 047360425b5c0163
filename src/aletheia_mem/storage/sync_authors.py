"""Who a received item is kept under: a hub names the sending token as the author of what it
creates or rewrites, and keeps the author of what it only dismisses or restores."""

from __future__ import annotations

from typing import Any

from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    chunks,
)
from aletheia_mem.storage.sync_dialect import SyncConn
from aletheia_mem.storage.sync_export import read_items
from aletheia_mem.storage.sync_records import Record

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


def with_author(ctx: ApplyContext, record: Record, stored: dict[tuple[str, str], Any]) -> Record:
    """The record as the receiver keeps it: its author stays what the receiver has when the
    record changes nothing its author wrote, else it is the sender's (``sender_author`` of
    ``ctx.author``, a hub token's name); a sender never names someone else, nor puts its
    words under their name. The record itself when that leaves it as it came.

    ``stored``: the items the page's records name here (``stored_items``).
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


def stored_items(conn: SyncConn, records: list[Record]) -> dict[tuple[str, str], Any]:
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
        for chunk in chunks(keys):
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
    for chunk in chunks(uids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT uid, canonical FROM sync_aliases WHERE uid IN ({marks})"
        canonical.update((row[0], row[1]) for row in conn.execute(sql, chunk))
    return canonical
