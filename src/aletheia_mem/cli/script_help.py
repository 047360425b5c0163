"""A command that runs a server script with its own argparse parser (``aletheia hub`` runs
``aletheia-sync``'s), its ``--help`` in click's style like every other command's.

The arguments go to the script untouched, so its checks and its one-line errors are the
script's; only the help is click's, listing the options of the script's parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import click

# Everything on the command line goes to the script, except --help, which click answers.
PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True}


def _sentence(text: str) -> str:
    """argparse's help (``address to bind (default 127.0.0.1)``) as click's commands write it:
    a capital first letter and a full stop."""
    text = " ".join(text.split())
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def script_option(action: argparse.Action) -> click.Option:
    """The option ``action`` reads, as a click option that only shows in the help."""
    if isinstance(action, argparse._VersionAction):
        return click.Option(action.option_strings, is_flag=True, help="Show the version and exit.")
    flag = action.nargs == 0  # store_true and the like take no value
    kind: click.ParamType[Any] = (
        click.INT if action.type is int else click.FLOAT if action.type is float else click.STRING
    )
    return click.Option(
        action.option_strings,
        is_flag=flag,
        type=None if flag else kind,
        metavar=None if flag or action.metavar is None else str(action.metavar),
        multiple=isinstance(action, argparse._AppendAction),
        help=_sentence(action.help or ""),
    )


class ScriptCommand(click.Command):
    """A click command that hands its arguments to a script's parser (``parser``, made only
    when the help is shown) and whose ``--help`` lists that parser's options."""

    def __init__(
        self, *args: Any, parser: Callable[[], argparse.ArgumentParser], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._make_parser = parser
        self._parser: argparse.ArgumentParser | None = None

    def parser(self) -> argparse.ArgumentParser:
        if self._parser is None:
            self._parser = self._make_parser()
        return self._parser

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [self.options_metavar or "[OPTIONS]"]

    def help_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The options the help shows: the script's, then click's --help."""
        actions: Sequence[argparse.Action] = self.parser()._actions
        shown: list[click.Parameter] = [
            script_option(action)
            for action in actions
            if action.option_strings and not isinstance(action, argparse._HelpAction)
        ]
        help_option = self.get_help_option(ctx)
        return [*shown, help_option] if help_option is not None else shown

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [record for p in self.help_params(ctx) if (record := p.get_help_record(ctx))]
        with formatter.section("Options"):
            formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        epilog = self.parser().epilog
        if epilog:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(epilog)
