"""``aletheia export`` and ``aletheia import``: the whole store as JSON Lines."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import click

from aletheia_mem.cli.common import (
    cli_settings,
    echo,
    emit_json,
    handles_errors,
    json_option,
    open_cli_app,
)
from aletheia_mem.domain import transfer as store_transfer
from aletheia_mem.server.wiring import sqlite_store
from aletheia_mem.storage.files import private_writer


def _show_progress(flag: bool | None) -> bool:
    return sys.stderr.isatty() if flag is None else flag


@click.command("export")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (default: standard output).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a tty).")
@handles_errors
def export_command(output: Path | None, progress: bool | None) -> None:
    """Export everything as JSON Lines: memories, facts with their history, rules, episodes
    and their requests, dismissed items and the audit trail.
    """
    with open_cli_app(create=False) as app:
        if output is None:
            store_transfer.write_export(sqlite_store(app), sys.stdout)
            return
        total = store_transfer.count_records(sqlite_store(app))
        # 0600, made with O_EXCL under a random name beside the target, renamed once complete.
        with private_writer(output) as out:
            if _show_progress(progress):
                with click.progressbar(length=total, label="Exporting", file=sys.stderr) as bar:
                    count = store_transfer.write_export(sqlite_store(app), out, bar.update)
            else:
                count = store_transfer.write_export(sqlite_store(app), out)
    echo(f"Exported {count} records to {output}.", err=True)


def _lines(stream: IO[str]) -> Iterator[str]:
    yield from stream


@click.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a tty).")
@json_option
@handles_errors
def import_command(source: IO[str], progress: bool | None, as_json: bool) -> None:
    """Load an export (a file, or - for standard input) into an empty store, exactly as it was."""
    target = cli_settings().store
    with _no_store_left_on_failure(target), open_cli_app() as app:
        size = _size_of(source)
        if _show_progress(progress) and size:
            with click.progressbar(length=size, label="Importing", file=sys.stderr) as bar:
                lines = _lines(source)
                count = store_transfer.import_lines(sqlite_store(app), lines, bar.update)
                # The bar counts the records' bytes; the header line and any CRLF line ends
                # are read too, so a finished import fills what is left.
                bar.update(max(0, size - bar.pos))
        else:
            count = store_transfer.import_lines(sqlite_store(app), _lines(source))
        path = sqlite_store(app).path
    if as_json:
        emit_json({"imported": count, "store": str(path)})
    else:
        echo(f"Imported {count} records into {path}.")


@contextmanager
def _no_store_left_on_failure(target: Path | str) -> Iterator[None]:
    """A failed import into a store it had to create removes that store again, so that the
    folder holds nothing (a mistyped one still answers "no store" afterwards)."""
    fresh = isinstance(target, Path) and not target.exists()
    try:
        yield
    except BaseException:
        if isinstance(target, Path) and fresh:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise


def _size_of(stream: IO[str]) -> int:
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return 0
