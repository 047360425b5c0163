"""What every command shares: the store it opens, ``--json``, colour, tables and errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from aletheia_mem.cli.terminal import bounded, json_safe, one_line_safe, terminal_safe
from aletheia_mem.cli.textwidth import cut, display_width, pad
from aletheia_mem.config import Settings, load_excluded_projects, load_settings
from aletheia_mem.errors import (
    AletheiaError,
    InvalidInputError,
    NoStoreError,
    StoreBrokenError,
    StoreReadOnlyError,
    StoreTooNewError,
)
from aletheia_mem.number_text import ascii_number, ascii_whole, not_whole
from aletheia_mem.server.wiring import close_app, open_app
from aletheia_mem.storage.open import display_target, hub_store_exists
from aletheia_mem.storage.store_file import check_place, misplaced, store_problem
from aletheia_mem.timefmt import format_instant
from aletheia_mem.tools.app import AppContext

F = TypeVar("F", bound=Callable[..., Any])
# The commands that take -p '*' (every project), named where another command refuses it
EVERY_PROJECT = "search, timeline and lists list"
CLI_CALLER = "cli"
# Exit codes by error code; the README's CLI section lists them. Anything else exits 1.
EXIT_CODES = {
    "invalid_input": 2,
    "not_found": 3,
    "conflict": 4,
    "forbidden": 5,  # the hub refused the token (aletheia sync)
    "rate_limited": 6,  # the hub's per-token limit (aletheia sync)
    NoStoreError.code: NoStoreError.exit_code,
    StoreBrokenError.code: StoreBrokenError.exit_code,
    StoreReadOnlyError.code: StoreReadOnlyError.exit_code,
    StoreTooNewError.code: StoreTooNewError.exit_code,
}


class ItemId(click.IntRange):
    """An item's id, as SQLite's INTEGER holds it: a larger one is bad input, not a crash.
    Named "id" so that a word where an id belongs reads "'abc' is not a valid id."; so does an
    id that is not ASCII digits alone ("\uff11", "\u0663", "1_0", " 3", "+3"), which ``int``
    reads."""

    name = "id"

    def __init__(self) -> None:
        super().__init__(1, 2**63 - 1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and ascii_whole(value) is None:
            self.fail(f"{value!r} is not a valid {self.name}.", param, ctx)
        return super().convert(value, param, ctx)


ITEM_ID = ItemId()


class Count(click.IntRange):
    """A count or a place in a list (``--limit``, ``--offset``, ``--before``, ``--after``,
    ``--page-size``), read from ASCII digits as an id is: ``int`` also reads other scripts'
    digits ("\uff11\uff10", "\u0663") and "1_0", which would page where nobody asked. A sign
    is read, so that "-1" is told the range."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not isinstance(ascii_number(value), int):
            self.fail(not_whole(value), param, ctx)
        return super().convert(value, param, ctx)


def require_store(path: Path, hint: str) -> Path:
    """``path`` if a store file is there.

    Raises:
        NoStoreError: nothing is there; ``hint`` says where the path came from.
        StoreBrokenError: a folder or a special file is there.
    """
    if not check_place(path):  # a folder there is a broken store, as a save finds it
        raise NoStoreError(f"No store at {path}: {hint}")
    return path


def misplaced_store(settings: Settings) -> NoStoreError | None:
    """The error when a file stands where the store's folder should be, else None."""
    return misplaced(settings.store, settings.store_variable)


def existing_store(settings: Settings) -> Path | str:
    """The store in use, which must be there already: a file, or a database holding a store's
    tables (checked without making them: opening a database migrates it).

    Raises:
        NoStoreError: a file stands where its folder should be, no store file is there, or
            the database has no store's tables.
        StoreUnavailableError: the database cannot be reached.
    """
    problem = misplaced_store(settings)
    if problem is not None:
        raise problem
    if isinstance(settings.store, Path):
        require_store(settings.store, local_store_hint(settings))
    elif not hub_store_exists(settings.store):
        raise NoStoreError(
            f"No store at {display_target(settings.store)}: the database has no tables yet"
            f" ({settings.store_variable}); aletheia-sync --hub-db with this URL, or a save"
            " (aletheia save), creates them."
        )
    return settings.store


def local_store_hint(settings: Settings) -> str:
    """Where a missing store's path came from: ``ALETHEIA_HUB_DB`` or ``ALETHEIA_DATA_DIR``."""
    variable = settings.store_variable
    named = os.environ.get(variable, "").strip()
    if not named:  # nothing to check: the default folder is in use
        return (
            f"{variable} is not set, so the default folder is used; save something first to"
            " start a store there."
        )
    return f'{variable} is "{named}"; check it, or save something first to start a store there.'


def use_colour() -> bool | None:
    """False when ``NO_COLOR`` is set; otherwise click decides (a terminal gets colour)."""
    return False if os.environ.get("NO_COLOR") else None


def echo(text: str = "", *, err: bool = False) -> None:
    click.echo(text, err=err, color=use_colour())


def style(text: str, **styles: Any) -> str:
    return click.style(text, **styles)


def emit_json(value: Any) -> None:
    click.echo(json_safe(json.dumps(value, ensure_ascii=False, indent=2)))


# The fields of stored items that hold a time (epoch milliseconds in the store and in exports).
TIME_FIELDS = (
    "created_at",
    "updated_at",
    "dismissed_at",
    "valid_from",
    "valid_to",
    "recorded_at",
    "added_at",
    "last_confirmed_at",
)


def instant_json(ms: int | None) -> str | None:
    """A time as ``--json`` shows it: a UTC instant, ``2026-10-29T19:46:45.563Z``."""
    return None if ms is None else format_instant(ms)


def projects_json(projects: Sequence[str] | None) -> list[str]:
    """A token's projects as ``--json`` shows them: its list, or ``["*"]`` for every project,
    as ``--projects "*"`` made it and the text output shows it."""
    return ["*"] if projects is None else list(projects)


def record_json(item: Any) -> dict[str, Any]:
    """A stored item (memory, fact, rule) as ``--json`` shows it: its fields, every time as a
    UTC instant."""
    data: dict[str, Any] = asdict(item)
    for key in TIME_FIELDS:
        if key in data:
            data[key] = instant_json(data[key])
    return data


def json_option(function: F) -> F:
    """``--json``: machine-readable output on stdout."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print JSON for scripts instead of text."
    )(function)


def fail(message: str, code: int = 1, *, as_json: bool = False, kind: str = "error") -> None:
    """Print an error (JSON on stdout with ``--json``) and exit with ``code``."""
    message = bounded(message)
    if as_json:
        emit_json({"error": {"code": kind, "message": message}})
    echo(style("Error: ", fg="red", bold=True) + terminal_safe(message), err=True)
    sys.exit(code)


def fail_with(error: AletheiaError, *, as_json: bool = False) -> None:
    """Report an expected failure and exit with the code of its kind."""
    fail(error.message, EXIT_CODES.get(error.code, 1), as_json=as_json, kind=error.code)


# What Python makes of argument bytes that are not UTF-8 (surrogateescape): such text can be
# neither stored nor exported. A path (click.Path) is no str here and keeps its bytes.
_NOT_UTF8 = re.compile("[\ud800-\udfff]")


def check_utf8_arguments(arguments: dict[str, Any]) -> None:
    """Refuse a text argument or option holding bytes that are not UTF-8, naming it.

    Raises:
        InvalidInputError: one does, shown with its bad bytes as ``\\xff`` escapes.
    """
    for name, value in arguments.items():
        for text in value if isinstance(value, tuple) else (value,):
            if isinstance(text, str) and not text.isascii() and _NOT_UTF8.search(text):
                shown = text.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
                raise InvalidInputError(f"{_label(name)} is not UTF-8 text: {shown}")


def _label(name: str) -> str:
    """How the command line names a parameter: its longest option, or its metavar."""
    context = click.get_current_context(silent=True)
    if context is None:
        return name
    for param in context.command.params:
        if param.name == name:
            if isinstance(param, click.Option):
                return max(param.opts, key=len)
            return param.make_metavar(context)
    return name


def handles_errors(function: F) -> F:
    """Turn an :class:`AletheiaError` into a message and an exit code by its ``code``."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            check_utf8_arguments(kwargs)
            return function(*args, **kwargs)
        except sqlite3.Error as error:  # a store damaged or made read-only while in use
            store = cli_settings().store
            problem = store_problem(store, error) if isinstance(store, Path) else None
            if problem is None:
                raise
            fail_with(problem, as_json=bool(kwargs.get("as_json")))
        except AletheiaError as error:
            fail_with(error, as_json=bool(kwargs.get("as_json")))

    return wrapper  # type: ignore[return-value]


def cli_settings() -> Settings:
    return load_settings()


@contextmanager
def open_cli_app(*, create: bool = True) -> Iterator[AppContext]:
    """The store in use as the CLI sees it (``ALETHEIA_HUB_DB``, else the data folder's): every
    project, caller ``ALETHEIA_TOOL`` or ``cli``.

    Commands that only read (or change existing items) pass ``create=False``: a store file that
    does not exist is then an error instead of a new empty one, as is a PostgreSQL database
    without a store's tables (they are not made for a read).

    Raises:
        NoStoreError: ``create`` is False and there is no store file (no store's tables in the
            database), or a file stands where the store's folder should be.
    """
    settings = cli_settings()
    problem = misplaced_store(settings)
    if problem is not None:
        raise problem
    load_excluded_projects()  # a bad config.json is an error here too, not only when saving
    if not create:
        existing_store(settings)
    app = open_app(settings)
    try:
        yield replace(app, caller=settings.tool or CLI_CALLER, every_project_readers=EVERY_PROJECT)
    finally:
        close_app(app)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, wrap_last: bool = True) -> str:
    """Rows in aligned columns; on a terminal the last column is cut to its width.

    Columns are measured in terminal cells, so CJK text and emoji (two cells each) align.
    """
    if not rows:
        return ""
    rows = [[one_line_safe(str(cell)) for cell in row] for row in rows]  # escapes visible
    widths = [
        max(display_width(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))
    ]
    total = shutil.get_terminal_size((120, 24)).columns
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    cut_last = wrap_last and sys.stdout.isatty()  # a pipe or file gets whole lines
    last = max(20, total - fixed) if cut_last else widths[-1]
    lines = []
    for index, row in enumerate([headers, *rows]):
        cells = [pad(str(cell), widths[i]) for i, cell in enumerate(row[:-1])]
        line = "  ".join([*cells, cut(str(row[-1]), last)]).rstrip()
        lines.append(style(line, bold=True) if index == 0 else line)
    return "\n".join(lines)
