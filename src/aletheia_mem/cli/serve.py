"""``aletheia serve``: the same server as ``aletheia-server``, started from the CLI."""

from __future__ import annotations

import sys

import click

from aletheia_mem import __version__
from aletheia_mem.config import load_http_settings, load_settings
from aletheia_mem.errors import InvalidInputError


@click.command()
@click.version_option(__version__, prog_name="aletheia serve")
@click.option("--host", help="Address to bind.  [default: 127.0.0.1]")
@click.option(
    "--port", help="Port to bind; 0 takes a free one.  [default: ALETHEIA_PORT, else 8765]"
)
@click.option(
    "--allow-origin",
    "origins",
    multiple=True,
    metavar="ORIGIN",
    help="Also accept requests from this browser origin (repeatable).",
)
@click.option(
    "--allow-host",
    "hosts",
    multiple=True,
    metavar="HOST",
    help="Also accept this Host header name, e.g. when binding 0.0.0.0 (repeatable).",
)
@click.option(
    "--workers",
    help="Worker processes sharing the port and the store."
    "  [default: ALETHEIA_WORKERS, else 2 on 2+ cores]",
)
@click.option(
    "--trusted-network",
    is_flag=True,
    help="Serve a non-loopback --host without ALETHEIA_API_KEY: everyone who reaches the"
    " address reads and writes every memory.",
)
def serve(
    host: str | None,
    port: str | None,
    origins: tuple[str, ...],
    hosts: tuple[str, ...],
    workers: str | None,
    trusted_network: bool,
) -> None:
    """Serve MCP over HTTP at /mcp and the JSON API at /api/.

    Needs no token unless ALETHEIA_API_KEY is set; then every request must carry
    "Authorization: Bearer <key>". Stops on Ctrl-C or SIGTERM.
    """
    # Imported here so that the rest of the CLI starts without the HTTP stack.
    from aletheia_mem.server.http_main import serve as run_server
    from aletheia_mem.server.http_main import with_options

    try:
        http = with_options(
            load_http_settings(), host, port, origins, hosts, workers, trusted_network
        )
    except InvalidInputError as error:
        raise click.UsageError(error.message) from None
    sys.exit(run_server(load_settings(), http))
