"""``aletheia-server --workers N``: forked workers share the port, the store and the sessions;
the parent prints the ready line, replaces a dead worker and stops them all."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.http_server import RunningServer, running_server

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


@contextmanager
def only(server: RunningServer, worker: int) -> Iterator[None]:
    """Freeze every other worker, so that new connections can only reach ``worker``."""
    frozen = children_of(server.process.pid) - {worker}
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


@needs_proc
def test_two_workers_share_sessions_and_the_store(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as server:
        first, second = sorted(children_of(server.process.pid))
        with only(server, first):
            session = server.initialize()
            saved = server.call_tool(session, "save_memory", {"text": "workers share one store"})
            assert saved["isError"] is False
        with only(server, second):
            found = server.call_tool(session, "search", {"query": "workers share"})
            assert "workers share one store" in found["content"][0]["text"]
            ended = server.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
            assert ended.status == 204
        with only(server, first):
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            assert server.post_mcp(ping, session).status == 404


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
