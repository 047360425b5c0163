"""What every applier of sync records shares (``storage.sync_apply``): the page's context,
items' versions (last writer wins), the checks of a project-limited sender, and lookups of the
local ids records name. All of it runs in the caller's write transaction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from aletheia_mem.errors import ForbiddenError
from aletheia_mem.escapes import escaped
from aletheia_mem.storage.sync_dialect import SyncConn, SyncDialect
from aletheia_mem.storage.sync_export import read_items
from aletheia_mem.storage.sync_records import Record
from aletheia_mem.storage.sync_timeline import PageTimelines

Version = tuple[int, str]


@dataclass(frozen=True)
class ApplyContext:
    conn: SyncConn
    dialect: SyncDialect
    self_id: str
    now: int
    projects: tuple[str, ...] | None
    author: str | None = None
    shared_rules: bool = False  # rules wider than a project may come (a hub's pull page)
    timelines: PageTimelines = field(default_factory=PageTimelines)


def content_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "backslashreplace")
    ).hexdigest()


def incoming_version(record: Record) -> Version:
    return (int(record["v"][0]), str(record["v"][1]))


def stored_version(ctx: ApplyContext, kind: str, key: str) -> Version | None:
    row = ctx.conn.execute(
        "SELECT changed_at, origin FROM sync_log WHERE kind = ? AND key = ?", (kind, key)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def incoming_wins(ctx: ApplyContext, record: Record, local_key: str, local: Version | None) -> bool:
    """Last writer wins: the later version; equal versions only differ if a store broke."""
    incoming = incoming_version(record)
    if local is None or incoming > local:
        return True
    if incoming < local:
        return False
    mine = read_items(ctx.conn, record["kind"], [local_key]).get(local_key)
    return mine is not None and content_hash(record["data"]) > content_hash(mine)


def log_item_version(
    ctx: ApplyContext, kind: str, key: str, version: Version, *, remote: bool
) -> None:
    ctx.conn.execute(ctx.dialect.log_version, (kind, key, version[0], version[1], int(remote)))


def bump_version(ctx: ApplyContext, kind: str, key: str, *above: Version | None) -> None:
    """A new local version, just after every version given and the item's own: not the time
    of the merge, which would beat an edit made elsewhere after those versions but before the
    merge (a later list write, a dismissal), and keep the older words everywhere."""
    floor = max(
        [v[0] for v in (*above, stored_version(ctx, kind, key)) if v is not None], default=0
    )
    log_item_version(ctx, kind, key, (floor + 1, ctx.self_id), remote=False)


def check_project(ctx: ApplyContext, project: str | None) -> None:
    if ctx.projects is not None and project is not None and project not in ctx.projects:
        raise ForbiddenError(f'Project "{escaped(project)}" is not allowed for this token.')


def check_held(ctx: ApplyContext, kind: str, project: str) -> None:
    """The item a record's key names here is ``project``'s: a project-limited sender may
    change only its projects' items. The refusal names no project: the sender's record named
    its own, and the item's (one the token may not see, as a pull leaves it out) is not told.
    """
    if ctx.projects is not None and project not in ctx.projects:
        raise ForbiddenError(f"A {kind}'s key must name an item of the token's projects, or none.")


def check_rule(ctx: ApplyContext, scope_tier: str, scope_name: str) -> None:
    """A project-limited sender writes only its projects' rules, never wider ones (but a hub,
    which shares those with every token)."""
    if ctx.projects is not None and scope_tier != "project" and not ctx.shared_rules:
        raise ForbiddenError(f'scope_tier "{scope_tier}" is not allowed for this token.')
    check_project(ctx, scope_name if scope_tier == "project" else None)


def chunks(values: list[str], size: int = 500) -> list[list[str]]:
    return [values[start : start + size] for start in range(0, len(values), size)]


def canonical_uid(conn: SyncConn, uid: str) -> str:
    row = conn.execute("SELECT canonical FROM sync_aliases WHERE uid = ?", (uid,)).fetchone()
    return uid if row is None else str(row[0])


def memory_id_of(conn: SyncConn, uid: str | None) -> int | None:
    if uid is None:
        return None
    row = conn.execute(
        "SELECT id FROM memories WHERE uid = ?", (canonical_uid(conn, uid),)
    ).fetchone()
    return None if row is None else int(row[0])


def fact_id_of(conn: SyncConn, uid: str | None) -> int | None:
    if uid is None:
        return None
    row = conn.execute("SELECT id FROM facts WHERE uid = ?", (uid,)).fetchone()
    return None if row is None else int(row[0])


def check_evidence(
    ctx: ApplyContext, table: str, item_id: int, cited: str = "A rule's evidence"
) -> None:
    """A project-limited sender cites only its projects' items, as ``add_rule`` lets a tool
    (and a save ties a fact only to the memory saved with it)."""
    if ctx.projects is None:
        return
    row = ctx.conn.execute(f"SELECT project FROM {table} WHERE id = ?", (item_id,)).fetchone()
    if row is not None and row[0] not in ctx.projects:
        raise ForbiddenError(f"{cited} must be in the token's projects.")


def set_pending(ctx: ApplyContext, kind: str, key: str, waiting: list[tuple[str, str]]) -> None:
    ctx.conn.execute("DELETE FROM sync_pending WHERE kind = ? AND key = ?", (kind, key))
    ctx.conn.executemany(
        "INSERT INTO sync_pending (kind, key, field, target) VALUES (?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        [(kind, key, name, target) for name, target in waiting],
    )
