"""A real ``aletheia-server`` process on a free 127.0.0.1 port, and a small HTTP client for it.

Every wait is bounded; the process is stopped (SIGTERM, then SIGKILL) by the context manager.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = Path(sys.executable).parent / "aletheia-server"
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
LISTENING = re.compile(r"^Aletheia listening on (http://(?:127\.0\.0\.1|0\.0\.0\.0):(\d+))$")
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROTOCOL_VERSION = "2025-11-25"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class RunningServer:
    """The process, its port, and what it wrote on stderr."""

    process: subprocess.Popen[bytes]
    port: int
    url: str
    stderr: queue.Queue[str] = field(default_factory=queue.Queue)
    lines: list[str] = field(default_factory=list)

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return Reply(
                response.status,
                {name.lower(): value for name, value in response.getheaders()},
                response.read(),
            )
        finally:
            conn.close()

    def post_mcp(
        self, payload: Any, session: str | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        sent = dict(MCP_HEADERS)
        if session is not None:
            sent["Mcp-Session-Id"] = session
        sent.update(headers or {})
        body = payload if isinstance(payload, bytes | str) else json.dumps(payload)
        return self.request("POST", "/mcp", body, sent)

    def initialize(self, headers: dict[str, str] | None = None, client: str = "pytest") -> str:
        """A fresh MCP session (initialize + notifications/initialized); returns its id."""
        reply = self.post_mcp(initialize_message(client=client), headers=headers)
        assert reply.status == 200, reply.body
        session = reply.header("mcp-session-id")
        assert session
        done = self.post_mcp(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, session, headers
        )
        assert done.status == 202, done.body
        return session

    def call_tool(
        self, session: str, name: str, arguments: dict[str, Any], request_id: int = 1
    ) -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        reply = self.post_mcp(message, session)
        assert reply.status == 200, reply.body
        result: dict[str, Any] = reply.json()["result"]
        return result

    def api(self, method: str, path: str, body: Any = None, key: str | None = None) -> Reply:
        headers = {"Accept": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        return self.request(method, path, data, headers)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the process and wait (bounded) for its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=STOP_TIMEOUT_S)


def initialize_message(request_id: Any = 0, client: str = "pytest") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def server_env(data_dir: Path, cwd: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(data_dir), ALETHEIA_CWD=str(cwd))
    env.update(extra or {})
    return env


def _pump(stream: Any, lines: queue.Queue[str]) -> None:
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
    stream.close()


@contextmanager
def running_server(
    root: Path,
    *,
    env: dict[str, str] | None = None,
    args: Sequence[str] = ("--port", "0"),
    command: Sequence[str] | None = None,
) -> Iterator[RunningServer]:
    """Start the server in ``root`` (project folder ``root/shop``) and wait for its URL."""
    cwd = root / "shop"
    cwd.mkdir(parents=True, exist_ok=True)
    argv = [*(command or [str(SERVER)]), *args]
    process = subprocess.Popen(
        argv, env=server_env(root / "data", cwd, env), cwd=cwd, stderr=subprocess.PIPE
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True).start()
    try:
        server = _wait_until_listening(process, lines)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT_S)


def _wait_until_listening(
    process: subprocess.Popen[bytes], lines: queue.Queue[str]
) -> RunningServer:
    deadline = time.monotonic() + START_TIMEOUT_S
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            if process.poll() is not None:
                break
            continue
        seen.append(line)
        match = LISTENING.match(line)
        if match:
            return RunningServer(process, int(match.group(2)), match.group(1), lines, seen)
    raise AssertionError(f"aletheia-server did not start; stderr: {seen}")


def padded_request(request_line: bytes, size: int, body: bytes = b"") -> bytes:
    """``request_line`` with about ``size`` bytes of padding headers, closing its connection."""
    padding = b"".join(b"X-Pad-%d: %s\r\n" % (n, b"p" * 990) for n in range(size // 1000))
    length = b"Content-Length: %d\r\n" % len(body) if body else b""
    return (
        request_line
        + b"\r\nHost: 127.0.0.1\r\n"
        + padding
        + length
        + b"Connection: close\r\n\r\n"
        + body
    )


def exchange_raw(port: int, request: bytes, timeout: float = 30.0) -> bytes:
    """Send ``request`` at once on a new connection to 127.0.0.1 and read until it closes: what
    the server answered (it may close before reading the whole request)."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received = b""
    try:
        with suppress(OSError):  # the server closed before reading it all
            conn.sendall(request)
        with suppress(ConnectionResetError):
            while chunk := conn.recv(65536):
                received += chunk
    finally:
        conn.close()
    return received
