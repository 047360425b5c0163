"""How ``aletheia-server``, ``aletheia-sync`` and ``aletheia-mcp`` stop: SIGINT or SIGTERM while a
request is half sent, a second signal during the stop, signals repeated until the process is
gone, the parent killed. Each stops within a few seconds, with exit code 0, no traceback and no
worker left behind. (Saves in flight: ``test_shutdown_saves.py``.)"""

from __future__ import annotations

import json
import queue
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.http_server import initialize_message, running_server, server_env
from tests.hub.helpers import running_hub
from tests.stores import store_target

pytestmark = pytest.mark.e2e

GRACE_S = 5.0  # uvicorn's graceful timeout in runner.py
EXIT_S = 15.0  # bound on every wait for an exit: the grace and a slow machine's margin
SERVERS = ["server", "server-2-workers", "hub-sqlite", "hub-postgresql"]
MCP = Path(sys.executable).parent / "aletheia-mcp"


class Served:
    """A running server process: its pid, port, bearer token and stderr lines."""

    def __init__(
        self, process: subprocess.Popen[bytes], port: int, log: queue.Queue[str], token: str
    ) -> None:
        self.process, self.port, self.log, self.token = process, port, log, token

    def stderr(self) -> str:
        """Everything written on stderr once the process has ended."""
        lines = []
        while True:
            try:
                lines.append(self.log.get(timeout=1.0))
            except queue.Empty:
                return "\n".join(lines)


@contextmanager
def serving(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Iterator[Served]:
    """``aletheia-server`` (one process or two workers) or ``aletheia-sync`` (on a SQLite file
    or a PostgreSQL schema) on a free port."""
    if kind.startswith("hub-"):
        hub_db = store_target(request, kind.removeprefix("hub-"), tmp_path, "hub")
        with running_hub(hub_db, "--rate-limit", "0") as hub:
            token = hub.token("sync", None, "operator")
            yield Served(hub.process, int(hub.url.rsplit(":", 1)[1]), hub.log, token)
        return
    workers = "2" if kind.endswith("workers") else "1"
    with running_server(tmp_path, args=("--port", "0", "--workers", workers)) as server:
        yield Served(server.process, server.port, server.stderr, "")


def child_pids(pid: int) -> list[int]:
    found = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False
    )
    return [int(word) for word in found.stdout.split()]


def is_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(is_running(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def start_upload(served: Served) -> socket.socket:
    """A POST to /mcp whose headers are sent and whose body is only begun: a slow client."""
    body = json.dumps(initialize_message()).encode()
    auth = f"Authorization: Bearer {served.token}\r\n" if served.token else ""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n{auth}"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    conn = socket.create_connection(("127.0.0.1", served.port), timeout=EXIT_S)
    conn.sendall(head + body[:10])
    time.sleep(0.5)  # the server reads the headers and starts the request
    return conn


def stop_and_wait(process: subprocess.Popen[bytes], *signals: int) -> tuple[int, float]:
    """Send ``signals`` 0.2 s apart; the exit code and the seconds from the first to the exit."""
    begun = time.monotonic()
    for n, sig in enumerate(signals):
        if n:
            time.sleep(0.2)
        process.send_signal(sig)
    code = process.wait(timeout=EXIT_S)
    return code, time.monotonic() - begun


@pytest.mark.parametrize("kind", SERVERS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_with_a_request_half_sent_ends_without_a_traceback(
    request: pytest.FixtureRequest, kind: str, sig: int, tmp_path: Path
) -> None:
    with serving(request, kind, tmp_path) as served:
        workers = child_pids(served.process.pid)
        upload = start_upload(served)
        try:
            code, _ = stop_and_wait(served.process, sig)
        finally:
            upload.close()
        stderr = served.stderr()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert gone_within(workers, EXIT_S)


@pytest.mark.parametrize("kind", SERVERS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_ends_the_wait_for_a_request_half_sent(
    request: pytest.FixtureRequest, kind: str, sig: int, tmp_path: Path
) -> None:
    with serving(request, kind, tmp_path) as served:
        upload = start_upload(served)
        try:
            code, seconds = stop_and_wait(served.process, sig, sig)
        finally:
            upload.close()
        stderr = served.stderr()
    assert code == 0, stderr
    assert seconds < GRACE_S - 1, stderr  # not the whole graceful wait
    assert "Traceback" not in stderr, stderr


def signal_until_gone(process: subprocess.Popen[bytes], sig: int) -> int:
    """Send ``sig`` every 20 ms until the process ends (so one lands during its store's close);
    its exit code."""
    deadline = time.monotonic() + EXIT_S
    while process.poll() is None and time.monotonic() < deadline:
        process.send_signal(sig)
        time.sleep(0.02)
    return process.wait(timeout=EXIT_S)


@pytest.mark.parametrize("kind", SERVERS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_repeated_until_the_server_ends_leave_exit_code_0_and_no_traceback(
    request: pytest.FixtureRequest, kind: str, sig: int, tmp_path: Path
) -> None:
    with serving(request, kind, tmp_path) as served:
        workers = child_pids(served.process.pid)
        code = signal_until_gone(served.process, sig)
        stderr = served.stderr()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert gone_within(workers, EXIT_S)


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", "2")) as server:
        workers = child_pids(server.process.pid)
        assert len(workers) == 2
        server.process.kill()
        server.process.wait(timeout=EXIT_S)
        assert gone_within(workers, EXIT_S)


@contextmanager
def stdio_server(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``aletheia-mcp`` past its greeting and one tool call, so its store is open."""
    project = tmp_path / "shop"
    project.mkdir()
    process = subprocess.Popen(
        [str(MCP)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path / "data", project),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for message in (initialize_message(), call):
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            assert process.stdout.readline()
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=EXIT_S)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def rest_of(process: subprocess.Popen[bytes]) -> str:
    """What an ended process wrote on stderr."""
    assert process.stderr is not None
    return process.stderr.read().decode("utf-8", "replace")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stdio_server_stops_on_a_signal_with_its_store_closed(sig: int, tmp_path: Path) -> None:
    with stdio_server(tmp_path) as process:
        code, _ = stop_and_wait(process, sig)
        stderr = rest_of(process)
    assert code == 0, stderr
    assert not stderr, stderr
    assert not list((tmp_path / "data").glob("*-wal"))  # closed: the WAL checkpointed away


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stdio_server_signalled_until_it_ends_exits_0_without_a_traceback(
    sig: int, tmp_path: Path
) -> None:
    with stdio_server(tmp_path) as process:
        code = signal_until_gone(process, sig)
        stderr = rest_of(process)
    assert code == 0, stderr
    assert not stderr, stderr


def test_stdio_server_ends_when_its_input_closes(tmp_path: Path) -> None:
    with stdio_server(tmp_path) as process:
        assert process.stdin is not None
        process.stdin.close()
        code = process.wait(timeout=EXIT_S)
        stderr = rest_of(process)
    assert code == 0, stderr
    assert not stderr, stderr
    assert not list((tmp_path / "data").glob("*-wal"))


def test_stdio_server_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    """A coding tool killed outright: its pipes close, and the server follows."""
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([{str(MCP)!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    project = tmp_path / "shop"
    project.mkdir()
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        env=server_env(tmp_path / "data", project),
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        parent.kill()
        parent.wait(timeout=EXIT_S)
        assert gone_within([child], EXIT_S)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(timeout=EXIT_S)
        if parent.stdout is not None:
            parent.stdout.close()
