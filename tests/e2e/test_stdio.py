"""The real ``aletheia-mcp`` console script over stdio: framing, errors, exit and settings."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.e2e

SERVER = Path(sys.executable).parent / "aletheia-mcp"
WAIT = 5.0  # seconds: the bound on every wait for the server


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The small environment an MCP host passes, plus ALETHEIA_* settings."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    env.setdefault("ALETHEIA_DATA_DIR", str(tmp_path / "data"))
    project = tmp_path / "shop"
    project.mkdir(exist_ok=True)
    env.setdefault("ALETHEIA_CWD", str(project))
    env.update(extra)
    return env


class StdioServer:
    """One ``aletheia-mcp`` process; a thread moves its stdout lines into a queue."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw: list[bytes] = []
        self.stderr = b""
        self._pump = threading.Thread(target=self._read_stdout, daemon=True)
        self._pump.start()
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    @property
    def stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    def send_raw(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def read_line(self, timeout: float = WAIT) -> bytes:
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"server closed stdout; stderr: {self.stderr!r}"
        return line

    def read(self, timeout: float = WAIT) -> Any:
        return json.loads(self.read_line(timeout))

    def ask(self, message: Any) -> Any:
        self.send(message)
        return self.read()

    def initialize(self, name: str = "pytest", version: str = "2025-11-25") -> Any:
        reply = self.ask(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": name, "version": "0"},
                },
            }
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = self.ask(tools_call(request_id, name, arguments))
        assert reply["id"] == request_id
        result: dict[str, Any] = reply["result"]
        return result

    def close(self, timeout: float = WAIT) -> int:
        """Close stdin and wait for the exit code; kill on timeout."""
        with contextlib.suppress(BrokenPipeError):
            self.stdin.close()
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            self.kill()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)
        self._pump.join(timeout=WAIT)
        self._drain.join(timeout=WAIT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


@contextlib.contextmanager
def running_server(env: Mapping[str, str], cwd: Path) -> Iterator[StdioServer]:
    server = StdioServer(env, cwd)
    try:
        yield server
    finally:
        server.kill()


def tools_call(request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


def text_of(result: dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text


def memory_rows(db_path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT id, project, tool, text FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def test_console_script_is_installed_next_to_the_interpreter():
    assert SERVER.is_file()
    assert os.access(SERVER, os.X_OK)


def test_each_reply_is_one_compact_newline_terminated_line(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
            }
        )
        line = server.read_line()
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        assert json.loads(line)["result"]["protocolVersion"] == "2025-06-18"
        multi = "first line\nsecond line\r\nthird\u2028line"
        saved = server.call(2, "save_memory", {"text": multi, "title": "multi"})
        assert text_of(saved) == "Saved as #1 in shop."
        server.send(tools_call(3, "get_observations", {"ids": [1]}))
        line = server.read_line()
        assert line.count(b"\n") == 1
        assert multi in text_of(json.loads(line)["result"])
        assert server.close() == 0


def test_bad_json_line_gets_a_parse_error_and_the_server_keeps_reading(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.send_raw(b"this is not json\n")
        assert server.read() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not valid JSON."},
        }
        server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":\n')
        assert server.read()["error"]["code"] == -32700
        server.send_raw(b"\xc3\x28\xff\n")
        assert server.read()["error"]["code"] == -32700
        assert server.ask(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert server.close() == 0


def test_blank_lines_are_skipped_without_a_reply(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.send_raw(b"\n  \n\r\n")
        assert server.ask(ping(1))["id"] == 1
        assert server.close() == 0
        assert len(server.raw) == 1


def test_stdout_carries_nothing_but_json_rpc_messages(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.send_raw(b'{"id":"server-discover-probe-1","method":"server/discover"}\n')
        server.initialize()
        messages: list[bytes] = [
            json.dumps(tools_call(1, "save_memory", {"text": "Use pnpm, not npm"})).encode(),
            json.dumps(tools_call(2, "search", {})).encode(),
            json.dumps(tools_call(3, "nope", {})).encode(),
            json.dumps(tools_call(4, "timeline", {"anchor": 99})).encode(),
            json.dumps(tools_call(5, "get_observations", {"ids": "1,2"})).encode(),
            json.dumps(tools_call(6, "work_state_read", {"list": "todo"})).encode(),
            json.dumps([ping(7), {"jsonrpc": "2.0", "method": "notifications/x"}]).encode(),
            b"garbage",
            b"[]",
            b'{"jsonrpc":"2.0","id":8,"result":{}}',
        ]
        server.send_raw(b"\n".join(messages) + b"\n")
        assert server.close() == 0
    assert len(server.raw) == 11  # discover, initialize, then one per request line above
    for line in server.raw:
        assert line.endswith(b"\n")
        payload = json.loads(line)
        for message in payload if isinstance(payload, list) else [payload]:
            assert message["jsonrpc"] == "2.0"
            assert "id" in message
            assert ("result" in message) != ("error" in message)


def test_server_exits_promptly_with_code_zero_when_stdin_closes(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.initialize()
        assert server.call(1, "save_memory", {"text": "flushed before exit"})["isError"] is False
        started = time.monotonic()
        code = server.close(timeout=WAIT)
        elapsed = time.monotonic() - started
    assert code == 0
    assert elapsed < 2.0  # the Python SDK terminates the server 2 s after closing stdin
    assert [row[3] for row in memory_rows(tmp_path / "data" / "aletheia.db")] == [
        "flushed before exit"
    ]


def test_server_exits_with_code_zero_on_stdin_eof_without_any_message(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        assert server.close() == 0
        assert server.raw == []


def test_batch_line_is_answered_with_one_array_line(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.initialize()
        server.send(
            [
                ping(1),
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                tools_call("b", "list_rules", {}),
            ]
        )
        reply = server.read()
        assert isinstance(reply, list)
        assert sorted(str(item["id"]) for item in reply) == ["1", "b"]
        server.send([])
        assert server.read() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid request: empty batch."},
        }
        server.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        assert server.ask(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert server.close() == 0


def test_a_batch_line_holds_at_most_100_messages_and_one_more_runs_nothing(tmp_path):
    env = server_env(tmp_path, PYTHONPATH=os.environ.get("PYTHONPATH", ""))  # a worktree's
    with running_server(env, tmp_path) as server:
        server.initialize()
        saves = [tools_call(n, "save_memory", {"text": f"batched note {n}"}) for n in range(101)]
        assert server.ask(saves) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request: a batch holds at most 100 messages; this one has 101.",
            },
        }
        reply = server.ask(saves[:100])
        assert sorted(item["id"] for item in reply) == list(range(100))
        assert all(item["result"]["isError"] is False for item in reply)
        assert server.close() == 0
    # The refused line saved nothing: the store holds the 100 of the line after it.
    assert [row[3] for row in memory_rows(tmp_path / "data" / "aletheia.db")] == [
        f"batched note {n}" for n in range(100)
    ]


def test_single_request_line_is_answered_with_an_object(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        for message in (ping(1), tools_call(2, "search", {}), {"jsonrpc": "2.0", "id": None}):
            assert isinstance(server.ask(message), dict)
        assert server.close() == 0


@pytest.mark.parametrize("argv", [["--anything"], ["--help", "x"], ["serve"], ["-v", "x"]])
def test_aletheia_mcp_refuses_flags_and_arguments(tmp_path, argv):
    done = subprocess.run(
        [str(SERVER), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=server_env(tmp_path),
        cwd=tmp_path,
        timeout=WAIT * 2,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"aletheia-mcp takes no arguments" in done.stderr
    assert not (tmp_path / "data").exists()


def test_aletheia_hub_db_in_the_environment_is_the_store_instead_of_the_data_dir(tmp_path):
    hub_db = tmp_path / "hub" / "shared.db"
    env = server_env(tmp_path, ALETHEIA_HUB_DB=str(hub_db))
    with running_server(env, tmp_path) as server:
        server.initialize()
        assert text_of(server.call(1, "save_memory", {"text": "in the named store"})) == (
            "Saved as #1 in shop."
        )
        assert server.close() == 0
    assert [row[3] for row in memory_rows(hub_db)] == ["in the named store"]
    assert not (tmp_path / "data" / "aletheia.db").exists()


def test_aletheia_data_dir_selects_the_store_folder(tmp_path):
    env = server_env(tmp_path, ALETHEIA_DATA_DIR=str(tmp_path / "elsewhere"))
    with running_server(env, tmp_path) as server:
        server.initialize()
        server.call(1, "save_memory", {"text": "in the data dir"})
        assert server.close() == 0
    assert [row[3] for row in memory_rows(tmp_path / "elsewhere" / "aletheia.db")] == [
        "in the data dir"
    ]


def test_aletheia_cwd_picks_the_default_project(tmp_path):
    folder = tmp_path / "Billing-API"
    folder.mkdir()
    with running_server(server_env(tmp_path, ALETHEIA_CWD=str(folder)), tmp_path) as server:
        server.initialize()
        assert text_of(server.call(1, "save_memory", {"text": "x"})) == (
            "Saved as #1 in billing-api."
        )
        context = text_of(server.call(2, "session_start_context", {}))
        assert "\n# Memory for billing-api\n" in context
        assert server.close() == 0


def test_aletheia_cwd_inside_a_git_work_tree_uses_the_tree_name(tmp_path):
    (tmp_path / "storefront" / ".git").mkdir(parents=True)
    nested = tmp_path / "storefront" / "src" / "cart"
    nested.mkdir(parents=True)
    with running_server(server_env(tmp_path, ALETHEIA_CWD=str(nested)), tmp_path) as server:
        assert text_of(server.call(1, "save_memory", {"text": "x"})) == (
            "Saved as #1 in storefront."
        )
        assert server.close() == 0


def test_aletheia_tool_names_the_caller_over_client_info(tmp_path):
    env = server_env(tmp_path, ALETHEIA_TOOL="codex")
    with running_server(env, tmp_path) as server:
        server.initialize(name="claude-code")
        server.call(1, "save_memory", {"text": "who wrote this"})
        assert server.close() == 0
    assert [row[2] for row in memory_rows(tmp_path / "data" / "aletheia.db")] == ["codex"]


def test_claude_code_like_trace_probes_discover_then_initializes_with_2025_11_25(tmp_path):
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": "server-discover-probe-1",
                "method": "server/discover",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {
                            "name": "claude-code",
                            "version": "2.1.332",
                        },
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        )
        probe = server.read()
        assert probe["id"] == "server-discover-probe-1"
        assert "2026-07-28" in probe["result"]["supportedVersions"]
        init = server.ask(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"roots": {}, "elicitation": {}},
                    "clientInfo": {"name": "claude-code", "version": "2.1.332"},
                },
            }
        )
        assert init["id"] == 0
        assert init["result"]["protocolVersion"] == "2025-11-25"
        assert init["result"]["serverInfo"]["name"] == "aletheia"
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = server.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert listed["id"] == 1  # nothing was sent for the notification in between
        assert len(listed["result"]["tools"]) == 13
        saved = server.call(2, "save_memory", {"text": "Staging deploys need the VPN"})
        assert saved == {
            "content": [{"type": "text", "text": "Saved as #1 in shop."}],
            "isError": False,
        }
        found = text_of(server.call(3, "search", {"query": "staging VPN"}))
        assert re.search(r"#1 \d{4}-\d\d-\d\d \[note\] Staging deploys need the VPN", found)
        assert server.close() == 0
    assert [row[2] for row in memory_rows(tmp_path / "data" / "aletheia.db")] == ["claude-code"]


def recorded_repositories(tmp_path: Path, **extra: str) -> list[tuple[str, str]]:
    """The repositories recorded by a server started (and ended) in ``shop/src``."""
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "src").mkdir()
    env = server_env(tmp_path, ALETHEIA_CWD=str(tmp_path / "shop" / "src"), **extra)
    done = subprocess.run([str(SERVER)], input=b"", env=env, capture_output=True, timeout=WAIT * 2)
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(tmp_path / "data" / "aletheia.db")
    try:
        return db.execute("SELECT path, project FROM repositories").fetchall()
    finally:
        db.close()


def test_a_server_started_inside_a_work_tree_records_its_repository(tmp_path: Path) -> None:
    assert recorded_repositories(tmp_path) == [(str((tmp_path / "shop").resolve()), "shop")]


def test_an_excluded_project_is_not_recorded(tmp_path: Path) -> None:
    assert recorded_repositories(tmp_path, ALETHEIA_EXCLUDE="shop") == []
