"""``aletheia``: the command line for people."""

from __future__ import annotations

import click

from aletheia import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aletheia")
def cli() -> None:
    """Aletheia: one shared memory for your AI coding tools."""


def main() -> None:
    cli()
