"""``aletheia mcp``, ``aletheia hub`` and ``aletheia hook``: the servers and the hook runner.

Each runs the same code as its own script (``aletheia-mcp``, ``aletheia-sync``,
``aletheia-hook``), imported only when the command runs.
"""

from __future__ import annotations

import click

from aletheia_mem import __version__

# The pass-through commands hand every argument, --help included, to the script they run.
PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True}


@click.command("mcp")
@click.version_option(__version__, prog_name="aletheia mcp")
def mcp() -> None:
    """Serve MCP over stdio for the coding tool that starts it (as aletheia-mcp).

    Configured by the environment: ALETHEIA_DATA_DIR (the store's folder, default
    ~/.aletheia), ALETHEIA_HUB_DB (a store file or postgresql:// URL used instead),
    ALETHEIA_TOOL (the caller's name recorded with writes), ALETHEIA_CWD (the
    folder whose project is the default), ALETHEIA_SEMANTIC=on (semantic recall).
    """
    from aletheia_mem.server.stdio import run

    run()


@click.command("hub", context_settings=PASS_THROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hub(args: tuple[str, ...]) -> None:
    """Serve the team hub (as aletheia-sync): MCP at /mcp, the sync API at /sync/.

    Takes aletheia-sync's options (aletheia hub --help explains them): --hub-db (default:
    ALETHEIA_HUB_DB, else hub/hub.db in the data folder), --host, --port (default 8787),
    --tls-cert, --tls-key, --rate-limit, --max-connections, --max-client-connections,
    --header-timeout, --pool-size, --search-cache-mb, --allow-host, --allow-origin.
    """
    from aletheia_mem.hub.main import main as run_hub

    run_hub(list(args), prog="aletheia hub")


@click.command("hook", context_settings=PASS_THROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(args: tuple[str, ...]) -> None:
    """Run a capture hook (as aletheia-hook) for EVENT, with the host's JSON on standard input.

    EVENT: session-start, user-prompt, post-tool-use, session-end or stop; without it, the
    payload's hook_event_name. Always exits 0, silent on any error.
    """
    from aletheia_mem.hooks.main import main as run_hook

    run_hook(list(args))
