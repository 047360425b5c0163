"""``aletheia-server``: MCP over Streamable HTTP at ``/mcp`` and the JSON API at ``/api/``.

Binds 127.0.0.1 on port 8765 unless told otherwise (``--host``, ``--port`` or ``ALETHEIA_PORT``;
port 0 takes a free one), prints ``Aletheia listening on http://HOST:PORT`` on stderr once it
accepts connections, and stops cleanly on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from dataclasses import replace

from aletheia import __version__
from aletheia.config import HttpSettings, Settings, load_http_settings, load_settings, parse_port
from aletheia.errors import InvalidInputError
from aletheia.server.guard import is_loopback, make_policy
from aletheia.server.http import create_app
from aletheia.server.runner import run_until_signal, served_hosts
from aletheia.server.wiring import open_app

logger = logging.getLogger("aletheia")


def serve(settings: Settings, http: HttpSettings) -> int:
    """Run the server until SIGINT or SIGTERM; returns the exit code."""
    allowed_hosts = served_hosts(http.host, http.allowed_hosts)
    if not is_loopback(http.host.strip("[]")) and http.api_key is None:
        logger.warning(
            "listening on %s without ALETHEIA_API_KEY: anyone who reaches it can read and write",
            http.host,
        )
    policy = make_policy(http.api_key, allowed_hosts, http.allowed_origins)
    app = open_app(settings)
    asgi = create_app(app, policy, fixed_caller=settings.tool)
    try:
        run_until_signal(asgi, http.host, http.port, lambda url: f"Aletheia listening on {url}")
    finally:
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
