"""The server scripts' option parser (``aletheia-server``, ``aletheia-sync``, ``aletheia hub``):
argparse, with a mistyped option told as the rest of the CLI tells it, in one line."""

from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``Error: ...`` line with a pointer to
    ``--help`` (exit code 2), instead of argparse's usage block; ``--help`` is unchanged."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        text = text[:1].upper() + text[1:]
        end = "" if text.endswith((".", "?", "!")) else "."
        self.exit(2, f"Error: {text}{end} Try '{self.prog} --help'.\n")
