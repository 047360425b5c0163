"""``aletheia-server --workers N``: forked workers share the port, the store and the sessions;
the parent prints the ready line, replaces a dead worker and stops them all."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.http_server import (
    MCP_HEADERS,
    Reply,
    RunningServer,
    initialize_message,
    running_server,
)

pytestmark = pytest.mark.e2e

WAIT_S = 15.0


def children_of(pid: int) -> set[int]:
    """Live child processes of ``pid``, from /proc."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def socket_inode(server_port: int, client_port: int) -> str:
    """The inode of the server's end of the loopback connection from ``client_port``."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text(encoding="utf-8").splitlines()[1:]:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if int(local.rsplit(":", 1)[1], 16) == server_port and (
                int(remote.rsplit(":", 1)[1], 16) == client_port
            ):
                return fields[9]
    raise AssertionError(f"no connection from port {client_port}")


def worker_of(server: RunningServer, conn: http.client.HTTPConnection) -> int:
    """The worker process that serves this (open, already used) connection."""
    assert conn.sock is not None
    wanted = f"socket:[{socket_inode(server.port, conn.sock.getsockname()[1])}]"
    for pid in children_of(server.process.pid):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) == wanted:
                    return pid
    raise AssertionError("no worker holds the connection")


def post(conn: http.client.HTTPConnection, message: Any, session: str | None = None) -> Reply:
    """One POST to /mcp on a kept-alive connection."""
    headers = dict(MCP_HEADERS, **({"Mcp-Session-Id": session} if session else {}))
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    found = {name.lower(): value for name, value in response.getheaders()}
    return Reply(response.status, found, response.read())


def connect(server: RunningServer) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT_S)


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}


@needs_proc
def test_connections_are_handed_to_the_workers_in_turn(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "3")) as server:
        conns = [connect(server) for _ in range(9)]
        try:
            for conn in conns:  # all at once, as a burst of clients would
                conn.connect()
            for conn in conns:
                assert post(conn, initialize_message()).status == 200
            holders = [worker_of(server, conn) for conn in conns]
            workers = children_of(server.process.pid)
        finally:
            for conn in conns:
                conn.close()
    assert sorted(holders[:3]) == sorted(workers)
    assert holders == holders[:3] * 3


@needs_proc
def test_two_workers_share_sessions_and_the_store(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as server:
        first, second = connect(server), connect(server)
        try:
            begun = post(first, initialize_message())
            session = begun.header("mcp-session-id")
            assert begun.status == 200 and session
            assert post(second, PING, session).status == 200
            assert worker_of(server, first) != worker_of(server, second)
            saved = post(second, tool_call("save_memory", text="workers share one store"), session)
            assert saved.json()["result"]["isError"] is False
            found = post(first, tool_call("search", query="workers share"), session)
            assert "workers share one store" in found.json()["result"]["content"][0]["text"]
            first.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
            ended = first.getresponse()
            ended.read()
            assert ended.status == 204
            assert post(second, PING, session).status == 404
        finally:
            first.close()
            second.close()


@needs_proc
def test_sigterm_stops_every_worker_and_leaves_a_clean_store(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "3")) as server:
        workers = children_of(server.process.pid)
        assert len(workers) == 3
        session = server.initialize()
        assert server.call_tool(session, "save_memory", {"text": "kept"})["isError"] is False
        assert server.stop(signal.SIGTERM) == 0
    assert not any(alive(pid) for pid in workers)
    assert not (tmp_path / "data" / "aletheia.db-wal").exists()


@needs_proc
def test_a_dead_worker_is_replaced(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as server:
        workers = children_of(server.process.pid)
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: len(children_of(server.process.pid) - {victim}) == 2, "a new worker")
        for _ in range(10):  # whichever worker answers
            session = server.initialize()
            assert (
                server.post_mcp({"jsonrpc": "2.0", "id": 1, "method": "ping"}, session).status
                == 200
            )


@needs_proc
def test_workers_stop_when_the_parent_is_killed(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as server:
        workers = children_of(server.process.pid)
        server.process.kill()
        server.process.wait(timeout=WAIT_S)
        wait_for(lambda: not any(alive(pid) for pid in workers), "the orphaned workers to stop")


@needs_proc
def test_one_worker_serves_in_the_main_process(tmp_path: Path) -> None:
    with running_server(tmp_path, env={"ALETHEIA_WORKERS": "1"}) as server:
        assert children_of(server.process.pid) == set()
        assert server.initialize()
