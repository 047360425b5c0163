"""Sync records out of a store: the changes after a cursor, addressed by global ids.

A record is ``{"kind", "key", "v": [changed_at, origin], "data": {...}}``. ``key`` is the item's
global id (a memory's, fact's or episode's ``uid``, a rule's ``r_`` id); every reference inside
``data`` is a global id too, never a local ``#N``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aletheia_mem.storage.sync_dialect import SyncConn, json_value
from aletheia_mem.storage.sync_records import (
    MAX_REQUESTS,
    PAGE_ENVELOPE_BYTES,
    ExportPage,
    Record,
    json_bytes,
    newest_requests,
    record_project,
)

__all__ = ["MAX_REQUESTS", "export_page", "read_items", "store_id"]


def _in(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def store_id(conn: SyncConn) -> str:
    return str(conn.execute("SELECT store_id FROM sync_identity").fetchone()[0])


def _pending(conn: SyncConn, kind: str, keys: Sequence[str]) -> dict[str, list[Any]]:
    """Unresolved references of these items: key -> [(field, target uid)]."""
    found: dict[str, list[Any]] = {}
    if not keys:
        return found
    rows = conn.execute(
        f"SELECT key, field, target FROM sync_pending WHERE kind = ? AND key IN ({_in(keys)})",
        [kind, *keys],
    ).fetchall()
    for row in rows:
        found.setdefault(row[0], []).append((row[1], row[2]))
    return found


def _memories(conn: SyncConn, uids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(f"SELECT * FROM memories WHERE uid IN ({_in(uids)})", list(uids))
    return {
        row["uid"]: {
            "project": row["project"],
            "type": row["type"],
            "kind": row["kind"],
            "title": row["title"],
            "text": row["text"],
            "narrative": row["narrative"],
            "facts": json_value(row["facts"]),
            "files": json_value(row["files"]),
            "tool": row["tool"],
            "pinned": bool(row["pinned"]),
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "dismissed_at": row["dismissed_at"],
            "dismiss_reason": row["dismiss_reason"],
            "dedupe_key": row["dedupe_key"],
        }
        for row in rows
    }


def _facts(conn: SyncConn, uids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        "SELECT f.*, s.uid AS superseded_uid, m.uid AS memory_uid FROM facts f"
        " LEFT JOIN facts s ON s.id = f.superseded_by LEFT JOIN memories m ON m.id = f.memory_id"
        f" WHERE f.uid IN ({_in(uids)})",
        list(uids),
    ).fetchall()
    pending = _pending(conn, "fact", uids)
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        refs = {"superseded_by": row["superseded_uid"], "memory": row["memory_uid"]}
        refs.update(dict(pending.get(row["uid"], [])))
        found[row["uid"]] = {
            "project": row["project"],
            "subject": row["subject"],
            "predicate": row["predicate"],
            "object": row["object"],
            "valid_from": row["valid_from"],
            "valid_to": row["valid_to"],
            "recorded_at": row["recorded_at"],
            "superseded_by": refs["superseded_by"],
            "source": row["source"],
            "memory": refs["memory"],
            "dismissed_at": row["dismissed_at"],
            "dismiss_reason": row["dismiss_reason"],
        }
    return found


def _uids_of(conn: SyncConn, table: str, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = conn.execute(f"SELECT id, uid FROM {table} WHERE id IN ({_in(ids)})", list(ids))
    return {int(row[0]): str(row[1]) for row in rows}


def _rules(conn: SyncConn, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(f"SELECT * FROM rules WHERE id IN ({_in(ids)})", list(ids)).fetchall()
    pending = _pending(conn, "rule", ids)
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        memory_uids = _uids_of(conn, "memories", json_value(row["evidence_memory_ids"]))
        fact_uids = _uids_of(conn, "facts", json_value(row["evidence_fact_ids"]))
        evidence = {"memory": set(memory_uids.values()), "fact": set(fact_uids.values())}
        for field, target in pending.get(row["id"], []):
            evidence["memory" if field == "evidence_memory" else "fact"].add(target)
        found[row["id"]] = {
            "then": row["then_text"],
            "when": row["when_text"],
            "scope_tier": row["scope_tier"],
            "scope_name": row["scope_name"],
            "evidence_memories": sorted(evidence["memory"]),
            "evidence_facts": sorted(evidence["fact"]),
            "source": row["source"],
            "added_at": row["added_at"],
            "last_confirmed_at": row["last_confirmed_at"],
            "enabled": bool(row["enabled"]),
            "updated_at": row["updated_at"],
        }
    return found


def _episodes(conn: SyncConn, uids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(f"SELECT * FROM episodes WHERE uid IN ({_in(uids)})", list(uids))
    found: dict[str, dict[str, Any]] = {}
    for row in rows.fetchall():
        requests = conn.execute(
            "SELECT at, text FROM episode_requests WHERE episode_id = ? ORDER BY at, id",
            (row["id"],),
        ).fetchall()
        # held before the caps (sync_apply), or written here: the newest that fit go
        requests = [requests[n] for n in newest_requests(requests)]
        found[row["uid"]] = {
            "project": row["project"],
            "tool": row["tool"],
            "started_at": row["started_at"],
            "ended_at": row["ended_at"],
            "summary": row["summary"],
            "dismissed_at": row["dismissed_at"],
            "dismiss_reason": row["dismiss_reason"],
            "requests": [[request[0], request[1]] for request in requests],
        }
    return found


def _seen_within(
    conn: SyncConn, table: str, uids: Sequence[str], projects: tuple[str, ...]
) -> list[str]:
    """Of ``uids``, those of this store's items in ``projects``, in their order: an item of
    another project, or one this store does not hold (its project unknown), is left out."""
    if not uids:
        return []
    rows = conn.execute(
        f"SELECT uid FROM {table} WHERE uid IN ({_in(uids)}) AND project IN ({_in(projects)})",
        [*uids, *projects],
    ).fetchall()
    kept = {str(row[0]) for row in rows}
    return [uid for uid in uids if uid in kept]


def within_projects(conn: SyncConn, rule: dict[str, Any], projects: tuple[str, ...]) -> None:
    """A rule as a token of ``projects`` sees it: its evidence in those projects only, so that
    a rule for every project names no item of another project (not even its global id), and
    a store never holds, nor pushes back, a reference its token may not cite."""
    rule["evidence_memories"] = _seen_within(conn, "memories", rule["evidence_memories"], projects)
    rule["evidence_facts"] = _seen_within(conn, "facts", rule["evidence_facts"], projects)


# The table of each kind whose rows have a number (``#N``) on a store: a rule's id is its key.
_NUMBERED = {"memory": "memories", "fact": "facts", "episode": "episodes"}


def item_number(conn: SyncConn, kind: str, key: str) -> int | None:
    """The number (``#N``) this store shows for the item with this global id, or None (a
    rule, or an item it does not hold)."""
    table = _NUMBERED.get(kind)
    if table is None:
        return None
    row = conn.execute(f"SELECT id FROM {table} WHERE uid = ?", (key,)).fetchone()
    return None if row is None else int(row[0])


_READERS = {"memory": _memories, "fact": _facts, "rule": _rules, "episode": _episodes}


def read_items(conn: SyncConn, kind: str, keys: Sequence[str]) -> dict[str, Any]:
    """The current data of these items, by key; missing keys are left out."""
    found: dict[str, Any] = {}
    for start in range(0, len(keys), 500):
        found.update(_READERS[kind](conn, keys[start : start + 500]))
    return found


def export_page(
    conn: SyncConn,
    *,
    after: int,
    limit: int,
    max_bytes: int,
    local_only: bool,
    exclude_origin: str | None,
    projects: tuple[str, ...] | None,
) -> ExportPage:
    """Up to ``limit`` records (at most ``max_bytes`` of JSON) changed after cursor ``after``.
    A record larger than a page may be alone (``MAX_RECORD_BYTES``: an earlier release may
    hold one) is passed over, in the page's ``oversized``, so that every page after it goes.

    Call inside a read transaction, so that the rows and the end of the log agree.

    Args:
        conn: the store's connection.
        after: the cursor: the ``seq`` of the last change already taken.
        limit: at most this many changes are looked at.
        max_bytes: the page's JSON (its records and what a page holds besides) stays within.
        local_only: only changes made here (for a push), not ones pulled from the hub.
        exclude_origin: leave out versions made by this store (a puller has them).
        projects: only records of these projects (None: all); the others are counted by
            project in the page's ``outside``.
    """
    sql = "SELECT seq, kind, key, changed_at, origin FROM sync_log WHERE seq > ?"
    params: list[Any] = [after]
    if local_only:
        sql += " AND remote = 0"
    if exclude_origin is not None:
        sql += " AND origin != ?"
        params.append(exclude_origin)
    rows = conn.execute(sql + " ORDER BY seq LIMIT ?", [*params, limit]).fetchall()
    by_kind: dict[str, list[str]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row["key"])
    data = {kind: read_items(conn, kind, keys) for kind, keys in by_kind.items()}
    records: list[Record] = []
    oversized: list[Record] = []
    outside: dict[str, int] = {}
    room = max_bytes - PAGE_ENVELOPE_BYTES
    size, cursor = 0, after
    for row in rows:
        item = data.get(row["kind"], {}).get(row["key"])
        if item is None:
            cursor = row["seq"]
            continue  # merged into another item since; that one carries it
        record = {
            "kind": row["kind"],
            "key": row["key"],
            "v": [row["changed_at"], row["origin"]],
            "data": item,
        }
        if projects is not None:
            project = record_project(record)
            if project is not None and project not in projects:
                outside[project] = outside.get(project, 0) + 1
                cursor = row["seq"]
                continue
            if row["kind"] == "rule":
                within_projects(conn, item, projects)
        weight = json_bytes(record) + 1
        if weight > room:  # no page could carry it
            oversized.append(record)
        elif size + weight > room:
            break  # the next page starts with it
        else:
            records.append(record)
            size += weight
        cursor = row["seq"]
    if len(rows) == limit or cursor != (rows[-1]["seq"] if rows else after):
        return ExportPage(records, cursor, True, oversized, outside)
    end = conn.execute("SELECT coalesce(max(seq), 0) FROM sync_log").fetchone()[0]
    return ExportPage(records, max(int(end), after), False, oversized, outside)
