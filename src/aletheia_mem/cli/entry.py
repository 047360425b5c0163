"""The ``aletheia`` and ``aletheia-mem`` scripts.

Two calls are answered before click and the commands load: ``--version`` alone, and ``mcp``
alone, which a coding tool runs at the start of every session (``uvx aletheia-mem mcp``), so it
starts exactly as fast as ``aletheia-mcp``. Everything else goes to the click application,
:data:`aletheia_mem.cli.main.cli`. This module imports nothing but ``sys`` (even ``typing`` or
``collections`` would cost ``--version`` several milliseconds).
"""

from __future__ import annotations

import sys

from aletheia_mem import __version__

VERSION_LINE = f"aletheia, version {__version__}"


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``aletheia``, ``aletheia-mem`` and ``python -m aletheia_mem``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        sys.stdout.write(VERSION_LINE + "\n")
        return
    if args == ["mcp"]:
        from aletheia_mem.server.stdio import run

        run()
        return
    from aletheia_mem.cli.main import cli
    from aletheia_mem.storage.store_file import exits_on_store_problem

    with exits_on_store_problem("aletheia"):  # from a command without its own handler
        cli.main(args)
