"""``aletheia-server`` bounds a request's headers as the hub does: past 64 KiB, 431 and the
connection closed, with one worker or several; the server serves on."""

from __future__ import annotations

import sys
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


def _chunked_with_trailers(size: int, body: bytes = b"{}") -> bytes:
    """A chunked request of ``body`` (in chunks of 1,000 bytes) whose trailer fields (after the
    last chunk) hold ``size`` bytes: header lines the parser keeps as it keeps headers."""
    trailers = b"".join(b"X-Trail-%d: %s\r\n" % (n, b"t" * 990) for n in range(size // 1000))
    pieces = [body[at : at + 1000] for at in range(0, len(body), 1000)]
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return (
        b"POST /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n"
        b"Connection: close\r\n\r\n" + chunks + b"0\r\n" + trailers + b"\r\n"
    )


def test_trailer_fields_past_the_header_cap_are_refused_as_headers_are(tmp_path: Path) -> None:
    """Trailers go through the same header callback as headers and are held as they are: past
    the cap the request is not served (before, any amount was read into memory)."""
    with running_server(tmp_path) as server:
        reply = exchange_raw(server.port, _chunked_with_trailers(20 * MAX_HEADER_BYTES))
        assert reply == b"" or reply.startswith(b"HTTP/1.1 431 "), reply[:200]
        small = exchange_raw(server.port, _chunked_with_trailers(MAX_HEADER_BYTES // 2))
        assert small.startswith(b"HTTP/1.1 400 ") and b"then is required." in small, small
        # a chunked body's data and chunk lines are no headers, however many
        padded = b'{"pad": "%s"}' % (b"p" * 20 * MAX_HEADER_BYTES)
        long = exchange_raw(server.port, _chunked_with_trailers(0, padded))
        told = b'Unknown field \\"pad\\" in the request body'  # read whole, then refused
        assert long.startswith(b"HTTP/1.1 400 ") and told in long, long[:300]
        assert server.request("GET", "/api/rules").status == 200
        assert server.process.poll() is None


def test_a_content_length_written_with_thousands_of_leading_zeros_is_read_not_a_500(
    tmp_path: Path,
) -> None:
    """The parser reads ``000…02`` as 2; ``int`` refused its 5,001 digits: a 500 and a
    traceback in the log, before."""
    request = (
        b"POST /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + b"0" * 5000 + b"2\r\nConnection: close\r\n\r\n{}"
    )
    with running_server(tmp_path) as server:
        reply = exchange_raw(server.port, request)
        assert reply.startswith(b"HTTP/1.1 400 ") and b"then is required." in reply, reply


# aletheia-server as Windows runs it: Python there has no ``resource`` module.
WITHOUT_RESOURCE = (
    "import sys; sys.modules['resource'] = None; "
    "from aletheia_mem.server.http_main import main; sys.exit(main())"
)


def test_the_server_starts_on_a_system_without_the_resource_module(tmp_path: Path) -> None:
    """The connection guard it now runs behind is no reason to fail where the hub's open-file
    limit cannot be raised (Windows, where ``aletheia serve`` starts it too)."""
    command = [sys.executable, "-c", WITHOUT_RESOURCE]
    args = ("--port", "0", "--workers", "1")  # Windows cannot fork workers
    with running_server(tmp_path, command=command, args=args) as server:
        assert server.request("GET", "/api/rules").status == 200
        head = _send_headers(server, 20 * MAX_HEADER_BYTES)
        assert head.startswith(b"HTTP/1.1 431 "), head[:200]


@pytest.mark.parametrize("size", [MAX_HEADER_BYTES + 1000, 120_000])
def test_headers_past_the_cap_in_one_piece_get_431_once(tmp_path: Path, size: int) -> None:
    """One send holding the whole request, its headers parsed to their end in one go: counted
    only by the pieces read, one header of 120,000 bytes was served (a 200). One 431, no more."""
    request = (
        b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: "
        + b"a" * size
        + b"\r\nConnection: close\r\n\r\n"
    )
    long_url = b"GET /api/rules?q=" + b"q" * size + b" HTTP/1.1\r\nConnection: close\r\n\r\n"
    with running_server(tmp_path, args=("--port", "0", "--workers", "1")) as server:
        for sent in (request, long_url):
            reply = exchange_raw(server.port, sent)
            assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
            assert reply.count(b"HTTP/1.1") == 1, reply
        assert _send_headers(server, MAX_HEADER_BYTES // 2).startswith(b"HTTP/1.1 200 ")
