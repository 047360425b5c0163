"""The sign-in cookie of ``aletheia-server``'s pages, as a browser or a forger sends it."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    env = {"ALETHEIA_API_KEY": "sign-in-key-123"}
    with running_server(tmp_path_factory.mktemp("sign-in"), env=env) as running:
        yield running


def _status_line(server: RunningServer, cookie: bytes) -> bytes:
    """The status line of ``GET /`` with this raw Cookie header (bytes a client may send)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
        conn.sendall(
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: aletheia_ui="
            + cookie
            + b"\r\nConnection: close\r\n\r\n"
        )
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("cookie", [b"nonce.\xc3\xa9", b"nonce.\xe9", b"\xe9.sig", b"nonce.0f"])
def test_a_forged_sign_in_cookie_is_sent_to_sign_in_not_a_server_error(
    keyed: RunningServer, cookie: bytes
) -> None:
    assert _status_line(keyed, cookie) == b"HTTP/1.1 303 See Other"
    assert not any("Traceback" in line for line in keyed.lines)
