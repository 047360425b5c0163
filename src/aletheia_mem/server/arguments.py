"""The server scripts' option parser (``aletheia-server``, ``aletheia-sync``, ``aletheia hub``):
argparse, with a mistyped option told as the rest of the CLI tells it, in one line, and its
numbers read as the CLI reads them (``number_text``)."""

from __future__ import annotations

import argparse
import math
from typing import NoReturn

from aletheia_mem.number_text import ascii_number, not_whole


def whole_number(text: str) -> int:
    """An option's whole number (argparse ``type``), in the ASCII digits 0-9 as the ``aletheia``
    CLI reads its counts: ``int`` also reads other scripts' digits ("\u0661\u0662"), "1_000"
    and blanks around it. A sign is read, so that "-1" is told the option's range.

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    value = ascii_number(text)
    if not isinstance(value, int):
        raise argparse.ArgumentTypeError(not_whole(text))
    return value


def decimal_number(text: str) -> float:
    """An option's number of seconds (argparse ``type``), whole or decimal ("2.5"), in the
    ASCII digits 0-9: ``float`` also reads other scripts' digits, "1_0", blanks, "inf" and
    "nan".

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    value = ascii_number(text)
    if value is None or not math.isfinite(value):  # "1e999" is a float too big: inf
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in the digits 0-9.")
    return float(value)


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``Error: ...`` line with a pointer to
    ``--help`` (exit code 2), instead of argparse's usage block; ``--help`` is unchanged."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        text = text[:1].upper() + text[1:]
        end = "" if text.endswith((".", "?", "!")) else "."
        self.exit(2, f"Error: {text}{end} Try '{self.prog} --help'.\n")
