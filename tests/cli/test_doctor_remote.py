"""doctor calls a remote (``--http``) entry as a client would: ``initialize`` then ``tools/list``
at its URL, with the bearer token from the variable (or the header) the entry names, and says
whether Aletheia answers, nothing answers, the token is missing or refused, or the URL is no MCP
server; a failure makes the exit code 1, and the token is never shown. Against a real
``aletheia-server`` and a real hub (``aletheia-sync``) on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem import __version__
from aletheia_mem.cli.doctor_probe import SERVER_NAME
from aletheia_mem.tools.registry import TOOLS
from tests.cli.conftest import Invoke, Workspace, json_of
from tests.e2e.http_server import RunningServer, running_server
from tests.hub.helpers import running_hub

KEY = "k3y-Of-The-Server-0123456789abcdef"
ANSWERS = f"Aletheia {__version__} answers ({len(TOOLS)} tools)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """aletheia-server on a free port, every request needing ``Authorization: Bearer KEY``."""
    root = tmp_path_factory.mktemp("server")
    with running_server(root, env={"ALETHEIA_API_KEY": KEY}) as started:
        yield started


def _doctor(run: Invoke, host: str, scope: str = "user") -> tuple[int, dict[str, Any], str]:
    """doctor's exit code, its check of ``host``'s entry at ``scope``, and all it printed."""
    result = run("doctor", "--json")
    [check] = [c for c in json_of(result)["hosts"] if (c["host"], c["scope"]) == (host, scope)]
    text = run("doctor")
    assert text.exit_code == result.exit_code
    return result.exit_code, check, result.stdout + text.stdout + text.stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_no_server_at_the_address_is_broken(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    run("install", "cursor", "--write", "--http", url, "--token-env", "T")
    code, check, _ = _doctor(run, "cursor")
    assert (code, check["status"]) == (1, "broken")
    assert check["detail"] == (
        f"remote {url}: cannot be reached: connection refused (is the server running?)"
    )


def test_the_token_missing_refused_and_right(
    run: Invoke, workspace: Workspace, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    run("install", "cursor", "--write", "--http", server.mcp_url, "--token-env", "T")
    monkeypatch.delenv("T", raising=False)
    code, check, said = _doctor(run, "cursor")
    assert (code, check["status"]) == (1, "broken")
    assert check["detail"] == (
        f"remote {server.mcp_url}: the server wants a token (401): the entry takes it from T,"
        " not set here (the tool needs it set in its own environment too)"
    )
    monkeypatch.setenv("T", "not-the-key")
    code, check, said = _doctor(run, "cursor")
    assert (code, check["status"]) == (1, "broken")
    assert check["detail"] == (
        f"remote {server.mcp_url}: the server refused the token from $T (401): it is wrong or"
        " revoked"
    )
    assert "not-the-key" not in said
    monkeypatch.setenv("T", KEY)
    code, check, said = _doctor(run, "cursor")
    assert (code, check["status"], check["detail"]) == (
        0,
        "ok",
        f"remote {server.mcp_url}: {ANSWERS}",
    )
    assert KEY not in said


def test_a_token_written_in_the_entry_is_sent_and_not_shown(
    run: Invoke, workspace: Workspace, server: RunningServer
) -> None:
    run("save", "a first memory")
    path = workspace.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    entry = {"url": server.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}}
    path.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    code, check, said = _doctor(run, "cursor")
    assert (code, check["status"]) == (0, "ok")
    assert KEY not in said
    entry["headers"] = {"Authorization": "Bearer wrong"}
    path.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    code, check, _ = _doctor(run, "cursor")
    assert (code, check["detail"]) == (
        1,
        f"remote {server.mcp_url}: the server refused the token from its Authorization header"
        " (401): it is wrong or revoked",
    )


def test_codex_sends_its_bearer_token_env_var(
    run: Invoke, workspace: Workspace, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    run("install", "codex", "--write", "--http", server.mcp_url, "--token-env", "CODEX_T")
    monkeypatch.setenv("CODEX_T", KEY)
    code, check, _ = _doctor(run, "codex")
    assert (code, check["status"], check["detail"]) == (
        0,
        "ok",
        f"remote {server.mcp_url}: {ANSWERS}",
    )


def test_an_address_that_is_not_an_mcp_server(
    run: Invoke, workspace: Workspace, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    url = f"{server.url}/nothing"
    run("install", "cursor", "--write", "--http", url, "--token-env", "T")
    monkeypatch.setenv("T", KEY)
    code, check, _ = _doctor(run, "cursor")
    assert (code, check["status"], check["detail"]) == (
        1,
        "broken",
        f"remote {url}: not an MCP server: it answers initialize with HTTP 404",
    )


def test_a_server_that_never_answers_is_given_up_on(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aletheia_mem.cli.doctor_remote.REMOTE_CHECK_SECONDS", 1.0)
    run("save", "a first memory")
    with socket.socket() as silent:  # takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        run("install", "cursor", "--write", "--http", url)
        code, check, _ = _doctor(run, "cursor")
    assert (code, check["status"], check["detail"]) == (
        1,
        "broken",
        f"remote {url}: no answer within 1 s",
    )


def test_a_hub_answers_with_its_token(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("mcp", ("shop",), "doctor-test")
        url = f"{hub.url}/mcp"
        run("install", "claude-code", "--write", "--http", url, "--token-env", "HUB_TOKEN")
        monkeypatch.setenv("HUB_TOKEN", token)
        code, check, said = _doctor(run, "claude-code")
    assert (code, check["status"]) == (0, "ok"), check
    assert check["detail"].startswith(f"remote {url}: Aletheia {__version__} answers (")
    assert token not in said


def test_a_projects_remote_entry_is_not_called(run: Invoke, workspace: Workspace) -> None:
    """A cloned repository's file would choose where doctor sends this environment's tokens."""
    run("save", "a first memory")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        run("install", "cursor", "--scope", "project", "--write", "--http", url, "--token-env", "T")
        code, check, _ = _doctor(run, "cursor", "project")
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    assert (code, check["status"]) == (0, "remote")
    assert check["detail"] == (
        f"remote {url}: not called: a project's remote entry; doctor sends this environment's"
        " tokens only where your own files say (check it by hand: docs/troubleshooting.md)"
    )


class _Fake:
    """A server on 127.0.0.1 answering every POST with ``answer(handler)``."""

    def __init__(self, answer: Any) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.received = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> _Fake:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


LITERAL = "LITERALTOK_9f8e7d6c5b4a"


def test_a_servers_error_message_is_quoted_without_the_token_controls_or_length(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON-RPC error echoing the Authorization header, with an OSC title sequence, CR LF
    (a forged doctor row) and 3,000 characters: quoted masked, escaped and cut short."""

    def answer(handler: Any) -> None:
        said = (
            f"auth was {handler.headers['Authorization']}\x1b]0;pwn\x07\r\n"
            "ok  cursor  user  fine" + "x" * 3000
        )
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": said}})
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body.encode())

    run("save", "a first memory")
    with _Fake(answer) as fake:
        run("install", "cursor", "--write", "--http", fake.url, "--token-env", "T")
        monkeypatch.setenv("T", LITERAL)
        code, check, said = _doctor(run, "cursor")
    assert (code, check["status"]) == (1, "broken")
    assert LITERAL not in said
    detail = check["detail"]
    prefix = f"remote {fake.url}: the server refused initialize: "
    assert detail.startswith(prefix + "auth was ***\\x1b]0;pwn\\x07\\r\\nok  cursor")
    assert len(detail) == len(prefix) + 200 and detail.endswith("x…")
    assert "\x1b" not in said and "\x07" not in said and "\r" not in said


def test_a_server_trickling_keep_alives_is_given_up_on_at_the_deadline(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline is for the whole check: a ``: ping`` every 0.2 s does not keep it."""
    monkeypatch.setattr("aletheia_mem.cli.doctor_remote.REMOTE_CHECK_SECONDS", 1.0)

    def answer(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        for _ in range(100):  # 20 s
            try:
                handler.wfile.write(b": ping\n\n")
                handler.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    run("save", "a first memory")
    with _Fake(answer) as fake:
        run("install", "cursor", "--write", "--http", fake.url)
        started = time.monotonic()
        result = run("doctor", "--json")
        took = time.monotonic() - started
    [check] = [c for c in json_of(result)["hosts"] if c["host"] == "cursor"]
    assert check["detail"] == f"remote {fake.url}: no answer within 1 s"
    assert took < 6, took


def test_an_event_stream_held_open_after_the_reply_is_read_only_to_the_reply(
    run: Invoke, workspace: Workspace
) -> None:
    """A server may keep its event stream open after the reply (to send more events): doctor
    reads up to the reply's event and goes on, while the server still holds each stream."""
    release = threading.Event()
    holding: list[str] = []

    def answer(handler: Any) -> None:
        sent = json.loads(handler.received)
        if "id" not in sent:  # notifications/initialized
            handler.send_response(202)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if sent["method"] == "initialize":
            info = {"name": SERVER_NAME, "version": __version__}
            result: dict[str, Any] = {"protocolVersion": "2025-11-25", "serverInfo": info}
        else:
            result = {"tools": [{"name": tool.name} for tool in TOOLS]}
        reply = {"jsonrpc": "2.0", "id": sent["id"], "result": result}
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Mcp-Session-Id", "s-1")
        handler.end_headers()
        other = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
        holding.append(sent["method"])  # before the reply: doctor may be done as it arrives
        for message in (other, {**reply, "id": 99}, reply):  # the reply to another id: not it
            handler.wfile.write(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
        handler.wfile.flush()
        release.wait(60)  # the stream stays open until the test has doctor's answer
        holding.remove(sent["method"])

    run("save", "a first memory")
    try:
        with _Fake(answer) as fake:
            run("install", "cursor", "--write", "--http", fake.url)
            result = run("doctor", "--json")
            still_held = sorted(holding)
            release.set()
    finally:
        release.set()
    [check] = [c for c in json_of(result)["hosts"] if c["host"] == "cursor"]
    assert (check["status"], check["detail"]) == ("ok", f"remote {fake.url}: {ANSWERS}")
    assert still_held == ["initialize", "tools/list"]
