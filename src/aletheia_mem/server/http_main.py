"""``aletheia-server``: MCP over Streamable HTTP at ``/mcp`` and the JSON API at ``/api/``.

Binds 127.0.0.1 on port 8765 unless told otherwise (``--host``, ``--port`` or ``ALETHEIA_PORT``;
port 0 takes a free one), prints ``Aletheia listening on http://HOST:PORT`` on stderr once it
accepts connections, and stops cleanly on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from starlette.types import ASGIApp

from aletheia_mem import __version__
from aletheia_mem.config import (
    HttpSettings,
    Settings,
    load_http_settings,
    load_settings,
    parse_port,
    parse_workers,
)
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.server.arguments import OneLineArgumentParser
from aletheia_mem.server.guard import is_loopback, make_policy
from aletheia_mem.server.http import create_app
from aletheia_mem.server.runner import (
    announce,
    bind,
    ignore_stop_signals,
    serve_handed,
    serve_on,
    served_hosts,
    url_of,
)
from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.server.wiring import hub_store, open_app, tell_semantic_unavailable
from aletheia_mem.server.workers import WorkerPool
from aletheia_mem.storage.open import open_store
from aletheia_mem.storage.store_file import exits_on_store_problem

logger = logging.getLogger("aletheia")


def serve(settings: Settings, http: HttpSettings) -> int:
    """Run the server until SIGINT or SIGTERM; returns the exit code.

    With ``http.workers`` above 1, that many forked processes share the store, and this one
    hands them the connections it accepts.
    """
    allowed_hosts = served_hosts(http.host, http.allowed_hosts)
    if open_without_key(http):  # only with --trusted-network (``with_options`` refuses it else)
        logger.warning(
            "listening on %s without ALETHEIA_API_KEY (--trusted-network): anyone who reaches"
            " it can read and write",
            http.host,
        )
    policy = make_policy(http.api_key, allowed_hosts, http.allowed_origins)

    def run_app(serve: Callable[[ASGIApp], None]) -> None:
        app = open_app(settings)
        sessions = SessionStore(hub_store(app).sessions(), app.clock)
        try:
            serve(create_app(app, policy, fixed_caller=settings.tool, sessions=sessions))
        finally:
            sessions.close()
            app.store.close()

    def worker(channel: socket.socket, ready: Callable[[], None]) -> None:
        run_app(lambda asgi: serve_handed(asgi, channel, ready, _server_options()))

    sock = bind(http.host, http.port)
    line = f"Aletheia listening on {url_of(http.host, sock.getsockname()[1])}"
    try:
        if http.workers == 1:
            options = _server_options()
            run_app(lambda asgi: serve_on(asgi, sock, lambda: announce(line), options=options))
            return 0
        open_store(settings.store).close()  # migrate once, before the workers open it
        tell_semantic_unavailable(settings)  # once here: the forked workers know it was said
        ignore_stop_signals()  # what the pool restores once it stops: the close below runs
        code = WorkerPool(sock, worker, http.workers).run(lambda: announce(line))
        # Workers closing at the same moment each leave the WAL to the other; as the last
        # connection, this one checkpoints it and removes it.
        open_store(settings.store).close()
        return code
    finally:
        sock.close()


def _server_options() -> dict[str, Any]:
    """uvicorn's protocol with bounded headers and the hub's deadlines for them and a body; no
    cap per client address beside the total: every local tool connects from loopback."""
    # imported here: uvicorn's protocol module is not needed for --help and --version
    from aletheia_mem.server import connections

    total = connections.total_within_file_limit(connections.TOTAL)
    limits = connections.ConnectionLimits(per_client=total, total=total)
    return {"http": connections.guarded_protocol(limits)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = OneLineArgumentParser(
        prog="aletheia-server",
        description="Serve MCP over Streamable HTTP at /mcp and the JSON API at /api/.",
        epilog="Environment: ALETHEIA_PORT, ALETHEIA_API_KEY (bearer key for every request),"
        " ALETHEIA_ALLOWED_ORIGINS, ALETHEIA_ALLOWED_HOSTS, ALETHEIA_DATA_DIR, ALETHEIA_HUB_DB,"
        " ALETHEIA_TOOL, ALETHEIA_CWD, ALETHEIA_WORKERS, ALETHEIA_SEMANTIC (on: semantic recall"
        " too).",
    )
    parser.add_argument(
        "--version", action="version", version=f"aletheia-server, version {__version__}"
    )
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", help="port to bind; 0 takes a free one (default 8765)")
    parser.add_argument(
        "--workers",
        help="worker processes sharing the port and the store (default 2 on 2+ cores, else 1)",
    )
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
    parser.add_argument("--trusted-network", action="store_true", help=TRUSTED_NETWORK_HELP)
    return parser.parse_args(argv)


TRUSTED_NETWORK_HELP = (
    "serve a non-loopback --host without ALETHEIA_API_KEY: everyone who reaches the address"
    " reads and writes every memory (the Host check stops only browsers)"
)


def open_without_key(http: HttpSettings) -> bool:
    """Bound beyond loopback with no key: anyone who reaches the address is served."""
    return not is_loopback(http.host.strip("[]")) and http.api_key is None


def with_options(
    http: HttpSettings,
    host: str | None,
    port: str | None,
    origins: Sequence[str],
    hosts: Sequence[str],
    workers: str | None = None,
    trusted_network: bool = False,
) -> HttpSettings:
    """The environment's settings with command-line options on top.

    Raises:
        InvalidInputError: the port is not a number from 0 to 65535, the worker count is not
            a whole number from 1 to 32, or the address is not loopback while no key is set
            and ``trusted_network`` is not.
    """
    chosen = replace(
        http,
        host=host.strip() if host and host.strip() else http.host,
        port=http.port if port is None else parse_port(port, "--port"),
        allowed_origins=(*http.allowed_origins, *origins),
        allowed_hosts=(*http.allowed_hosts, *hosts),
        workers=http.workers if workers is None else parse_workers(workers, "--workers"),
    )
    # The Host check stops browsers only: a script sends "Host: 127.0.0.1" from anywhere.
    if open_without_key(chosen) and not trusted_network:
        raise InvalidInputError(
            f"--host {chosen.host} is reachable from the network and ALETHEIA_API_KEY is not"
            " set: set ALETHEIA_API_KEY (or pass --trusted-network if everyone who reaches it"
            " may read and write every memory)."
        )
    return chosen


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``aletheia-server``."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="aletheia: %(message)s")
    args = parse_args(argv)
    try:
        http = with_options(
            load_http_settings(),
            args.host,
            args.port,
            args.allow_origin,
            args.allow_host,
            args.workers,
            args.trusted_network,
        )
    except InvalidInputError as error:
        sys.stderr.write(f"aletheia-server: {error.message}\n")
        sys.exit(2)
    with exits_on_store_problem("aletheia-server"):
        code = serve(load_settings(), http)
    sys.exit(code)


if __name__ == "__main__":
    main()
