"""Every command and subcommand explains itself."""

from __future__ import annotations

import re

import click
import pytest

from aletheia_mem.cli.main import cli
from tests.cli.conftest import Invoke


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


def _paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name in group.list_commands(click.Context(group)):
        found.append((*prefix, name))
        command = _command((*prefix, name))
        if isinstance(command, click.Group):
            found += _paths(command, (*prefix, name))
    return found


PEOPLE_COMMANDS = [
    ("save",), ("search",), ("show",), ("timeline",), ("context",), ("dismiss",), ("restore",),
    ("facts",), ("facts", "add"), ("facts", "history"),
    ("rules",), ("rules", "list"), ("rules", "add"), ("rules", "confirm"), ("rules", "disable"),
    ("rules", "sync"), ("lists",), ("lists", "list"), ("lists", "read"), ("lists", "write"),
    ("export",), ("import",), ("connect",), ("install",), ("doctor",),
    ("mcp",), ("serve",), ("hub",), ("hook",), ("completion",),
    ("sync",), ("mcp-link",), ("audit",),
]  # fmt: skip
# It hands --help to the script it runs (aletheia-hook).
PASS_THROUGH = {("hook",): "Usage: aletheia-hook EVENT"}


def test_every_command_of_the_issue_is_registered() -> None:
    assert set(PEOPLE_COMMANDS) <= set(_paths(cli))


@pytest.mark.parametrize("path", _paths(cli), ids=" ".join)
def test_every_command_has_help(run: Invoke, path: tuple[str, ...]) -> None:
    result = run(*path, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith(PASS_THROUGH.get(path, "Usage: "))
    command = _command(path)
    assert command.help and command.help.strip()
    if path in PASS_THROUGH:
        return
    assert command.help.split("\n")[0].strip() in " ".join(result.stdout.split()) or (
        command.help.split()[0] in result.stdout
    )


@pytest.mark.parametrize("path", sorted(PASS_THROUGH), ids=" ".join)
def test_a_pass_through_command_names_what_its_script_takes(
    run: Invoke, path: tuple[str, ...]
) -> None:
    """The docs' CLI page shows this command's own help (the script's --help is not click's):
    it names every EVENT of aletheia-hook."""
    script_help = run(*path, "--help").stdout
    events = script_help.split("EVENT:", 1)[1].split(";", 1)[0]
    wanted = set(re.findall(r"[a-z]+(?:-[a-z]+)*", events)) - {"or"}
    assert len(wanted) >= 5
    help_text = " ".join((_command(path).help or "").split())
    assert {word for word in wanted if word not in help_text} == set()


def test_the_fish_completion_help_makes_its_folder_first(run: Invoke) -> None:
    """On a fresh home ~/.config/fish/completions is missing: the redirect alone would fail."""
    lines = [line.strip() for line in run("completion", "--help").stdout.splitlines()]
    made = lines.index("fish:  mkdir -p ~/.config/fish/completions")
    assert lines[made + 1].startswith("aletheia completion fish > ~/.config/fish/completions/")
