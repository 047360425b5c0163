"""Connections to a server (the hub, ``aletheia-server``), bounded before any request is read.

Each connection is counted against a cap per client address and a cap in total; one over either
gets a short 503 and is closed (after up to ``REFUSED_LINGER_SECONDS`` reading what the client
sends, for ``REFUSED_LINGERING`` of them at a time; at once past those). Headers must arrive
within ``header_seconds`` of the connection (or of the previous response), and the body within
``body_seconds`` of the headers; a connection too slow for either is closed. So a thousand
connections that trickle bytes hold at most a handful of sockets each for seconds, and a client
at another address is served meanwhile.
A request's headers past ``MAX_HEADER_BYTES`` get a 431 and the connection is closed: the parser
holds them in memory until they end, and a fast client sends gigabytes within the deadline. They
are counted twice over: by the pieces read while the parser is within them (headers that never
end), and by the request line and header fields the parser hands over (headers that arrive in one
piece with their end, parsed whole before the piece is counted: they are refused before the
request starts). The trailer fields after a chunked body's last chunk are held as headers are,
and bounded as they are.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_FIELD_OVERHEAD = len(b": \r\n")  # what a header line takes beside its name and value

PER_CLIENT = 64
TOTAL = 2000
HEADER_SECONDS = 10.0
BODY_SECONDS = 60.0
MAX_HEADER_BYTES = 64 * 1024  # a real client's request line and headers take a few hundred
IDLE_SECONDS = 5  # keep-alive: an idle connection closes after this
_OTHER_FILES = 256  # room for the store's files, logs and worker threads beside connections
REFUSED_LINGER_SECONDS = 2.0  # a turned-away connection is read (and dropped) this long at most
# Turned-away connections kept open at a time at most, reading what their client sends (a file
# each): the cap and these fit in what total_within_file_limit allows, with files to spare (64
# where the limit cannot be raised, of the 128 it leaves beside the cap).
REFUSED_LINGERING = _OTHER_FILES // 4


def _closing_reply(status: str, text: str, *headers: str) -> bytes:
    """A whole plain-text reply that closes the connection, its length counted."""
    body = f"{text}\r\n".encode("ascii")
    head = [f"HTTP/1.1 {status}", "content-type: text/plain", *headers, "connection: close"]
    return "\r\n".join([*head, f"content-length: {len(body)}", "", ""]).encode("ascii") + body


_BUSY = _closing_reply(
    "503 Service Unavailable", "Too many connections; retry in a moment.", "retry-after: 5"
)
_HEADERS_TOO_LARGE = _closing_reply(
    "431 Request Header Fields Too Large", "The request's headers are too large."
)


@dataclass(frozen=True)
class ConnectionLimits:
    per_client: int = PER_CLIENT
    total: int = TOTAL
    header_seconds: float = HEADER_SECONDS
    body_seconds: float = BODY_SECONDS
    header_bytes: int = MAX_HEADER_BYTES


@dataclass
class _Counts:
    total: int = 0
    by_client: dict[str, int] = field(default_factory=dict)
    lingering: int = 0  # turned-away connections still open, their client's bytes read

    def admit(self, client: str, limits: ConnectionLimits) -> bool:
        if self.total >= limits.total or self.by_client.get(client, 0) >= limits.per_client:
            return False
        self.total += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1
        return True

    def release(self, client: str) -> None:
        self.total -= 1
        left = self.by_client[client] - 1
        if left:
            self.by_client[client] = left
        else:
            del self.by_client[client]


def raise_open_file_limit(wanted: int) -> int:
    """Raise this process's open-file limit toward ``wanted`` (within the hard limit); returns
    the soft limit now in force (``wanted`` where there is none to raise: Windows)."""
    try:  # imported here: Windows has no ``resource``, and aletheia-server runs there too
        import resource
    except ImportError:
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def total_within_file_limit(wanted: int) -> int:
    """The cap on open connections in total: ``wanted``, with the open-file limit raised to fit
    it where the system allows, else what the limit leaves after the store's files, worker
    threads and turned-away connections (``REFUSED_LINGERING``): 128 where the hard limit is 256
    (macOS starts processes at 256 files, but its hard limit is usually unlimited: raised)."""
    files = raise_open_file_limit(wanted + _OTHER_FILES)
    return max(1, min(wanted, files - _OTHER_FILES // 2))


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol, with the limits of the class ``guarded_protocol`` makes."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    counts: ClassVar[_Counts] = _Counts()
    _client = ""
    _admitted = False
    _deadline: asyncio.TimerHandle | None = None
    _in_headers = True  # the parser is reading a request's line and headers, or trailers
    _header_bytes = 0  # what this request's headers took so far, in the pieces read
    _field_bytes = 0  # what its request line and header fields took, as the parser hands them
    _fed_body = False  # the piece being parsed held body bytes
    _refused = False  # answered 431: what else comes is dropped
    _lingering = False  # turned away, counted in ``counts.lingering`` until the connection is lost

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        self._client = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if not self.counts.admit(self._client, self.limits):
            self._turn_away(transport)
            return
        self._admitted = True
        super().connection_made(transport)
        self._arm(self.limits.header_seconds)

    def _turn_away(self, transport: asyncio.Transport) -> None:
        """Send the 503, then read and drop what the client sends until it closes, at most
        ``REFUSED_LINGER_SECONDS``: closed at once with its request unread, the socket would
        answer with a reset, which can reach the client before the 503 and lose it. (The
        client's end of the stream closes the transport: ``eof_received`` answers None.)

        Past ``REFUSED_LINGERING`` such connections at a time, closed once the 503 is written:
        each holds a file, and a burst of them used up the process's open files, so that
        connections could no longer be accepted (uvloop then closes them with no reply)."""
        transport.write(_BUSY)
        if self.counts.lingering >= REFUSED_LINGERING:
            transport.close()  # the 503 goes out first: ``close`` sends what is buffered
            return
        self.counts.lingering += 1
        self._lingering = True
        if transport.can_write_eof():
            transport.write_eof()
        self._deadline = self.loop.call_later(REFUSED_LINGER_SECONDS, transport.close)

    def data_received(self, data: bytes) -> None:
        if not self._admitted or self._refused:
            return  # a turned-away connection's bytes are dropped
        began_in_headers, self._fed_body = self._in_headers, False
        super().data_received(data)
        # Counted when the piece began and ended within headers and held no body: then it is
        # headers only (a piece holding the end of a body and the start of the next request is
        # not, and no more than one piece goes uncounted).
        if (
            began_in_headers
            and self._in_headers
            and not self._fed_body
            and not self._refused  # a header field past the cap was refused in the piece
            and not self.transport.is_closing()
        ):
            self._header_bytes += len(data)
            if self._header_bytes > self.limits.header_bytes:
                self._refuse_headers()

    def _refuse_headers(self) -> None:
        """431, then the client's further bytes dropped until it closes, at most
        ``REFUSED_LINGER_SECONDS`` (as ``_turn_away``: closed with them unread, the socket
        would answer with a reset that can reach the client before the 431). Closed at once
        while an earlier (pipelined) request is still answered: a status line written now would
        cut into that answer."""
        self._refused = True
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()
            return
        self.transport.write(_HEADERS_TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._disarm()
        self._deadline = self.loop.call_later(REFUSED_LINGER_SECONDS, self.transport.close)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to what the parser cannot read; after a 431, nothing more is sent."""
        if not self._refused:
            super().send_400_response(msg)

    def _within_cap(self, size: int) -> bool:
        """Count ``size`` bytes of the request line or a header field: past the cap, the 431.

        The parser goes on through the rest of the piece it was fed (a callback's error would
        stop it, but uvicorn logs that as an invalid request and answers 400): once refused,
        each callback is passed over, so the request never starts, and its headers are dropped
        (uvicorn reads an upgrade from them when the parser stops at one)."""
        if self._refused:
            return False
        self._field_bytes += size
        if self._field_bytes <= self.limits.header_bytes:
            return True
        self._refuse_headers()
        self.headers = []  # a new list: a started request (trailers past the cap) keeps its own
        return False

    def on_message_begin(self) -> None:
        if self._refused:
            return
        self._in_headers, self._header_bytes, self._field_bytes = True, 0, 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if self._within_cap(len(url)):
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._within_cap(len(name) + len(value) + _FIELD_OVERHEAD):
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._in_headers = False
        self._arm(self.limits.body_seconds)
        super().on_headers_complete()

    def on_chunk_header(self) -> None:
        """A chunk's size line is read: its data follow, or after the last one (size 0) the
        trailer fields, which the parser hands to ``on_header`` and uvicorn keeps as headers."""
        self._in_headers = True

    def on_body(self, body: bytes) -> None:
        if self._refused:
            return
        self._in_headers, self._header_bytes, self._fed_body = False, 0, True
        self._field_bytes = 0  # trailers, if any, are counted on their own, as pieces are
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._disarm()  # the client sent it all; the hub's own work has no deadline here
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.pipeline and not self.transport.is_closing():
            self._arm(self.limits.header_seconds)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._lingering:
            self._lingering = False
            self.counts.lingering -= 1
        if not self._admitted:
            return
        self._admitted = False
        self.counts.release(self._client)
        super().connection_lost(exc)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedProtocol]:
    """The protocol class of one server: its connections share counts (the event loop runs
    them one at a time, so the counts need no lock)."""
    return type("GuardedProtocol", (GuardedProtocol,), {"limits": limits, "counts": _Counts()})
