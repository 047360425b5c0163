"""``aletheia import`` while the coding tools' servers save to the same store, as real processes:
a failed import never takes away a store another process uses, and the import's "empty store"
check holds for its whole transaction."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aletheia_mem.errors import ConflictError, StoreUnavailableError
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.test_stdio import StdioServer, server_env, tools_call

pytestmark = pytest.mark.e2e

CLI = Path(sys.executable).parent / "aletheia"
IMPORTED = 6000  # memories: the import holds the store's write lock for a few seconds
WAIT = 60.0


def _export_with_a_bad_last_line(path: Path) -> None:
    """An export of IMPORTED memories whose last record is refused (after every other one)."""
    lines = [{"type": "header", "format": "aletheia-export", "version": 1, "schema": 16}]
    for n in range(1, IMPORTED + 1):
        memory = {
            "id": n,
            "uid": f"{n:032x}",
            "project": "shop",
            "type": "note",
            "kind": "note",
            "title": f"imported lesson {n}",
            "text": f"Imported lesson {n}: keep the cache warm for shard {n}.",
            "narrative": None,
            "facts": [],
            "files": [],
            "tool": "cli",
            "pinned": 0,
            "created_at": 1_796_428_903_714 + n,
            "updated_at": 1_796_428_903_714 + n,
            "dismissed_at": None,
            "dismiss_reason": None,
            "dedupe_key": f"{n:064x}",
        }
        lines.append({"type": "memory", "data": memory})
    lines.append({"type": "memory", "data": {"id": "not a number"}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_failed_import_into_a_new_store_keeps_what_an_agent_saved_there(tmp_path: Path):
    source = tmp_path / "export.jsonl"
    _export_with_a_bad_last_line(source)
    env = server_env(tmp_path)
    store = Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db"
    importing = subprocess.Popen(
        [str(CLI), "import", "--no-progress", str(source)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    agent = None
    try:
        deadline = time.monotonic() + WAIT
        while not store.exists():  # the import made the store and now holds its write lock
            assert importing.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        agent = StdioServer(env, tmp_path)
        agent.initialize()
        text = "Agent: the cache shard key is the tenant id."
        # Waits for the import's lock, and is saved once the import gives up.
        agent.send(tools_call(1, "save_memory", {"text": text, "title": "tenant shard key"}))
        reply = agent.read(timeout=WAIT)
        _, err = importing.communicate(timeout=WAIT)
        assert importing.returncode == 2, err
        assert b"Nothing was imported" in err
        assert not reply["result"].get("isError"), reply
        assert store.exists()  # not removed under the agent, which still writes to it
        agent.call(2, "save_memory", {"text": "Agent: a second note.", "title": "second"})
    finally:
        if importing.poll() is None:
            importing.kill()
            importing.wait()
        if agent is not None:
            agent.close()
    found = subprocess.run(
        [str(CLI), "search", "--json", "-p", "*", "shard"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        timeout=WAIT,
        check=True,
    )
    titles = [memory["title"] for memory in json.loads(found.stdout)["memories"]]
    assert titles == ["tenant shard key"]


def test_an_import_refuses_a_store_saved_to_after_its_emptiness_check(tmp_path: Path):
    """Another process may save between ``is_empty`` and the import's transaction: the
    transaction checks again and refuses plainly, instead of failing on the first id taken."""
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        assert store.is_empty()
        other = SqliteStore(tmp_path / "aletheia.db")  # an agent's process, say
        try:
            other.add_memory(
                NewMemory("shop", "note", "note", "agent", "agent's note", "mcp", 0, None)
            )
        finally:
            other.close()
        memory = {"id": 2, "project": "shop", "title": "t", "text": "t"}
        with pytest.raises(ConflictError, match="already holds data"):
            store.import_rows([("memories", memory, 2, None)], {})
    finally:
        store.close()


def test_a_store_kept_busy_longer_than_a_writer_waits_is_told_in_one_line(tmp_path: Path):
    """A large import holds the write lock for longer than a save waits: the save is refused
    with a message (a tool's isError text, the CLI's error line, the API's 503), not a
    traceback with "database is locked" nor "internal error"."""
    path = tmp_path / "aletheia.db"
    store = SqliteStore(path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        store.set_busy_timeout(50)
        holder.execute("BEGIN IMMEDIATE")  # the import's transaction, in another process
        new = NewMemory("shop", "note", "note", "waits", "a save that waits", "mcp", 0, None)
        with pytest.raises(StoreUnavailableError, match="is busy"):
            store.add_memory(new)
        holder.execute("ROLLBACK")
        assert store.add_memory(new)[1]  # saved once the other process is done
    finally:
        holder.close()
        store.close()
