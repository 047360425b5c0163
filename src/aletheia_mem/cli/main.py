"""``aletheia``: the command line, one click group whose commands load on first use.

Each command lives in its own module, imported only when that command runs, completes or shows
its help, so ``aletheia --version`` and ``aletheia <one command>`` never pay for the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import click

from aletheia_mem import __version__

# Command name -> "module:attribute" of its click command.
COMMANDS: Mapping[str, str] = {
    "save": "aletheia_mem.cli.memory_commands:save",
    "search": "aletheia_mem.cli.memory_commands:search",
    "show": "aletheia_mem.cli.memory_commands:show",
    "timeline": "aletheia_mem.cli.memory_commands:timeline",
    "context": "aletheia_mem.cli.memory_commands:context",
    "dismiss": "aletheia_mem.cli.memory_commands:dismiss",
    "restore": "aletheia_mem.cli.memory_commands:restore",
    "facts": "aletheia_mem.cli.facts:facts",
    "rules": "aletheia_mem.cli.rules:rules",
    "lists": "aletheia_mem.cli.lists:lists",
    "export": "aletheia_mem.cli.transfer:export_command",
    "import": "aletheia_mem.cli.transfer:import_command",
    "connect": "aletheia_mem.cli.connect:connect",
    "install": "aletheia_mem.cli.install:install",
    "doctor": "aletheia_mem.cli.doctor:doctor",
    "mcp": "aletheia_mem.cli.servers:mcp",
    "serve": "aletheia_mem.cli.serve:serve",
    "hub": "aletheia_mem.cli.servers:hub",
    "hook": "aletheia_mem.cli.servers:hook",
    "sync": "aletheia_mem.cli.sync:sync",
    "mcp-link": "aletheia_mem.cli.mcp_link:mcp_link",
    "audit": "aletheia_mem.cli.audit:audit",
    "completion": "aletheia_mem.cli.completion:completion",
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is looked up."""

    def __init__(self, *args: object, lazy_commands: Mapping[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy_commands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="aletheia")
def cli() -> None:
    """Aletheia: one shared memory for your AI coding tools."""


def main() -> None:
    """Entry point of ``aletheia`` and ``aletheia-mem``."""
    cli()
