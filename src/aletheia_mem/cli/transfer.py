"""``aletheia export`` and ``aletheia import``: the whole store as JSON Lines."""

from __future__ import annotations

import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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
from aletheia_mem.errors import AletheiaError, InvalidInputError
from aletheia_mem.server.wiring import sqlite_store
from aletheia_mem.storage.files import private_writer


def _sqlite_store_in_use() -> Path:
    """The SQLite store the command copies, refused at once (no connection tried) when
    ``ALETHEIA_HUB_DB`` names a PostgreSQL database.

    Raises:
        InvalidInputError: it does.
    """
    store = cli_settings().store
    if not isinstance(store, Path):
        raise InvalidInputError(
            "Export and import copy a SQLite store; ALETHEIA_HUB_DB names a PostgreSQL"
            " database: back it up with pg_dump instead."
        )
    return store


def _show_progress(flag: bool | None) -> bool:
    return sys.stderr.isatty() if flag is None else flag


@click.command("export")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=bytes),  # as typed: '' is not "." here
    help="Write to this file, through a symlink to its target (- or none: standard output).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a tty).")
@json_option
@handles_errors
def export_command(output: bytes | None, progress: bool | None, as_json: bool) -> None:
    """Export everything as JSON Lines: memories, facts with their history, rules, episodes
    and their requests, dismissed items and the audit trail.

    --output writes a new 0600 file beside FILE, flushes it to the disk and renames it over
    FILE, so that FILE holds its old content or the whole export, even after a power cut; a
    symlink is followed and the file it leads to replaced that way (a FIFO, a device or
    /dev/fd/N is written straight through). With --output and --json, the count and the file
    are printed as JSON; without --output (or with -o -) the export itself is printed, JSON
    Lines with or without --json (``export --json > backup.jsonl`` makes a backup). The
    progress bar goes to stderr.
    """
    _sqlite_store_in_use()
    target = None if output in (None, b"-") else _output_file(output)
    with open_cli_app(create=False) as app:
        store = sqlite_store(app)
        total = store_transfer.count_records(store) if _show_progress(progress) else None
        with _standard_output() if target is None else _export_target(target) as out:
            if total is None:
                count = store_transfer.write_export(store, out)
            else:
                with click.progressbar(length=total, label="Exporting", file=sys.stderr) as bar:
                    count = store_transfer.write_export(store, out, bar.update)
    if target is None:
        return
    if as_json:
        emit_json({"exported": count, "file": str(target)})
    else:
        echo(f"Exported {count} records to {target}.", err=True)


def _output_file(output: bytes) -> Path:
    """``--output``'s file, checked before the store is read: a name, in a folder that is there
    (click refuses a folder itself), as the user typed it in any error.

    Raises:
        InvalidInputError: an empty name, or no such folder.
    """
    if not output.strip():
        raise InvalidInputError("--output needs a file name; it was empty.")
    target = Path(os.fsdecode(output))  # a name that is not UTF-8 keeps its bytes
    if not target.parent.is_dir():
        raise InvalidInputError(f"Cannot write {target}: no folder {target.parent}.")
    return target


@contextmanager
def _standard_output() -> Iterator[IO[str]]:
    """Standard output for the export: a stream of its own on a copy of descriptor 1 (when
    there is one), so that a write that fails (a full disk) leaves nothing in ``sys.stdout``
    for Python to flush, and fail on, again at exit. A closed pipe (``| head``) is left to
    click, which ends quietly with exit code 1.

    Raises:
        AletheiaError: standard output is closed, or a write to it failed.
    """
    if sys.stdout is None:  # started with descriptor 1 closed
        raise AletheiaError("Cannot write standard output: it is closed.")
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation: a stream in memory (tests)
        yield sys.stdout
        return
    sys.stdout.flush()
    out = os.fdopen(os.dup(descriptor), "w", encoding="utf-8", newline="\n")
    try:
        yield out
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise AletheiaError(f"Cannot write standard output: {error.strerror or error}.") from None
    finally:
        with suppress(OSError):  # what a failed write left unwritten fails again: dropped
            out.close()


# A device, FIFO or descriptor opened as the shell's ``>>`` would (appending, so a file behind
# /dev/stdout keeps what is before), never created (a target gone since it was looked at is an
# error, not a new file) nor made a controlling terminal.
_STREAM_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
# The links that name an open file descriptor (/dev/stdout leads to /proc/self/fd/1).
_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|[0-9]+)/fd)/[0-9]+")
_MAX_HOPS = 40  # as Linux follows symlinks


@contextmanager
def _export_target(output: Path) -> Iterator[IO[str]]:
    """Where ``-o`` writes: straight into a descriptor, device or FIFO (``/dev/stdout``,
    ``>(gzip > x)``); anything else through a new 0600 file renamed over ``output`` once
    complete, or over the file a symlink there leads to (the link is kept, as the shell's
    ``>`` and ``rules sync`` keep it).

    Raises:
        AletheiaError: the target cannot be written (no such folder, no permission, disk full).
    """
    real = output
    try:
        stream = _open_stream(output)
        if stream is not None:
            with stream:
                yield stream
        else:
            real = Path(os.path.realpath(output))  # a dangling link: the file it names
            with _stopped_by_signals(), private_writer(real) as out:
                yield out
    except OSError as error:
        if not real.parent.is_dir():
            raise AletheiaError(f"Cannot write {output}: no folder {real.parent}.") from None
        raise AletheiaError(f"Cannot write {output}: {error.strerror or error}.") from None


# What ends a command run from a shell, a service manager or ``timeout``, short of SIGKILL.
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class _Stopped(BaseException):
    """A stop signal, raised where the export was so that the partial file is removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, _frame: object) -> None:
    raise _Stopped(signum)


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raised as an exception in the block (which cleans up as on any
    error), then, the earlier handlers back, sent again: the process ends by the signal as it
    would have (exit 143 for SIGTERM)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set there
        return
    previous = {
        signum: signal.signal(signum, _raise_stopped) or signal.SIG_DFL for signum in _STOP_SIGNALS
    }
    try:
        yield
    except _Stopped as stopped:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.kill(os.getpid(), stopped.signum)
        raise SystemExit(128 + stopped.signum) from None  # the signal's handler did not end us
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _open_stream(path: Path) -> IO[str] | None:
    """``path`` open for writing if it names an open descriptor, or is there and is not a
    regular file (links followed); None when a new file should replace it."""
    descriptor = _names_descriptor(path)
    if not descriptor:
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                return None
        except FileNotFoundError:
            return None  # nothing there, or a dangling link: a new file replaces it
    handle = os.open(path, _STREAM_FLAGS)
    if not descriptor and stat.S_ISREG(os.fstat(handle).st_mode):  # made a file since
        os.close(handle)
        return None
    return os.fdopen(handle, "w", encoding="utf-8", newline="\n")


def _names_descriptor(path: Path) -> bool:
    """Whether ``path``, or a link it leads through, is ``/dev/fd/N`` or ``/proc/*/fd/N``."""
    current = Path(os.path.abspath(path))
    for _ in range(_MAX_HOPS):
        if _DESCRIPTOR.fullmatch(str(current)):
            return True
        if not current.is_symlink():
            return False
        current = Path(os.path.abspath(current.parent / current.readlink()))
    return False


@click.command("import")
# utf-8-sig: a byte order mark before the header is skipped. surrogateescape: bytes that are
# not UTF-8 reach read_lines, which refuses them by line number.
@click.argument("source", type=click.File("r", encoding="utf-8-sig", errors="surrogateescape"))
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a tty).")
@json_option
@handles_errors
def import_command(source: IO[str], progress: bool | None, as_json: bool) -> None:
    """Load an export (a file, or - for standard input) into an empty store, exactly as it was.

    Every record is checked as strictly as a tool call: no time of a past event (a save, a
    dismissal, a request) before 1970 or more than a day ahead of this machine's clock (a
    fact's validity may be any instant from year 1 to 9999), and a note's dedupe key made
    again from its words. A bad record is named by its line and nothing is imported.
    """
    target = _sqlite_store_in_use()
    repairs: list[str] = []
    with _no_store_left_on_failure(target), open_cli_app() as app:
        size, now = _size_of(source), app.clock()
        if _show_progress(progress) and size:
            with click.progressbar(length=size, label="Importing", file=sys.stderr) as bar:
                lines = store_transfer.read_lines(source)
                count = store_transfer.import_lines(
                    sqlite_store(app), lines, bar.update, now=now, repairs=repairs
                )
                # The bar counts the records' bytes; the header line and any CRLF line ends
                # are read too, so a finished import fills what is left.
                bar.update(max(0, size - bar.pos))
        else:
            count = store_transfer.import_lines(
                sqlite_store(app), store_transfer.read_lines(source), now=now, repairs=repairs
            )
        path = sqlite_store(app).path
    if as_json:
        emit_json({"imported": count, "store": str(path), "repaired": repairs})
    else:
        for line in repairs:
            echo(line)
        echo(f"Imported {count} records into {path}.")


@contextmanager
def _no_store_left_on_failure(target: Path | str) -> Iterator[None]:
    """A failed import into a store it had to create removes that store again, and the folders
    it made for it while they are empty, so that nothing is left (a mistyped folder still
    answers "no store" afterwards); not when another process (an agent's server) has opened
    it or saved to it meanwhile."""
    fresh = isinstance(target, Path) and not target.exists()
    made = _missing_folders(target.parent) if isinstance(target, Path) else []
    try:
        yield
    except BaseException:
        if isinstance(target, Path) and fresh:
            with suppress(OSError):  # the import's own error is the one to tell
                store_transfer.remove_unused_store(target)
                for folder in made:  # deepest first; one that holds anything stays
                    folder.rmdir()
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those above it that are not there yet, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _size_of(stream: IO[str]) -> int:
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return 0
