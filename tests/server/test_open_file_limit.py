"""A server's cap on open connections fits its open-file limit: raised where the system allows,
else lowered, so that connections past it get a 503 rather than failing to be accepted (macOS
starts a process at 256 open files; aletheia-server and the hub allow 2,000 connections), and a
burst of them, each turned away with a 503, does not use up the files that are left."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack, suppress
from pathlib import Path

import pytest
import uvicorn
from uvicorn.server import ServerState

from aletheia_mem.server.connections import (
    REFUSED_LINGERING,
    ConnectionLimits,
    GuardedProtocol,
    guarded_protocol,
    raise_open_file_limit,
)
from tests.e2e.http_server import SERVER, RunningServer, exchange_raw, running_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no open-file limit to set")

# Runs the rest of argv with this open-file limit (soft, hard).
_LIMITED = (
    "import os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[2]))); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)
_TOTAL_WITHIN = (
    "import resource; from aletheia_mem.server import connections as c; "
    "print(c.total_within_file_limit(2000), resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
)
_RULES = b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _limited(soft: int, hard: int, *argv: str) -> list[str]:
    return [sys.executable, "-c", _LIMITED, str(soft), str(hard), *argv]


@pytest.mark.parametrize(
    ("soft", "hard", "expected"),
    [
        (256, 4096, "2000 2256"),  # raised to fit 2,000 connections and the rest
        (256, 256, "128 256"),  # cannot be raised: the cap leaves room for the rest
        (100, 100, "1 100"),  # never below one connection
    ],
)
def test_the_cap_follows_the_open_file_limit(soft: int, hard: int, expected: str) -> None:
    argv = _limited(soft, hard, sys.executable, "-c", _TOTAL_WITHIN)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == expected.split()


@pytest.mark.parametrize("workers", [1, 2])
def test_aletheia_server_turns_away_connections_past_what_its_files_allow(
    tmp_path: Path, workers: int
) -> None:
    """With 256 open files and no way to raise them, a worker holds 128 connections: one more
    gets the 503 at once, and the server serves again once they close."""
    command = _limited(256, 256, str(SERVER))
    args = ("--port", "0", "--workers", str(workers))
    with running_server(tmp_path, command=command, args=args) as server, ExitStack() as idle:
        for _ in range(workers * 128 + 20):
            idle.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        turned_away = exchange_raw(server.port, _RULES, timeout=10)
        assert turned_away.startswith(b"HTTP/1.1 503 "), turned_away[:200]
        assert b"Too many connections" in turned_away
        # read as an HTTP client reads it: the body its length says (a length one too many left
        # the client waiting until the server gave up on it: IncompleteRead)
        busy = server.request("GET", "/api/rules")
        assert (busy.status, busy.body) == (503, b"Too many connections; retry in a moment.\r\n")
        idle.close()
        _wait_until_served(server)


def _wait_until_served(server: RunningServer) -> None:
    deadline = time.monotonic() + 20  # the server sees the held connections close as they arrive
    while (status := server.request("GET", "/api/rules").status) == 503:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert status == 200
    assert server.process.poll() is None


def _until_closed(conn: socket.socket) -> str:
    """How the server ended ``conn``: the status it sent, then its close (or what failed)."""
    received, ending = b"", "closed"
    try:
        while chunk := conn.recv(4096):
            received += chunk
    except OSError as error:  # a reset, or the timeout: no close
        ending = type(error).__name__
    return f"{received[9:12].decode() or 'nothing'} then {ending}"


BURST = 600  # past the cap of 128 connections, and the refused ones read at a time, many times


@pytest.mark.parametrize("workers", [1, 2])
def test_a_burst_of_connections_past_the_cap_each_gets_the_503_and_the_server_serves_on(
    tmp_path: Path, workers: int
) -> None:
    """Each turned-away connection was read for up to 2 s, a file each, uncounted: a burst used
    up the files the cap leaves, and uvloop closed the connections it could no longer accept
    with no reply (of 300, 111 got the 503). Now past ``REFUSED_LINGERING`` at a time they are
    closed once the 503 is written. A worker took every connection handed to it at once, and
    dropped those past its files with no reply; it now wires 16 at a time."""
    wanted = workers * 128 + BURST + 200  # this process holds them all, beside its own files
    if raise_open_file_limit(wanted) < wanted:  # macOS starts processes at 256 files
        pytest.skip(f"this test needs {wanted} open files; the hard limit is lower")
    command = _limited(256, 256, str(SERVER))
    args = ("--port", "0", "--workers", str(workers))
    with running_server(tmp_path, command=command, args=args) as server, ExitStack() as held:
        for _ in range(workers * 128):  # the cap at 256 files
            held.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        burst = [
            held.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            for _ in range(BURST)
        ]
        endings = Counter(_until_closed(conn) for conn in burst)
        assert endings == {"503 then closed": BURST}
        assert exchange_raw(server.port, _RULES, timeout=10).startswith(b"HTTP/1.1 503 ")
        held.close()
        _wait_until_served(server)


async def _no_app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("no request gets through a full guard")


async def _turned_away(port: int) -> asyncio.StreamWriter:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 503 ")
    return writer


async def _none_lingering(guarded: type[GuardedProtocol]) -> None:
    while guarded.counts.lingering:  # each is lost once its client's end closes
        await asyncio.sleep(0.01)


async def _count_lingering() -> None:
    guarded = guarded_protocol(ConnectionLimits(per_client=1, total=1))
    config = uvicorn.Config(_no_app, lifespan="off", log_level="warning")
    state = ServerState()
    server = await asyncio.get_running_loop().create_server(
        lambda: guarded(config=config, server_state=state, app_state={}), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    writers: list[asyncio.StreamWriter] = []
    try:
        writers.append((await asyncio.open_connection("127.0.0.1", port))[1])  # the one admitted
        writers += [await _turned_away(port) for _ in range(REFUSED_LINGERING + 20)]
        assert guarded.counts.lingering == REFUSED_LINGERING  # the others closed at once
        for writer in writers[1:]:
            writer.close()
        await asyncio.wait_for(_none_lingering(guarded), 5)
        writers.append(await _turned_away(port))
        assert guarded.counts.lingering == 1  # the budget is free again
    finally:
        for writer in writers:
            writer.close()
        server.close()
        with suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)


def test_turned_away_connections_are_read_up_to_the_budget_which_frees_as_they_close() -> None:
    asyncio.run(_count_lingering())
