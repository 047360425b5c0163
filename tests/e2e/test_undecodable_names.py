"""Bytes that are not UTF-8 in ``ALETHEIA_TOOL`` or in the working folder's name: the CLI, the
stdio server and the hooks take them as names with those bytes written ``\\xff`` (the project
key and the tool name stay readable and one of a kind), never as a traceback or a lost write.
Real processes, with the folder and the variable given as bytes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.config import caller_name, escape_undecodable
from aletheia_mem.projects import project_for_directory

pytestmark = pytest.mark.e2e

BIN = os.fsencode(Path(sys.executable).parent)
WAIT = 30


def setting_up(tmp_path: Path) -> tuple[bytes, dict[bytes, bytes]]:
    """A git work tree named ``shop\\xff`` and an environment naming the tool ``co\\xffdex``."""
    folder = os.fsencode(tmp_path) + b"/shop\xff"
    os.makedirs(folder + b"/.git")
    env = {
        b"PATH": os.environb.get(b"PATH", b""),
        b"HOME": os.fsencode(tmp_path),
        b"ALETHEIA_DATA_DIR": os.fsencode(tmp_path / "data"),
        b"ALETHEIA_TOOL": b"co\xffdex",
    }
    return folder, env


def run(command: bytes, *args: bytes, cwd: bytes, env: dict[bytes, bytes], data: bytes = b""):
    return subprocess.run(
        [BIN + b"/" + command, *args],
        cwd=cwd,
        env=env,
        input=data,
        capture_output=True,
        timeout=WAIT,
        check=False,
    )


def test_undecodable_bytes_are_escaped_in_names():
    assert escape_undecodable("shop\udcff") == "shop\\xff"
    assert escape_undecodable("café") == "café"
    assert escape_undecodable("a\ud800b") == "a\\xed\\xa0\\x80b"  # a lone surrogate from no byte
    assert caller_name("co\udcffdex ") == "co\\xffdex"
    assert project_for_directory(Path("/srv/Shop\udcfe")) == "shop\\xfe"


def test_cli_save_in_a_folder_and_with_a_tool_not_named_in_utf8(tmp_path):
    folder, env = setting_up(tmp_path)
    saved = run(b"aletheia", b"save", b"Deploys go through the canary", cwd=folder, env=env)
    assert (saved.returncode, saved.stderr) == (0, b"")
    assert saved.stdout == b"Saved as #1 in shop\\xff.\n"
    shown = run(b"aletheia", b"show", b"1", cwd=folder, env=env)
    assert shown.returncode == 0
    assert b"shop\\xff" in shown.stdout and b"source: co\\xffdex" in shown.stdout


def test_stdio_server_in_a_folder_and_with_a_tool_not_named_in_utf8(tmp_path):
    folder, env = setting_up(tmp_path)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "save_memory", "arguments": {"text": "Deploys go through the canary"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "session_start_context", "arguments": {}}},
    ]  # fmt: skip
    data = b"".join(json.dumps(message).encode() + b"\n" for message in messages)
    done = run(b"aletheia-mcp", cwd=folder, env=env, data=data)
    assert (done.returncode, done.stderr) == (0, b"")  # no traceback, no failed repository note
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    saved, context = (reply["result"] for reply in replies[1:])
    assert saved["content"][0]["text"] == "Saved as #1 in shop\\xff."
    assert context["isError"] is False
    assert "# Memory for shop\\xff" in context["content"][0]["text"]
    assert context["structuredContent"]["recent"][0]["tool"] == "co\\xffdex"


def test_hooks_in_a_folder_and_with_a_tool_not_named_in_utf8(tmp_path):
    folder, env = setting_up(tmp_path)
    payload = b'{"session_id": "s1", "prompt": "ship it"}'
    for event in (b"session-start", b"user-prompt", b"session-end"):
        done = run(b"aletheia-hook", event, cwd=folder, env=env, data=payload)
        assert (done.returncode, done.stderr) == (0, b"")
        if event == b"session-start":
            answer = json.loads(done.stdout)
            assert "# Memory for shop\\xff" in answer["hookSpecificOutput"]["additionalContext"]
    with closing(sqlite3.connect(tmp_path / "data" / "aletheia.db")) as conn, conn:
        episodes = conn.execute("SELECT project, tool, ended_at IS NOT NULL FROM episodes")
        assert episodes.fetchall() == [("shop\\xff", "co\\xffdex", 1)]
        assert conn.execute("SELECT count(*) FROM episode_requests").fetchone() == (1,)
