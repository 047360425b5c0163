"""``aletheia-server``: MCP over Streamable HTTP at ``/mcp`` and the JSON API at ``/api/``.

Binds 127.0.0.1 on port 8765 unless told otherwise (``--host``, ``--port`` or ``ALETHEIA_PORT``;
port 0 takes a free one), prints ``Aletheia listening on http://HOST:PORT`` on stderr once it
accepts connections, and stops cleanly on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import replace
from types import FrameType

import uvicorn

from aletheia import __version__
from aletheia.config import HttpSettings, Settings, load_http_settings, load_settings, parse_port
from aletheia.errors import InvalidInputError
from aletheia.server.guard import is_loopback, make_policy
from aletheia.server.http import create_app
from aletheia.server.wiring import open_app

logger = logging.getLogger("aletheia")
_WILDCARDS = ("0.0.0.0", "::", "")  # noqa: S104  (names, not a bind)


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class _Server(uvicorn.Server):
    """uvicorn's server, announcing the real address once it accepts connections."""

    def __init__(self, config: uvicorn.Config, url: str) -> None:
        super().__init__(config)
        self.url = url

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            sys.stderr.write(f"Aletheia listening on {self.url}\n")
            sys.stderr.flush()


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    """uvicorn re-raises the signal it stopped on; by then the stop was already clean."""


def serve(settings: Settings, http: HttpSettings) -> int:
    """Run the server until SIGINT or SIGTERM; returns the exit code."""
    allowed_hosts = list(http.allowed_hosts)
    if http.host not in _WILDCARDS:
        allowed_hosts.append(http.host)
    if not is_loopback(http.host.strip("[]")) and http.api_key is None:
        logger.warning(
            "listening on %s without ALETHEIA_API_KEY: anyone who reaches it can read and write",
            http.host,
        )
    policy = make_policy(http.api_key, allowed_hosts, http.allowed_origins)
    app = open_app(settings)
    asgi = create_app(app, policy, fixed_caller=settings.tool)
    config = uvicorn.Config(
        asgi,
        host=http.host,
        port=http.port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    sock = config.bind_socket()
    server = _Server(config, url_of(http.host, sock.getsockname()[1]))
    previous = {sig: signal.signal(sig, _ignore_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        app.store.close()
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="aletheia-server",
        description="Serve MCP over Streamable HTTP at /mcp and the JSON API at /api/.",
        epilog="Environment: ALETHEIA_PORT, ALETHEIA_API_KEY (bearer key for every request),"
        " ALETHEIA_ALLOWED_ORIGINS, ALETHEIA_ALLOWED_HOSTS, ALETHEIA_DATA_DIR, ALETHEIA_HUB_DB,"
        " ALETHEIA_TOOL, ALETHEIA_CWD.",
    )
    parser.add_argument("--version", action="version", version=f"aletheia-server {__version__}")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", help="port to bind; 0 takes a free one (default 8765)")
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept requests from this browser origin (repeatable)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host header name, e.g. when binding 0.0.0.0 (repeatable)",
    )
    return parser.parse_args(argv)


def with_options(
    http: HttpSettings,
    host: str | None,
    port: str | None,
    origins: Sequence[str],
    hosts: Sequence[str],
) -> HttpSettings:
    """The environment's settings with command-line options on top.

    Raises:
        InvalidInputError: the port is not a number from 0 to 65535.
    """
    return replace(
        http,
        host=host.strip() if host and host.strip() else http.host,
        port=http.port if port is None else parse_port(port, "--port"),
        allowed_origins=(*http.allowed_origins, *origins),
        allowed_hosts=(*http.allowed_hosts, *hosts),
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``aletheia-server``."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="aletheia: %(message)s")
    args = parse_args(argv)
    try:
        http = with_options(
            load_http_settings(), args.host, args.port, args.allow_origin, args.allow_host
        )
    except InvalidInputError as error:
        sys.stderr.write(f"aletheia-server: {error.message}\n")
        sys.exit(2)
    sys.exit(serve(load_settings(), http))


if __name__ == "__main__":
    main()
