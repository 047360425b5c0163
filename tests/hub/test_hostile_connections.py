"""Denial of service before authentication: slow connections, many connections, token guessing,
and a log that a client cannot flood."""

from __future__ import annotations

import contextlib
import http.client
import logging
import re
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aletheia_mem.hub.log_bounds import BoundedRecords
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub

pytestmark = pytest.mark.e2e
PARTIAL = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def _slow(hub: Hub, source: str) -> socket.socket:
    """A connection from ``source`` (another loopback address) that sends half its headers."""
    address = urlsplit(hub.url)
    conn = socket.create_connection(
        (address.hostname, address.port), timeout=WAIT_SECONDS, source_address=(source, 0)
    )
    conn.sendall(PARTIAL)
    return conn


def _closed_with(conn: socket.socket) -> bytes:
    """All the hub sends before it closes the connection (bounded by the socket's timeout)."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := conn.recv(4096):
            received += chunk
    return received


@contextlib.contextmanager
def _open(conns: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()


def _ping(hub: Hub, token: str, session: str) -> int:
    return hub.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, token, session).status


def test_a_connection_whose_headers_never_finish_is_closed_at_the_header_deadline(
    tmp_path: Path,
) -> None:
    with running_hub(tmp_path / "hub.db", "--header-timeout", "1") as hub:
        started = time.monotonic()
        with _open([_slow(hub, "127.0.0.2")]) as (conn,):
            trickled = 0
            conn.settimeout(0.2)
            while time.monotonic() - started < WAIT_SECONDS:  # a byte every 0.2 s keeps nothing
                try:
                    if conn.recv(1) == b"":
                        break
                except TimeoutError:
                    conn.sendall(b"X")
                    trickled += 1
        waited = time.monotonic() - started
    assert 0.8 <= waited < WAIT_SECONDS - 2, waited  # closed by the 1 s deadline, not the test
    assert trickled >= 3


def test_a_legitimate_client_is_served_while_another_address_holds_many_slow_connections(
    tmp_path: Path,
) -> None:
    args = ("--max-client-connections", "10", "--header-timeout", "30")
    with running_hub(tmp_path / "hub.db", *args) as hub:
        token = hub.token("read", ("shop",), "legit")
        session = hub.initialize(token)
        with _open([_slow(hub, "127.0.0.2") for _ in range(40)]) as conns:
            turned_away = [_closed_with(conn) for conn in conns[10:]]
            started = time.monotonic()
            assert _ping(hub, token, session) == 200
            assert time.monotonic() - started < 10  # not the slow ones' 30 s header deadline
    assert all(reply.startswith(b"HTTP/1.1 503") for reply in turned_away)


def test_connections_past_the_total_cap_are_turned_away_until_some_close(tmp_path: Path) -> None:
    args = ("--max-connections", "8", "--max-client-connections", "100", "--header-timeout", "30")
    with running_hub(tmp_path / "hub.db", *args) as hub:
        token = hub.token("read", ("shop",), "late")
        with _open([_slow(hub, "127.0.0.3") for _ in range(8)]):
            late = _slow(hub, "127.0.0.4")
            assert _closed_with(late).startswith(b"HTTP/1.1 503")
            late.close()
        session = hub.initialize(token)  # the slow ones closed: room again
        assert _ping(hub, token, session) == 200


def test_token_guessing_is_slowed_per_address_with_bounded_audit_rows(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        statuses = [hub.post("/mcp", ping, f"alt_guess{n:04d}").status for n in range(30)]
        token = hub.token("read", ("shop",), "same-address")
        session = hub.initialize(token)
        served = _ping(hub, token, session)
    assert statuses == [401] * 20 + [429] * 10
    assert served == 200
    conn = sqlite3.connect(tmp_path / "hub.db")
    try:
        (rows,) = conn.execute("SELECT count(*) FROM audit WHERE tool = 'auth'").fetchone()
    finally:
        conn.close()
    assert rows == 20


def _ui_request(
    hub: Hub, method: str, path: str, body: str = "", headers: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """One request to the hub's pages: status, body and the Set-Cookie header."""
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request(method, path, body, headers or {})
        reply = conn.getresponse()
        return reply.status, reply.read().decode(), reply.getheader("set-cookie") or ""
    finally:
        conn.close()


def _wrong_sign_in(hub: Hub, n: int) -> int:
    """A sign-in with a guessed token, its CSRF cookie and field as a browser sends them."""
    _, form, cookie = _ui_request(hub, "GET", "/sign-in")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Origin": hub.url,
        "Cookie": cookie.split(";", 1)[0],
    }
    body = f"csrf={csrf.group(1)}&next=%2F&key=alt_guess{n:04d}"
    return _ui_request(hub, "POST", "/sign-in", body, headers)[0]


def test_token_guessing_on_the_hub_pages_counts_with_the_rest(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        bearers = [
            _ui_request(hub, "GET", "/tokens", headers={"Authorization": f"Bearer alt_g{n}"})[0]
            for n in range(10)
        ]
        sign_ins = [_wrong_sign_in(hub, n) for n in range(11)]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        over_mcp = hub.post("/mcp", ping, "alt_guess_mcp").status
        admin = hub.token("admin", None, "same-address-admin")
        served = _ui_request(hub, "GET", "/tokens", headers={"Authorization": f"Bearer {admin}"})
    assert bearers == [303] * 10  # off to the sign-in page, each counted
    assert sign_ins == [401] * 10 + [429]
    assert over_mcp == 429  # one count per address, whatever the door
    assert served[0] == 200  # a real admin token from the same address is still served
    conn = sqlite3.connect(tmp_path / "hub.db")
    try:
        details = conn.execute("SELECT detail FROM audit WHERE tool = 'auth'").fetchall()
    finally:
        conn.close()
    assert (
        sorted(details)
        == [("no admin token (web UI)",)] * 10 + [("no admin token (web sign-in)",)] * 10
    )


def test_poisoned_requests_leave_only_a_bounded_log(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("sync", ("shop",), "noisy")
        session = hub.initialize(token)
        deep: list[object] = []
        for _ in range(900):
            deep = [deep]
        for arguments in ({"extra": [deep] * 50}, {"project": "\ud800"}, {"items": [deep] * 50}):
            call = {"name": "work_state_write", "arguments": {"list": "x", **arguments}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
            assert hub.post("/mcp", body, token, session).status == 200
    logged = "".join(hub.log.queue)
    assert len(logged) < 4000, logged[:2000]


def test_a_log_record_with_a_huge_message_and_traceback_is_cut_to_the_bound() -> None:
    try:
        raise ValueError("v" * 50_000)
    except ValueError:
        record = logging.LogRecord(
            "t", logging.ERROR, __file__, 1, "failed %s", ("x" * 50_000,), sys.exc_info()
        )
    assert BoundedRecords(4000).filter(record)
    text = logging.Formatter().format(record)
    assert text.startswith("failed xxx") and len(text) < 4100
    assert "characters cut]" in text
    assert text.endswith("v" * 100)  # the traceback's last line, the error's, is kept


def test_a_cut_traceback_keeps_the_line_naming_the_error() -> None:
    """A traceback past the bound: its start says what failed, its end why."""
    try:
        try:
            raise ValueError("v" * 10_000)
        except ValueError:
            raise OSError("the line naming the error")  # noqa: B904  (a chained traceback)
    except OSError:
        record = logging.LogRecord(
            "t", logging.ERROR, __file__, 1, "Exception in ASGI application", (), sys.exc_info()
        )
    assert BoundedRecords(4000).filter(record)
    text = logging.Formatter().format(record)
    assert text.startswith("Exception in ASGI application\nTraceback")
    assert "characters cut]" in text and len(text) < 4100
    assert text.endswith("OSError: the line naming the error")


def test_a_client_turned_away_with_its_request_sent_reads_the_503_not_a_reset(
    tmp_path: Path,
) -> None:
    """Closed with the request unread, the hub's socket answered with a reset that could reach
    the client first: "connection reset" instead of the documented 503."""
    args = ("--max-client-connections", "1", "--header-timeout", "30")
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * 300_000 + b'"}'
    with running_hub(tmp_path / "hub.db", *args) as hub, _open([_slow(hub, "127.0.0.5")]):
        address = urlsplit(hub.url)
        for _ in range(30):  # the reset won the race in two runs of three, before
            conn = http.client.HTTPConnection(
                address.hostname or "",
                address.port,
                timeout=WAIT_SECONDS,
                source_address=("127.0.0.5", 0),
            )
            try:
                conn.request("POST", "/mcp", body, {"Content-Type": "application/json"})
                reply = conn.getresponse()
                assert reply.status == 503
                assert reply.getheader("retry-after") == "5"
            finally:
                conn.close()
