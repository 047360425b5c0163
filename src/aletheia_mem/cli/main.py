"""``aletheia``: the command line, one click group whose commands load on first use.

Each command lives in its own module, imported only when that command runs, completes or shows
its help, so ``aletheia --version`` and ``aletheia <one command>`` never pay for the others.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping
from typing import IO, Any

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
    "uninstall": "aletheia_mem.cli.uninstall:uninstall",
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


JSON_FLAG = "aletheia.json"  # ctx.meta key: the command line asked for --json


class OneLineUsageError(click.UsageError):
    """Bad input caught by click (a wrong option, argument or value), told like every other
    error: one ``Error: ...`` line on stderr and, with ``--json``, the error object on stdout."""

    def __init__(self, error: click.UsageError, *, as_json: bool) -> None:
        super().__init__(_told(error), error.ctx)
        self.as_json = as_json

    def show(self, file: IO[Any] | None = None) -> None:
        from aletheia_mem.cli.terminal import bounded, json_safe, one_line_safe

        message = bounded(one_line_safe(self.format_message()))
        if self.as_json:
            error = {"error": {"code": "invalid_input", "message": message}}
            click.echo(json_safe(json.dumps(error, ensure_ascii=False, indent=2)))
        if self.ctx is not None:
            end = "" if message.endswith((".", "?", "!")) else "."
            message += f"{end} Try '{self.ctx.command_path} --help'."
        click.echo(f"Error: {message}", err=True, color=False)


MAX_SHOWN_OPTION = 40  # characters of an unknown option an error repeats
# An option's shape: what a mistyped option looks like, not a text that starts with "-".
_OPTION_SHAPE = re.compile(r"--[A-Za-z][A-Za-z0-9-]*(=.*)?", re.DOTALL)


def _told(error: click.UsageError) -> str:
    """What a usage error says, with its secrets redacted: the value it quotes may be a text
    meant as an argument (``aletheia save "$(cat key.txt)"`` of a text starting with ``-``)."""
    from aletheia_mem.domain.redaction import redact_secrets

    if isinstance(error, click.NoSuchOption):
        return _no_such_option(error, redact_secrets)
    return redact_secrets(_choices_in_line(error.format_message()))


def _no_such_option(error: click.NoSuchOption, redact: Callable[[str], str]) -> str:
    """An unknown option redacted and cut to ``MAX_SHOWN_OPTION`` characters; for a command
    that takes an argument, unless it looks like a mistyped ``--option``, how to pass a text
    that starts with ``-``."""
    name = _cut(redact(error.option_name))
    suggestion = error.format_message().removeprefix(error.message)  # " Did you mean ...?"
    told = f"No such option {name!r}.{suggestion}"
    command = error.ctx.command if error.ctx is not None else None
    takes_text = command is not None and any(
        isinstance(param, click.Argument) for param in command.params
    )
    if takes_text and not _OPTION_SHAPE.fullmatch(error.option_name):
        told += " To pass a text that starts with -, put -- before it."
    return told


def _cut(name: str) -> str:
    """``name`` cut to ``MAX_SHOWN_OPTION`` characters, a redaction's mark kept whole."""
    from aletheia_mem.domain.redaction_values import REDACTED

    if len(name) <= MAX_SHOWN_OPTION:
        return name
    # a mark that the cut would split: from MAX_SHOWN_OPTION - 9 to MAX_SHOWN_OPTION - 1
    mark = name.find(REDACTED, MAX_SHOWN_OPTION - len(REDACTED) + 1, MAX_SHOWN_OPTION * 2)
    mark = mark if mark < MAX_SHOWN_OPTION else -1
    end = MAX_SHOWN_OPTION if mark < 0 else mark + len(REDACTED)
    return name[:end] + "..." if end < len(name) else name


def _choices_in_line(message: str) -> str:
    """Click lists a missing choice's values one per line (``Choose from:\\n\\tbash,``...):
    here they follow on the same line."""
    head, found, choices = message.partition("Choose from:\n\t")
    listed = " ".join(choices.split()).rstrip(".")
    return f"{head}Choose from: {listed}." if found else message


def one_line(error: click.UsageError, ctx: click.Context) -> click.UsageError:
    """``error`` as a one-line error; a group run without a command still shows its help."""
    if isinstance(error, click.exceptions.NoArgsIsHelpError | OneLineUsageError):
        return error
    return OneLineUsageError(error, as_json=bool(ctx.meta.get(JSON_FLAG)))


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is looked up, and tells
    a usage error in one line."""

    def __init__(self, *args: object, lazy_commands: Mapping[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands = dict(lazy_commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[JSON_FLAG] = "--json" in args
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            raise one_line(error, ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise one_line(error, ctx) from None

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
