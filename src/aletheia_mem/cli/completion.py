"""``aletheia completion bash|zsh|fish``: the shell's completion script for the CLI."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL; load it from your shell's startup file.

    \b
    bash:  eval "$(aletheia completion bash)"         in ~/.bashrc
    zsh:   eval "$(aletheia completion zsh)"          in ~/.zshrc
    fish:  mkdir -p ~/.config/fish/completions
           aletheia completion fish > ~/.config/fish/completions/aletheia.fish
    """
    root = ctx.find_root()
    prog_name = _program(root.info_name)
    complete_var = "_{}_COMPLETE".format(prog_name.replace("-", "_").upper())
    shell_class = get_completion_class(shell)
    if shell_class is None:  # click knows every shell in SHELLS
        raise click.UsageError(f"No completion for {shell}.")
    click.echo(shell_class(root.command, {}, prog_name, complete_var).source())


def _program(name: str | None) -> str:
    """The command the script completes: ``aletheia-mem`` when run as that, else ``aletheia``."""
    return "aletheia-mem" if name == "aletheia-mem" else "aletheia"
