"""``aletheia``: the command line for people."""

from __future__ import annotations

import click

from aletheia_mem import __version__
from aletheia_mem.cli.serve import serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aletheia")
def cli() -> None:
    """Aletheia: one shared memory for your AI coding tools."""


cli.add_command(serve)


def _register_people_commands() -> None:
    """The commands for people: memories, facts, rules, lists, transfer, hosts, doctor."""
    from aletheia_mem.cli import (
        connect,
        doctor,
        facts,
        install,
        lists,
        memory_commands,
        rules,
        transfer,
    )

    for command in (
        *memory_commands.COMMANDS,
        facts.facts,
        rules.rules,
        lists.lists,
        transfer.export_command,
        transfer.import_command,
        connect.connect,
        install.install,
        doctor.doctor,
    ):
        cli.add_command(command)


_register_people_commands()


def _register_hub_commands() -> None:
    """The team hub's commands: mcp-link, audit, sync."""
    from aletheia_mem.cli import audit, mcp_link, sync

    for command in (mcp_link.mcp_link, audit.audit, sync.sync):
        cli.add_command(command)


_register_hub_commands()


def main() -> None:
    cli()
