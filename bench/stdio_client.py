"""A minimal newline-delimited JSON-RPC client for the real ``aletheia-mcp`` process.

It speaks raw JSON lines over pipes (no SDK) so that the figures measure the server, and every
read waits at most a bounded time.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"
READ_TIMEOUT_S = 30.0


def server_command() -> list[str]:
    """The ``aletheia-mcp`` console script installed next to this Python."""
    script = Path(sys.executable).parent / "aletheia-mcp"
    if not script.exists():
        raise SystemExit(f"aletheia-mcp not found next to {sys.executable}; run `make` first.")
    return [str(script)]


def server_env(data_dir: Path, cwd: Path) -> dict[str, str]:
    """The environment of a server on a benchmark store.

    ``PYTHONDONTWRITEBYTECODE`` is dropped so that, as on a user's machine, the first start
    leaves up-to-date ``.pyc`` files and later starts do not compile the sources again.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ALETHEIA_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(ALETHEIA_DATA_DIR=str(data_dir), ALETHEIA_CWD=str(cwd), ALETHEIA_TOOL="bench")
    if "ALETHEIA_SEMANTIC" in os.environ:  # the default is the core, lexical search
        env["ALETHEIA_SEMANTIC"] = os.environ["ALETHEIA_SEMANTIC"]
    return env


def request_line(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def initialize_line(request_id: int = 0) -> bytes:
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "aletheia-bench", "version": "1"},
    }
    return request_line(request_id, "initialize", params)


class LineReader:
    """Reads whole lines from a pipe, each within a deadline."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = bytearray()

    def read_line(self, timeout: float = READ_TIMEOUT_S) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            remaining = deadline - time.monotonic()
            ready = select.select([self._fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
            if not ready:
                raise TimeoutError(f"no reply from aletheia-mcp within {timeout} s")
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise EOFError("aletheia-mcp closed its stdout")
            self._buffer += chunk


class StdioServer:
    """One running ``aletheia-mcp`` process; use it as a context manager."""

    def __init__(self, data_dir: Path, cwd: Path, extra_env: dict[str, str] | None = None) -> None:
        self._log = (data_dir / "server.log").open("ab")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            server_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**server_env(data_dir, cwd), **(extra_env or {})},
            cwd=cwd,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._reader = LineReader(self.process.stdout)
        self._next_id = 1

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def receive(self) -> dict[str, Any]:
        reply: dict[str, Any] = json.loads(self._reader.read_line())
        return reply

    def initialize(self) -> dict[str, Any]:
        self.send(initialize_line())
        reply = self.receive()
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        return reply

    def call_line(self, name: str, arguments: dict[str, Any]) -> bytes:
        line = request_line(self._next_id, "tools/call", {"name": name, "arguments": arguments})
        self._next_id += 1
        return line

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one tool and wait for its reply; the text, or an error if it failed."""
        self.send(self.call_line(name, arguments))
        return tool_text(self.receive())

    def pipeline(self, lines: Sequence[bytes]) -> list[dict[str, Any]]:
        """Send every line from a writer thread while reading the replies in order."""
        failure: list[BaseException] = []

        def write_all() -> None:
            try:
                for line in lines:
                    self._stdin.write(line)
                self._stdin.flush()
            except BaseException as error:  # reported by the reading side
                failure.append(error)

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        try:
            replies = [json.loads(self._reader.read_line()) for _ in lines]
        finally:
            writer.join(READ_TIMEOUT_S)
        if failure:
            raise failure[0]
        return replies

    def close(self) -> None:
        try:
            if self.process.stdin is not None and not self.process.stdin.closed:
                self.process.stdin.close()
            self.process.wait(timeout=5)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.process.kill()
            self.process.wait(timeout=5)
        finally:
            if self.process.stdout is not None:
                self.process.stdout.close()
            self._log.close()


def tool_text(reply: dict[str, Any]) -> str:
    """The text of a tools/call reply; raises when the call failed."""
    if "error" in reply:
        raise RuntimeError(f"JSON-RPC error: {reply['error']}")
    result = reply["result"]
    text: str = result["content"][0]["text"]
    if result.get("isError"):
        raise RuntimeError(f"tool error: {text}")
    return text
