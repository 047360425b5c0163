"""Running an ASGI app under uvicorn: bind, announce the real URL, stop cleanly on a signal."""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Callable, Iterable
from types import FrameType

import uvicorn
from starlette.types import ASGIApp

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


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, printing one line on stderr once it accepts connections."""

    def __init__(self, config: uvicorn.Config, line: str) -> None:
        super().__init__(config)
        self.line = line

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            sys.stderr.write(self.line + "\n")
            sys.stderr.flush()


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    """uvicorn re-raises the signal it stopped on; by then the stop was already clean."""


def run_until_signal(
    asgi: ASGIApp,
    host: str,
    port: int,
    announce: Callable[[str], str],
    *,
    tls_cert: str | None = None,
    tls_key: str | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM; ``announce(url)`` is the ready line (port 0 resolved)."""
    config = uvicorn.Config(
        asgi,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=5,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
    )
    sock = config.bind_socket()
    url = url_of(host, sock.getsockname()[1], tls=tls_cert is not None)
    server = _AnnouncingServer(config, announce(url))
    previous = {sig: signal.signal(sig, _ignore_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
