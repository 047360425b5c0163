"""A real hub process on 127.0.0.1 and plain HTTP calls to it."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia_mem.clock import system_clock
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.storage.open import open_hub_store

WAIT_SECONDS = 10.0
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "hub-test", "version": "1"},
}


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


def uid(name: str) -> str:
    """A uid as a store makes one (32 lowercase hex digits), named for a test."""
    return hashlib.sha256(name.encode()).hexdigest()[:32]


def store_of(token: str) -> str:
    """A store id of the token's own: a store syncs with one token."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


@dataclass
class Hub:
    url: str
    db: Path | str  # a SQLite file, or a PostgreSQL URL
    process: subprocess.Popen[bytes]
    ca_file: str | None = None
    _ssl: ssl.SSLContext | None = field(default=None, repr=False)
    log: queue.Queue[str] = field(default_factory=queue.Queue, repr=False)  # its stderr lines

    def token(self, scope: str, projects: tuple[str, ...] | None, name: str) -> str:
        """A new token, made in the hub's store as `mcp-link create` does."""
        store = open_hub_store(self.db)
        try:
            secret, _ = create_token(store, system_clock, scope=scope, projects=projects, name=name)
        finally:
            store.close()
        return secret

    def push(self, token: str, records: list[dict[str, Any]]) -> Reply:
        """Push ``records`` as the token's own store (``store_of``) made them."""
        origin = store_of(token)
        own = [{**record, "v": [record["v"][0], origin]} for record in records]
        return self.post("/sync/push", {"store_id": origin, "records": own}, token)

    def post(
        self,
        path: str,
        body: Any,
        token: str | None = None,
        session: str | None = None,
    ) -> Reply:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if session is not None:
            headers["Mcp-Session-Id"] = session
        request = urllib.request.Request(  # noqa: S310  (the hub's own http(s) URL)
            self.url + path, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        if self._ssl is None and self.ca_file is not None:
            self._ssl = ssl.create_default_context(cafile=self.ca_file)
        try:
            with urllib.request.urlopen(  # noqa: S310
                request, timeout=WAIT_SECONDS, context=self._ssl
            ) as answer:
                raw = answer.read()
                status, found = answer.status, dict(answer.headers.items())
        except urllib.error.HTTPError as error:
            raw, status, found = error.read(), error.code, dict(error.headers.items())
        lowered = {key.lower(): value for key, value in found.items()}
        return Reply(status, lowered, json.loads(raw) if raw else None)

    def initialize(self, token: str) -> str:
        reply = self.post(
            "/mcp",
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS},
            token,
        )
        assert reply.status == 200, reply.body
        return reply.headers["mcp-session-id"]

    def statuses_until_refused(
        self,
        body: Any,
        token: str,
        session: str | None = None,
        seconds: float = 2.0,
        refused: int = 401,
    ) -> tuple[list[int], float]:
        """POST ``body`` every 50 ms until a ``refused`` status (or ``seconds`` pass): the
        statuses seen, and the seconds from the first POST to the refusal (a revocation's
        delay, at most). The pause keeps a token's polls well under its 60 requests a minute."""
        begun, statuses = time.monotonic(), []
        while time.monotonic() - begun < seconds:
            statuses.append(self.post(path="/mcp", body=body, token=token, session=session).status)
            if statuses[-1] == refused:
                break
            time.sleep(0.05)
        return statuses, time.monotonic() - begun

    def call_tool(self, token: str, session: str, name: str, **arguments: Any) -> tuple[str, bool]:
        reply = self.post(
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            },
            token,
            session,
        )
        assert reply.status == 200, reply.body
        result = reply.body["result"]
        return result["content"][0]["text"], result["isError"]


def _read_lines(stream: Any, lines: queue.Queue[str]) -> None:
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode("utf-8", "replace"))


@contextmanager
def running_hub(
    db: Path | str,
    *extra: str,
    ca_file: str | None = None,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[Hub]:
    """``aletheia-sync`` on a free port; yields once it printed its URL; stopped at the end.

    ``command`` replaces ``aletheia-sync --hub-db DB`` (e.g. ``aletheia hub`` on its default
    store, which must then be ``db``); ``env`` adds to the environment.
    """
    argv = command or [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", str(db)]
    process = subprocess.Popen(
        [*argv, "--port", "0", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "ALETHEIA_CWD": str(Path(db).parent), **(env or {})},
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process.stderr, lines), daemon=True)
    reader.start()
    try:
        url = None
        while url is None:
            line = lines.get(timeout=WAIT_SECONDS)
            found = re.search(r"listening on (https?://\S+)", line)
            url = found.group(1) if found else None
        yield Hub(url, db, process, ca_file, log=lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=WAIT_SECONDS)
        reader.join(timeout=WAIT_SECONDS)
        if process.stderr is not None:
            process.stderr.close()


STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def stateless_post(hub: Hub, token: str | None, method: str, **params: Any) -> tuple[int, Any]:
    """One stateless POST with the headers a 2026-07-28 client sends."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**params, "_meta": STATELESS_META},
    }
    request = urllib.request.Request(  # noqa: S310  (the hub's own URL)
        hub.url + "/mcp", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:  # noqa: S310
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
