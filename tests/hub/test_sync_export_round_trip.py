"""A synced store exported, imported into a fresh store and synced again with the same hub: no
duplicate, no lost link, no wrong id, no stuck sync. The store holds what sync keeps beside its
items: a memory id merged into another (an alias) and references waiting for items a sync
killed midway did not bring yet. Real hub processes (SQLite and PostgreSQL stores), real SQLite
stores, real ``aletheia`` runs."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories
from aletheia_mem.storage.sqlite import SqliteStore
from tests.hub.helpers import Hub, running_hub
from tests.hub.sync_helpers import items_at
from tests.hub.test_sync_e2e import kill_after
from tests.hub.test_sync_import import cli

pytestmark = [pytest.mark.e2e]
NOTE = "Staging needs the VPN"
TWICE = "Deploys go out on Tuesdays"  # saved on both machines: one memory, an alias
RULE_TEXT = "Connect the VPN before a deploy"
LATE_RULE = "Deploy only on Tuesdays"


def _db(data_dir: Path) -> Path:
    return data_dir / "aletheia.db"


def _read(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{_db(data_dir)}?mode=ro", uri=True)) as conn:
        return [tuple(row) for row in conn.execute(sql)]


def links(data_dir: Path) -> dict[str, Any]:
    """What a user sees of the links: each rule's evidence and each fact's memory, by text, as
    the store resolved them (its ``#N``, not a reference still waiting)."""
    evidence = _read(
        data_dir,
        "SELECT r.then_text, m.text FROM rules r, json_each(r.evidence_memory_ids) e"
        " JOIN memories m ON m.id = e.value ORDER BY 1, 2",
    )
    tied = _read(
        data_dir,
        "SELECT f.subject, m.text FROM facts f LEFT JOIN memories m ON m.id = f.memory_id"
        " ORDER BY 1",
    )
    return {"evidence": evidence, "facts": tied}


def texts(data_dir: Path) -> list[str]:
    return [row[0] for row in _read(data_dir, "SELECT text FROM memories ORDER BY text")]


def _save(data_dir: Path, text: str, fact: str | None = None) -> int:
    """A note of ``shop`` saved as a tool saves it (a fact stated with it tied to it)."""
    store = SqliteStore(_db(data_dir))
    try:
        stated = [memories.FactInput(fact, "needs", "the VPN")] if fact else []
        item = memories.MemoryInput(text=text, project="shop", tool="test", facts=stated)
        return memories.save_memory(store, system_clock, item)[0].id
    finally:
        store.close()


def sync(data_dir: Path, hub: Hub, token: str, *extra: str) -> Any:
    return cli(data_dir, "sync", "--hub", hub.url, "--token", token, *extra)


def _interrupted_pull(q: Path, hub: Hub, token: str) -> None:
    """Q pulls the hub's first page and is killed: its rule and fact wait for the note."""
    kill_after(q, "pulled", "--hub", hub.url, "--token", token, "--page-size", "2")
    waiting = _read(q, "SELECT kind, field FROM sync_pending ORDER BY 1, 2")
    assert waiting == [("fact", "memory"), ("rule", "evidence_memory")]


def _fresh_store(data_dir: Path, store_id: str) -> None:
    """An empty store whose random id happens to be ``store_id``: a tie of version times goes
    to the greater id, so the test picks both sides of it."""
    data_dir.mkdir()
    SqliteStore(_db(data_dir)).close()
    with closing(sqlite3.connect(_db(data_dir))) as conn, conn:
        conn.execute("UPDATE sync_identity SET store_id = ?", (store_id,))


@pytest.mark.parametrize("store_id", ["0" * 32, "f" * 32], ids=["lower-id", "higher-id"])
def test_a_synced_store_exported_imported_and_synced_again_loses_nothing(
    tmp_path: Path, hub_db: Path | str, store_id: str
) -> None:
    p, q, late = tmp_path / "p", tmp_path / "q", tmp_path / "late"
    restored = tmp_path / "restored"
    for folder in (p, q, late):
        folder.mkdir()
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tp, tq, tl = (hub.token("sync", None, name) for name in ("p", "q", "late"))
        _save(p, TWICE)
        _save(q, TWICE)  # a later, greater uid: it becomes an alias of P's
        sync(q, hub, tq)
        sync(late, hub, tl)  # the late store pulls Q's uid, and syncs again only at the end
        sync(p, hub, tp)
        sync(q, hub, tq)
        assert _read(q, "SELECT count(*) FROM sync_aliases") == [(1,)]
        # the late store cites Q's uid: it reaches the hub after Q's store is restored
        cli(late, "rules", "add", LATE_RULE, "--evidence-memory", "1")
        # P's note, its fact and a rule citing it; then other notes, and the note dismissed:
        # the hub logs its change after the fact, the rule and the other notes.
        note = _save(p, NOTE, fact="staging")
        cli(p, "rules", "add", RULE_TEXT, "--evidence-memory", str(note))
        sync(p, hub, tp)
        for n in range(40):  # 20 pages of them between the rule and the note
            _save(p, f"Filler note {n}")
        cli(p, "dismiss", str(note), "--reason", "done")
        sync(p, hub, tp)
        _interrupted_pull(q, hub, tq)
        export = tmp_path / "q.jsonl"
        cli(q, "export", "-o", str(export))
        _fresh_store(restored, store_id)
        cli(restored, "import", str(export))
        sync(restored, hub, tq)
        sync(late, hub, tl)
        sync(p, hub, tp)
        sync(restored, hub, tq)
        sync(late, hub, tl)
        linked = {
            "evidence": [(RULE_TEXT, NOTE), (LATE_RULE, TWICE)],
            "facts": [("staging", NOTE)],
        }
        assert links(p) == links(restored) == links(late) == linked
        assert texts(restored) == texts(p) == texts(late)  # each note once: TWICE too
        assert texts(p).count(TWICE) == 1
        held = items_at(hub_db)
        assert items_at(_db(restored)) == items_at(_db(p)) == items_at(_db(late)) == held
        # the #N of every item Q held stays what Q showed (a rule cites by them)
        for table in ("memories", "facts"):
            before = set(_read(q, f"SELECT id, uid FROM {table}"))
            assert before <= set(_read(restored, f"SELECT id, uid FROM {table}")), table
