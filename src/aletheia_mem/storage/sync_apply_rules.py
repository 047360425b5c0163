"""Applying rule records, with evidence resolved to local ids or left waiting for its item."""

from __future__ import annotations

import json
from collections.abc import Callable

from aletheia_mem.storage.sync_apply_context import (
    ApplyContext,
    bump_version,
    check_evidence,
    check_rule,
    fact_id_of,
    incoming_version,
    incoming_wins,
    log_item_version,
    memory_id_of,
    set_pending,
    stored_version,
)
from aletheia_mem.storage.sync_dialect import SyncConn, json_value
from aletheia_mem.storage.sync_records import Record

# How many of a pushed rule's evidence ids the hub keeps waiting for items it does not have.
MAX_WAITING = 10
# A rule's evidence field (as sync_pending names a reference waiting for its item): the table
# its items are in, and how a global id is found there.
_EVIDENCE: dict[str, tuple[str, Callable[[SyncConn, str], int | None]]] = {
    "evidence_memory": ("memories", memory_id_of),
    "evidence_fact": ("facts", fact_id_of),
}


def _evidence_ids(
    ctx: ApplyContext, targets: list[str], field: str, waiting: list[tuple[str, str]]
) -> list[int]:
    """The local ids of the items ``targets`` names, each once and in order, every one checked
    as the sender may cite it (``check_evidence``); a target whose item is not here yet is added
    to ``waiting`` as ``(field, target)``."""
    table, id_of = _EVIDENCE[field]
    ids: list[int] = []
    for target in targets:
        found = id_of(ctx.conn, target)
        if found is None:
            waiting.append((field, target))
        elif found not in ids:
            check_evidence(ctx, table, found)
            ids.append(found)
    return ids


def _keep_hidden_evidence(
    ctx: ApplyContext,
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


def apply_rule(ctx: ApplyContext, record: Record) -> str:
    conn, rule_id, data = ctx.conn, record["key"], record["data"]
    row = conn.execute(
        "SELECT scope_tier, scope_name FROM rules WHERE id = ?", (rule_id,)
    ).fetchone()
    if row is not None:
        check_rule(ctx, row["scope_tier"], row["scope_name"])
        if not incoming_wins(ctx, record, rule_id, stored_version(ctx, "rule", rule_id)):
            return "skipped"
    waiting: list[tuple[str, str]] = []
    memory_ids = _evidence_ids(ctx, data["evidence_memories"], "evidence_memory", waiting)
    fact_ids = _evidence_ids(ctx, data["evidence_facts"], "evidence_fact", waiting)
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
    set_pending(ctx, "rule", rule_id, waiting)
    log_item_version(ctx, "rule", rule_id, incoming_version(record), remote=True)
    if trimmed:
        bump_version(ctx, "rule", rule_id, incoming_version(record))
        return "merged"
    return "applied"
