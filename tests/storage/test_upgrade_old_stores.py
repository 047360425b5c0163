"""A store an older release left, at several schema versions and holding every kind of row the
tables held then, opened by this version: every migration applies, no row is lost or changed
(the export holds exactly the rows written then), and search, timeline, facts, rules, lists,
tokens, sync and import work on the upgraded store."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.canonical import fact_key
from aletheia_mem.clock import system_clock
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from aletheia_mem.domain.transfer import export_lines, import_lines
from aletheia_mem.storage import migrate
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.memories import memory_fts_row
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from tests.hub.test_sync_store import HUB_ID, TOKEN_ID, exchange
from tests.storage.old_stores import store_before

T = 1_760_000_000_000
LATEST = migrate._steps()[-1][0]
# The versions a release stopped at: the first, and one before each migration that changed a
# table holding data (a rank table, the sync log, the full-text upkeep, the file index, stale).
VERSIONS = (1, 2, 5, 7, 12, 13, 14, 16, LATEST)


def _memory(n: int, title: str, text: str, **extra: Any) -> dict[str, Any]:
    row = {
        "id": n,
        "uid": f"{0xA000 + n:032x}",
        "project": "shop",
        "type": "decision",
        "kind": "note",
        "title": title,
        "text": text,
        "narrative": None,
        "facts": [],
        "files": [],
        "tool": "claude-code",
        "pinned": 0,
        "created_at": T + n * 1000,
        "updated_at": T + n * 1000,
        "dismissed_at": None,
        "dismiss_reason": None,
        "dedupe_key": dedupe_key(title, text),
    }
    return {**row, **extra}


MEMORIES = [
    _memory(
        1,
        "Cache invalidation uses Redis",
        "We chose Redis pub/sub to invalidate the product cache.",
        narrative="Memcached had no pub/sub.",
        facts=["cache uses redis"],
        files=["src/cache/invalidate.py", "src/cache/keys.py"],
    ),
    _memory(2, "Pinned deploy note", "Deploys go out on Tuesdays only.", pinned=1),
    _memory(
        3,
        "Old checkout flow",
        "The checkout flow posts to /v1/orders.",
        dismissed_at=T + 9000,
        dismiss_reason="replaced by v2",
    ),
    _memory(
        4,
        "todo list",
        json.dumps(["migrate billing", {"task": "rotate keys", "done": False}]),
        type="note",
        kind="work_state",
        dedupe_key="list:todo",
        updated_at=T + 8000,
    ),
    _memory(5, "Billing uses Stripe", "Payments go through the Stripe API.", project="billing"),
]


def _fact(n: int, subject: str, predicate: str, obj: str, **extra: Any) -> dict[str, Any]:
    row = {
        "id": n,
        "uid": f"{0xF000 + n:032x}",
        "project": "shop",
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "valid_from": T + n * 1000,
        "valid_to": None,
        "recorded_at": T + n * 1000,
        "superseded_by": None,
        "source": "claude-code",
        "memory_id": None,
        "dismissed_at": None,
        "dismiss_reason": None,
    }
    return {**row, **extra}


FACTS = [  # a history: memcached, replaced by redis; and a dismissed fact
    _fact(1, "cache", "uses", "memcached", valid_to=T + 2000, superseded_by=2, memory_id=1),
    _fact(2, "cache", "uses", "redis", memory_id=1),
    _fact(3, "deploy day", "is", "friday", dismissed_at=T + 5000, dismiss_reason="wrong"),
]
RULES = [
    {
        "id": rule_id("Run the linter before committing", "committing", "project", "shop"),
        "then_text": "Run the linter before committing",
        "when_text": "committing",
        "scope_tier": "project",
        "scope_name": "shop",
        "evidence_memory_ids": [1],
        "evidence_fact_ids": [2],
        "source": "claude-code",
        "added_at": T,
        "last_confirmed_at": T + 3000,
        "enabled": 1,
        "updated_at": T + 3000,
    },
    {
        "id": rule_id("Never push on Fridays", "", "everywhere", ""),
        "then_text": "Never push on Fridays",
        "when_text": "",
        "scope_tier": "everywhere",
        "scope_name": "",
        "evidence_memory_ids": [],
        "evidence_fact_ids": [],
        "source": "you",
        "added_at": T + 1,
        "last_confirmed_at": T + 1,
        "enabled": 0,
        "updated_at": T + 4000,
    },
]
EPISODES = [
    {
        "id": 1,
        "uid": f"{0xE001:032x}",
        "project": "shop",
        "tool": "cursor",
        "started_at": T,
        "ended_at": T + 60_000,
        "summary": "Moved the cache to Redis",
        "dismissed_at": None,
        "dismiss_reason": None,
    },
    {
        "id": 2,
        "uid": f"{0xE002:032x}",
        "project": "shop",
        "tool": "claude-code",
        "started_at": T + 100_000,
        "ended_at": None,
        "summary": None,
        "dismissed_at": T + 200_000,
        "dismiss_reason": "noise",
    },
]
REQUESTS = [
    {"id": 1, "episode_id": 1, "at": T + 1000, "text": "switch the cache to redis"},
    {"id": 2, "episode_id": 1, "at": T + 2000, "text": "now add a test"},
    {"id": 3, "episode_id": 2, "at": T + 100_500, "text": "look at deploys"},
]
AUDIT = [
    {
        "id": 1,
        "at": T,
        "actor": "cli",
        "tool": "save_memory",
        "project": "shop",
        "result": "ok",
        "detail": None,
    },
    {
        "id": 2,
        "at": T + 9000,
        "actor": "cli",
        "tool": "dismiss_memory",
        "project": "shop",
        "result": "ok",
        "detail": "replaced by v2",
    },
]
TABLES = {
    "memory": ("memories", MEMORIES),
    "fact": ("facts", FACTS),
    "rule": ("rules", RULES),
    "episode": ("episodes", EPISODES),
    "request": ("episode_requests", REQUESTS),
    "audit": ("audit", AUDIT),
}
JSON_COLUMNS = ("facts", "files", "evidence_memory_ids", "evidence_fact_ids")
HUB_TOKEN = "alh_oldtoken_kept_in_the_store"


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    values = {k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()}
    if table == "facts":
        values["subject_key"] = fact_key(row["subject"])
        values["predicate_key"] = fact_key(row["predicate"])
    names = ", ".join(values)
    marks = ", ".join("?" * len(values))
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))


def fill(conn: sqlite3.Connection, version: int) -> None:
    """Every kind of row the tables at ``version`` held, as that release wrote them (the
    full-text rows beside each memory and fact)."""
    conn.execute("BEGIN")
    for table, rows in TABLES.values():
        for row in rows:
            _insert(conn, table, row)
    for row in MEMORIES:
        new = NewMemory(
            row["project"], row["type"], row["kind"], row["title"], row["text"], row["tool"],
            row["created_at"], row["dedupe_key"], row["narrative"], tuple(row["facts"]),
            tuple(row["files"]),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            memory_fts_row(row["id"], new),
        )
        for path in row["files"]:
            conn.execute("INSERT INTO memory_files VALUES (?, ?, ?)", (row["id"], path, path[::-1]))
    for row in FACTS:
        conn.execute(
            "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (?, ?, ?, ?)",
            (row["id"], row["subject"], row["predicate"], row["object"]),
        )
    if version >= 5:
        conn.executemany(
            "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at,"
            " revoked_at) VALUES (?, ?, ?, 'sync', ?, ?, ?)",
            [
                ("laptop", "a" * 64, "alh_aaaa", '["shop"]', T, None),
                ("old", "b" * 64, "alh_bbbb", None, T, T + 1),
            ],
        )
        conn.execute("INSERT INTO sync_peers VALUES ('hub-1', 7, 3, 5, ?)", (T,))
        conn.execute(
            "INSERT INTO sync_remote VALUES (1, 'https://hub.example', ?, NULL)", (HUB_TOKEN,)
        )
        conn.execute("INSERT INTO sync_aliases VALUES (?, ?)", ("0" * 32, MEMORIES[0]["uid"]))
        conn.execute("INSERT INTO sync_pending VALUES ('fact', 'fact-9', 'memory_id', 'mem-9')")
    if version >= 7:
        conn.execute("INSERT INTO mcp_sessions VALUES ('h' , '', '2025-06-18', 'x', ?, ?)", (T, T))
    if version >= 11:
        conn.execute("INSERT INTO repositories VALUES ('/src/shop', 'shop', ?, ?)", (T, T))
    if version >= 16:
        conn.execute("INSERT INTO sync_store_tokens VALUES ('store-a', 1, ?)", (T,))
    if version >= 17:
        conn.execute("INSERT INTO sync_scopes VALUES ('https://hub.example', 'd', '[\"shop\"]')")
    conn.execute("COMMIT")


def old_store(path: Path, version: int, *, wal: bool = True) -> None:
    """A store at ``path`` as a release at ``version`` left it, full (in WAL mode, as every
    release opened its store)."""
    with closing(store_before(path, version + 1)) as conn:
        if wal:
            conn.execute("PRAGMA journal_mode = WAL")
        fill(conn, version)


def exported(store: SqliteStore) -> dict[str, list[dict[str, Any]]]:
    lines = [json.loads(line) for line in export_lines(store)]
    found: dict[str, list[dict[str, Any]]] = {kind: [] for kind in TABLES}
    for line in lines[1:]:
        found[line["type"]].append(line["data"])
    return found


def call(app: AppContext, name: str, **arguments: Any) -> Any:
    result = call_tool(app, TOOLS_BY_NAME[name], arguments)
    assert not result.is_error, result
    return result.structured


@pytest.mark.sqlite_only
@pytest.mark.parametrize("version", VERSIONS)
def test_a_full_store_at_an_older_version_upgrades_with_nothing_lost(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "aletheia.db"
    old_store(path, version)
    store = SqliteStore(path)
    try:
        assert store.schema_version() == LATEST
        assert store.health()["integrity_check"] == "ok"
        assert exported(store) == {kind: rows for kind, (_, rows) in TABLES.items()}
        app = AppContext(store=store, clock=lambda: T + 10**6, default_project="shop", caller="cli")
        found = call(app, "search", query="redis")
        assert [hit["id"] for hit in found["memories"]] == [1]
        assert [fact["id"] for fact in found["facts"]] == [2]
        files = call(app, "search", file="src/cache/keys.py")["memories"]
        assert [hit["id"] for hit in files] == [1]
        assert call(app, "search", query="checkout")["memories"] == []  # dismissed stays out
        around = [item["id"] for item in call(app, "timeline", anchor=2)["memories"]]
        assert around[:3] == [1, 2, 4]
        history = call(app, "fact_history", subject="cache", include_superseded=True)
        assert [fact["object"] for fact in history["facts"]] == ["redis", "memcached"]
        rules = [rule["id"] for rule in call(app, "list_rules")["rules"]]
        assert rules == [RULES[0]["id"]]  # the disabled one is not listed
        items = call(app, "work_state_read", list="todo")["items"]
        assert items == ["migrate billing", {"task": "rotate keys", "done": False}]
        if version >= 5:  # the tokens, the cursors, the remembered hub (its token moved out)
            assert [t.name for t in store.list_tokens()] == ["laptop", "old"]
            assert store.sync_cursors("hub-1", 7) == (3, 5)
            assert store.remembered_hub() == ("https://hub.example", HUB_TOKEN, None)
            with closing(sqlite3.connect(path)) as conn:
                assert conn.execute("SELECT token FROM sync_remote").fetchone() == ("",)
        if version >= 17:
            assert store.sync_scope("https://hub.example", "d") == (True, ("shop",))
        call(app, "save_memory", text="After the upgrade: Redis cluster", project="shop")
        found = call(app, "search", query="redis cluster")["memories"]
        assert found[0]["id"] == 6  # the id sequence went on
    finally:
        store.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize("version", (1, 5, 13))
def test_an_upgraded_store_exports_imports_and_syncs_every_item(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "aletheia.db"
    old_store(path, version)
    store, hub = SqliteStore(path), SqliteStore(tmp_path / "hub.db")
    copy = SqliteStore(tmp_path / "copy" / "aletheia.db")
    try:
        # this machine's clock: the export carries the change log's times, which the store's
        # triggers wrote by it (an import refuses a version more than a day ahead of its clock)
        import_lines(copy, list(export_lines(store)), now=system_clock())
        # as sync keeps it (and add_rule adds it), an earlier release's blank "when" is
        # "always", the rule under that text's id: the rest is copied as it was
        expected = exported(store)
        for rule in expected["rule"]:
            if not rule["when_text"]:
                rule["when_text"] = "always"
                parts = ("then_text", "when_text", "scope_tier", "scope_name")
                rule["id"] = rule_id(*(rule[part] for part in parts))
        assert exported(copy) == expected
        exchange(store, hub)
        memories = {row["uid"] for row in exported(hub)["memory"]}
        assert memories == {row["uid"] for row in MEMORIES}
        facts = {row["uid"]: row["superseded_by"] for row in exported(hub)["fact"]}
        assert facts == {row["uid"]: row["superseded_by"] for row in FACTS}
        assert store.sync_cursors(HUB_ID, TOKEN_ID)[0] > 0
    finally:
        for opened in (store, hub, copy):
            opened.close()
