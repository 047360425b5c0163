"""``aletheia-sync``: the team hub. MCP at ``/mcp`` and the sync API at ``/sync/``, for tokens.

Binds 127.0.0.1 on port 8787 unless told otherwise (port 0 takes a free one), serves HTTPS with
``--tls-cert`` and ``--tls-key``, prints ``aletheia-sync listening on URL`` on stderr once it
accepts connections, and stops cleanly on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import ssl
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.config import (
    MAX_POOL_SIZE,
    MAX_SEARCH_CACHE_MB,
    hub_db_chosen_by,
    hub_db_path,
    hub_pool_size,
    hub_search_cache_mb,
    hub_target,
    load_settings,
    parse_port,
)
from aletheia_mem.errors import (
    AletheiaError,
    InvalidInputError,
    NoStoreError,
    StoreBrokenError,
    StoreReadOnlyError,
    StoreTooNewError,
)
from aletheia_mem.hub.app import create_hub_app
from aletheia_mem.hub.audit_queue import AuditQueue
from aletheia_mem.hub.log_bounds import bound_every_handler
from aletheia_mem.hub.tokens import TOKEN_CACHE_SECONDS
from aletheia_mem.hub.write_turns import write_turns
from aletheia_mem.server import connections
from aletheia_mem.server.arguments import OneLineArgumentParser, decimal_number, whole_number
from aletheia_mem.server.ratelimit import DEFAULT_PER_MINUTE, SharedRateLimiter
from aletheia_mem.server.runner import run_until_signal, served_hosts
from aletheia_mem.server.wiring import hub_store, open_hub_app
from aletheia_mem.storage.store_file import exits_on_store_problem, misplaced

logger = logging.getLogger("aletheia")
DEFAULT_HUB_PORT = 8787


def parse_args(argv: Sequence[str] | None, prog: str = "aletheia-sync") -> argparse.Namespace:
    return build_parser(prog).parse_args(argv)


def build_parser(prog: str = "aletheia-sync") -> argparse.ArgumentParser:
    """The hub's options (``aletheia hub --help`` lists them in click's style)."""
    parser = OneLineArgumentParser(
        prog=prog,
        description="Serve the team hub: MCP at /mcp and the sync API at /sync/, for tokens"
        " made with `aletheia mcp-link create`.",
        epilog="Environment: ALETHEIA_HUB_DB (instead of --hub-db), ALETHEIA_DATA_DIR,"
        " ALETHEIA_HUB_POOL_SIZE (instead of --pool-size), ALETHEIA_HUB_SEARCH_CACHE_MB"
        " (instead of --search-cache-mb), ALETHEIA_CWD, ALETHEIA_SEMANTIC (on: semantic recall"
        " too, for a SQLite hub).",
    )
    parser.add_argument("--version", action="version", version=f"{prog}, version {__version__}")
    parser.add_argument(
        "--hub-db",
        help="the hub's store file or postgresql:// URL (default: ALETHEIA_HUB_DB, else"
        " hub/hub.db in the data folder: ALETHEIA_DATA_DIR, default ~/.aletheia)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=whole_number,
        default=DEFAULT_HUB_PORT,
        help="port; 0 takes a free one (default 8787)",
    )
    parser.add_argument("--tls-cert", help="PEM certificate chain: serve HTTPS")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument(
        "--rate-limit",
        type=whole_number,
        default=DEFAULT_PER_MINUTE,
        metavar="N",
        help="requests per minute per token (default 60; 0 turns the limit off)",
    )
    parser.add_argument(
        "--max-connections",
        type=whole_number,
        default=connections.TOTAL,
        metavar="N",
        help=f"open connections at most, in total (default {connections.TOTAL})",
    )
    parser.add_argument(
        "--max-client-connections",
        type=whole_number,
        default=connections.PER_CLIENT,
        metavar="N",
        help=f"open connections at most per client address (default {connections.PER_CLIENT})",
    )
    parser.add_argument(
        "--header-timeout",
        type=decimal_number,
        default=connections.HEADER_SECONDS,
        metavar="SECONDS",
        help="close a connection whose request headers take longer (default 10)",
    )
    parser.add_argument(
        "--pool-size",
        type=whole_number,
        metavar="N",
        help="PostgreSQL connections this process keeps at most (default 8; a postgresql://"
        " hub only): every process's N together must stay under the server's max_connections",
    )
    parser.add_argument(
        "--search-cache-mb",
        type=whole_number,
        metavar="MB",
        help="postings of recently searched terms this process holds (default 50; a"
        " postgresql:// hub only): raise it when searches slow down on a large hub",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host header name, e.g. a tunnel's public name (repeatable)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept requests from this browser origin (repeatable)",
    )
    return parser


def _check(args: argparse.Namespace) -> tuple[Path | str, int]:
    """The hub's store (a file path, or a ``postgresql://`` URL) and the port.

    Raises:
        InvalidInputError: a bad port, half a TLS pair, a missing file, a pool for a file.
    """
    hub_db = hub_target(args.hub_db) if args.hub_db else hub_db_path()
    _check_database_options(args, hub_db)
    if bool(args.tls_cert) != bool(args.tls_key):
        raise InvalidInputError("--tls-cert and --tls-key go together.")
    for name, value in (("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key)):
        if value and not Path(value).is_file():
            raise InvalidInputError(f"{name}: no file at {value}.")
    if args.tls_cert:
        _check_tls_pair(args.tls_cert, args.tls_key)
    if args.rate_limit < 0:
        raise InvalidInputError("--rate-limit must be 0 or more.")
    if args.max_connections < 1 or args.max_client_connections < 1:
        raise InvalidInputError("--max-connections and --max-client-connections must be 1 or more.")
    if not 0 < args.header_timeout <= 3600:
        raise InvalidInputError("--header-timeout must be more than 0 and at most 3600 seconds.")
    return hub_db, parse_port(str(args.port), "--port")


def _check_tls_pair(cert: str, key: str) -> None:
    """Load the pair as the server will, before serving: not PEM, or a key of another
    certificate, is one line here instead of a traceback at startup. The hub cannot ask for
    a passphrase, so an encrypted key is refused too.

    Raises:
        InvalidInputError: the pair cannot serve HTTPS.
    """
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            cert, key, password=lambda: b""
        )
    except OSError as error:  # ssl.SSLError included
        reason = getattr(error, "reason", None) or error.strerror or error
        raise InvalidInputError(
            f"--tls-cert/--tls-key cannot serve HTTPS: {reason} ({cert}, {key})."
        ) from None


def _check_database_options(args: argparse.Namespace, hub_db: Path | str) -> None:
    """``--pool-size`` and ``--search-cache-mb`` (or their variables): for a PostgreSQL hub
    only, and in range.

    Raises:
        InvalidInputError: either one for a SQLite file, or out of range.
    """
    if args.pool_size is None:
        args.pool_size = hub_pool_size()
    if args.search_cache_mb is None:
        args.search_cache_mb = hub_search_cache_mb()
    for flag, value, top in (
        ("--pool-size", args.pool_size, MAX_POOL_SIZE),
        ("--search-cache-mb", args.search_cache_mb, MAX_SEARCH_CACHE_MB),
    ):
        if value is not None and not isinstance(hub_db, str):
            raise InvalidInputError(f"{flag} is for a postgresql:// hub, not a SQLite file.")
        if value is not None and not 1 <= value <= top:
            raise InvalidInputError(f"{flag} must be from 1 to {top}.")


def _server_options(args: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's protocol with the connection limits, and the keep-alive time."""
    limits = connections.ConnectionLimits(
        per_client=args.max_client_connections,
        total=connections.total_within_file_limit(args.max_connections),
        header_seconds=args.header_timeout,
    )
    return {
        "http": connections.guarded_protocol(limits),
        "timeout_keep_alive": connections.IDLE_SECONDS,
        "log_config": None,  # uvicorn logs through the root logger, bounded (log_bounds)
    }


def serve(args: argparse.Namespace, hub_db: Path | str, port: int) -> int:
    """Run the hub until SIGINT or SIGTERM; returns the exit code."""
    problem = misplaced(hub_db, hub_db_chosen_by(args.hub_db or None))  # a mistyped path
    if problem is not None:
        raise problem  # exits_on_store_problem tells it: exit code 7
    settings = load_settings()
    if isinstance(hub_db, Path):
        settings = replace(settings, store=hub_db)
    try:
        app = open_hub_app(
            settings, hub_db, pool_size=args.pool_size, search_cache_mb=args.search_cache_mb
        )
    except (StoreBrokenError, StoreReadOnlyError, NoStoreError, StoreTooNewError):
        raise  # exits_on_store_problem tells these, with their own exit codes
    except AletheiaError as error:  # PostgreSQL unreachable, or refusing the role: one line
        sys.stderr.write(f"aletheia-sync: {error.message}\n")
        return 1
    hosts = served_hosts(args.host, args.allow_host)
    writes = write_turns(serial=isinstance(hub_db, Path))  # PostgreSQL: no turns
    audits = AuditQueue(hub_store(app), writes)
    asgi = create_hub_app(
        replace(app, caller="hub"),
        limiter=SharedRateLimiter(hub_store(app).rate_windows(), args.rate_limit, clock=app.clock),
        allowed_hosts=hosts,
        allowed_origins=args.allow_origin,
        writes=writes,
        audits=audits,
        # PostgreSQL: several processes, each reading a client's token and session twice a
        # second at most
        remember_seconds=0.0 if isinstance(hub_db, Path) else TOKEN_CACHE_SECONDS,
    )
    try:
        run_until_signal(
            asgi,
            args.host,
            port,
            lambda url: f"aletheia-sync listening on {url} (MCP at {url}/mcp)",
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            options=_server_options(args),
        )
    finally:
        try:
            audits.close()  # the reads' rows still queued
        finally:
            app.store.close()
    return 0


def main(argv: Sequence[str] | None = None, prog: str = "aletheia-sync") -> None:
    """Entry point of ``aletheia-sync`` (and ``aletheia hub``, with that ``prog``)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format=f"{prog}: %(message)s")
    bound_every_handler()
    args = parse_args(argv, prog)
    try:
        hub_db, port = _check(args)
    except InvalidInputError as error:
        sys.stderr.write(f"{prog}: {error.message}\n")
        sys.exit(2)
    with exits_on_store_problem("aletheia-sync"):
        code = serve(args, hub_db, port)
    sys.exit(code)


if __name__ == "__main__":
    main()
