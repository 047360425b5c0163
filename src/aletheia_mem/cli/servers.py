"""``aletheia mcp``, ``aletheia hub`` and ``aletheia hook``: the servers and the hook runner.

Each runs the same code as its own script (``aletheia-mcp``, ``aletheia-sync``,
``aletheia-hook``), imported only when the command runs.
"""

from __future__ import annotations

import argparse

import click

from aletheia_mem import __version__
from aletheia_mem.cli.script_help import PASS_THROUGH, ScriptCommand


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


def _hub_parser() -> argparse.ArgumentParser:
    from aletheia_mem.hub.main import build_parser

    return build_parser("aletheia hub")


@click.command("hub", cls=ScriptCommand, parser=_hub_parser, context_settings=PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hub(args: tuple[str, ...]) -> None:
    """Serve the team hub (as aletheia-sync): MCP at /mcp and the sync API at /sync/, for
    tokens made with aletheia mcp-link create. Stops on Ctrl-C or SIGTERM.

    It binds 127.0.0.1:8787 unless told otherwise and keeps its store in hub/hub.db in the
    data folder unless --hub-db or ALETHEIA_HUB_DB names another (a file or a postgresql://
    URL).
    """
    from aletheia_mem.hub.main import main as run_hub

    run_hub(list(args), prog="aletheia hub")


# aletheia-hook answers --help itself (its own text, in click's style).
@click.command("hook", context_settings=PASS_THROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(args: tuple[str, ...]) -> None:
    """Run a capture hook (as aletheia-hook) for EVENT, with the host's JSON on standard input.

    EVENT: session-start, user-prompt, post-tool-use, session-end or stop; without it, the
    payload's hook_event_name. Always exits 0, silent on any error.
    """
    from aletheia_mem.hooks.main import main as run_hook

    run_hook(list(args))
