"""A server's cap on open connections fits its open-file limit: raised where the system allows,
else lowered, so that connections past it get a 503 rather than failing to be accepted (macOS
starts a process at 256 open files; aletheia-server and the hub allow 2,000 connections)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.e2e.http_server import SERVER, exchange_raw, running_server

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
        deadline = time.monotonic() + 20  # the server sees the 200 closes as they arrive
        while (status := server.request("GET", "/api/rules").status) == 503:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert status == 200
        assert server.process.poll() is None
