"""Several ``aletheia-mcp`` processes write one store file at once, as parallel agents do."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_stdio import StdioServer, server_env, tools_call

pytestmark = pytest.mark.e2e

WRITERS = 4
MEMORIES = 150  # per writer
LIST_WRITES = 10  # per writer, all to that writer's own list
RULES = 5  # per writer
DEADLINE = 60.0  # seconds for every writer to answer everything


def requests_of(writer: int) -> list[dict[str, Any]]:
    """One writer's pipelined work: memories, interleaved list rewrites and rules."""
    messages: list[dict[str, Any]] = []
    for index in range(MEMORIES):
        text = f"Writer {writer} learned lesson {index}: keep the cache warm for shard {index}."
        messages.append(tools_call(f"m{index}", "save_memory", {"text": text, "type": "note"}))
        if index % (MEMORIES // LIST_WRITES) == 0:
            items = [f"step {step} of writer {writer}" for step in range(index // 15 + 1)]
            arguments = {"list": f"todo-{writer}", "items": items}
            messages.append(tools_call(f"w{index}", "work_state_write", arguments))
        if index % (MEMORIES // RULES) == 0:
            rule = {"then": f"Writer {writer} rule {index}: run the linter", "when": "you push"}
            messages.append(tools_call(f"r{index}", "add_rule", rule))
    return messages


def test_parallel_writers_on_one_store_all_succeed_and_lose_nothing(tmp_path: Path):
    db_path = tmp_path / "data" / "aletheia.db"
    env = server_env(tmp_path)
    # All processes start together on a file that does not exist yet: migrations race too.
    servers = [StdioServer(env, tmp_path) for _ in range(WRITERS)]
    try:
        batches = [requests_of(writer) for writer in range(WRITERS)]
        for server, batch in zip(servers, batches, strict=True):
            server.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {}})
            for message in batch:
                server.send(message)
        deadline = time.monotonic() + DEADLINE
        replies: list[dict[str, Any]] = []
        for server, batch in zip(servers, batches, strict=True):
            got = {}
            for _ in range(len(batch) + 1):
                reply = server.read(timeout=max(0.1, deadline - time.monotonic()))
                got[reply["id"]] = reply
            replies.append(got)
        codes = [server.close() for server in servers]
    finally:
        for server in servers:
            server.kill()

    assert codes == [0] * WRITERS
    memory_ids: list[int] = []
    for writer, got in enumerate(replies):
        assert len(got) == len(batches[writer]) + 1
        for request_id, reply in got.items():
            assert "error" not in reply, reply
            result = reply["result"]
            if request_id == "init":
                continue
            text = result["content"][0]["text"]
            assert result["isError"] is False, text
            assert "locked" not in text
            if str(request_id).startswith("m"):
                match = re.fullmatch(r"Saved as #(\d+) in shop\.", text)
                assert match, text
                memory_ids.append(int(match.group(1)))
            elif str(request_id).startswith("w"):
                assert re.fullmatch(
                    rf'Saved list "todo-{writer}" with \d+ item\(s\) as #\d+\.', text
                )
            else:
                assert text.startswith("Rule saved (r_"), text
    for server in servers:
        assert b"locked" not in server.stderr
        assert b"Traceback" not in server.stderr
    assert len(memory_ids) == len(set(memory_ids)) == WRITERS * MEMORIES

    conn = sqlite3.connect(db_path)
    try:
        notes = conn.execute("SELECT id, text FROM memories WHERE kind = 'note'").fetchall()
        lists = conn.execute(
            "SELECT title, text FROM memories WHERE kind = 'work_state' ORDER BY title"
        ).fetchall()
        rules = conn.execute("SELECT count(*), count(DISTINCT id) FROM rules").fetchone()
        (integrity,) = conn.execute("PRAGMA integrity_check").fetchone()
    finally:
        conn.close()
    assert len(notes) == WRITERS * MEMORIES
    assert sorted(row[0] for row in notes) == sorted(memory_ids)
    assert len({row[1] for row in notes}) == WRITERS * MEMORIES
    # Each writer rewrote its own list in place; the last write won.
    final_steps = (MEMORIES - MEMORIES // LIST_WRITES) // 15 + 1
    assert [(title, json.loads(text)) for title, text in lists] == [
        (f"todo-{writer} list", [f"step {step} of writer {writer}" for step in range(final_steps)])
        for writer in range(WRITERS)
    ]
    assert rules == (WRITERS * RULES, WRITERS * RULES)
    assert integrity == "ok"
