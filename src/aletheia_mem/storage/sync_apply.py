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

from collections.abc import Callable

from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    bump_version,
    canonical_uid,
    check_project,
    check_rule,
)
from aletheia_mem.storage.sync_apply_episodes import apply_episode
from aletheia_mem.storage.sync_apply_facts import apply_fact, version_retiled_facts
from aletheia_mem.storage.sync_apply_memories import apply_memory, insert_new_memories
from aletheia_mem.storage.sync_apply_pending import resolve_pending
from aletheia_mem.storage.sync_apply_rules import apply_rule
from aletheia_mem.storage.sync_authors import stored_items, with_author
from aletheia_mem.storage.sync_dialect import SyncConn, SyncDialect
from aletheia_mem.storage.sync_export import store_id
from aletheia_mem.storage.sync_peers import set_pull_cursor
from aletheia_mem.storage.sync_records import (
    ApplyStats,
    Record,
    record_project,
)

_APPLIERS: dict[str, Callable[[ApplyContext, Record], str]] = {
    "memory": apply_memory,
    "fact": apply_fact,
    "rule": apply_rule,
    "episode": apply_episode,
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
    ctx = ApplyContext(conn, dialect, self_id, now, projects, author, shared_rules)
    stats = ApplyStats()
    dialect.set_quiet(conn, True)
    for record in records:
        if record["kind"] == "rule":
            check_rule(ctx, record["data"]["scope_tier"], record["data"]["scope_name"])
    stored = {} if ctx.author is None else stored_items(conn, records)
    authored = [with_author(ctx, record, stored) for record in records]
    # Positions whose author the receiver set: the result gets a version of the receiver's
    # own, so it travels back to the sender too and every store ends the same.
    reauthored = {n for n, record in enumerate(records) if authored[n] is not record}
    reauthored |= rewritten
    records = authored
    inserted = insert_new_memories(ctx, records, reauthored)
    for position, record in enumerate(records):
        project = record_project(record)
        check_project(ctx, project)
        outcome = "applied" if position in inserted else _APPLIERS[record["kind"]](ctx, record)
        # (an inserted memory was logged with its final version already)
        if position in reauthored and outcome != "skipped" and position not in inserted:
            key = record["key"]
            bump_version(
                ctx, record["kind"], canonical_uid(conn, key) if record["kind"] == "memory" else key
            )
        setattr(stats, outcome, getattr(stats, outcome) + 1)
        if outcome != "skipped" and project is not None:
            stats.touched_projects.add(project)
    version_retiled_facts(ctx, stats)
    if conn.execute("SELECT 1 FROM sync_pending LIMIT 1").fetchone() is not None:
        resolve_pending(conn, records)
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
