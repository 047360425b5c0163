"""``aletheia-server`` bounds a request's headers as the hub does: past 64 KiB, 431 and the
connection closed, with one worker or several; the server serves on."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.server.connections import MAX_HEADER_BYTES
from tests.e2e.http_server import RunningServer, exchange_raw, padded_request, running_server


def _send_headers(server: RunningServer, size: int) -> bytes:
    return exchange_raw(server.port, padded_request(b"GET /api/rules HTTP/1.1", size))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_request_headers_past_the_cap_get_431_and_the_server_serves_on(
    tmp_path: Path, workers: str
) -> None:
    with running_server(tmp_path, args=("--port", "0", "--workers", workers)) as server:
        head, _, body = _send_headers(server, 20 * MAX_HEADER_BYTES).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431 "), head
        assert b"too large" in body
        assert _send_headers(server, MAX_HEADER_BYTES // 2).startswith(b"HTTP/1.1 200 ")
        assert server.request("GET", "/api/rules").status == 200
        assert server.process.poll() is None
