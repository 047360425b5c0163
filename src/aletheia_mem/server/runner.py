"""Running an ASGI app under uvicorn: bind, announce the real URL, stop cleanly on a signal."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Callable, Iterable, Mapping
from types import FrameType
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from aletheia_mem.errors import AletheiaError

logger = logging.getLogger("aletheia")
# Connections a worker takes off its channel before it has wired them to a protocol: the others
# wait on the channel, holding no file of the worker's.
HANDING_AT_MOST = 16

WILDCARDS = ("0.0.0.0", "::", "")  # noqa: S104  (names, not a bind)


def url_of(host: str, port: int, tls: bool = False) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}"


def served_hosts(host: str, extra: Iterable[str]) -> list[str]:
    """The Host names to accept: the extra ones, and the bound address unless it is a wildcard."""
    hosts = list(extra)
    if host not in WILDCARDS:
        hosts.append(host)
    return hosts


TlsFiles = tuple[str | None, str | None]
NO_TLS: TlsFiles = (None, None)


class _ReadyServer(uvicorn.Server):
    """uvicorn's server, calling ``on_ready`` once it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_ready = on_ready

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A first SIGINT or SIGTERM waits for the requests under way (5 s at most); a second
        one of either kind stops at once (uvicorn only counts a second SIGINT)."""
        if self.should_exit:
            self.force_exit = True
        super().handle_exit(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.on_ready()


class _HandedServer(_ReadyServer):
    """uvicorn's server without a socket of its own: it serves the connections whose file
    descriptors arrive on ``channel``, one per byte, from the process that accepted them.
    (Those sent before the reader is added wait in the channel.)"""

    def __init__(
        self, config: uvicorn.Config, on_ready: Callable[[], None], channel: socket.socket
    ) -> None:
        super().__init__(config, on_ready)
        self.channel = channel
        self.handing: set[asyncio.Task[None]] = set()  # connections being wired to a protocol

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup([])  # no listener: connections come over the channel
        if self.started:
            self.channel.setblocking(False)
            asyncio.get_running_loop().add_reader(self.channel.fileno(), self._take)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().remove_reader(self.channel.fileno())
        await super().shutdown(sockets)

    def _take(self) -> None:
        """Serve the connections waiting on the channel, ``HANDING_AT_MOST`` being wired at a
        time (the rest wait there: taken all at once, past the open-file limit they were
        dropped with no reply); stop when its other end is gone."""
        loop = asyncio.get_running_loop()
        while len(self.handing) < HANDING_AT_MOST:
            try:
                data, fds, _, _ = socket.recv_fds(self.channel, 1, 1)
            except BlockingIOError:
                return
            except OSError:
                data, fds = b"", []
            if not data:
                loop.remove_reader(self.channel.fileno())
                self.should_exit = True
                return
            for fd in fds:
                task = loop.create_task(self._serve_connection(socket.socket(fileno=fd)))
                self.handing.add(task)
                task.add_done_callback(self.handing.discard)

    async def _serve_connection(self, conn: socket.socket) -> None:
        conn.setblocking(False)
        if conn.family in (socket.AF_INET, socket.AF_INET6):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                self._new_protocol, conn, ssl=self.config.ssl
            )
        except OSError:
            logger.debug("a handed-over connection closed before it was served", exc_info=True)
            conn.close()

    def _new_protocol(self) -> asyncio.Protocol:
        """What uvicorn's own listener makes for each connection it accepts."""
        return self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config, server_state=self.server_state, app_state=self.lifespan.state
        )


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ignore_stop_signals() -> None:
    """Ignore SIGINT and SIGTERM from now on: the server has stopped (or is being stopped by
    someone else) and the process is closing its store, which a further signal must not cut
    short with a traceback. (uvicorn re-raises the signal it stopped on: ignored too.) The
    kernel's SIG_IGN, not a Python handler: Python resets its own handlers to the default
    while it exits, and a signal then would still end the process with -SIGTERM."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


class _CancelledRequestLine(logging.Filter):
    """A request still unfinished when the stop's wait ran out (or a second signal came) is
    cancelled: one line in the log instead of uvicorn's traceback of the cancellation."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            record.msg, record.args = "a request unfinished at the stop was cancelled", ()
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_UVICORN_ERRORS = logging.getLogger("uvicorn.error")


def _config(
    asgi: ASGIApp | str,
    host: str,
    port: int,
    tls: TlsFiles,
    options: Mapping[str, Any] | None = None,
) -> uvicorn.Config:
    """uvicorn's settings; ``options`` adds to or replaces them (the hub's protocol, timeouts)."""
    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "access_log": False,
        "lifespan": "off",
        "server_header": False,
        "timeout_graceful_shutdown": 5,
        "ssl_certfile": tls[0],
        "ssl_keyfile": tls[1],
    }
    settings.update(options or {})
    return uvicorn.Config(asgi, **settings)


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (port 0 takes a free one), as uvicorn binds one.

    Raises:
        AletheiaError: the address cannot be bound (the port is taken, say): one line for the
            caller to print, not uvicorn's log line and its exit code.
    """
    shown = host.encode("unicode_escape", "backslashreplace").decode("ascii")[:200]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        raise AletheiaError(f"Cannot listen on {shown}:{port}: {reason}.") from None
    except (TypeError, UnicodeError, ValueError):  # no host name: not UTF-8, a NUL, too long
        sock.close()
        raise AletheiaError(
            f"Cannot listen on {shown}:{port}: not a host name or address."
        ) from None
    sock.set_inheritable(True)
    return sock


def serve_on(
    asgi: ASGIApp,
    sock: socket.socket,
    on_ready: Callable[[], None],
    tls: TlsFiles = NO_TLS,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve ``asgi`` on a bound socket until SIGINT or SIGTERM."""
    host, port = sock.getsockname()[:2]
    _run(_ReadyServer(_config(asgi, host, port, tls, options), on_ready), [sock])


def serve_handed(
    asgi: ASGIApp,
    channel: socket.socket,
    on_ready: Callable[[], None],
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve ``asgi`` on the connections handed over ``channel`` until SIGINT or SIGTERM, or
    until the channel's other end closes."""
    config = _config(asgi, "127.0.0.1", 0, NO_TLS, options)
    _run(_HandedServer(config, on_ready, channel), None)


def _run(server: uvicorn.Server, sockets: list[socket.socket] | None) -> None:
    """Serve until a signal; the stop signals stay ignored afterwards (``ignore_stop_signals``):
    the caller closes the store, then the process ends."""
    ignore_stop_signals()
    if not any(isinstance(f, _CancelledRequestLine) for f in _UVICORN_ERRORS.filters):
        _UVICORN_ERRORS.addFilter(_CancelledRequestLine())
    server.run(sockets=sockets)


def announce(line: str) -> None:
    """Print the ready line on stderr at once."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def run_until_signal(
    asgi: ASGIApp,
    host: str,
    port: int,
    ready_line: Callable[[str], str],
    *,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM; ``ready_line(url)`` is printed once connections are taken
    (port 0 resolved). ``options``: more uvicorn settings."""
    sock = bind(host, port)
    url = url_of(host, sock.getsockname()[1], tls=tls_cert is not None)
    try:
        serve_on(asgi, sock, lambda: announce(ready_line(url)), (tls_cert, tls_key), options)
    finally:
        sock.close()
